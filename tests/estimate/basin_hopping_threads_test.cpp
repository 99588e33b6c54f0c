// Basin hopping at 1 and 2 threads (issue 13): the same result, round
// records and stop reason, with and without the cost-threshold early stop;
// and the early stop picks what its definition says (the lowest start of the
// round that reaches the threshold), checked against independent solves.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cstring>
#include <mutex>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace bh_threads_test_ns {

// Experiment 1 as simid reads it (configs/simid_double_pendulum_lengths.yaml),
// on the first 1 s of each trajectory and with fewer LM iterations, so that a
// run takes about a second.
struct BhtExperiment {
  Config cfg =
      Config::load(testing::source_path("configs/simid_double_pendulum_lengths.yaml"), {"data.max_samples=101"});
  Experiment experiment = load_experiment(cfg);
  Config est = cfg.at("estimate");
  ParameterSet params = read_parameter_set(est, "parameters", experiment.model);
  ObservationSpec observe = read_observation(est.at("observe"), experiment.model);
  ProblemOptions problem_options = read_problem_options(est.at("residual"));
  SolverOptions solver = read_solver_options(est.at("solver"));
  BasinHoppingOptions bh = read_basin_hopping(est.at("basin_hopping"), 3);
  DataSplit data = load_data(cfg.at("data"), experiment.model);
  std::vector<const Trajectory*> train;

  // max_train > 0 keeps that many training trajectories (one residual block
  // each): with fewer blocks than two per thread, basin hopping runs starts
  // concurrently even with the threshold; with more, one at a time.
  explicit BhtExperiment(int max_train = 0) {
    for (const auto& t : data.train.trajectories)
      if (max_train <= 0 || static_cast<int>(train.size()) < max_train) train.push_back(&t);
    solver.max_iterations = 4;
    bh.population = 4;
    bh.max_rounds = 2;
  }
  ProblemFactory factory() const {
    return [this] {
      return std::make_unique<EstimationProblem>(ResidualContext{&experiment.model, &params, experiment.step, observe},
                                                 train, problem_options);
    };
  }
  BasinHoppingResult run(const BasinHoppingOptions& o, int threads, SolverOptions so) const {
    tbb::global_control cap(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
    return basin_hopping(factory(), params, o, so, BasinHoppingState{}, nullptr, nullptr);
  }
  BasinHoppingResult run(const BasinHoppingOptions& o, int threads) const { return run(o, threads, solver); }
};

const BhtExperiment& bht_experiment() {
  static const BhtExperiment e;
  return e;
}
const BhtExperiment& bht_experiment_one_block() {
  static const BhtExperiment e(1);
  return e;
}

bool bht_same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void bht_expect_identical(const BasinHoppingResult& a, const BasinHoppingResult& b) {
  ASSERT_TRUE(a.state.has_best);
  ASSERT_TRUE(b.state.has_best);
  ASSERT_EQ(a.state.best.x.size(), b.state.best.x.size());
  EXPECT_EQ(std::memcmp(a.state.best.x.data(), b.state.best.x.data(), a.state.best.x.size() * sizeof(double)), 0);
  EXPECT_TRUE(bht_same_bits(a.state.best.cost, b.state.best.cost));
  EXPECT_EQ(a.state.best.iterations, b.state.best.iterations);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
  EXPECT_EQ(a.state.next_round, b.state.next_round);
  ASSERT_EQ(a.state.history.size(), b.state.history.size());
  for (size_t r = 0; r < a.state.history.size(); ++r) {
    SCOPED_TRACE("round " + std::to_string(r));
    EXPECT_TRUE(bht_same_bits(a.state.history[r].best_cost, b.state.history[r].best_cost));
    EXPECT_TRUE(bht_same_bits(a.state.history[r].round_best_cost, b.state.history[r].round_best_cost));
    EXPECT_EQ(a.state.history[r].usable_solves, b.state.history[r].usable_solves);
    EXPECT_EQ(a.state.history[r].starts, b.state.history[r].starts);
  }
}

TEST(BasinHoppingThreads, IdenticalAtOneAndTwoThreadsWithoutEarlyStop) {
  for (const BhtExperiment* e : {&bht_experiment(), &bht_experiment_one_block()}) {
    BasinHoppingOptions o = e->bh;
    o.cost_threshold = -1;
    const BasinHoppingResult one = e->run(o, 1), two = e->run(o, 2);
    bht_expect_identical(one, two);
    EXPECT_EQ(one.stop_reason, "rounds");
    for (const RoundRecord& r : one.state.history) EXPECT_EQ(r.starts, o.population);
  }
}

// The solve of start k of round 0 on its own, from its documented start.
LocalResult bht_alone(const BhtExperiment& e, const BasinHoppingOptions& o, int k) {
  SolverOptions so = e.solver;
  so.num_threads = 1;
  return e.factory()()->solve(basin_hopping_start(e.params, o, 0, k, nullptr), so);
}

void bht_check_early_stop(const BhtExperiment& e) {
  BasinHoppingOptions o = e.bh;
  o.max_rounds = 3;
  // A threshold between the round-0 costs, chosen from independent solves
  // so that some but not all starts reach it: the rule has to decide.
  std::vector<LocalResult> alone;
  for (int k = 0; k < o.population; ++k) alone.push_back(bht_alone(e, o, k));
  std::vector<double> costs;
  for (const auto& r : alone) costs.push_back(r.usable ? r.cost : 1e300);
  std::vector<double> sorted = costs;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_LT(sorted[1], sorted[2]) << "need distinct costs";
  o.cost_threshold = 0.5 * (sorted[1] + sorted[2]);  // two starts reach it
  int winner = -1;
  for (int k = 0; k < o.population && winner < 0; ++k)
    if (costs[k] <= o.cost_threshold) winner = k;
  ASSERT_GE(winner, 0);

  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " thread(s)");
    const BasinHoppingResult r = e.run(o, threads);
    ASSERT_TRUE(r.state.has_best);
    EXPECT_EQ(r.stop_reason, "threshold");
    ASSERT_EQ(r.state.history.size(), 1u);
    EXPECT_EQ(r.state.history[0].starts, winner + 1);
    ASSERT_EQ(r.state.best.x.size(), alone[winner].x.size());
    EXPECT_EQ(std::memcmp(r.state.best.x.data(), alone[winner].x.data(), r.state.best.x.size() * sizeof(double)), 0);
    EXPECT_TRUE(bht_same_bits(r.state.best.cost, alone[winner].cost));
  }
  bht_expect_identical(e.run(o, 1), e.run(o, 2));
}

TEST(BasinHoppingThreads, EarlyStopPicksTheLowestStartBelowTheThresholdAtAnyThreadCount) {
  ASSERT_GE(bht_experiment().factory()()->num_residual_blocks(), 4);  // starts one at a time at 2 threads
  bht_check_early_stop(bht_experiment());
}

TEST(BasinHoppingThreads, EarlyStopWithConcurrentStartsPicksTheSameStart) {
  ASSERT_EQ(bht_experiment_one_block().factory()()->num_residual_blocks(), 1);  // starts run concurrently
  bht_check_early_stop(bht_experiment_one_block());
}

// With the shipped threshold (1e-8) the fit runs several rounds with early
// stops possible in each: identical at 1 and 2 threads.
TEST(BasinHoppingThreads, ShippedThresholdIdenticalAtOneAndTwoThreads) {
  const BhtExperiment& e = bht_experiment();
  BasinHoppingOptions o = e.bh;
  o.max_rounds = 3;
  SolverOptions so = e.solver;
  so.max_iterations = 30;  // the shipped value: some starts reach 1e-8
  bht_expect_identical(e.run(o, 1, so), e.run(o, 2, so));
  const BhtExperiment& few = bht_experiment_one_block();
  bht_expect_identical(few.run(o, 1, so), few.run(o, 2, so));
}

TEST(BasinHoppingThreads, ProgressNamesRoundAndStart) {
  const BhtExperiment& e = bht_experiment();
  BasinHoppingOptions o = e.bh;
  o.cost_threshold = -1;
  SolverOptions so = e.solver;
  std::mutex m;
  std::vector<SolveProgress> seen;
  so.on_iteration = [&](const SolveProgress& p) {
    std::lock_guard<std::mutex> lock(m);
    seen.push_back(p);
  };
  const BasinHoppingResult r = e.run(o, 2, so);
  ASSERT_FALSE(seen.empty());
  std::vector<std::vector<int>> last(o.max_rounds, std::vector<int>(o.population, -1));
  for (const SolveProgress& p : seen) {
    ASSERT_GE(p.round, 0);
    ASSERT_LT(p.round, o.max_rounds);
    ASSERT_GE(p.start, 0);
    ASSERT_LT(p.start, o.population);
    EXPECT_EQ(p.iteration, last[p.round][p.start] + 1) << "iterations of one solve arrive in order";
    last[p.round][p.start] = p.iteration;
  }
  for (const auto& round : last)
    for (int it : round) EXPECT_GE(it, 1);  // every start reported
  (void)r;
}

}  // namespace bh_threads_test_ns
}  // namespace neuralsim
