// Explicit instantiation of the dynamics layer for Jet4.
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim {
NEURALSIM_KINEMATICS_TEMPLATES(, Jet4)
NEURALSIM_RNEA_TEMPLATES(, Jet4)
NEURALSIM_ABA_TEMPLATES(, Jet4)
NEURALSIM_INVERSE_INERTIA_TEMPLATES(, Jet4)
}  // namespace neuralsim
