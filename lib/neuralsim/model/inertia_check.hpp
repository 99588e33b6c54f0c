// Physical consistency of a rigid-body inertia: what a mass and a rotational
// inertia must satisfy to belong to a real body (Traversaro, Brossette,
// Escande & Nori, "Identification of fully physical consistent inertial
// parameters using optimization on manifolds", IROS 2016, §III):
//   m ≥ 0, and the rotational inertia about the centre of mass I_c is
//   symmetric positive semidefinite with principal moments satisfying the
//   triangle inequality  J_a ≤ J_b + J_c  (for every permutation).
// Point masses (I_c = 0) and massless links (m = 0, I = 0) are physical.
#pragma once

#include <string>

#include "neuralsim/spatial/inertia.hpp"

namespace neuralsim {

// "" when `I` is physical; otherwise one line saying what is wrong with the
// values ("mass -1 is negative", "inertia about the COM has a negative
// principal moment -0.2 (principal moments -0.2, 1, 1)", "principal moments
// (0.1, 0.1, 0.5) violate the triangle inequality: 0.5 > 0.1 + 0.1").
// Tolerances are relative (1e-9) to the largest inertia term, so exact
// point masses and rods (J = (0, J, J)) pass.
std::string inertia_problem(const Inertia<double>& I);

}  // namespace neuralsim
