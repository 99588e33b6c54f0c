// Explicit instantiation of the augment layer for jet4.
#include "neuralsim/augment/augmented_dynamics.hpp"

namespace neuralsim {
NEURALSIM_AUGMENT_TEMPLATES(, ::neuralsim::Jet4)
}  // namespace neuralsim
