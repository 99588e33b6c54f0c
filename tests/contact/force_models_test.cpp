// Force-level contact laws: values against hand computation, limits and
// properties (never pulling, continuity at touchdown, friction direction,
// creep), and ceres::Jet derivatives against the analytic derivatives.
#include <ceres/jet.h>
#include <gtest/gtest.h>

#include "neuralsim/contact/friction.hpp"
#include "neuralsim/contact/hunt_crossley.hpp"
#include "neuralsim/contact/penalty.hpp"

namespace neuralsim {
namespace {

TEST(HuntCrossley, SpringDamperValuesAndClamp) {
  ContactParameters<double> p;
  p.stiffness = 1e5;
  p.damping = 2e4;
  p.exponent = 1.5;
  const double d = 1e-3;
  // k δ^n + d δ^n δ̇ with δ^1.5 = 3.1623e-5.
  EXPECT_NEAR(hunt_crossley_normal_force(p, d, 0.0), 1e5 * std::pow(d, 1.5), 1e-12);
  EXPECT_NEAR(hunt_crossley_normal_force(p, d, 0.5), std::pow(d, 1.5) * (1e5 + 2e4 * 0.5), 1e-12);
  // Separating fast: the damping term would pull; the force is clamped at 0.
  EXPECT_EQ(hunt_crossley_normal_force(p, d, -10.0), 0.0);
  EXPECT_EQ(hunt_crossley_normal_force(p, -1e-3, 1.0), 0.0);  // not touching
  EXPECT_EQ(hunt_crossley_normal_force(p, 0.0, 5.0), 0.0);     // continuous at touchdown
}

TEST(Penalty, QuadraticInDepth) {
  ContactParameters<double> p;
  p.stiffness = 1e7;
  p.damping = 1e5;
  EXPECT_NEAR(penalty_normal_force(p, 2e-3, 0.0), 1e7 * 4e-6, 1e-12);
  EXPECT_NEAR(penalty_normal_force(p, 2e-3, 0.1), 1e7 * 4e-6 + 1e5 * 2e-3 * 0.1, 1e-12);
  EXPECT_EQ(penalty_normal_force(p, 2e-3, -1.0), 0.0);
  EXPECT_EQ(penalty_normal_force(p, -2e-3, 0.0), 0.0);
}

TEST(Friction, RegularizedCoulombOpposesSlipAndSaturates) {
  ContactParameters<double> p;
  p.friction = 0.5;
  p.friction_velocity = 1e-3;
  const Eigen::Vector3d v(0.3, -0.4, 0);  // |v| = 0.5 ≫ ε
  const Eigen::Vector3d f = friction_force(FrictionModel::kCoulomb, p, 10.0, v);
  EXPECT_NEAR(f.norm(), 0.5 * 10 * 0.5 / std::sqrt(0.25 + 1e-6), 1e-12);
  EXPECT_NEAR(f.normalized().dot(-v.normalized()), 1.0, 1e-12);
  // Static branch: slope μ f_n / ε.
  const Eigen::Vector3d g = friction_force(FrictionModel::kCoulomb, p, 10.0, Eigen::Vector3d(1e-6, 0, 0));
  EXPECT_NEAR(g.x(), -0.5 * 10 / 1e-3 * 1e-6, 1e-8);
}

TEST(Friction, ViscousAndStribeck) {
  ContactParameters<double> p;
  p.friction = 0.4;
  p.static_friction = 0.8;
  p.stribeck_velocity = 0.1;
  p.viscous_friction = 2.0;
  p.friction_velocity = 1e-6;
  const double fn = 5;
  const Eigen::Vector3d slow(0.01, 0, 0), fast(2.0, 0, 0);
  // Viscous: μ f_n + μ_v f_n v.
  EXPECT_NEAR(-friction_force(FrictionModel::kViscous, p, fn, fast).x(), 0.4 * fn + 2.0 * fn * 2.0, 1e-6);
  // Stribeck: μ(v) = μ + (μ_s - μ) exp(-(v/v_s)²), plus the viscous part.
  const double mu_slow = 0.4 + 0.4 * std::exp(-0.01);
  EXPECT_NEAR(-friction_force(FrictionModel::kStribeck, p, fn, slow).x(), mu_slow * fn + 2.0 * fn * 0.01, 1e-6);
  EXPECT_NEAR(-friction_force(FrictionModel::kStribeck, p, fn, fast).x(), 0.4 * fn + 2.0 * fn * 2.0, 1e-6);
}

// Jet derivatives of the force laws w.r.t. depth, depth rate, and the named
// parameters (stiffness, damping, exponent, friction) equal the analytic ones.
TEST(ForceModels, JetDerivativesMatchAnalytic) {
  using J = ceres::Jet<double, 6>;
  ContactParameters<J> p;
  p.stiffness = J(1e5, 2);
  p.damping = J(2e4, 3);
  p.exponent = J(1.5, 4);
  p.friction = J(0.6, 5);
  const double d = 2e-3, r = 0.3;
  const J f = hunt_crossley_normal_force(p, J(d, 0), J(r, 1));
  const double dn = std::pow(d, 1.5);
  EXPECT_NEAR(f.v[0], 1.5 * std::pow(d, 0.5) * (1e5 + 2e4 * r), 1e-8);
  EXPECT_NEAR(f.v[1], dn * 2e4, 1e-12);
  EXPECT_NEAR(f.v[2], dn, 1e-15);
  EXPECT_NEAR(f.v[3], dn * r, 1e-15);
  EXPECT_NEAR(f.v[4], dn * std::log(d) * (1e5 + 2e4 * r), 1e-9);
  const Eigen::Matrix<J, 3, 1> v(J(0.2), J(0), J(0));
  const auto ft = friction_force(FrictionModel::kCoulomb, p, f, v);
  const double speed = std::sqrt(0.04 + 1e-4);
  EXPECT_NEAR(ft.x().v[5], -f.a * 0.2 / speed, 1e-12);               // ∂/∂μ
  EXPECT_NEAR(ft.x().v[0], -0.6 * f.v[0] * 0.2 / speed, 1e-9);       // through f_n
}

}  // namespace
}  // namespace neuralsim
