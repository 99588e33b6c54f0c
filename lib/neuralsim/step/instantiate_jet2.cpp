// Explicit instantiation of the step layer for Jet2.
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {
NEURALSIM_STEP_TEMPLATES(, Jet2)
}  // namespace neuralsim
