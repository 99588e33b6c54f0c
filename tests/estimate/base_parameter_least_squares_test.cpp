// Base parameters fitted directly (estimate/base_parameter_least_squares.hpp)
// on a planar two-link arm with sigmoid joint friction, at random states
// with exact accelerations (no filter between the data and the model):
//  - torques of a known arm: β̂ is its B π and the friction its own, to
//    rounding, from a start 30 % off;
//  - the standard errors are calibrated: with Gaussian torque noise, z_k =
//    (β_k(truth) − β̂_k)/σ̂_k is standard normal, so its mean square over
//    10 seeds × 6 base parameters is 1 within the χ² spread;
//  - torques of inertias no body has (link 2's moment of inertia about its
//    joint axis negative, which ∫(x² + y²) dm cannot be) are fitted exactly:
//    the fit is unconstrained.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/base_parameter_least_squares.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {
namespace base_parameter_least_squares_test {
namespace {

Model<double> friction_arm() {
  return parse_yaml_model(
      "generator: double_pendulum\nlengths: [0.4, 0.4]\nmasses: [3.0, 2.0]\njoints:\n"
      "  joint1: {friction_law: sigmoid, friction: 0.87, friction_slope: 9.07, friction_shift: 0.026}\n"
      "  joint2: {damping: 0.1}\n",
      "arm.yaml");
}

// Random states; τ = Y π + armature·q̈ − passive with the truth's passive
// terms and `pi` (10 per body), plus noise σ.
std::shared_ptr<InverseDynamicsSamples> random_samples(const Model<double>& truth, const Eigen::VectorXd& pi, int n,
                                                       double sigma, unsigned seed) {
  auto s = std::make_shared<InverseDynamicsSamples>();
  s->q.resize(n, 2);
  s->qd.resize(n, 2);
  s->qdd.resize(n, 2);
  s->tau.resize(n, 2);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::normal_distribution<double> noise(0, sigma);
  Data<double> data(truth);
  Eigen::MatrixXd Y;
  for (int k = 0; k < n; ++k) {
    const Eigen::VectorXd q = Eigen::Vector2d(u(rng), u(rng)), qd = Eigen::Vector2d(u(rng), u(rng)),
                          qdd = Eigen::Vector2d(u(rng), u(rng));
    inverse_dynamics_regressor(truth, data, q, qd, qdd, Y);
    passive_forces(truth, data, q, qd);
    s->q.row(k) = q.transpose();
    s->qd.row(k) = qd.transpose();
    s->qdd.row(k) = qdd.transpose();
    s->tau.row(k) = (Y * pi - data.tau_passive).transpose();
    for (int i = 0; i < 2; ++i) s->tau(k, i) += sigma > 0 ? noise(rng) : 0.0;
    s->rows.push_back(k);
  }
  return s;
}

struct ArmFit {
  Model<double> truth = friction_arm(), start = friction_arm();
  ParameterSet params;
  ArmFit() {
    set_parameter(start, resolve_parameter(start, "link.link1.mass"), 2.1);
    set_parameter(start, resolve_parameter(start, "link.link2.mass"), 2.6);
    set_parameter(start, resolve_parameter(start, "joint.joint1.friction"), 0.6);
    params = read_parameter_set(
        Config::parse("p: [{name: link.link1.inertial, transform: log_cholesky},"
                      " {name: link.link2.inertial, transform: log_cholesky},"
                      " {name: joint.joint1.friction, bounds: [0, 5]}, {name: joint.joint1.friction_shift},"
                      " {name: joint.joint2.damping, bounds: [0, 5]}]",
                      "test.yaml"),
        "p", start);
  }
  // The base parameters of the start model on these samples (their
  // decomposition defines β; the Jacobian is not needed for it).
  BaseParameterFit consistent(const InverseDynamicsSamples& s) const {
    const std::vector<double> x = params.initial_variables();
    return fit_base_parameters(start, params, x, {&s}, Eigen::MatrixXd::Zero(2 * s.q.rows(), params.size()), 1.0);
  }
  BaseParameterLeastSquares fit(const std::shared_ptr<InverseDynamicsSamples>& s, BaseParameterFit& base) const {
    const ResidualContext ctx{&start, &params, StepOptions{}, ObservationSpec{}};
    return fit_base_parameters_least_squares(ctx, {s}, base, params.initial_variables());
  }
};

TEST(BaseParameterLeastSquares, RecoversTheBaseParametersAndFrictionOfExactTorques) {
  ArmFit a;
  const Eigen::VectorXd pi = model_inertial_parameters(a.truth);
  const auto s = random_samples(a.truth, pi, 300, 0, 1);
  BaseParameterFit base = a.consistent(*s);
  ASSERT_EQ(base.base.rank, 6);
  const BaseParameterLeastSquares f = a.fit(s, base);
  EXPECT_TRUE(f.converged) << f.report;
  EXPECT_LE(f.rmse, 1e-7);  // torques of order 10 N·m
  const Eigen::VectorXd beta = base.base.base_values(pi.tail(20));
  for (int k = 0; k < 6; ++k)
    EXPECT_NEAR(f.estimates[static_cast<size_t>(k)].value, beta[k], 1e-8 * std::max(1.0, std::abs(beta[k])))
        << f.estimates[static_cast<size_t>(k)].expression;
  // Parameters 20..22: friction, its shift, link 2's damping (physical = variable here).
  EXPECT_NEAR(f.x[20], 0.87, 1e-8);
  EXPECT_NEAR(f.x[21], 0.026, 1e-8);
  EXPECT_NEAR(f.x[22], 0.1, 1e-8);
  // The links' inertial coordinates are held: β stands for them.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(f.x[static_cast<size_t>(i)], a.params.initial_variables()[static_cast<size_t>(i)]);
  EXPECT_TRUE(std::isnan(f.std_error[0]) && std::isnan(f.value[0]));
  EXPECT_NEAR(f.value[20], 0.87, 1e-8);
}

TEST(BaseParameterLeastSquares, StandardErrorsAreCalibratedUnderGaussianNoise) {
  ArmFit a;
  const Eigen::VectorXd pi = model_inertial_parameters(a.truth);
  double sum_z2 = 0;
  int count = 0;
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const auto s = random_samples(a.truth, pi, 200, 0.05, seed);
    BaseParameterFit base = a.consistent(*s);
    // z against the truth's β: the consistent fit's values replaced.
    const Eigen::VectorXd beta = base.base.base_values(pi.tail(20));
    for (int k = 0; k < base.base.rank; ++k) base.estimates[static_cast<size_t>(k)].value = beta[k];
    const BaseParameterLeastSquares f = a.fit(s, base);
    ASSERT_TRUE(f.converged) << f.report;
    for (double z : f.z) {
      ASSERT_TRUE(std::isfinite(z));
      sum_z2 += z * z;
      ++count;
    }
  }
  // E[z²] = 1; the mean of 60 squares of standard normals has sd √(2/60) = 0.18.
  const double mean = sum_z2 / count;
  std::printf("  mean z² over %d base parameters: %.3f\n", count, mean);
  EXPECT_GT(mean, 0.45);
  EXPECT_LT(mean, 1.75);
}

TEST(BaseParameterLeastSquares, FitsInertiasNoBodyHas) {
  ArmFit a;
  Eigen::VectorXd pi = model_inertial_parameters(a.truth);
  // Link 2's moment of inertia about its joint axis (y for this generator's
  // planar arm, whose joints turn about y), made negative.
  const int link2 = 10 * (a.truth.num_bodies() - 1);
  pi[link2 + 6] = -0.05;
  const auto s = random_samples(a.truth, pi, 300, 0, 2);
  BaseParameterFit base = a.consistent(*s);
  const BaseParameterLeastSquares f = a.fit(s, base);
  EXPECT_TRUE(f.converged) << f.report;
  EXPECT_LE(f.rmse, 1e-7);  // torques of order 10 N·m
  const Eigen::VectorXd beta = base.base.base_values(pi.tail(20));
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(f.estimates[static_cast<size_t>(k)].value, beta[k], 1e-8);
}

}  // namespace
}  // namespace base_parameter_least_squares_test
}  // namespace neuralsim
