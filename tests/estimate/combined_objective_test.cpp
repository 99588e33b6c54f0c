// ProblemOptions::torque_weight: a shooting fit plus the inverse-dynamics
// residuals times w. Its cost is exactly S + w²·T (S the shooting cost, T the
// inverse-dynamics cost), and minimizers of that weighted sum trace the
// Pareto front of the two measures: as w grows, the simulation cost of the
// fit cannot fall and its torque cost cannot rise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

struct PendulumData {
  Model<double> model;  // the fitted model: no Coulomb friction
  ParameterSet params;
  StepOptions step;
  std::vector<Trajectory> data;
  std::vector<const Trajectory*> train;
};

// Data from a pendulum with Coulomb friction the fitted model lacks, so no
// parameter makes both residuals zero and the two measures conflict.
PendulumData mismatched_pendulum() {
  PendulumData p;
  Model<double> truth = parse_yaml_model("generator: pendulum\nlength: 0.5\nmass: 0.7\n", "inline");
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.damping"), 0.05);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.friction"), 0.2);
  set_parameter(truth, resolve_parameter(truth, "joint.joint1.friction_velocity"), 0.05);
  p.step.integrator = Integrator::kRK4;
  p.step.dt = 0.01;
  for (int k = 0; k < 2; ++k) {
    Stepper<double> stepper(truth, p.step);
    Sinusoid s;
    s.offset = s.phase = Eigen::VectorXd::Zero(1);
    s.amplitude = Eigen::VectorXd::Constant(1, 1.5 + k);
    s.frequency_hz = Eigen::VectorXd::Constant(1, 0.5 + 0.4 * k);
    SinusoidControl<double> control(s);
    const Eigen::VectorXd q0 = Eigen::VectorXd::Constant(1, 0.4 - 0.6 * k), qd0 = Eigen::VectorXd::Zero(1);
    p.data.push_back(simulate(stepper, q0, qd0, control, 300, [] { return false; }));
    p.data.back().name = std::to_string(k);
  }
  p.model = truth;
  set_parameter(p.model, resolve_parameter(p.model, "joint.joint1.friction"), 0.0);
  p.params = read_parameter_set(
      Config::parse("p: [{name: link.link1.mass, initial: 1.0, bounds: [0.05, 10], transform: log},"
                    " {name: joint.joint1.damping, initial: 0.2, bounds: [0, 5]}]",
                    "test.yaml"),
      "p", p.model);
  return p;
}

ProblemOptions options(Formulation f, double torque_weight) {
  ProblemOptions po;
  po.formulation = f;
  po.window = 50;
  po.filter_window = 1;
  po.torque_weight = torque_weight;
  return po;
}

double cost_at(PendulumData& p, const ProblemOptions& po, const std::vector<double>& x) {
  p.train.clear();
  for (const auto& t : p.data) p.train.push_back(&t);
  ResidualContext ctx{&p.model, &p.params, p.step, ObservationSpec{}};
  EstimationProblem problem(ctx, p.train, po);
  double cost = 0;
  EXPECT_TRUE(problem.evaluate(x, &cost, nullptr));
  return cost;
}

TEST(CombinedObjective, CostIsShootingPlusWeightedTorqueCost) {
  PendulumData p = mismatched_pendulum();
  for (const std::vector<double>& x : {p.params.initial_variables(), std::vector<double>{std::log(0.6), 0.1}}) {
    const double shooting = cost_at(p, options(Formulation::kSingleShooting, 0), x);
    const double torque = cost_at(p, options(Formulation::kInverseDynamics, 0), x);
    const double combined = cost_at(p, options(Formulation::kSingleShooting, 2.5), x);
    ASSERT_GT(shooting, 0);
    ASSERT_GT(torque, 0);
    EXPECT_NEAR(combined, shooting + 2.5 * 2.5 * torque, 1e-12 * combined);
    const double multiple = cost_at(p, options(Formulation::kMultipleShooting, 0), x);
    const double multiple_combined = cost_at(p, options(Formulation::kMultipleShooting, 2.5), x);
    EXPECT_NEAR(multiple_combined, multiple + 2.5 * 2.5 * torque, 1e-12 * multiple_combined);
  }
}

TEST(CombinedObjective, WeightMovesTheFitAlongTheParetoFront) {
  PendulumData p = mismatched_pendulum();
  std::vector<double> sim_cost, torque_cost;
  for (double w : {0.0, 0.1, 1.0, 10.0}) {
    p.train.clear();
    for (const auto& t : p.data) p.train.push_back(&t);
    ResidualContext ctx{&p.model, &p.params, p.step, ObservationSpec{}};
    EstimationProblem problem(ctx, p.train, options(Formulation::kSingleShooting, w));
    SolverOptions so;
    so.max_iterations = 200;
    const LocalResult r = problem.solve(p.params.initial_variables(), so);
    ASSERT_TRUE(r.usable) << r.report;
    sim_cost.push_back(cost_at(p, options(Formulation::kSingleShooting, 0), r.x));
    torque_cost.push_back(cost_at(p, options(Formulation::kInverseDynamics, 0), r.x));
  }
  for (size_t k = 1; k < sim_cost.size(); ++k) {
    EXPECT_GE(sim_cost[k], sim_cost[k - 1] * (1 - 1e-9)) << "w index " << k;
    EXPECT_LE(torque_cost[k], torque_cost[k - 1] * (1 + 1e-9)) << "w index " << k;
  }
  // The ends differ: the measures really conflict on this data.
  EXPECT_GT(sim_cost.back(), 1.05 * sim_cost.front());
  EXPECT_LT(torque_cost.back(), 0.95 * torque_cost.front());
}

TEST(CombinedObjective, ConfigKeyIsCheckedAndRefusedWithInverseDynamics) {
  const ProblemOptions o = read_problem_options(Config::parse("r: {torque_weight: 0.5}", "c.yaml").at("r"));
  EXPECT_EQ(o.torque_weight, 0.5);
  auto error = [](const std::string& yaml) {
    try {
      read_problem_options(Config::parse(yaml, "c.yaml").at("r"));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string msg = error("r: {torque_weight: -1}");
  EXPECT_NE(msg.find("torque_weight"), std::string::npos) << msg;
  msg = error("r: {torque_weight: .nan}");
  EXPECT_NE(msg.find("torque_weight"), std::string::npos) << msg;
  msg = error("r: {type: inverse_dynamics, torque_weight: 1}");
  EXPECT_NE(msg.find("inverse_dynamics"), std::string::npos) << msg;
}

}  // namespace
}  // namespace neuralsim

namespace neuralsim {
namespace {

// The rows of the Jacobian by cluster, as the robust covariance estimates
// resample them: per trajectory, and per window (shooting windows, then the
// trajectory's torque samples in runs of `window`).
TEST(CombinedObjective, ResidualClustersFollowTheBlockLayout) {
  PendulumData p = mismatched_pendulum();
  for (const auto& t : p.data) p.train.push_back(&t);
  ProblemOptions po = options(Formulation::kSingleShooting, 0.5);
  ResidualContext ctx{&p.model, &p.params, p.step, ObservationSpec{}};
  EstimationProblem problem(ctx, p.train, po);
  Eigen::VectorXd r;
  const Eigen::MatrixXd J = problem.parameter_jacobian(p.params.initial_variables(), &r);
  const std::vector<int> by_trajectory = problem.residual_clusters(ClusterBy::kTrajectory);
  const std::vector<int> by_window = problem.residual_clusters(ClusterBy::kWindow);
  ASSERT_EQ(static_cast<Eigen::Index>(by_trajectory.size()), J.rows());
  ASSERT_EQ(static_cast<Eigen::Index>(by_window.size()), J.rows());
  // 301 samples: 6 shooting windows of 50 steps (one q row per step), then
  // the torque rows of the samples that survive the derivative filter.
  const int shooting_rows = 300;
  for (int t = 0; t < 2; ++t) {
    const auto first = std::find(by_trajectory.begin(), by_trajectory.end(), t) - by_trajectory.begin();
    const auto count = std::count(by_trajectory.begin(), by_trajectory.end(), t);
    EXPECT_GT(count, shooting_rows);
    // The trajectory's first six windows are its shooting windows, 50 rows each.
    for (int w = 0; w < 6; ++w)
      EXPECT_EQ(std::count(by_window.begin() + first, by_window.begin() + first + shooting_rows, by_window[first] + w), 50);
    // Its torque rows come in runs of at most 50 samples (one row each: nv = 1).
    std::map<int, int> runs;
    for (auto k = first + shooting_rows; k < first + count; ++k) ++runs[by_window[k]];
    for (const auto& [w, n] : runs) EXPECT_LE(n, 50);
    EXPECT_EQ(static_cast<int>(runs.size()), static_cast<int>((count - shooting_rows + 49) / 50));
  }
}

}  // namespace
}  // namespace neuralsim
