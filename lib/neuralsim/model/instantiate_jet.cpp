// Explicit instantiation of the model layer for the Jet scalars.
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/model/parameters.hpp"

namespace neuralsim {
NEURALSIM_MODEL_TEMPLATES(, Jet8)
NEURALSIM_DATA_TEMPLATES(, Jet8)
NEURALSIM_PARAMETER_TEMPLATES(, Jet8)
NEURALSIM_PARAMETERIZATION_TEMPLATES(, Jet8)
NEURALSIM_MODEL_CASTS()
NEURALSIM_CONFIGURATION_TEMPLATES(, Jet8)
}  // namespace neuralsim
