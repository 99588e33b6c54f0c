// Explicit instantiation of the model layer for double.
#include "neuralsim/model/configuration.hpp"

namespace neuralsim {
NEURALSIM_MODEL_TEMPLATES(, double)
NEURALSIM_CONFIGURATION_TEMPLATES(, double)
}  // namespace neuralsim
