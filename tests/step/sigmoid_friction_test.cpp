// The sigmoid joint friction law (issue #41; step/passive_forces.hpp) of the
// Franka Emika Panda's published model (Gaz et al., IEEE RA-L 2019):
//   τ_f(q̇) = φ1/(1+e^(-φ2(q̇+φ3))) - φ1/(1+e^(-φ2φ3)),  τ_passive = -τ_f,
// φ1 = joint.<j>.friction, φ2 = .friction_slope, φ3 = .friction_shift.
// Checked against mathematics, never against the code's own output:
//  * the torque against the logistic evaluated directly in long double,
//    including q̇ = 0 (exactly 0), |φ2 q̇| = 1e4 (no overflow or NaN), the
//    asymmetric limits -φ1(1-σ(φ2φ3)) and +φ1σ(φ2φ3), and dissipation;
//  * ∂τ/∂(q̇, φ1, φ2, φ3) in Jets and on the reverse-mode tape against
//    Richardson-extrapolated central differences (1e-7 relative);
//  * rollout gradients of the three parameters (reverse mode through a
//    double pendulum) against central differences of the rollout;
//  * identification: data from our engine, a single-shooting fit of the six
//    parameters of a double pendulum from perturbed starts (1e-4 relative);
//  * the YAML keys, their checks and the named parameters;
//  * configs/rollout_sigmoid_friction_arm.yaml (the Panda's published
//    friction of joints 2 and 4 on a two-link arm) runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/scalar.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "neuralsim/parameters/named_parameter.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "neuralsim/step/stepper.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"

namespace neuralsim::sigmoid_friction_test {

// The shared one-joint pendulum (support/test_models.hpp) with the sigmoid law.
Model<double> sigmoid_pendulum(double fc, double slope, double shift, double damping = 0) {
  JointDynamics<double> d;
  d.friction_law = FrictionLaw::kSigmoid;
  d.coulomb_friction = fc;
  d.friction_slope = slope;
  d.friction_shift = shift;
  d.damping = damping;
  return testing::pendulum_with_dynamics(d);
}

double sigmoid_torque(double v, double fc, double slope, double shift) {
  return testing::one_joint_passive_torque(sigmoid_pendulum(fc, slope, shift), v);
}

// The published formula, literally, in long double (its exponent range
// holds e^(1e4)): the passive torque -τ_f.
double published_torque(double v, double fc, double slope, double shift) {
  using L = long double;
  const L a = L(fc) / (1 + std::exp(-L(slope) * (L(v) + L(shift))));
  const L b = L(fc) / (1 + std::exp(-L(slope) * L(shift)));
  return static_cast<double>(-(a - b));
}

double logistic(double x) { return 1 / (1 + std::exp(-x)); }

TEST(SigmoidFriction, TorqueEqualsThePublishedFormula) {
  const double fc = 0.4, slope = 8.0;
  for (double shift : {0.0, 0.05, -0.12})
    for (double v : {-3.0, -0.4, -0.1, -0.01, -1e-6, 1e-6, 0.01, 0.1, 0.4, 3.0}) {
      const double t = sigmoid_torque(v, fc, slope, shift), ref = published_torque(v, fc, slope, shift);
      EXPECT_NEAR(t, ref, 1e-15 * fc) << "v=" << v << " shift=" << shift;
      // No cancellation at small |q̇|: relative accuracy too.
      EXPECT_NEAR(t, ref, 1e-13 * std::abs(ref)) << "v=" << v << " shift=" << shift;
    }
  // Exactly no holding torque at rest, whatever the shift.
  for (double shift : {0.0, 0.05, -0.12, 3.0}) EXPECT_EQ(sigmoid_torque(0.0, fc, slope, shift), 0.0);
  // friction_torque() and coulomb_friction_shape() are the same law.
  const JointDynamics<double> d = sigmoid_pendulum(fc, slope, 0.05, 0.3).joints[0].dynamics;
  EXPECT_NEAR(friction_torque(d, 0.2), published_torque(0.2, fc, slope, 0.05), 1e-15);
  EXPECT_NEAR(coulomb_friction_shape(d, 0.2), -published_torque(0.2, 1.0, slope, 0.05), 1e-15);
  // Viscous damping adds -b·q̇.
  EXPECT_NEAR(testing::one_joint_passive_torque(sigmoid_pendulum(fc, slope, 0.05, 0.3), 0.2),
              published_torque(0.2, fc, slope, 0.05) - 0.06, 1e-15);
}

// φ2 = 1e3, |q̇| = 10: the logistic's argument reaches ±1e4 (e^(1e4)
// overflows a double). The levels are -φ1(1 - σ(φ2φ3)) and +φ1σ(φ2φ3).
TEST(SigmoidFriction, SteepSlopesStayFiniteAndReachTheAsymmetricLevels) {
  const double fc = 0.5, slope = 1e3;
  for (double shift : {0.0, 2e-3, -1e-3})
    for (double v : {-10.0, -1.0, 1.0, 10.0}) {
      const double t = sigmoid_torque(v, fc, slope, shift);
      ASSERT_TRUE(std::isfinite(t));
      EXPECT_NEAR(t, published_torque(v, fc, slope, shift), 1e-15 * fc) << v;
      const double level = v > 0 ? -fc * (1 - logistic(slope * shift)) : fc * logistic(slope * shift);
      EXPECT_NEAR(t, level, 1e-15) << v;
    }
  // Derivatives stay finite too (the naive logistic's e^(1e4) gives inf/inf).
  Model<Jet8> m = sigmoid_pendulum(fc, slope, 2e-3).cast<Jet8>();
  m.joints[0].dynamics.friction_slope = Jet8(slope, 1);
  m.joints[0].dynamics.friction_shift = Jet8(2e-3, 2);
  for (double v : {-10.0, 10.0}) {
    const Jet8 t = testing::one_joint_passive_torque(m, Jet8(v, 0));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isfinite(t.v[i])) << v << " d/dx" << i;
  }
}

// φ3 ≠ 0 breaks the odd symmetry; with φ3 = 0 the law is odd. Either way it
// dissipates: q̇·τ ≤ 0, and 0 only at q̇ = 0.
TEST(SigmoidFriction, AsymmetricWithAShiftAndAlwaysDissipative) {
  const double fc = 0.4, slope = 8.0, shift = 0.1;
  for (double v : {0.05, 0.2, 1.0}) {
    const double plus = sigmoid_torque(v, fc, slope, shift), minus = sigmoid_torque(-v, fc, slope, shift);
    EXPECT_GT(std::abs(plus + minus), 1e-3) << v;
    EXPECT_NEAR(plus + minus, published_torque(v, fc, slope, shift) + published_torque(-v, fc, slope, shift), 1e-15);
    EXPECT_EQ(sigmoid_torque(v, fc, slope, 0.0), -sigmoid_torque(-v, fc, slope, 0.0));
  }
  for (double s : {-0.3, 0.0, 0.1, 2.0})
    for (double v : {-50.0, -1.0, -1e-3, -1e-9, 1e-9, 1e-3, 1.0, 50.0})
      EXPECT_LT(sigmoid_torque(v, fc, slope, s) * v, 0.0) << "shift " << s << " v=" << v;
}

// Richardson-extrapolated central difference: truncation O(h⁴).
double richardson(const std::function<double(double)>& f, double x, double h) {
  const double d1 = (f(x + h) - f(x - h)) / (2 * h);
  const double d2 = (f(x + h / 2) - f(x - h / 2)) / h;
  return (4 * d2 - d1) / 3;
}

// ∂τ/∂(q̇, φ1, φ2, φ3) by central differences of the published formula.
std::vector<double> sigmoid_fd_gradient(const double* x) {
  std::vector<double> g(4);
  for (int i = 0; i < 4; ++i)
    g[static_cast<std::size_t>(i)] = richardson(
        [&](double xi) {
          double y[4] = {x[0], x[1], x[2], x[3]};
          y[i] = xi;
          return published_torque(y[0], y[1], y[2], y[3]);
        },
        x[i], 1e-3 * std::max(0.1, std::abs(x[i])));
  return g;
}

const double kDerivativePoints[][4] = {
    // q̇, φ1, φ2, φ3
    {0.07, 0.4, 8.0, 0.1}, {-0.3, 0.4, 8.0, 0.1}, {1.5, 0.25, 3.0, -0.2},
    {0.0, 0.4, 8.0, 0.1},  {-0.02, 0.6, 20.0, 0.0}};

TEST(SigmoidFriction, JetDerivativesMatchCentralDifferences) {
  for (const auto& x : kDerivativePoints) {
    Model<Jet8> m = sigmoid_pendulum(x[1], x[2], x[3]).cast<Jet8>();
    JointDynamics<Jet8>& d = m.joints[0].dynamics;
    d.coulomb_friction = Jet8(x[1], 1);
    d.friction_slope = Jet8(x[2], 2);
    d.friction_shift = Jet8(x[3], 3);
    const Jet8 t = testing::one_joint_passive_torque(m, Jet8(x[0], 0));
    EXPECT_NEAR(t.a, published_torque(x[0], x[1], x[2], x[3]), 1e-15);
    const std::vector<double> fd = sigmoid_fd_gradient(x);
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(t.v[i], fd[i], std::max(1e-7 * std::abs(fd[i]), 1e-12)) << "q̇=" << x[0] << " d/dx" << i;
  }
}

TEST(SigmoidFriction, ReverseModeDerivativesMatchCentralDifferences) {
  for (const auto& x : kDerivativePoints) {
    const Model<Rev> base = sigmoid_pendulum(x[1], x[2], x[3]).cast<Rev>();
    Tape tape;
    std::vector<Rev> in(4);
    tape.variables(x, 4, in.data());
    Model<Rev> m = base;
    JointDynamics<Rev>& d = m.joints[0].dynamics;
    d.coulomb_friction = in[1];
    d.friction_slope = in[2];
    d.friction_shift = in[3];
    const Rev t = testing::one_joint_passive_torque(m, in[0]);
    EXPECT_NEAR(t.value(), published_torque(x[0], x[1], x[2], x[3]), 1e-15);
    tape.reverse(t);
    std::vector<double> g(4);
    tape.adjoints(in.data(), 4, g.data());
    const std::vector<double> fd = sigmoid_fd_gradient(x);
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(g[i], fd[i], std::max(1e-7 * std::abs(fd[i]), 1e-12)) << "q̇=" << x[0] << " d/dx" << i;
  }
}

// A double pendulum (configs/models/double_pendulum.yaml) with the sigmoid
// law on both joints.
Model<double> sigmoid_double_pendulum(const double (&fc)[2], const double (&slope)[2], const double (&shift)[2]) {
  Model<double> m = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  for (int i = 0; i < 2; ++i) {
    JointDynamics<double>& d = m.joints[static_cast<std::size_t>(i)].dynamics;
    d.friction_law = FrictionLaw::kSigmoid;
    d.coulomb_friction = fc[i];
    d.friction_slope = slope[i];
    d.friction_shift = shift[i];
    d.damping = 0.05;
  }
  return m;
}

const char* const kSigmoidNames[] = {"joint.joint1.friction",       "joint.joint1.friction_slope",
                                     "joint.joint1.friction_shift", "joint.joint2.friction",
                                     "joint.joint2.friction_slope", "joint.joint2.friction_shift"};

// ∂L/∂(φ1, φ2, φ3) of both joints through a whole rollout (reverse mode,
// both integrators) against central differences of the rollout's loss.
TEST(SigmoidFriction, RolloutGradientsMatchCentralDifferences) {
  const Model<double> model = sigmoid_double_pendulum({0.8, 0.5}, {6.0, 10.0}, {0.15, -0.1});
  std::string yaml = "p: [";
  for (const char* n : kSigmoidNames) yaml += std::string(yaml.size() > 4 ? ", " : "") + "{name: " + n + "}";
  const ParameterSet params = read_parameter_set(Config::parse(yaml + "]", "test.yaml"), "p", model);
  const int T = 400;
  Eigen::MatrixXd U(2, T);
  for (int k = 0; k < T; ++k) {
    U(0, k) = 6.0 * std::sin(2 * M_PI * 1.1 * k * 2e-3);
    U(1, k) = 3.0 * std::sin(2 * M_PI * 1.7 * k * 2e-3 + 1.0);
  }
  const Eigen::VectorXd q0 = Eigen::Vector2d(0.4, -0.3), qd0 = Eigen::Vector2d(0.05, -0.2);
  TrajectoryLoss loss;
  loss.stage = state_tracking_loss(Eigen::Vector2d(0.1, 0.2), Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(1.0, 2.0),
                                   Eigen::Vector2d(0.3, 0.1));
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    RolloutProblem p;
    p.model = model;
    p.step.dt = 2e-3;
    p.step.integrator = integ;
    p.physical = params;
    HybridRollout sim(p);
    const std::vector<double> x0 = sim.parameters().initial_variables();
    ASSERT_EQ(x0.size(), 6u);
    HybridRolloutGradient g;
    sim.gradient(x0, q0, qd0, U, loss, g);
    double worst = 0;
    for (std::size_t i = 0; i < x0.size(); ++i) {
      const double fd = richardson(
          [&](double xi) {
            std::vector<double> x = x0;
            x[i] = xi;
            return sim.value(x, q0, qd0, U, loss);
          },
          x0[i], 1e-3 * std::max(0.1, std::abs(x0[i])));
      EXPECT_GT(std::abs(fd), 1e-6) << kSigmoidNames[i] << ": the parameter must matter";
      EXPECT_NEAR(g.x[static_cast<Eigen::Index>(i)], fd, 1e-6 * std::abs(fd))
          << kSigmoidNames[i] << (integ == Integrator::kRK4 ? " [rk4]" : " [euler]");
      worst = std::max(worst, std::abs(g.x[static_cast<Eigen::Index>(i)] - fd) / std::abs(fd));
    }
    std::printf("[ sigmoid bptt vs fd ] %s: worst relative error %.1e over 6 parameters\n",
                integ == Integrator::kRK4 ? "rk4" : "euler", worst);
  }
}

// Data from our own engine (sigmoid law on both joints of a double
// pendulum, known φ); single shooting recovers all six φ from starts off by
// 20-50 %.
TEST(SigmoidFriction, SingleShootingRecoversTheSixParameters) {
  const double fc[2] = {0.8, 0.5}, slope[2] = {6.0, 10.0}, shift[2] = {0.15, -0.1};
  const Model<double> truth = sigmoid_double_pendulum(fc, slope, shift);
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  std::vector<testing::SinusoidRun> runs;
  for (int k = 0; k < 3; ++k)
    runs.push_back({Eigen::Vector2d(0.3 - 0.3 * k, -0.2 + 0.2 * k), Eigen::Vector2d(6.0 + 2 * k, 3.0 - k),
                    Eigen::Vector2d(0.4 + 0.3 * k, 0.7 + 0.2 * k)});
  const std::vector<Trajectory> data = testing::record_sinusoids(truth, step, runs, 400);
  const Model<double> start = sigmoid_double_pendulum({1.1, 0.35}, {8.0, 6.0}, {0.08, -0.15});
  const testing::SingleShootingFit fit = testing::fit_single_shooting(
      start,
      "[{name: joint.joint1.friction, initial: 1.1, bounds: [0, 5]},"
      " {name: joint.joint1.friction_slope, initial: 8.0, bounds: [0.5, 50]},"
      " {name: joint.joint1.friction_shift, initial: 0.08, bounds: [-1, 1]},"
      " {name: joint.joint2.friction, initial: 0.35, bounds: [0, 5]},"
      " {name: joint.joint2.friction_slope, initial: 6.0, bounds: [0.5, 50]},"
      " {name: joint.joint2.friction_shift, initial: -0.15, bounds: [-1, 1]}]",
      data, step, 100);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  const double truth_values[6] = {fc[0], slope[0], shift[0], fc[1], slope[1], shift[1]};
  double worst = 0;
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(fit.value(i), truth_values[i], 1e-4 * std::abs(truth_values[i]))
        << kSigmoidNames[i] << "\n" << fit.result.report;
    worst = std::max(worst, std::abs(fit.value(i) - truth_values[i]) / std::abs(truth_values[i]));
  }
  std::printf("[ sigmoid fit ] %d iterations, cost %.2e -> %.2e, worst relative error %.1e\n",
              fit.result.iterations, fit.result.initial_cost, fit.result.cost, worst);
}

// ---- named parameters ----

TEST(SigmoidFriction, SlopeAndShiftAreNamedWithTheirDomains) {
  Model<double> m = sigmoid_pendulum(0.3, 8.0, -0.05);
  const ParameterRef slope = resolve_parameter(m, "joint.joint1.friction_slope");
  const ParameterRef shift = resolve_parameter(m, "joint.joint1.friction_shift");
  EXPECT_EQ(get_parameter(m, slope), 8.0);
  EXPECT_EQ(get_parameter(m, shift), -0.05);
  set_parameter(m, slope, 12.0);
  set_parameter(m, shift, 0.2);
  EXPECT_EQ(m.joints[0].dynamics.friction_slope, 12.0);
  EXPECT_EQ(m.joints[0].dynamics.friction_shift, 0.2);
  EXPECT_EQ(parameter_bounds(slope), std::make_pair(0.0, std::numeric_limits<double>::infinity()));
  EXPECT_EQ(parameter_bounds(shift), std::make_pair(-std::numeric_limits<double>::infinity(),
                                                    std::numeric_limits<double>::infinity()));
  // φ1 is the existing Coulomb level.
  EXPECT_EQ(get_parameter(m, resolve_parameter(m, "joint.joint1.friction")), 0.3);
  for (const char* n : {"joint.joint1.friction_slope", "joint.joint1.friction_shift"}) {
    const auto p = resolve_named_parameter(n, m, false);
    ASSERT_TRUE(p.has_value()) << n;
    EXPECT_EQ(p->kind, ParameterKind::kModel);
  }
  EXPECT_NE(unknown_parameter_message("joint.joint1.friction_slop", m, false).find("joint.joint1.friction_slope"),
            std::string::npos);
}

// ---- YAML ----

std::string sigmoid_arm(const std::string& joint_keys) {
  return "name: arm\nbodies:\n  - name: link\n    parent: world\n    joint: {name: shoulder, type: revolute, "
         "axis: [0, 1, 0], friction: 0.2" +
         joint_keys + "}\n    mass: 1\n    com: [0, 0, -1]\n";
}

TEST(SigmoidFriction, YamlJointLoadsAndActsAsPublished) {
  const Model<double> m =
      parse_yaml_model(sigmoid_arm(", friction_law: sigmoid, friction_slope: 7.5, friction_shift: -0.04"), "inline");
  const JointDynamics<double>& d = m.joints[0].dynamics;
  EXPECT_EQ(d.friction_law, FrictionLaw::kSigmoid);
  EXPECT_EQ(d.coulomb_friction, 0.2);
  EXPECT_EQ(d.friction_slope, 7.5);
  EXPECT_EQ(d.friction_shift, -0.04);
  EXPECT_NEAR(testing::one_joint_passive_torque(m, 0.3), published_torque(0.3, 0.2, 7.5, -0.04), 1e-15);
  // The shift defaults to 0 (a symmetric sigmoid).
  EXPECT_EQ(parse_yaml_model(sigmoid_arm(", friction_law: sigmoid, friction_slope: 2"), "inline")
                .joints[0]
                .dynamics.friction_shift,
            0.0);
  // A generated model's joint takes the law through `joints:`.
  const Model<double> g = parse_yaml_model(
      "model:\n  generator: double_pendulum\n  joints:\n    joint2: {friction_law: sigmoid, friction: 0.3, "
      "friction_slope: 12, friction_shift: 0.05}\n",
      "dp.yaml");
  EXPECT_EQ(g.joints[0].dynamics.friction_law, FrictionLaw::kTanh);
  EXPECT_EQ(g.joints[1].dynamics.friction_law, FrictionLaw::kSigmoid);
  EXPECT_EQ(g.joints[1].dynamics.friction_slope, 12.0);
  EXPECT_EQ(g.joints[1].dynamics.friction_shift, 0.05);
}

void expect_sigmoid_yaml_error(const std::string& keys, const std::vector<std::string>& needles) {
  try {
    parse_yaml_model(sigmoid_arm(keys), "arm.yaml");
    ADD_FAILURE() << "accepted: " << keys;
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("arm.yaml:"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const std::string& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

TEST(SigmoidFriction, YamlRejectsBadLawsAndValues) {
  expect_sigmoid_yaml_error(", friction_law: logistic",
                            {"joint 'shoulder'", "friction_law", "logistic", "tanh", "atan", "stribeck", "sigmoid"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid", {"joint 'shoulder'", "friction_slope"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid, friction_slope: 0",
                            {"joint 'shoulder'", "friction_slope", "> 0"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid, friction_slope: -3", {"friction_slope", "> 0"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid, friction_slope: .nan", {"friction_slope"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid, friction_slope: 5, friction_shift: .nan", {"friction_shift"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid, friction_slope: 5, friction_shift: -.inf", {"friction_shift"});
  // Sigmoid parameters under another law would be ignored: refused.
  expect_sigmoid_yaml_error(", friction_slope: 5", {"joint 'shoulder'", "friction_slope", "sigmoid"});
  expect_sigmoid_yaml_error(", friction_law: stribeck, friction_shift: 0.1", {"friction_shift", "sigmoid"});
  expect_sigmoid_yaml_error(", friction_law: sigmoid, friction_slope: 5, stribeck_velocity: 0.1",
                            {"stribeck_velocity", "stribeck"});
}

// ---- the shipped example ----

// The example's joints act as the authors' get_FrictionTorque.m with the
// values published for the Panda's joints 2 and 4, and a rollout runs.
TEST(SigmoidFriction, ShippedPandaStyleExampleRuns) {
  const Config config = Config::load(testing::source_path("configs/rollout_sigmoid_friction_arm.yaml"));
  const Model<double> m = load_model_section(config.at("model"));
  const double phi[2][3] = {{0.87224, 9.0657, 0.025882}, {1.2794, 5.5903, 0.036194}};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(m.joints[static_cast<std::size_t>(i)].dynamics.friction_law, FrictionLaw::kSigmoid);
    for (double v : {-0.5, 0.0, 0.02, 1.0}) {
      Data<double> data(m);
      Eigen::VectorXd qd = Eigen::VectorXd::Zero(2);
      qd[i] = v;
      const Eigen::VectorXd q = Eigen::VectorXd::Zero(2);
      passive_forces(m, data, q, qd);
      const double* p = phi[i];
      const double tau_f = -p[0] / (1 + std::exp(-p[1] * p[2])) + p[0] / (1 + std::exp(-p[1] * (v + p[2])));
      EXPECT_NEAR(data.tau_passive[i], -tau_f, 1e-15) << "joint " << i << " v=" << v;
    }
  }
  const RolloutResult r = rollout(RolloutRequest{config, 5, ""});
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  ASSERT_EQ(r.trajectories.trajectories.size(), 4u);
  for (const Trajectory& t : r.trajectories.trajectories) {
    EXPECT_TRUE(t.q.allFinite());
    EXPECT_TRUE(t.qd.allFinite());
    EXPECT_GT(t.qd.cwiseAbs().maxCoeff(), 0.1);  // the arm moves
  }
}

}  // namespace neuralsim::sigmoid_friction_test
