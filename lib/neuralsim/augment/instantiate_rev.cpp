// Explicit instantiation of the augment layer for rev.
#include "neuralsim/augment/augmented_dynamics.hpp"

namespace neuralsim {
NEURALSIM_AUGMENT_TEMPLATES(, ::neuralsim::Rev)
}  // namespace neuralsim
