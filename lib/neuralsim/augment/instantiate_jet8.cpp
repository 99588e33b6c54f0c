// Explicit instantiation of the augment layer for jet8.
#include "neuralsim/augment/augmented_dynamics.hpp"

namespace neuralsim {
NEURALSIM_AUGMENT_TEMPLATES(, ::neuralsim::Jet8)
}  // namespace neuralsim
