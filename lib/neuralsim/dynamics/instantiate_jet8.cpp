// Explicit instantiation of the dynamics layer for Jet8.
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim {
NEURALSIM_KINEMATICS_TEMPLATES(, Jet8)
NEURALSIM_RNEA_TEMPLATES(, Jet8)
NEURALSIM_ABA_TEMPLATES(, Jet8)
NEURALSIM_INVERSE_INERTIA_TEMPLATES(, Jet8)
}  // namespace neuralsim
