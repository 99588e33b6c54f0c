// Local solves with their residual blocks evaluated in parallel (issue 13):
// bit-identical to the serial solve at any thread count, for every
// formulation and solver; per-iteration progress; an abort inside a solve
// keeps the iterate reached, which is exactly the solve stopped there by its
// iteration cap.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <random>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace parallel_solve_test_ns {

// A damped double pendulum driven by sinusoidal torques (so that inverse
// dynamics has τ; testing::DampedPendulumFit, seed 3), n trajectories of
// `steps` steps.
struct PsolveSetup : testing::DampedPendulumFit {
  explicit PsolveSetup(int n = 3, int steps = 120) : DampedPendulumFit(n, steps, 3) {}
};

// Solves from the same start with TBB capped to `threads`.
LocalResult psolve_at(const PsolveSetup& s, const ProblemOptions& po, SolverOptions so, int threads) {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  so.num_threads = threads == 1 ? 1 : 0;
  EstimationProblem problem(s.ctx(), s.train, po);
  return problem.solve(s.params.initial_variables(), so);
}

void psolve_expect_identical_and_correct(const PsolveSetup& s, const ProblemOptions& po, const SolverOptions& so,
                                         double tolerance) {
  const LocalResult one = psolve_at(s, po, so, 1);
  const LocalResult two = psolve_at(s, po, so, 2);
  ASSERT_TRUE(one.usable) << one.report;
  EXPECT_TRUE(testing::bitwise_equal(one.x, two.x));
  EXPECT_TRUE(testing::bitwise_equal(one.cost, two.cost)) << one.cost << " vs " << two.cost;
  EXPECT_TRUE(testing::bitwise_equal(one.initial_cost, two.initial_cost));
  EXPECT_EQ(one.iterations, two.iterations);
  // And the fit is right (the data are noise-free): the cached, parallel
  // evaluation computes the residuals and Jacobians of the problem.
  const double expected[] = {3.0, 4.0, 0.3};
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(s.params.physical<double>(i, one.x[i]), expected[i], tolerance) << s.params[i].name();
}

TEST(ParallelSolve, SingleShootingIsBitIdenticalAtOneAndTwoThreads) {
  const PsolveSetup s;
  ProblemOptions po;
  po.window = 15;  // 24 blocks
  SolverOptions so;
  so.max_iterations = 40;
  psolve_expect_identical_and_correct(s, po, so, 1e-6);
}

TEST(ParallelSolve, MultipleShootingIsBitIdenticalAtOneAndTwoThreads) {
  const PsolveSetup s;
  ProblemOptions po;
  po.formulation = Formulation::kMultipleShooting;
  po.window = 20;
  SolverOptions so;
  so.max_iterations = 40;
  psolve_expect_identical_and_correct(s, po, so, 1e-6);
}

TEST(ParallelSolve, InverseDynamicsIsBitIdenticalAtOneAndTwoThreads) {
  const PsolveSetup s(2, 200);
  ProblemOptions po;
  po.formulation = Formulation::kInverseDynamics;
  po.filter_window = 1;
  SolverOptions so;
  so.max_iterations = 40;
  // Central differences of q̇ on exact data: O(dt²) regressor error.
  psolve_expect_identical_and_correct(s, po, so, 0.05);
}

TEST(ParallelSolve, LbfgsIsBitIdenticalAtOneAndTwoThreads) {
  const PsolveSetup s;
  ProblemOptions po;
  po.window = 15;
  SolverOptions so;
  so.solver = LocalSolver::kLbfgs;
  so.max_iterations = 60;
  const LocalResult one = psolve_at(s, po, so, 1);
  const LocalResult two = psolve_at(s, po, so, 2);
  ASSERT_TRUE(one.usable) << one.report;
  EXPECT_TRUE(testing::bitwise_equal(one.x, two.x));
  EXPECT_TRUE(testing::bitwise_equal(one.cost, two.cost));
  EXPECT_LT(one.cost, 1e-3 * one.initial_cost);
}

// The cached blocks give the problem's gradient: against central
// differences of the cost, and per-trajectory costs that add up.
TEST(ParallelSolve, CachedGradientMatchesFiniteDifferences) {
  const PsolveSetup s;
  ProblemOptions po;
  po.window = 15;
  EstimationProblem problem(s.ctx(), s.train, po);
  const std::vector<double> x = s.params.initial_variables();
  double cost = 0;
  std::vector<double> g;
  ASSERT_TRUE(problem.evaluate(x, &cost, &g));
  for (int i = 0; i < s.params.size(); ++i) {
    const double h = 1e-6 * std::max(1.0, std::abs(x[i]));
    std::vector<double> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    double cp = 0, cm = 0;
    ASSERT_TRUE(problem.evaluate(xp, &cp, nullptr));
    ASSERT_TRUE(problem.evaluate(xm, &cm, nullptr));
    EXPECT_NEAR(g[i], (cp - cm) / (2 * h), 1e-5 * std::max(1.0, std::abs(g[i]))) << s.params[i].name();
  }
  double again = 0;
  ASSERT_TRUE(problem.evaluate(x, &again, nullptr));
  EXPECT_TRUE(testing::bitwise_equal(cost, again));
  const std::vector<double> per = problem.cost_per_trajectory(x);
  ASSERT_EQ(per.size(), 3u);
  EXPECT_NEAR(per[0] + per[1] + per[2], cost, 1e-12 * cost);
  for (double c : per) EXPECT_GT(c, 0);
}

// The per-trajectory costs after a fit (identify's post-fit evaluation)
// visit each residual block a bounded number of times: the work is linear
// in the blocks. Ceres calls the evaluation callback before every
// single-block evaluation; when that callback checked all n blocks each
// time, the pass cost n² visits (643 s after an 18 s inverse-dynamics fit).
TEST(ParallelSolve, CostPerTrajectoryIsLinearInTheResidualBlocks) {
  ProblemOptions po;
  po.formulation = Formulation::kInverseDynamics;  // one block per sample
  po.filter_window = 1;
  for (const int steps : {100, 400}) {
    const PsolveSetup s(2, steps);
    EstimationProblem problem(s.ctx(), s.train, po);
    const long long n = problem.num_residual_blocks();
    ASSERT_GT(n, steps);  // two trajectories
    const long long before = problem.residual_block_visits();
    const std::vector<double> per = problem.cost_per_trajectory(s.params.initial_variables());
    const long long visits = problem.residual_block_visits() - before;
    // Problem::Evaluate prepares every block and reads it once; then one
    // cached read of each block for its cost.
    EXPECT_EQ(visits, 3 * n) << steps << " steps";
    double cost = 0;
    ASSERT_TRUE(problem.evaluate(s.params.initial_variables(), &cost, nullptr));
    EXPECT_NEAR(per[0] + per[1], cost, 1e-12 * cost);
  }
}

TEST(ParallelSolve, ReportsEveryIterationWithAnEta) {
  const PsolveSetup s;
  ProblemOptions po;
  po.window = 15;
  SolverOptions so;
  so.max_iterations = 4;
  so.function_tolerance = so.gradient_tolerance = so.parameter_tolerance = 0;  // run all 4
  std::vector<SolveProgress> seen;
  so.on_iteration = [&](const SolveProgress& p) { seen.push_back(p); };
  EstimationProblem problem(s.ctx(), s.train, po);
  const LocalResult r = problem.solve(s.params.initial_variables(), so);
  ASSERT_EQ(static_cast<int>(seen.size()), r.iterations);
  ASSERT_EQ(seen.size(), 5u) << r.report;  // iterations 0 (the start) .. 4
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].iteration, static_cast<int>(i));
    EXPECT_EQ(seen[i].max_iterations, 4);
    EXPECT_EQ(seen[i].round, -1);
    EXPECT_GE(seen[i].eta_s, 0);
    if (i > 0) {
      EXPECT_LE(seen[i].cost, seen[i - 1].cost);  // LM is monotone: the current iterate is the best
      EXPECT_GE(seen[i].elapsed_s, seen[i - 1].elapsed_s);
    }
  }
  EXPECT_EQ(seen.back().eta_s, 0);  // nothing left at the cap
  EXPECT_DOUBLE_EQ(seen.front().cost, r.initial_cost);
  EXPECT_DOUBLE_EQ(seen.back().cost, r.cost);
}

// The ETA from measured times (solve_progress.hpp) on a solve whose cost
// converges linearly, c_k = c*(1 + 0.5^k): the relative decrease halves every
// iteration, so the solve stops (|Δc|/c ≤ tol) at the first k with
// 0.5^k / (1 + 0.5^k) ≤ tol (k = 34). Iterations take 0.1 s after 2 s of
// setup, with one 1 s outlier. The ETA predicts that stop at 0.1 s per
// iteration; the old estimate (mean time since the start × the iterations
// left to max_iterations) was more than 10× too long here.
TEST(SolveEta, PredictsTheStopOfALinearlyConvergingSolveFromMeasuredTimes) {
  const double tol = 1e-10;
  const int max_iterations = 100;
  int stop = 1;
  while (!(std::pow(0.5, stop) / (1 + std::pow(0.5, stop)) <= tol)) ++stop;  // 34
  auto cost = [](int k) { return 3.0 * (1 + std::pow(0.5, k)); };
  SolveEta eta(max_iterations, tol);
  double elapsed = 2.0;
  for (int k = 0; k <= stop; ++k) {
    if (k > 0) elapsed += k == 5 ? 1.0 : 0.1;
    SolveProgress p;
    eta.update(k, elapsed, cost(k), p);
    EXPECT_NEAR(p.eta_max_s, p.iteration_s * (max_iterations - k), 1e-12);
    if (k < 3) continue;  // two decreases are needed for their ratio
    EXPECT_NEAR(p.iteration_s, 0.1, 1e-9) << k;  // the median ignores the setup and the outlier
    ASSERT_TRUE(p.eta_extrapolated) << k;
    // Early on the decrease shrinks a little slower than 0.5 (the 1 + 0.5^k
    // below it): an estimate from above, exact to an iteration from k = 8.
    const double predicted_stop = k + p.eta_s / p.iteration_s;
    EXPECT_GE(predicted_stop, stop - 1) << k;
    EXPECT_LE(predicted_stop, k < 8 ? stop + 5 : stop + 1) << k;
    const double old_eta = elapsed / k * (max_iterations - k);
    const double actual = 0.1 * (stop - k);
    if (k < stop - 1) EXPECT_GT(old_eta, 10 * actual) << k;
  }
}

// Without a tolerance to converge to (0), or while the decreases do not
// shrink, the ETA is the bound at max_iterations, from the measured
// iteration time.
TEST(SolveEta, FallsBackToTheBoundAtMaxIterations) {
  for (const double tol : {0.0, 1e-10}) {
    SolveEta eta(50, tol);
    for (int k = 0; k < 10; ++k) {
      SolveProgress p;
      // Decreases that grow: 1, 2, 4, ... relative to a cost that keeps falling.
      eta.update(k, 0.5 + 0.2 * k, 1e6 - std::pow(2.0, k), p);
      EXPECT_FALSE(p.eta_extrapolated) << k;
      EXPECT_DOUBLE_EQ(p.eta_s, p.eta_max_s);
      if (k > 0) EXPECT_NEAR(p.iteration_s, 0.2, 1e-9);
    }
  }
}

// An abort polled at iteration 3 ends the solve there with the iterate
// reached: bit-identical to the solve capped at 3 iterations, and usable.
TEST(ParallelSolve, AbortInsideTheSolveKeepsTheIterateReached) {
  const PsolveSetup s;
  ProblemOptions po;
  po.window = 15;
  SolverOptions so;
  so.max_iterations = 50;
  so.function_tolerance = so.gradient_tolerance = so.parameter_tolerance = 0;
  int last = -1;
  so.on_iteration = [&](const SolveProgress& p) { last = p.iteration; };
  so.should_abort = [&] { return last >= 3; };
  EstimationProblem problem(s.ctx(), s.train, po);
  const LocalResult stopped = problem.solve(s.params.initial_variables(), so);
  EXPECT_EQ(last, 3);
  EXPECT_TRUE(stopped.usable);
  EXPECT_LT(stopped.cost, stopped.initial_cost);

  SolverOptions capped = so;
  capped.max_iterations = 3;
  capped.should_abort = nullptr;
  capped.on_iteration = nullptr;
  const LocalResult reference = problem.solve(s.params.initial_variables(), capped);
  EXPECT_EQ(stopped.iterations, reference.iterations);
  EXPECT_TRUE(testing::bitwise_equal(stopped.x, reference.x));
  EXPECT_TRUE(testing::bitwise_equal(stopped.cost, reference.cost));
}

}  // namespace parallel_solve_test_ns
}  // namespace neuralsim
