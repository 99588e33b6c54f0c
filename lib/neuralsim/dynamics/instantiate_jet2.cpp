// Explicit instantiation of the dynamics layer for Jet2.
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim {
NEURALSIM_KINEMATICS_TEMPLATES(, Jet2)
NEURALSIM_RNEA_TEMPLATES(, Jet2)
NEURALSIM_ABA_TEMPLATES(, Jet2)
NEURALSIM_INVERSE_INERTIA_TEMPLATES(, Jet2)
}  // namespace neuralsim
