#include "neuralsim/estimate/basin_hopping.hpp"

#include <tbb/parallel_for.h>
#include <tbb/global_control.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

namespace neuralsim {
namespace {

// Width used to scale perturbations of variable i: its random-start range
// when finite, else its bounds, else the magnitude of the value.
double variable_width(const ParameterSet& params, int i, double x) {
  const EstimatedParameter& p = params[i];
  if (std::isfinite(p.range_low) && std::isfinite(p.range_high))
    return std::abs(params.variable(i, p.range_high) - params.variable(i, p.range_low));
  const double lo = params.variable_lower(i), hi = params.variable_upper(i);
  if (std::isfinite(lo) && std::isfinite(hi)) return hi - lo;
  return std::abs(x) + 1.0;  // infinite bounds: relative spread
}

double clamp_to_bounds(const ParameterSet& params, int i, double x) {
  return std::min(std::max(x, params.variable_lower(i)), params.variable_upper(i));
}

// Every start this rank solved, and its lowest hit, for the other ranks.
std::string pack_round(const std::vector<LocalResult>& solves, const std::vector<char>& solved, int first_hit) {
  ByteWriter w;
  w.put<std::int32_t>(first_hit);
  for (std::size_t k = 0; k < solves.size(); ++k) {
    if (!solved[k]) continue;
    const LocalResult& r = solves[k];
    w.put<std::int32_t>(static_cast<std::int32_t>(k));
    w.put_vector(r.x);
    w.put_vector(r.states);
    w.put(r.initial_cost);
    w.put(r.cost);
    w.put<std::int32_t>(r.iterations);
    w.put_vector(r.cost_history);
    w.put<std::uint8_t>(r.usable);
    w.put<std::uint8_t>(r.stopped);
    w.put_string(r.report);
    w.put(r.seconds);
  }
  return w.bytes();
}

// Merges every rank's starts into `solves`; returns the lowest hit of all.
int unpack_rounds(const std::vector<std::string>& messages, std::vector<LocalResult>& solves) {
  int first_hit = static_cast<int>(solves.size());
  for (const std::string& m : messages) {
    ByteReader r(m);
    first_hit = std::min(first_hit, static_cast<int>(r.get<std::int32_t>()));
    while (!r.done()) {
      LocalResult& s = solves.at(static_cast<std::size_t>(r.get<std::int32_t>()));
      s.x = r.get_vector();
      s.states = r.get_vector();
      s.initial_cost = r.get<double>();
      s.cost = r.get<double>();
      s.iterations = r.get<std::int32_t>();
      s.cost_history = r.get_vector();
      s.usable = r.get<std::uint8_t>() != 0;
      s.stopped = r.get<std::uint8_t>() != 0;
      s.report = r.get_string();
      s.seconds = r.get<double>();
    }
  }
  return first_hit;
}

}  // namespace

std::vector<double> basin_hopping_start(const ParameterSet& params, const BasinHoppingOptions& options, int round,
                                        int k, const std::vector<double>* best) {
  std::vector<double> x = params.initial_variables();
  if (round == 0 && k == 0 && !options.random_initial) return x;  // always try the user's guess
  std::seed_seq seq{static_cast<uint64_t>(options.seed), static_cast<uint64_t>(round), static_cast<uint64_t>(k)};
  std::mt19937_64 rng(seq);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < params.size(); ++i) {
    const EstimatedParameter& p = params[i];
    if (round == 0 || best == nullptr) {
      // First round: spread the population over the whole range.
      if (std::isfinite(p.range_low) && std::isfinite(p.range_high)) {
        const double a = params.variable(i, p.range_low), b = params.variable(i, p.range_high);
        x[i] = a + (b - a) * uniform(rng);
      } else {
        x[i] += options.initial_spread * variable_width(params, i, x[i]) * normal(rng);
      }
    } else {
      const double spread = options.initial_spread * std::pow(options.decay, round - 1);
      x[i] = (*best)[i] + spread * variable_width(params, i, (*best)[i]) * normal(rng);
    }
    x[i] = clamp_to_bounds(params, i, x[i]);
  }
  return x;
}

BasinHoppingResult basin_hopping(const ProblemFactory& make_problem, const ParameterSet& params,
                                 const BasinHoppingOptions& options, const SolverOptions& solver,
                                 BasinHoppingState state,
                                 const std::function<void(const BasinHoppingState&)>& on_round,
                                 const std::function<bool()>& should_abort) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  BasinHoppingResult result;
  const int population = options.enabled ? std::max(1, options.population) : 1;
  const int rounds = options.enabled ? options.max_rounds : 1;
  SolverOptions local = solver;
  local.should_abort = should_abort;
  auto better = [](const LocalResult& a, const LocalResult& b) { return a.usable && (!b.usable || a.cost < b.cost); };
  result.stop_reason = options.enabled ? "rounds" : "local";
  const bool use_threshold = options.enabled && options.cost_threshold >= 0;
  // How the threads are used (the result is the same either way):
  //  - with the cost threshold, every start after the round's winner is
  //    wasted, and the winner is known only once it finishes; so when the
  //    problem has enough residual blocks to keep every thread busy (two per
  //    thread), the starts run one at a time in index order, each on all
  //    threads over its blocks: no speculative work at all;
  //  - otherwise up to `threads` starts run at once (coarse grain, no
  //    synchronization per evaluation), in index order, and threads left
  //    without a start help the running solves over their blocks.
  const int threads = std::max(
      1, static_cast<int>(std::min<size_t>(
             tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
             static_cast<size_t>(std::max(1, tbb::this_task_arena::max_concurrency())))));
  // Processes: groups of processes_per_start consecutive ranks; start k
  // runs on group k mod groups, each solve spread over its group's ranks by
  // residual block. This process's starts (all of them without a
  // communicator), in index order.
  const Communicator* comm = options.communicator;
  const int per_start = std::min(std::max(1, options.processes_per_start), size_of(comm));
  const int groups = (size_of(comm) + per_start - 1) / per_start;
  const int my_group = rank_of(comm) / per_start;
  std::unique_ptr<Communicator> group;
  if (comm && per_start > 1) group = comm->split(my_group);
  const bool group_leader = rank_of(group.get()) == 0;  // reports the group's starts
  if (group && group->size() > 1) local.communicator = group.get();
  std::vector<int> own_starts;
  for (int k = 0; k < population; ++k)
    if (k % groups == my_group) own_starts.push_back(k);
  int workers = std::min(static_cast<int>(own_starts.size()), threads);
  if (workers > 1 && use_threshold && local.num_threads != 1 &&
      make_problem()->num_residual_blocks() >= 2 * threads)
    workers = 1;
  // A solve shared with other processes communicates from this thread only
  // (MPI_THREAD_FUNNELED), one start at a time.
  if (local.communicator) workers = 1;
  for (int round = state.next_round; round < rounds; ++round) {
    const auto tr = Clock::now();
    std::vector<LocalResult> solves(population);
    const std::vector<double>* best_x = state.has_best ? &state.best.x : nullptr;
    // Early stopping that does not depend on timing: once start j reaches
    // the cost threshold, starts after j are cut short (or never begun);
    // starts before j still finish, so the winner is the lowest index that
    // reaches the threshold, at any thread count.
    //
    // Starts are handed out in index order (an atomic ticket, not
    // tbb::parallel_for's range splitting): the rule discards work on any
    // start above the winner, and splitting [0, n) in halves makes the second
    // thread begin at start n/2, i.e. speculate on exactly the starts most
    // likely to be discarded while the low starts that decide the round wait
    // in a queue. With tickets, the threads always work on the lowest starts
    // not yet taken; a start above a winner is not even begun.
    std::atomic<int> first_hit{population};
    std::atomic<int> next_start{0};
    std::vector<char> solved(static_cast<std::size_t>(population), 0);
    auto run_start = [&](int k) {
      SolverOptions mine = local;
      mine.should_abort = [&, k] { return first_hit.load() < k || (should_abort && should_abort()); };
      if (solver.on_iteration)
        mine.on_iteration = [&, round, k](const SolveProgress& p) {
          SolveProgress q = p;
          q.round = round;
          q.start = k;
          solver.on_iteration(q);
        };
      std::unique_ptr<EstimationProblem> problem = make_problem();
      solves[k] = problem->solve(basin_hopping_start(params, options, round, k, best_x), mine);
      solved[static_cast<std::size_t>(k)] = group_leader;
      if (use_threshold && solves[k].usable && solves[k].cost <= options.cost_threshold) {
        int cur = first_hit.load();
        while (k < cur && !first_hit.compare_exchange_weak(cur, k)) {
        }
      }
    };
    auto worker = [&] {
      for (int t = next_start++; t < static_cast<int>(own_starts.size()); t = next_start++) {
        const int k = own_starts[static_cast<std::size_t>(t)];
        // Agreed within a group: its processes take the same starts.
        if (first_hit.load() < k || any_of(local.communicator, should_abort && should_abort())) continue;
        run_start(k);
      }
    };
    if (workers <= 1) {
      worker();
    } else {
      tbb::parallel_for(0, workers, [&](int) { worker(); }, tbb::simple_partitioner());
    }
    // A round cut short by should_abort (Ctrl-C, time budget) is incomplete:
    // its best may still be reported, but it is neither recorded nor
    // checkpointed, so --resume reruns it whole and reproduces an
    // uninterrupted run bit for bit. Across processes: cut short on one, on all.
    const bool cut_short = any_of(comm, should_abort && should_abort());
    if (comm) first_hit = unpack_rounds(comm->all_gather(pack_round(solves, solved, first_hit.load())), solves);
    RoundRecord rec;
    rec.round = round;
    rec.spread = round == 0 ? 1.0 : options.initial_spread * std::pow(options.decay, round - 1);
    // Only the starts the rule keeps (up to the winner) are counted, so the
    // record is the same at any thread count.
    const int kept = std::min(population, first_hit.load() + 1);
    rec.starts = kept;
    int best_k = -1;
    for (int k = 0; k < kept; ++k) {
      if (!solves[k].usable) continue;
      ++rec.usable_solves;
      if (best_k < 0 || solves[k].cost < solves[best_k].cost) best_k = k;
    }
    if (first_hit.load() < population) best_k = first_hit.load();
    rec.round_best_cost = best_k >= 0 ? solves[best_k].cost : std::numeric_limits<double>::infinity();
    if (cut_short) {
      result.state = state;
      if (best_k >= 0 && (!state.has_best || better(solves[best_k], state.best))) {
        result.state.best = solves[best_k];
        result.state.has_best = true;
      }
      result.stop_reason = std::chrono::duration<double>(Clock::now() - t0).count() >= options.time_budget_s
                               ? "time"
                               : "interrupted";
      result.incomplete_round = true;
      return result;
    }
    if (best_k >= 0 && (!state.has_best || better(solves[best_k], state.best))) {
      state.best = solves[best_k];
      state.has_best = true;
    }
    rec.best_cost = state.has_best ? state.best.cost : std::numeric_limits<double>::infinity();
    rec.seconds = std::chrono::duration<double>(Clock::now() - tr).count();
    state.history.push_back(rec);
    state.next_round = round + 1;
    if (on_round) on_round(state);
    if (options.enabled && options.cost_threshold >= 0 && state.has_best && state.best.cost <= options.cost_threshold) {
      result.stop_reason = "threshold";
      break;
    }
    if (std::chrono::duration<double>(Clock::now() - t0).count() >= options.time_budget_s) {
      result.stop_reason = "time";
      break;
    }
  }
  result.state = std::move(state);
  return result;
}

}  // namespace neuralsim
