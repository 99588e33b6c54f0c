// Explicit instantiation of the model layer for double.
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/model/parameters.hpp"

namespace neuralsim {
NEURALSIM_MODEL_TEMPLATES(, double)
NEURALSIM_DATA_TEMPLATES(, double)
NEURALSIM_PARAMETER_TEMPLATES(, double)
NEURALSIM_PARAMETERIZATION_TEMPLATES(, double)
NEURALSIM_CONFIGURATION_TEMPLATES(, double)
}  // namespace neuralsim
