// Explicit instantiation of the model layer for the Jet scalars.
#include "neuralsim/model/configuration.hpp"

namespace neuralsim {
NEURALSIM_MODEL_TEMPLATES(, Jet4)
NEURALSIM_MODEL_TEMPLATES(, Jet8)
NEURALSIM_MODEL_CASTS()
NEURALSIM_CONFIGURATION_TEMPLATES(, Jet4)
NEURALSIM_CONFIGURATION_TEMPLATES(, Jet8)
}  // namespace neuralsim
