// Explicit instantiation of the step layer for Jet8.
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {
NEURALSIM_STEP_TEMPLATES(, Jet8)
}  // namespace neuralsim
