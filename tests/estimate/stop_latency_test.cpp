// Ctrl-C inside a long iteration (issue #41): the stop flag is polled before
// every residual block, so a solve whose single evaluation takes far longer
// than the time to the stop ends within about one block's evaluation, and
// keeps its last accepted iterate (the best point whose iteration
// completed) instead of reporting a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace stop_latency_test_ns {

using Clock = std::chrono::steady_clock;

double stop_seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// A damped double pendulum under sinusoidal torques (testing::DampedPendulumFit,
// seed 7): n trajectories of `steps` steps, fitted for both lengths and a
// damping from wrong values. `bounds`: with bounds Ceres' Levenberg–Marquardt
// adds a projected line search whose gradient pass at the candidate precedes
// its residual pass.
struct StopSetup : testing::DampedPendulumFit {
  StopSetup(int n, int steps, bool bounds = true) : DampedPendulumFit(n, steps, 7, bounds) {}
};

// The cost a fresh problem gives at the kept point: the point is one the
// solve really evaluated, at the cost it reports.
double stop_cost_at(const StopSetup& s, const ProblemOptions& po, const std::vector<double>& x) {
  EstimationProblem fresh(s.ctx(), s.train, po);
  double cost = 0;
  EXPECT_TRUE(fresh.evaluate(x, &cost, nullptr));
  return cost;
}

// One Levenberg–Marquardt iteration of this problem (a residual pass and a
// Jacobian pass over 24 000 RK4 steps) takes several times the 0.1 s between
// the end of iteration 0 and the stop, raised from another thread as Ctrl-C
// does. Polled once per iteration, the stop would wait for the rest of
// iteration 1; polled per block, the solve returns within a block.
TEST(StopLatency, StopRaisedInsideALongIterationEndsTheSolveWithinABlock) {
  const StopSetup s(4, 6000);
  ProblemOptions po;
  po.window = 50;  // 480 blocks
  std::atomic<bool> stop{false};
  std::atomic<bool> iteration0{false};
  Clock::time_point t_stop;
  SolverOptions so;
  so.num_threads = 1;
  so.max_iterations = 50;
  so.should_abort = [&] { return stop.load(); };
  so.on_iteration = [&](const SolveProgress& p) {
    if (p.iteration == 0) iteration0 = true;
  };
  std::thread ctrl_c([&] {
    while (!iteration0.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    t_stop = Clock::now();
    stop = true;
  });
  EstimationProblem problem(s.ctx(), s.train, po);
  const auto t0 = Clock::now();
  const LocalResult r = problem.solve(s.params.initial_variables(), so);
  const auto t_end = Clock::now();
  ctrl_c.join();
  const double latency = stop_seconds(t_stop, t_end), solve_s = stop_seconds(t0, t_end);
  // Iteration 0 (one Jacobian pass) took solve_s - 0.1 - latency; one block is 1/480 of it.
  const double jacobian_pass = solve_s - 0.1 - latency;
  EXPECT_GT(jacobian_pass, 0.15) << "the problem is too small to show the latency";
  EXPECT_LT(latency, 0.25) << "Jacobian pass " << jacobian_pass << " s";
  EXPECT_LT(latency, 0.5 * jacobian_pass);
  EXPECT_TRUE(r.stopped);
  ASSERT_TRUE(r.usable) << r.report;
  // The best point whose iteration completed: cost as evaluated there, no
  // higher than the start's, the last entry of the convergence trace.
  EXPECT_LE(r.cost, r.initial_cost);
  EXPECT_EQ(r.cost, r.cost_history.back());
  EXPECT_NEAR(stop_cost_at(s, po, r.x), r.cost, 1e-12 * r.cost);
}

// The hard case: the stop lands inside the Jacobian pass at a point the
// solver has just accepted (where a failed evaluation makes Ceres report a
// failure and keep its state). The solve still ends usable, at that
// accepted point with its exact cost: the solve capped at one iteration.
TEST(StopLatency, StopInsideTheJacobianOfAnAcceptedStepKeepsTheLastIterate) {
  const StopSetup s(2, 200, false);  // no bounds: a residual pass, then the Jacobian pass
  ProblemOptions po;
  po.window = 20;
  EstimationProblem problem(s.ctx(), s.train, po);
  const int blocks = problem.num_residual_blocks();
  const std::vector<double> x0 = s.params.initial_variables();
  SolverOptions one;
  one.num_threads = 1;
  one.max_iterations = 1;
  const LocalResult first = problem.solve(x0, one);
  ASSERT_EQ(first.cost_history.size(), 2u);
  ASSERT_LT(first.cost_history[1], first.cost_history[0]) << "iteration 1 must accept its step";

  // Polled before every block: iteration 1 polls `blocks` times in its
  // residual pass at the candidate, then the stop comes halfway through the
  // Jacobian pass at the accepted candidate.
  std::atomic<int> polls{0};
  std::atomic<bool> after0{false};
  SolverOptions so = one;
  so.max_iterations = 50;
  so.on_iteration = [&](const SolveProgress& p) {
    if (p.iteration == 0) after0 = true;
  };
  so.should_abort = [&] { return after0.load() && ++polls > blocks + blocks / 2; };
  const LocalResult r = problem.solve(x0, so);
  EXPECT_TRUE(r.stopped);
  ASSERT_TRUE(r.usable) << r.report;
  EXPECT_TRUE(testing::bitwise_equal(r.x, first.x));
  EXPECT_EQ(r.cost, first.cost);
  EXPECT_EQ(r.cost_history, first.cost_history);
  EXPECT_NE(r.report.find("STOPPED inside an evaluation"), std::string::npos) << r.report;
  // The problem evaluates normally again afterwards (no block left skipped).
  double cost = 0;
  ASSERT_TRUE(problem.evaluate(first.x, &cost, nullptr));
  EXPECT_EQ(cost, first.cost);
  std::vector<double> gradient, reference;
  ASSERT_TRUE(problem.evaluate(first.x, &cost, &gradient));
  EstimationProblem fresh(s.ctx(), s.train, po);
  ASSERT_TRUE(fresh.evaluate(first.x, &cost, &reference));
  EXPECT_TRUE(testing::bitwise_equal(gradient, reference));
}

// A stop before any iterate: nothing to keep, no failure message pretending
// the model diverged; and a stop flag for the analysis (set_stop) cuts a
// Jacobian short and says so.
TEST(StopLatency, StopBeforeTheFirstIterateKeepsNothingAndTheAnalysisStopToo) {
  const StopSetup s(2, 200);
  ProblemOptions po;
  po.window = 20;
  EstimationProblem problem(s.ctx(), s.train, po);
  SolverOptions so;
  so.num_threads = 1;
  so.should_abort = [] { return true; };
  const LocalResult r = problem.solve(s.params.initial_variables(), so);
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.usable);
  EXPECT_NE(r.report.find("STOPPED inside the first evaluation"), std::string::npos) << r.report;

  problem.set_stop([] { return true; });
  double cost = 0;
  EXPECT_FALSE(problem.evaluate(s.params.initial_variables(), &cost, nullptr));
  EXPECT_TRUE(problem.stopped());
  problem.set_stop(nullptr);
  EXPECT_FALSE(problem.stopped());
  EXPECT_TRUE(problem.evaluate(s.params.initial_variables(), &cost, nullptr));
  EXPECT_GT(cost, 0);
}

}  // namespace stop_latency_test_ns
}  // namespace neuralsim
