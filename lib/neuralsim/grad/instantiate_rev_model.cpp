// Explicit instantiation of the model and dynamics layers for Rev.
#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {
NEURALSIM_REV_MODEL_TEMPLATES()
}  // namespace neuralsim
