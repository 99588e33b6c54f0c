// Explicit instantiation of the step layer for Jet4.
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {
NEURALSIM_STEP_TEMPLATES(, Jet4)
}  // namespace neuralsim
