// Explicit instantiation of the step and contact layers for Rev.
#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {
NEURALSIM_REV_STEP_TEMPLATES()
}  // namespace neuralsim
