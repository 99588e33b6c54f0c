// Explicit instantiation of the augment layer for jet2.
#include "neuralsim/augment/augmented_dynamics.hpp"

namespace neuralsim {
NEURALSIM_AUGMENT_TEMPLATES(, ::neuralsim::Jet2)
}  // namespace neuralsim
