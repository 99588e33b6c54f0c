// Explicit instantiation of the step layer for double.
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {
NEURALSIM_STEP_TEMPLATES(, double)
}  // namespace neuralsim
