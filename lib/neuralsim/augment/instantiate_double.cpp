// Explicit instantiation of the augment layer for double.
#include "neuralsim/augment/augmented_dynamics.hpp"

namespace neuralsim {
NEURALSIM_AUGMENT_TEMPLATES(, double)
}  // namespace neuralsim
