// System-identification costs (Google Benchmark):
//
//  (a) SingleShooting/{Forward,Jacobian}/P: one evaluation of the
//      single-shooting cost (double rollout of the data, problem.evaluate)
//      vs. one Jacobian of all residuals w.r.t. P parameters
//      (problem.parameter_jacobian: Ceres Jets, P <= 8 lanes per pass) on the
//      5-link chain (configs/models/chain5.yaml), P = 2, 8, 32 physical
//      parameters picked from neuralsim::parameter_names. Data: one 2 s
//      trajectory (RK4, dt 0.01, sinusoidal torques), windows of 50 samples.
//  (b) BasinHopping/Throughput/{current,legacy}/early_stop:E/threads:N:
//      basin-hopping throughput on experiment 1
//      (configs/simid_double_pendulum_lengths.yaml), TBB capped to N threads
//      by tbb::global_control.
//        early_stop:0  one round of 8 starts, <= 5 LM iterations each, no
//                      cost threshold: every start runs to its cap;
//        early_stop:1  the shipped fit (population 4, <= 8 rounds, stop at
//                      cost <= 1e-8, <= 30 LM iterations), seeds 1..5 one
//                      after the other; the rule "start k runs until a
//                      lower-numbered start reaches the threshold" decides.
//      starts = the starts the rule keeps (RoundRecord::starts: all, or up
//      to each round's winner), the same at any thread count; starts/s =
//      starts / wall time, starts per CPU-second = starts / process CPU time
//      (getrusage, all threads). "current" is basin_hopping(); "legacy"
//      re-implements the previous scheduling here (tbb::parallel_for over
//      the population, which splits [0, n) in halves, and serial local
//      solves) for an A/B on the same machine at the same time. Each case
//      also records its busiest thread's CPU time (/proc/self/task): CPU at
//      1 thread / busiest thread at 2 bounds the wall speedup an idle
//      machine could give (docs/simid.md, Threads).
//  (c) Experiment1/TimeToOptimum/seed:S: the whole basin-hopping fit of
//      experiment 1 as simid runs it (population 4, <= 8 rounds, stop at
//      cost <= 1e-8; all cores), wall time until it stops; counters report
//      whether it reached the global optimum (max relative error < 1e-3).
//
// The summary at the end prints the ratios from the minimum over the
// repetitions (CPU time for (a); for (b) the repetition with the least wall
// time, with its process and per-thread CPU time; wall time for (c): worker
// threads' CPU time is not measured by benchmark's main-thread clock).
#include <sys/resource.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include <nlohmann/json.hpp>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/step/simulate.hpp"

namespace neuralsim::bench {
namespace {

const int kParameterCounts[] = {2, 8, 32};
constexpr int kThroughputPopulation = 8;
const int kSeeds[] = {1, 2, 3, 4, 5};

std::string source_path(const std::string& rel) { return std::string(NEURALSIM_SOURCE_DIR) + "/" + rel; }

// ---------------------------------------------------------------------------
// (a) Jacobian vs forward rollout on the 5-link chain

struct ChainProblem {
  Model<double> model;
  ParameterSet params;
  std::vector<Trajectory> data;
  std::vector<const Trajectory*> train;
  std::unique_ptr<EstimationProblem> problem;
  std::vector<double> x;
  std::vector<std::string> names;
};

// The first `n` parameter names of the chain, by kind (all masses, then all
// lengths, dampings, ...), so that every set is a prefix of the next.
std::vector<std::string> pick_parameters(const Model<double>& model, int n) {
  static const char* const kSuffixes[] = {".mass",    ".length",     ".damping", ".friction",
                                          ".armature", ".inertia.yy", ".com.x",   ".com.z",
                                          ".inertia.xx", ".inertia.zz"};
  const std::vector<std::string> all = parameter_names(model);
  std::vector<std::string> out;
  for (const char* suffix : kSuffixes)
    for (const std::string& name : all) {
      const std::string s(suffix);
      if (static_cast<int>(out.size()) < n && name.size() > s.size() &&
          name.compare(name.size() - s.size(), s.size(), s) == 0)
        out.push_back(name);
    }
  if (static_cast<int>(out.size()) < n)
    throw std::runtime_error("chain5 has only " + std::to_string(out.size()) + " parameters of the kinds used");
  return out;
}

StepOptions chain_step() {
  StepOptions s;
  s.integrator = Integrator::kRK4;
  s.dt = 0.01;
  return s;
}

Model<double> chain_truth() {
  Model<double> m = load_yaml_model(source_path("configs/models/chain5.yaml"));
  // Some joint friction and damping so that those parameters act on the data.
  for (const std::string& name : parameter_names(m)) {
    const auto ends = [&](const std::string& s) {
      return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".damping")) set_parameter(m, resolve_parameter(m, name), 0.05);
    if (ends(".friction")) set_parameter(m, resolve_parameter(m, name), 0.02);
    if (ends(".armature")) set_parameter(m, resolve_parameter(m, name), 0.01);
  }
  return m;
}

std::vector<Trajectory> chain_data(const Model<double>& model) {
  Stepper<double> stepper(model, chain_step());
  Sinusoid s;
  s.offset = s.phase = Eigen::VectorXd::Zero(model.nv);
  s.amplitude = Eigen::VectorXd::Constant(model.nv, 1.0);
  s.frequency_hz = Eigen::VectorXd::LinSpaced(model.nv, 0.5, 1.1);
  SinusoidControl<double> control(s);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  Eigen::VectorXd q0(model.nq), qd0 = Eigen::VectorXd::Zero(model.nv);
  for (int i = 0; i < model.nq; ++i) q0[i] = u(rng);
  Trajectory tr = simulate(stepper, q0, qd0, control, 200, [] { return false; });
  tr.name = "chain";
  return {tr};
}

ChainProblem& chain_problem(int n) {
  static std::map<int, std::unique_ptr<ChainProblem>> cache;
  auto& slot = cache[n];
  if (slot) return *slot;
  slot = std::make_unique<ChainProblem>();
  ChainProblem& c = *slot;
  c.model = chain_truth();
  c.data = chain_data(c.model);
  for (const auto& t : c.data) c.train.push_back(&t);
  c.names = pick_parameters(c.model, n);
  std::string yaml = "p: [";
  for (size_t i = 0; i < c.names.size(); ++i) {
    const double v = get_parameter(c.model, resolve_parameter(c.model, c.names[i]));
    yaml += (i ? ", " : "") + std::string("{name: ") + c.names[i] + ", initial: " + std::to_string(v) + "}";
  }
  yaml += "]";
  c.params = read_parameter_set(Config::parse(yaml, "simid_bench"), "p", c.model);
  ResidualContext ctx{&c.model, &c.params, chain_step(), ObservationSpec{}};
  ProblemOptions po;
  po.window = 50;
  c.problem = std::make_unique<EstimationProblem>(ctx, c.train, po);
  // Evaluate away from the truth (as during a fit): +5% on every parameter.
  c.x = c.params.initial_variables();
  for (int i = 0; i < c.params.size(); ++i)
    c.x[i] = c.params.variable(i, c.params.physical<double>(i, c.x[i]) * 1.05 + 1e-3);
  return c;
}

void BM_Forward(benchmark::State& state, int n) {
  ChainProblem& c = chain_problem(n);
  double cost = 0;
  for (auto _ : state) {
    if (!c.problem->evaluate(c.x, &cost, nullptr)) state.SkipWithError("simulation failed");
    benchmark::DoNotOptimize(cost);
  }
  state.SetLabel("chain5 P=" + std::to_string(c.params.size()) + " residuals=" +
                 std::to_string(c.problem->num_residuals()));
}

void BM_Jacobian(benchmark::State& state, int n) {
  ChainProblem& c = chain_problem(n);
  Eigen::VectorXd r;
  for (auto _ : state) {
    Eigen::MatrixXd J = c.problem->parameter_jacobian(c.x, &r);
    benchmark::DoNotOptimize(J.data());
  }
  state.SetLabel("chain5 P=" + std::to_string(c.params.size()) + " residuals=" +
                 std::to_string(c.problem->num_residuals()));
}

// ---------------------------------------------------------------------------
// (b), (c) experiment 1: configs/simid_double_pendulum_lengths.yaml

struct Experiment1 {
  // Read exactly as simid reads it (experiment layer), so the benchmark
  // times the tool's own problem.
  Config cfg = Config::load(source_path("configs/simid_double_pendulum_lengths.yaml"));
  Experiment experiment = load_experiment(cfg);
  const Model<double>& model = experiment.model;
  Config est = cfg.at("estimate");
  ParameterSet params = read_parameter_set(est, "parameters", model);
  ObservationSpec observe = read_observation(est.at("observe"), model);
  ProblemOptions problem_options = read_problem_options(est.at("residual"));
  SolverOptions solver = read_solver_options(est.at("solver"));
  BasinHoppingOptions bh = read_basin_hopping(est.at("basin_hopping"), 0);
  DataSplit data = load_data(cfg.at("data"), model);
  std::vector<const Trajectory*> train_ptrs;
  std::map<std::string, double> truth;

  Experiment1() {
    const nlohmann::json gt = est.at("ground_truth").to_json();  // keys contain dots
    for (const auto& p : params.all()) truth[p.name()] = gt.at(p.name()).get<double>();
    for (const auto& t : data.train.trajectories) train_ptrs.push_back(&t);
  }

  ProblemFactory factory() const {
    return [this] {
      ResidualContext ctx{&model, &params, experiment.step, observe};
      return std::make_unique<EstimationProblem>(ctx, train_ptrs, problem_options);
    };
  }

  double max_relative_error(const std::vector<double>& x) const {
    double m = 0;
    for (int i = 0; i < params.size(); ++i) {
      const double t = truth.at(params[i].name());
      m = std::max(m, std::abs(params.physical<double>(i, x[i]) - t) / std::abs(t));
    }
    return m;
  }
};

const Experiment1& experiment1() {
  static const Experiment1 e;
  return e;
}

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// The scheduling basin_hopping() used before issue 13, for the A/B: the
// population split by tbb::parallel_for's ranges, serial local solves, the
// same early-stop rule and round bookkeeping (no checkpoints, no abort).
BasinHoppingResult legacy_basin_hopping(const ProblemFactory& make_problem, const ParameterSet& params,
                                        const BasinHoppingOptions& options, const SolverOptions& solver) {
  BasinHoppingResult result;
  BasinHoppingState& state = result.state;
  const int population = std::max(1, options.population);
  SolverOptions local = solver;
  local.num_threads = 1;
  const bool use_threshold = options.cost_threshold >= 0;
  result.stop_reason = "rounds";
  for (int round = 0; round < options.max_rounds; ++round) {
    std::vector<LocalResult> solves(population);
    const std::vector<double>* best_x = state.has_best ? &state.best.x : nullptr;
    std::atomic<int> first_hit{population};
    tbb::parallel_for(0, population, [&](int k) {
      SolverOptions mine = local;
      mine.should_abort = [&, k] { return first_hit.load() < k; };
      solves[k] = make_problem()->solve(basin_hopping_start(params, options, round, k, best_x), mine);
      if (use_threshold && solves[k].usable && solves[k].cost <= options.cost_threshold) {
        int cur = first_hit.load();
        while (k < cur && !first_hit.compare_exchange_weak(cur, k)) {
        }
      }
    });
    RoundRecord rec;
    rec.round = round;
    rec.starts = std::min(population, first_hit.load() + 1);
    int best_k = -1;
    for (int k = 0; k < rec.starts; ++k)
      if (solves[k].usable && (best_k < 0 || solves[k].cost < solves[best_k].cost)) best_k = k;
    if (first_hit.load() < population) best_k = first_hit.load();
    if (best_k >= 0 && (!state.has_best || solves[best_k].cost < state.best.cost)) {
      state.best = solves[best_k];
      state.has_best = true;
    }
    state.history.push_back(rec);
    state.next_round = round + 1;
    if (use_threshold && state.has_best && state.best.cost <= options.cost_threshold) {
      result.stop_reason = "threshold";
      break;
    }
  }
  return result;
}

// CPU seconds of every thread of this process (/proc/self/task/*/stat,
// utime + stime, in clock ticks of 10 ms).
std::map<int, double> thread_cpu_seconds() {
  std::map<int, double> out;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream f(e.path() / "stat");
    std::string line;
    std::getline(f, line);
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(line.substr(paren + 2));
    std::vector<std::string> v;
    for (std::string t; fields >> t;) v.push_back(t);
    if (v.size() < 13) continue;  // v[0] is field 3 (state); utime, stime are fields 14, 15
    out[std::stoi(e.path().filename().string())] = (std::stod(v[11]) + std::stod(v[12])) / tick;
  }
  return out;
}

// The largest CPU time any one thread spent between two snapshots: on an
// idle machine the run cannot take less wall time than that.
double busiest_thread_s(const std::map<int, double>& before, const std::map<int, double>& after) {
  double m = 0;
  for (const auto& [tid, t] : after) {
    const auto it = before.find(tid);
    m = std::max(m, t - (it == before.end() ? 0.0 : it->second));
  }
  return m;
}

struct ThroughputRun {
  double wall_s = 1e300, cpu_s = 0;  // of the repetition with the least wall time
  double busiest_thread_s = 0;       // its busiest thread's CPU time
  long long starts = 0;
  std::vector<double> best_x;  // the last fit's result, compared across cases
};
std::map<std::string, ThroughputRun>& throughput_results() {
  static std::map<std::string, ThroughputRun> m;
  return m;
}

std::string throughput_name(bool legacy, bool early_stop, int threads) {
  return std::string("BasinHopping/Throughput/") + (legacy ? "legacy" : "current") +
         "/early_stop:" + (early_stop ? "1" : "0") + "/threads:" + std::to_string(threads);
}

void BM_Throughput(benchmark::State& state, bool legacy, bool early_stop, int threads) {
  const Experiment1& e = experiment1();
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  std::vector<std::pair<BasinHoppingOptions, SolverOptions>> fits;
  if (early_stop) {
    for (int seed : kSeeds) {
      BasinHoppingOptions o = e.bh;
      o.seed = static_cast<uint64_t>(seed);
      fits.emplace_back(o, e.solver);
    }
  } else {
    BasinHoppingOptions o = e.bh;
    o.population = kThroughputPopulation;
    o.max_rounds = 1;
    o.cost_threshold = -1;  // no early stop: every solve runs to its iteration cap
    o.seed = 11;
    SolverOptions so = e.solver;
    so.max_iterations = 5;
    so.function_tolerance = so.gradient_tolerance = so.parameter_tolerance = 0;
    fits.emplace_back(o, so);
  }
  ThroughputRun& best = throughput_results()[throughput_name(legacy, early_stop, threads)];
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    const std::map<int, double> threads0 = thread_cpu_seconds();
    long long starts = 0;
    std::vector<double> x;
    for (const auto& [o, so] : fits) {
      const BasinHoppingResult r = legacy ? legacy_basin_hopping(e.factory(), e.params, o, so)
                                          : basin_hopping(e.factory(), e.params, o, so, BasinHoppingState{},
                                                          nullptr, nullptr);
      for (const RoundRecord& rec : r.state.history) starts += rec.starts;
      x = r.state.best.x;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = process_cpu_seconds() - c0;
    const double busiest = busiest_thread_s(threads0, thread_cpu_seconds());
    if (wall < best.wall_s) best = {wall, cpu, busiest, starts, x};
  }
  state.counters["starts"] = static_cast<double>(best.starts);
  state.SetLabel(std::string(legacy ? "legacy" : "current") + " scheduling, " +
                 (early_stop ? "shipped fit x 5 seeds (early stop at 1e-8)"
                             : "8 starts x <= 5 LM iterations, no early stop") +
                 ", " + std::to_string(threads) + " thread(s)");
}

struct TimeToOptimum {
  double max_relative_error = -1;
  int rounds = 0;
};
std::map<int, TimeToOptimum>& time_to_optimum_results() {
  static std::map<int, TimeToOptimum> m;
  return m;
}

void BM_TimeToOptimum(benchmark::State& state, int seed) {
  const Experiment1& e = experiment1();
  BasinHoppingOptions o = e.bh;
  o.seed = static_cast<uint64_t>(seed);
  double err = -1;
  int rounds = 0;
  for (auto _ : state) {
    BasinHoppingResult r = basin_hopping(e.factory(), e.params, o, e.solver, BasinHoppingState{}, nullptr, nullptr);
    err = r.state.has_best ? e.max_relative_error(r.state.best.x) : 1e300;
    rounds = r.state.next_round;
  }
  state.counters["max_rel_error"] = err;
  state.counters["rounds"] = rounds;
  state.counters["success"] = err < 1e-3 ? 1 : 0;
  time_to_optimum_results()[seed] = {err, rounds};
  state.SetLabel("seed " + std::to_string(seed));
}

void register_all() {
  for (int n : kParameterCounts) {
    chain_problem(n);  // build (and fail) before any timing
    configure(benchmark::RegisterBenchmark(("SingleShooting/Forward/P:" + std::to_string(n)).c_str(), BM_Forward, n))
        ->Unit(benchmark::kMicrosecond);
    configure(benchmark::RegisterBenchmark(("SingleShooting/Jacobian/P:" + std::to_string(n)).c_str(), BM_Jacobian, n))
        ->Unit(benchmark::kMicrosecond);
  }
  experiment1();
  for (bool early_stop : {false, true})
    for (bool legacy : {false, true})
      for (int t : {1, 2}) {
        auto* b = configure(benchmark::RegisterBenchmark(throughput_name(legacy, early_stop, t).c_str(),
                                                         BM_Throughput, legacy, early_stop, t))
                      ->Iterations(1)
                      ->UseRealTime()
                      ->Unit(benchmark::kMillisecond);
        if (!repetitions_from_flag()) b->Repetitions(3);
      }
  // One fit per repetition; 3 repetitions unless --benchmark_repetitions says otherwise.
  for (int s : kSeeds) {
    auto* b = configure(benchmark::RegisterBenchmark(
                            ("Experiment1/TimeToOptimum/seed:" + std::to_string(s)).c_str(), BM_TimeToOptimum, s))
                  ->Iterations(1)
                  ->UseRealTime()
                  ->Unit(benchmark::kMillisecond);
    if (!repetitions_from_flag()) b->Repetitions(3);
  }
}

double find(const RecordingReporter& rep, const std::string& name, bool real) {
  return real ? rep.real_ns(name) : rep.ns(name);
}

void summary(const RecordingReporter& rep) {
  std::printf("\nSummary (min over the repetitions)\n");
  std::printf("(a) single shooting on chain5 (1 trajectory x 200 RK4 steps, windows of 50), CPU time:\n");
  for (int n : kParameterCounts) {
    const double f = find(rep, "SingleShooting/Forward/P:" + std::to_string(n), false);
    const double j = find(rep, "SingleShooting/Jacobian/P:" + std::to_string(n), false);
    const std::string what = "Jacobian / forward cost, P = " + std::to_string(n);
    print_ratio(what.c_str(), j, f);
    if (j > 0 && f > 0)
      std::printf("  %-58s %6.2fx per parameter (finite differences: %dx)\n", "", j / f / n, n + 1);
  }
  std::printf("(b) basin hopping on experiment 1; least wall time of the repetitions, its process CPU time "
              "(all threads); load average now %s\n", load_average().c_str());
  for (bool early_stop : {false, true}) {
    std::printf("  %s:\n", early_stop ? "with early stopping (shipped fit, 5 seeds)"
                                      : "without early stopping (8 starts, <= 5 LM iterations)");
    for (bool legacy : {false, true}) {
      const auto& m = throughput_results();
      const auto one = m.find(throughput_name(legacy, early_stop, 1));
      const auto two = m.find(throughput_name(legacy, early_stop, 2));
      if (one == m.end() || two == m.end()) continue;
      for (const auto* r : {&one->second, &two->second})
        std::printf("    %-7s %d thread(s): %4lld starts in %6.2f s wall, %6.2f s CPU (busiest thread %5.2f s): "
                    "%6.2f starts/s, %6.2f starts/CPU-s\n",
                    legacy ? "legacy" : "current", r == &one->second ? 1 : 2, r->starts, r->wall_s, r->cpu_s,
                    r->busiest_thread_s, r->starts / r->wall_s, r->starts / r->cpu_s);
      // On a loaded machine wall time measures the neighbours too. CPU-time
      // figures: the work ratio (CPU at 1 thread / CPU at 2 threads: < 1
      // is extra work, e.g. speculative starts) and the idle-machine bound
      // CPU at 1 thread / busiest thread at 2 threads (no thread can finish
      // before its own CPU work; waiting is not counted, so it is an upper
      // bound on the wall speedup).
      std::printf("    %-7s CPU-time figures: work ratio %.2f, speedup bound %.2fx (CPU 1 thread / busiest thread "
                  "at 2)\n",
                  legacy ? "legacy" : "current", one->second.cpu_s / two->second.cpu_s,
                  one->second.cpu_s / std::max(1e-9, two->second.busiest_thread_s));
      const double speedup = one->second.wall_s / two->second.wall_s;
      std::printf("    %-7s speedup 2 vs 1 thread: %.2fx wall (target >= 1.8x: %s); CPU 2 threads / 1 thread: %.2fx%s\n",
                  legacy ? "legacy" : "current", speedup, speedup >= 1.8 ? "met" : "NOT met",
                  two->second.cpu_s / one->second.cpu_s,
                  one->second.best_x == two->second.best_x && one->second.starts == two->second.starts
                      ? ", same result"
                      : ", RESULTS DIFFER");
    }
  }
  std::printf("(c) experiment 1 (double pendulum lengths), wall time to stop, all cores:\n");
  std::vector<double> times;
  int ok = 0;
  for (int s : kSeeds) {
    const double t = find(rep, "Experiment1/TimeToOptimum/seed:" + std::to_string(s), true);
    if (t <= 0) continue;
    const auto it = time_to_optimum_results().find(s);
    const bool success = it != time_to_optimum_results().end() && it->second.max_relative_error < 1e-3;
    ok += success;
    times.push_back(t * 1e-9);
    std::printf("  seed %d: %6.2f s, %d round(s), max relative error %.2g%s\n", s, t * 1e-9,
                it == time_to_optimum_results().end() ? 0 : it->second.rounds,
                it == time_to_optimum_results().end() ? -1.0 : it->second.max_relative_error,
                success ? "" : "  (did not reach the global optimum)");
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    std::printf("  %d/%zu seeds reached the global optimum; median %.2f s, max %.2f s (target < 5 s: %s)\n", ok,
                times.size(), times[times.size() / 2], times.back(), times.back() < 5 ? "met" : "NOT met");
  }
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  return neuralsim::bench::bench_main(
      argc, argv, "bench_simid",
      [] {
        neuralsim::bench::register_all();
        return true;
      },
      neuralsim::bench::summary);
}
