// Explicit instantiation of the dynamics layer for double.
#include "neuralsim/dynamics/aba_derivatives.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/forward_dynamics_vjp.hpp"
#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim {
NEURALSIM_KINEMATICS_TEMPLATES(, double)
NEURALSIM_RNEA_TEMPLATES(, double)
NEURALSIM_CRBA_TEMPLATES(, double)
NEURALSIM_ABA_TEMPLATES(, double)
NEURALSIM_ENERGY_TEMPLATES(, double)
NEURALSIM_CENTROIDAL_TEMPLATES(, double)
NEURALSIM_INVERSE_INERTIA_TEMPLATES(, double)
NEURALSIM_INVERSE_INERTIA_JOINT_TEMPLATES(, double)
NEURALSIM_RNEA_VJP_TEMPLATES(, double)
NEURALSIM_FORWARD_DYNAMICS_VJP_TEMPLATES(, double)
NEURALSIM_RNEA_DERIVATIVES_TEMPLATES(, double)
NEURALSIM_ABA_DERIVATIVES_TEMPLATES(, double)
NEURALSIM_REGRESSOR_TEMPLATES(, double)
}  // namespace neuralsim
