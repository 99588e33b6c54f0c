// The engine for the reverse-mode scalar Rev: explicit instantiation
// declarations of every engine layer's templates (model, configuration,
// kinematics, RNEA, ABA, M⁻¹ through ABA, step, contact), defined once in
// grad/instantiate_rev_*.cpp, as the other layers do for double and the
// Jets (core/scalar.hpp). Rev lives in this layer, above the engine, so the
// declarations live here too: include this header, not the engine headers
// alone, wherever Model<Rev>, Stepper<Rev> or ContactSystem<Rev> is used, or
// each translation unit instantiates the whole engine again (≈ 20 s of
// compile time each).
#pragma once

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/grad/tape.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/model/model_impl.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

#define NEURALSIM_REV_MODEL_TEMPLATES(PREFIX)                     \
  NEURALSIM_MODEL_TEMPLATES(PREFIX, ::neuralsim::Rev)             \
  NEURALSIM_DATA_TEMPLATES(PREFIX, ::neuralsim::Rev)              \
  NEURALSIM_PARAMETER_TEMPLATES(PREFIX, ::neuralsim::Rev)         \
  NEURALSIM_PARAMETERIZATION_TEMPLATES(PREFIX, ::neuralsim::Rev)  \
  PREFIX template Model<Rev> Model<double>::cast<Rev>() const;    \
  NEURALSIM_CONFIGURATION_TEMPLATES(PREFIX, ::neuralsim::Rev)     \
  NEURALSIM_KINEMATICS_TEMPLATES(PREFIX, ::neuralsim::Rev)        \
  NEURALSIM_RNEA_TEMPLATES(PREFIX, ::neuralsim::Rev)              \
  NEURALSIM_ABA_TEMPLATES(PREFIX, ::neuralsim::Rev)               \
  NEURALSIM_INVERSE_INERTIA_TEMPLATES(PREFIX, ::neuralsim::Rev)
#define NEURALSIM_REV_STEP_TEMPLATES(PREFIX)       \
  NEURALSIM_STEP_TEMPLATES(PREFIX, ::neuralsim::Rev) \
  NEURALSIM_CONTACT_TEMPLATES(PREFIX, ::neuralsim::Rev)

NEURALSIM_REV_MODEL_TEMPLATES(extern)
NEURALSIM_REV_STEP_TEMPLATES(extern)

}  // namespace neuralsim
