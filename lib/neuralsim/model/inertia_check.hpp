// Physical consistency of a rigid-body inertia: what a mass and a rotational
// inertia must satisfy to belong to a real body (Traversaro, Brossette,
// Escande & Nori, "Identification of fully physical consistent inertial
// parameters using optimization on manifolds", IROS 2016, §III):
//   m ≥ 0, and the rotational inertia about the centre of mass I_c is
//   symmetric positive semidefinite with principal moments satisfying the
//   triangle inequality  J_a ≤ J_b + J_c  (for every permutation).
// Point masses (I_c = 0) and massless links (m = 0, I = 0) are physical.
//
// A planar chain (planar_axis) uses less: its joint-space dynamics M(q),
// C, g depend on each link's mass, first moment and inertia about the
// common axis only (Featherstone, RBDA §5.2, with every joint axis
// parallel), so lumped models published for planar robots, whose inertia
// about the joint J is smaller than m·r² (a negative I_c about the axis),
// describe a valid planar system that no 3-D body has.
#pragma once

#include <optional>
#include <string>

#include "neuralsim/spatial/inertia.hpp"

namespace neuralsim {

template <class S>
class Model;

// "" when `I` is physical; otherwise one line saying what is wrong with the
// values ("mass -1 is negative", "inertia about the COM has a negative
// principal moment -0.2 (principal moments -0.2, 1, 1)", "principal moments
// (0.1, 0.1, 0.5) violate the triangle inequality: 0.5 > 0.1 + 0.1").
// Tolerances are relative (1e-9) to the largest inertia term of the link,
// or to `reference` when that is larger (the model's, model_inertia_scale:
// a link whose terms are themselves rounding residues, such as an I_c of
// 2e-17 computed as J − m·r² = 0, is judged against the model it is in), so
// exact point masses and rods (J = (0, J, J)) pass.
std::string inertia_problem(const Inertia<double>& I, double reference = 0);

// The largest inertia term over the model's links (|Ī|, |I_c|, m·|c|²).
double model_inertia_scale(const Model<double>& model);

// Which consistency Model::validate asks of the links.
enum class InertiaCheck {
  kPhysical,    // every link a physical 3-D body
  kJointSpace,  // the same, except in a planar chain, where a link needs only
                // mass ≥ 0 and an inertia ≥ 0 about the axis through its
                // joint (what the planar dynamics use): accepted with a warning
};

// The common axis (world frame, unit) of a planar chain: at least one
// revolute joint, and every joint fixed, revolute about an axis parallel to
// the others, or prismatic across them. Rotations about parallel axes keep
// every axis parallel, so the test at q = 0 holds at every configuration.
// nullopt otherwise (spherical or free joints, skew axes).
std::optional<Eigen::Vector3d> planar_axis(const Model<double>& model);

// The check of link `body` within `model` (Model::validate runs it for every
// link): "" when it passes; under kJointSpace a link that passes only as
// part of a planar chain gives "" and a warning naming it in *warning.
// Otherwise the problem, prefixed "link '<name>': ".
std::string link_inertia_problem(const Model<double>& model, int body, InertiaCheck check,
                                 std::string* warning = nullptr);

}  // namespace neuralsim
