// Identification recovers the ground truth used to generate the data, for
// every residual formulation and solver; the identifiability analysis names
// what the data cannot determine.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/model/inertia_check.hpp"
#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

Config parameters_config(const std::string& yaml) { return Config::parse(yaml, "test.yaml"); }

// Simulates `n` trajectories of `model` with a sinusoidal torque.
std::vector<Trajectory> generate(const Model<double>& model, const StepOptions& step, int n, double duration,
                                 double torque, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Trajectory> out;
  for (int k = 0; k < n; ++k) {
    Stepper<double> stepper(model, step);
    Sinusoid s;
    s.offset = s.phase = Eigen::VectorXd::Zero(model.nv);
    s.amplitude = Eigen::VectorXd::Constant(model.nv, torque);
    s.frequency_hz = Eigen::VectorXd::LinSpaced(model.nv, 0.5, 1.1);
    SinusoidControl<double> control(s);
    Eigen::VectorXd q0(model.nq), qd0 = Eigen::VectorXd::Zero(model.nv);
    for (int i = 0; i < model.nq; ++i) q0[i] = u(rng);
    Trajectory tr = simulate(stepper, q0, qd0, control, static_cast<long long>(std::llround(duration / step.dt)),
                             [] { return false; });
    tr.name = std::to_string(k);
    out.push_back(tr);
  }
  return out;
}

struct Fit {
  LocalResult result;
  std::vector<double> physical;
};

Fit fit(const Model<double>& model, const ParameterSet& params, const StepOptions& step,
        const std::vector<Trajectory>& data, const ProblemOptions& po, const SolverOptions& so,
        const std::vector<double>& x0, ObservationSpec observe = {}) {
  std::vector<const Trajectory*> train;
  for (const auto& t : data) train.push_back(&t);
  ResidualContext ctx{&model, &params, step, observe};
  EstimationProblem problem(ctx, train, po);
  Fit f;
  f.result = problem.solve(x0, so);
  for (int i = 0; i < params.size(); ++i) f.physical.push_back(params.physical<double>(i, f.result.x[i]));
  return f;
}

Model<double> double_pendulum() {
  return load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
}

StepOptions rk4(double dt) {
  StepOptions s;
  s.integrator = Integrator::kRK4;
  s.dt = dt;
  return s;
}

TEST(Estimation, SingleShootingRecoversLengths) {
  const Model<double> truth = double_pendulum();
  const auto data = generate(truth, rk4(0.01), 2, 1.5, 0.0, 1);
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, initial: 2.5, bounds: [0.1, 10]},"
                        " {name: link.link2.length, initial: 4.6, bounds: [0.1, 10]}]"),
      "p", truth);
  ProblemOptions po;
  po.window = 20;
  const Fit f = fit(truth, params, rk4(0.01), data, po, SolverOptions{}, params.initial_variables());
  ASSERT_TRUE(f.result.usable) << f.result.report;
  EXPECT_NEAR(f.physical[0], 3.0, 1e-6);
  EXPECT_NEAR(f.physical[1], 4.0, 1e-6);
}

TEST(Estimation, MultipleShootingRecoversLengthsOnLongChaoticData) {
  const Model<double> truth = double_pendulum();
  const auto data = generate(truth, rk4(0.01), 1, 4.0, 0.0, 2);
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, initial: 2.0, bounds: [0.1, 10]},"
                        " {name: link.link2.length, initial: 5.0, bounds: [0.1, 10]}]"),
      "p", truth);
  ProblemOptions po;
  po.formulation = Formulation::kMultipleShooting;
  po.window = 25;
  po.continuity_weight = 10;
  const Fit f = fit(truth, params, rk4(0.01), data, po, SolverOptions{}, params.initial_variables());
  ASSERT_TRUE(f.result.usable) << f.result.report;
  EXPECT_NEAR(f.physical[0], 3.0, 1e-5);
  EXPECT_NEAR(f.physical[1], 4.0, 1e-5);
}

TEST(Estimation, LbfgsRecoversLengths) {
  const Model<double> truth = double_pendulum();
  const auto data = generate(truth, rk4(0.01), 2, 1.0, 0.0, 3);
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, initial: 2.7, bounds: [0.1, 10]},"
                        " {name: link.link2.length, initial: 4.3, bounds: [0.1, 10]}]"),
      "p", truth);
  ProblemOptions po;
  po.window = 10;
  SolverOptions so;
  so.solver = LocalSolver::kLbfgs;
  so.max_iterations = 500;
  const Fit f = fit(truth, params, rk4(0.01), data, po, so, params.initial_variables());
  ASSERT_TRUE(f.result.usable) << f.result.report;
  EXPECT_NEAR(f.physical[0], 3.0, 1e-4);
  EXPECT_NEAR(f.physical[1], 4.0, 1e-4);
}

// τ = m l² q̈ + d q̇ + m g l sin q: inverse dynamics is linear in (m l², m l, d),
// so a torque-driven pendulum's mass, length and damping are all recovered.
TEST(Estimation, InverseDynamicsRecoversPendulumParameters) {
  Model<double> truth = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  set_parameter(truth, resolve_parameter(truth, "link.link1.mass"), 0.7);
  set_parameter(truth, resolve_parameter(truth, "link.link1.length"), 0.4);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.damping"), 0.05);
  StepOptions step = rk4(0.001);
  const auto data = generate(truth, step, 2, 3.0, 1.5, 4);
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.mass, initial: 1.0, bounds: [0.01, 10], transform: log},"
                        " {name: link.link1.length, initial: 1.0, bounds: [0.01, 10]},"
                        " {name: joint.joint1.damping, initial: 0.0, bounds: [0, 1]}]"),
      "p", truth);
  ProblemOptions po;
  po.formulation = Formulation::kInverseDynamics;
  po.filter_window = 1;
  const Fit f = fit(truth, params, step, data, po, SolverOptions{}, params.initial_variables());
  ASSERT_TRUE(f.result.usable) << f.result.report;
  // The recorded torque is held over each step while the central difference
  // of q̇ spans two steps: a half-step (0.5 ms) lag that biases damping slightly.
  EXPECT_NEAR(f.physical[0], 0.7, 2e-3);
  EXPECT_NEAR(f.physical[1], 0.4, 1e-3);
  EXPECT_NEAR(f.physical[2], 0.05, 1e-3);
}

// A pendulum held still at many angles: τ = m g l sin q only, so the data
// determine m·l but not m and l separately.
TEST(Identifiability, StaticTorquesOnlyDetermineMassTimesLength) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  Trajectory tr;
  const int T = 60;
  tr.time = Eigen::VectorXd::LinSpaced(T, 0.0, 5.9);
  tr.q.resize(T, 1);
  tr.qd = RowMatrixXd::Zero(T, 1);
  tr.tau.resize(T, 1);
  for (int k = 0; k < T; ++k) {
    tr.q(k, 0) = -1.2 + 2.4 * k / (T - 1.0);  // quasi-static sweep: q̈ ≈ 0, q̇ ignored by the residual's weights
    tr.tau(k, 0) = 1.0 * 9.81 * 1.0 * std::sin(tr.q(k, 0));
  }
  tr.qd.setZero();
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.mass, initial: 1.0, bounds: [0.01, 10], transform: log},"
                        " {name: link.link1.length, initial: 1.0, bounds: [0.01, 10], transform: log}]"),
      "p", model);
  ProblemOptions po;
  po.formulation = Formulation::kInverseDynamics;
  po.filter_window = 1;
  ResidualContext ctx{&model, &params, rk4(0.1), ObservationSpec{}};
  EstimationProblem problem(ctx, {&tr}, po);
  const std::vector<double> x = params.initial_variables();
  Eigen::VectorXd r;
  const Eigen::MatrixXd J = problem.parameter_jacobian(x, &r);
  const Identifiability id = analyze_identifiability(params, x, J, r);
  ASSERT_EQ(id.weak_directions.size(), 1u);
  const std::string& d = id.weak_directions[0].description;
  EXPECT_NE(d.find("only link.link1.mass · link.link1.length"), std::string::npos) << d;
}

// Two well-determined torque offsets (inverse dynamics: their columns of J
// are constant) stay identifiable whatever their current values and their
// declared scales: the analysis is invariant to parameter sizes and units
// (#41: at a point where one offset was near zero it declared
// "joint5.torque_offset · joint7.torque_offset^-2.51" the only identifiable
// combination).
TEST(Identifiability, InvariantToParameterSizesAndUnits) {
  const Model<double> model = double_pendulum();
  Trajectory tr;
  const int T = 80;
  tr.time = Eigen::VectorXd::LinSpaced(T, 0.0, 0.79);
  tr.q.resize(T, 2);
  tr.qd.resize(T, 2);
  tr.tau.resize(T, 2);
  for (int k = 0; k < T; ++k) {
    const double t = tr.time[k];
    tr.q.row(k) << std::sin(3 * t), 0.5 * std::cos(2 * t);
    tr.qd.row(k) << 3 * std::cos(3 * t), -std::sin(2 * t);
    tr.tau.row(k) << 2 * std::sin(5 * t) + 0.3, std::cos(4 * t) - 0.2;
  }
  auto analyze = [&](double c1, double c2, double scale) {
    const ParameterSet params = read_parameter_set(
        parameters_config("p: [{name: joint.joint1.torque_offset, initial: " + std::to_string(c1) +
                          ", scale: " + std::to_string(scale) + "}, {name: joint.joint2.torque_offset, initial: " +
                          std::to_string(c2) + ", scale: " + std::to_string(scale) + "}]"),
        "p", model);
    ProblemOptions po;
    po.formulation = Formulation::kInverseDynamics;
    po.filter_window = 5;
    Model<double> m = model;
    ResidualContext ctx{&m, &params, rk4(0.01), ObservationSpec{}};
    EstimationProblem problem(ctx, {&tr}, po);
    const std::vector<double> x = params.initial_variables();
    Eigen::VectorXd r;
    const Eigen::MatrixXd J = problem.parameter_jacobian(x, &r);
    return analyze_identifiability(params, x, J, r);
  };
  const Identifiability a = analyze(0.3, -0.2, 1.0);
  const Identifiability b = analyze(1e-9, 2e-3, 1.0);   // one offset nearly zero
  const Identifiability c = analyze(0.3, -0.2, 1e-3);   // other units
  for (const Identifiability* id : {&a, &b, &c}) {
    EXPECT_TRUE(id->weak_directions.empty()) << id->weak_directions.front().description;
    ASSERT_EQ(id->singular_values.size(), 2u);
    EXPECT_NEAR(id->singular_values[1] / id->singular_values[0], a.singular_values[1] / a.singular_values[0], 1e-9);
  }
  // The same physical standard errors in any units.
  EXPECT_NEAR(c.std_error[0], a.std_error[0], 1e-9 * a.std_error[0]);
  EXPECT_NEAR(c.std_error[1], a.std_error[1], 1e-9 * a.std_error[1]);
}

// The warnings before trusting an interval (#36), on a Jacobian whose
// properties are known by construction: two nearly parallel columns
// (cond(JᵀJ) ≈ 4e8 after equilibration), a zero column, and a
// parameter at its upper bound.
TEST(Identifiability, WarnsOfConditionBoundsAndUnseenParameters) {
  const Model<double> model = double_pendulum();
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, initial: 5, bounds: [1, 5]}, {name: link.link2.length, "
                        "initial: 2}, {name: link.link1.mass, initial: 1}]"),
      "p", model);
  const std::vector<double> x = params.initial_variables();
  const int m = 40;
  Eigen::MatrixXd J(m, 3);
  for (int k = 0; k < m; ++k) {
    J(k, 0) = std::sin(0.3 * k);
    J(k, 1) = std::sin(0.3 * k) + 1e-4 * std::cos(0.7 * k);
    J(k, 2) = 0;
  }
  const Eigen::VectorXd r = Eigen::VectorXd::Constant(m, 1e-3);
  const Identifiability id = analyze_identifiability(params, x, J, r);
  EXPECT_EQ(id.unseen, std::vector<int>{2});
  EXPECT_TRUE(std::isinf(id.condition_number));  // the zero column: σ_min = 0
  std::vector<std::string> w = uncertainty_warnings(params, x, id, 1e8, true);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[0].find("cond(JᵀJ) = inf"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("link.link1.length ended at its upper bound 5"), std::string::npos) << w[1];
  EXPECT_NE(w[2].find("'link.link1.mass' has no effect on any residual"), std::string::npos) << w[2];
  // Values given to evaluate are not fitted: no bound warning.
  EXPECT_EQ(uncertainty_warnings(params, x, id, 1e8, false).size(), 2u);

  // Without the zero column: cond(JᵀJ) = (σ_max/σ_min)² of the two unit
  // columns, against the threshold either side of it.
  const ParameterSet two = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, initial: 3}, {name: link.link2.length, initial: 2}]"), "p", model);
  const Identifiability id2 = analyze_identifiability(two, two.initial_variables(), J.leftCols(2), r);
  Eigen::MatrixXd Js = J.leftCols(2);
  for (int i = 0; i < 2; ++i) Js.col(i).normalize();
  const Eigen::VectorXd sv = singular_value_decomposition(Js, SingularVectors::kNone).values;
  const double expected = std::pow(sv[0] / sv[1], 2);
  EXPECT_NEAR(id2.condition_number, expected, 1e-6 * expected);
  EXPECT_GT(expected, 1e8);
  EXPECT_EQ(uncertainty_warnings(two, two.initial_variables(), id2, expected * 1.01, true).size(), 0u);
  w = uncertainty_warnings(two, two.initial_variables(), id2, expected * 0.99, true);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find(format_printf("cond(JᵀJ) = %.3g", expected)), std::string::npos) << w[0];
}

TEST(ParameterSet, RejectsBadBoundsAndNames) {
  const Model<double> model = double_pendulum();
  EXPECT_THROW(read_parameter_set(parameters_config("p: [{name: link.link1.length, bounds: [5, 1]}]"), "p", model),
               ConfigError);
  EXPECT_THROW(read_parameter_set(parameters_config("p: [{name: link.link1.length, bounds: [.nan, 1]}]"), "p", model),
               ConfigError);
  EXPECT_THROW(read_parameter_set(parameters_config("p: [{name: link.link1.lenght}]"), "p", model), ConfigError);
  EXPECT_THROW(read_parameter_set(parameters_config("p: [{name: link.link1.length, initial: 20, bounds: [0.1, 10]}]"),
                                         "p", model),
               ConfigError);
  EXPECT_THROW(read_parameter_set(parameters_config("p: [{name: gravity.z, transform: log}]"), "p", model),
               ConfigError);  // log of a negative value
}

// Without `initial` the fit starts at the model's value (l1 = 3 here) when
// the bounds hold it; otherwise at the middle of the range, with a warning
// that names the parameter, the value and the bounds.
TEST(ParameterSet, StartsAtTheModelsValueInsideTheBounds) {
  const Model<double> model = double_pendulum();
  std::vector<std::string> warnings;
  const ParameterSet inside = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, bounds: [0.1, 10]}]"), "p", model, nullptr, &warnings);
  EXPECT_EQ(inside[0].initial, 3.0);
  EXPECT_TRUE(warnings.empty());
  const ParameterSet outside = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, bounds: [4, 8]}]"), "p", model, nullptr, &warnings);
  EXPECT_EQ(outside[0].initial, 6.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("test.yaml:1"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("'link.link1.length'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("[4, 8]"), std::string::npos) << warnings[0];
  // A range only sets where random starts are drawn: the model's value, inside the bounds, still wins.
  const ParameterSet ranged = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, range: [5, 6], bounds: [0.1, 10]}]"), "p", model);
  EXPECT_EQ(ranged[0].initial, 3.0);
}

TEST(BasinHopping, StartsAreReproducibleAndInsideBounds) {
  const Model<double> model = double_pendulum();
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, bounds: [0.1, 10]}, {name: link.link2.length, bounds: [0.1, 10]}]"),
      "p", model);
  BasinHoppingOptions o;
  o.seed = 11;
  const std::vector<double> best{3.0, 4.0};
  for (int round = 0; round < 4; ++round)
    for (int k = 0; k < 5; ++k) {
      const auto a = basin_hopping_start(params, o, round, k, &best);
      const auto b = basin_hopping_start(params, o, round, k, &best);
      EXPECT_EQ(a, b);
      for (double v : a) {
        EXPECT_GE(v, 0.1);
        EXPECT_LE(v, 10.0);
      }
    }
  // Later rounds concentrate around the best point (decaying spread).
  double early = 0, late = 0;
  for (int k = 0; k < 200; ++k) {
    early += std::abs(basin_hopping_start(params, o, 1, k, &best)[0] - 3.0);
    late += std::abs(basin_hopping_start(params, o, 8, k, &best)[0] - 3.0);
  }
  EXPECT_LT(late, 0.2 * early);
}

}  // namespace
}  // namespace neuralsim

namespace neuralsim {
namespace {

// Gross outliers in a few samples bias least squares; a Huber loss limits
// their pull (here per shooting window of 5 samples).
TEST(Estimation, HuberLossResistsOutliers) {
  const Model<double> truth = double_pendulum();
  auto data = generate(truth, rk4(0.01), 2, 1.5, 0.0, 5);
  for (auto& tr : data)
    for (int k = 7; k < tr.size(); k += 37) tr.q(k, 0) += 0.5;  // sensor glitches
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: link.link1.length, initial: 2.8, bounds: [0.1, 10]},"
                        " {name: link.link2.length, initial: 4.2, bounds: [0.1, 10]}]"),
      "p", truth);
  ProblemOptions po;
  po.window = 5;
  const Fit plain = fit(truth, params, rk4(0.01), data, po, SolverOptions{}, params.initial_variables());
  po.loss = Loss::kHuber;
  po.loss_scale = 1e-4;
  const Fit robust = fit(truth, params, rk4(0.01), data, po, SolverOptions{}, params.initial_variables());
  const double err_plain = std::abs(plain.physical[0] - 3.0) + std::abs(plain.physical[1] - 4.0);
  const double err_robust = std::abs(robust.physical[0] - 3.0) + std::abs(robust.physical[1] - 4.0);
  EXPECT_LT(err_robust, 0.2 * err_plain) << "plain " << err_plain << " robust " << err_robust;
}

}  // namespace
}  // namespace neuralsim

namespace neuralsim {
namespace {

// Passive terms whose coefficient starts at exactly 0 must still carry their
// derivative (exactly_zero, core/scalar.hpp): a fit of Coulomb friction and
// a spring from 0 converges to the values that generated the data. With a
// value-only test (`Fc != 0`) both derivatives vanish at the start and LM
// stops at once with the initial zeros.
TEST(Estimation, FrictionAndSpringIdentifiedStartingFromZero) {
  Model<double> truth = parse_yaml_model("generator: pendulum\nlength: 1.0\nmass: 1.0\n", "inline");
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.friction"), 0.3);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.friction_velocity"), 0.1);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.spring.stiffness"), 2.0);
  const std::vector<Trajectory> data = generate(truth, rk4(0.01), 3, 3.0, 2.0, 5);
  Model<double> start = truth;
  set_parameter(start, resolve_parameter(start, "joint.joint1.friction"), 0.0);
  set_parameter(start, resolve_parameter(start, "joint.joint1.spring.stiffness"), 0.0);
  const ParameterSet params = read_parameter_set(
      parameters_config("p: [{name: joint.joint1.friction, initial: 0, bounds: [0, 10]},"
                        " {name: joint.joint1.spring.stiffness, initial: 0, bounds: [0, 100]}]"),
      "p", start);
  ProblemOptions po;
  po.window = 100;
  SolverOptions so;
  so.max_iterations = 50;
  const Fit f = fit(start, params, rk4(0.01), data, po, so, params.initial_variables());
  ASSERT_TRUE(f.result.usable) << f.result.report;
  EXPECT_GT(f.result.iterations, 1) << "stalled at the initial zeros: " << f.result.report;
  EXPECT_NEAR(f.physical[0], 0.3, 1e-6);
  EXPECT_NEAR(f.physical[1], 2.0, 1e-6);
}

// A link's whole inertia estimated through its log-Cholesky coordinates
// stays physically consistent, where a fit of the plain entries leaves the
// feasible set. The truth is a point mass (inertia about the COM = 0, on the
// boundary); with noisy data the plain fit of the COM offset and the
// rotational inertia about the COM lands on a negative inertia for some
// noise, the log-Cholesky fit never does, and both recover what the data
// determine: m·c and the inertia about the joint, I_c + m c².
TEST(Estimation, LogCholeskyFitStaysPhysicallyConsistent) {
  const Model<double> truth = parse_yaml_model("generator: pendulum\nlength: 0.5\nmass: 2.0\n", "inline");
  const double mc_true = 2.0 * 0.5, joint_inertia_true = 2.0 * 0.25;
  Model<double> start = truth;  // a rod with some inertia: strictly inside the feasible set
  set_parameter(start, resolve_parameter(start, "link.link1.inertia.xx"), 0.05);
  set_parameter(start, resolve_parameter(start, "link.link1.inertia.yy"), 0.05);
  set_parameter(start, resolve_parameter(start, "link.link1.inertia.zz"), 0.001);
  ProblemOptions po;
  po.window = 200;
  SolverOptions so;
  so.max_iterations = 100;
  bool plain_left_the_feasible_set = false;
  for (unsigned seed = 1; seed <= 10 && !plain_left_the_feasible_set; ++seed) {
    std::vector<Trajectory> data = generate(truth, rk4(0.005), 2, 2.0, 1.0, seed);
    std::mt19937 rng(100 + seed);
    std::normal_distribution<double> noise(0.0, 2e-3);
    for (Trajectory& t : data)
      for (Eigen::Index k = 1; k < t.size(); ++k) t.q(k, 0) += noise(rng);
    const ParameterSet plain = read_parameter_set(
        parameters_config("p: [{name: link.link1.com.z}, {name: link.link1.inertia.yy}]"), "p", start);
    const Fit a = fit(start, plain, rk4(0.005), data, po, so, plain.initial_variables());
    Model<double> fitted_a = start;
    plain.apply(a.result.x.data(), fitted_a);
    plain_left_the_feasible_set = !inertia_problem(fitted_a.bodies[0].inertia).empty();

    const ParameterSet lc = read_parameter_set(
        parameters_config("p: [{name: link.link1.inertial, transform: log_cholesky}]"), "p", start);
    ASSERT_EQ(lc.size(), 10);
    const Fit b = fit(start, lc, rk4(0.005), data, po, so, lc.initial_variables());
    ASSERT_TRUE(b.result.usable) << b.result.report;
    Model<double> fitted_b = start;
    lc.apply(b.result.x.data(), fitted_b);
    const Inertia<double>& I = fitted_b.bodies[0].inertia;
    EXPECT_EQ(inertia_problem(I), "") << "seed " << seed;
    // What the data determine (about the joint axis y): m·c_z and I_yy at the joint.
    EXPECT_NEAR(-I.h.z(), mc_true, 2e-2 * mc_true) << "seed " << seed;
    EXPECT_NEAR(I.I_origin(1, 1), joint_inertia_true, 2e-2 * joint_inertia_true) << "seed " << seed;
  }
  EXPECT_TRUE(plain_left_the_feasible_set) << "no noise realization pushed the plain fit outside the feasible set";
}

}  // namespace
}  // namespace neuralsim
