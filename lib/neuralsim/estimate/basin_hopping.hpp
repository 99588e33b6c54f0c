// Parallel basin hopping (McCarty & McGuire, "Parallel monotonic basin
// hopping for low thrust trajectory optimization", 2018; used by NeuralSim
// for system identification): each round runs a population of local solves
// on TBB workers from starts sampled around the best solution so far, with a
// spread that decays from round to round.
//
// Determinism: start k of round r draws from its own RNG seeded by
// (seed, r, k), every local solve gives the same result at any thread count
// (its residual blocks may be evaluated in parallel, but are summed in block
// order), and the round's best is chosen by (cost, k), or is the lowest k
// that reaches the cost threshold; so a seed gives the same result at any
// thread count.
//
// Threads (as many as TBB allows, i.e. --threads): with a cost threshold and
// at least two residual blocks per thread, the starts run one at a time in
// index order, each solve on all threads over its residual blocks, so no
// thread works on a start the threshold rule will discard; otherwise starts
// are taken in index order by one worker per thread, and workers without a
// start help the running solves (nested, isolated TBB loops over residual
// blocks). SolverOptions::on_iteration is called from the workers with
// `round` and `start` filled in.
//
// Processes (BasinHoppingOptions::communicator, core/communicator.hpp):
// the ranks form groups of processes_per_start; start k of a round runs on
// group k mod groups, each group's starts in index order as above, every
// solve spread over its group's ranks by residual block
// (SolverOptions::communicator); after the round every rank gathers every
// start's result and the lowest hit, and picks the round's best from them
// exactly as one process would: the same result at any number of processes,
// group size and threads. A round cut short on any rank is cut short on all.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "neuralsim/core/communicator.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"

namespace neuralsim {

struct BasinHoppingOptions {
  int population = 4;         // local solves per round
  int max_rounds = 10;        // iteration budget
  double cost_threshold = -1; // stop once best cost <= threshold (< 0: off)
  double time_budget_s = std::numeric_limits<double>::infinity();
  double initial_spread = 0.5;  // perturbation std. dev., as a fraction of each parameter's range
  double decay = 0.7;           // spread multiplier per round
  uint64_t seed = 0;
  bool enabled = true;          // false: one local solve from the initial guess
  bool random_initial = false;  // the first start is random too (studies of local search from random guesses)
  const Communicator* communicator = nullptr;  // the processes the starts are spread over (null: this one)
  // Processes that share each local solve (its residual blocks spread over
  // them); 1: each process solves its own starts. Local solve times are
  // heavy-tailed (a start that fails runs to max_iterations), so with few
  // starts per process a round waits for its slowest process; sharing every
  // solve balances the work when the problem has a few residual blocks per
  // process. The result is the same at any value.
  int processes_per_start = 1;
};

struct RoundRecord {
  int round = 0;
  double best_cost = 0;        // best so far after this round
  double round_best_cost = 0;  // best of this round's population
  double spread = 0;
  int usable_solves = 0;       // among the starts counted in `starts`
  int starts = 0;              // starts solved to the end: the population, or up to the threshold's winner
  double seconds = 0;          // wall time of the round
};

struct BasinHoppingState {
  int next_round = 0;
  bool has_best = false;
  LocalResult best;
  std::vector<RoundRecord> history;
};

struct BasinHoppingResult {
  BasinHoppingState state;  // the last complete round, or a later best of an incomplete one
  std::string stop_reason;  // "threshold", "rounds", "time", "interrupted", "local"
  bool incomplete_round = false;  // stopped inside a round (not checkpointed)
};

using ProblemFactory = std::function<std::unique_ptr<EstimationProblem>()>;

// Runs rounds from `state` (fresh or resumed from a checkpoint). `on_round`
// is called after every complete round (progress, checkpoint).
// `should_abort` (polled inside rounds, every solver iteration) stops early;
// the round it interrupts is incomplete (BasinHoppingResult).
BasinHoppingResult basin_hopping(const ProblemFactory& make_problem, const ParameterSet& params,
                                 const BasinHoppingOptions& options, const SolverOptions& solver,
                                 BasinHoppingState state,
                                 const std::function<void(const BasinHoppingState&)>& on_round,
                                 const std::function<bool()>& should_abort);

// The start of solve `k` in round `round` (exposed for tests).
std::vector<double> basin_hopping_start(const ParameterSet& params, const BasinHoppingOptions& options, int round,
                                        int k, const std::vector<double>* best);

}  // namespace neuralsim
