// Shared helpers for the Google Benchmark programs in bench/: the robot
// models used throughout, reproducible random states, and a console reporter
// that remembers per-call times so a custom main can print ratios.
//
// Timing conventions: every benchmark reports time per call in ns
// (benchmark's "Time" column, Unit(kNanosecond)). Each is repeated
// (kRepetitions; --benchmark_repetitions=N overrides) and reports mean /
// median / stddev plus "min", the least disturbed repetition; the summaries
// printed at the end use "min" CPU time because on a shared 2-core machine
// the other repetitions and the wall clock also measure the neighbours.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/test_models.hpp"

namespace neuralsim::bench {

// Robot files shared with the tests: ../shared next to the checkout.
inline std::string shared_model_path(const std::string& rel) { return testing::shared_path("models/" + rel); }

inline Model<double> double_pendulum_model() {
  return load_yaml_model(std::string(NEURALSIM_SOURCE_DIR) + "/configs/models/double_pendulum.yaml");
}

inline Model<double> panda_model() {
  return load_urdf_model(shared_model_path("franka_panda/panda.urdf"));
}

inline Model<double> laikago_model() {
  UrdfOptions opt;
  opt.floating_base = true;
  return load_urdf_model(shared_model_path("laikago/laikago_toes_zup.urdf"), opt);
}

// A chain of `links` uniform rods (the YAML `chain` generator).
inline Model<double> chain_model(int links) {
  return parse_yaml_model("generator: chain\nlinks: " + std::to_string(links) + "\n", "chain" + std::to_string(links));
}

// A random state (the tests' random_state) and torques in [-1, 1].
struct State {
  VecX<double> q, qd, tau;
};

inline State random_state(const Model<double>& model, unsigned seed = 42) {
  std::mt19937 rng(seed);
  State s;
  testing::random_state(model, rng, s.q, s.qd);  // the tests' states (support/test_models.hpp)
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  s.tau = VecX<double>::NullaryExpr(model.nv, [&] { return u(rng); });
  return s;
}

inline constexpr int kRepetitions = 5;

// Set by run_main's caller before registration: true if the user passed
// --benchmark_repetitions (then it is not overridden per benchmark).
inline bool& repetitions_from_flag() {
  static bool v = false;
  return v;
}
// Call first in main: notes --benchmark_repetitions.
inline void scan_flags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0) repetitions_from_flag() = true;
}

inline double min_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

// Common settings: ns, repetitions, "min" aggregate, aggregates only in the
// console and JSON (the per-repetition rows are noise for the reader).
inline benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kNanosecond);
  // Only when not given on the command line (the per-benchmark setting wins).
  if (!repetitions_from_flag()) b->Repetitions(kRepetitions);
  return b
      ->ReportAggregatesOnly(true)
      ->ComputeStatistics("min", min_of);
}

// Labels a run with the model size and reports "per_body" (time per call
// divided by the number of bodies; seconds in JSON, "n" suffix = ns).
inline void label_model(benchmark::State& state, const std::string& name, const Model<double>& m) {
  state.SetLabel(name + " bodies=" + std::to_string(m.num_bodies()) + " nv=" + std::to_string(m.nv));
  state.counters["per_body"] = benchmark::Counter(
      static_cast<double>(m.num_bodies()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Console reporter that also keeps the "min" aggregate of every benchmark
// (ns per call, CPU and real time) for the summary a custom main prints.
//
// The summaries use CPU time: on a shared machine a benchmark thread that is
// descheduled keeps accruing real time but not CPU time, so CPU time is the
// better estimate of the code's own cost. Both are in the JSON output.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  using ConsoleReporter::ConsoleReporter;

  struct Times {
    double cpu_ns = -1, real_ns = -1;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const double to_ns = r.time_unit == benchmark::kNanosecond    ? 1.0
                           : r.time_unit == benchmark::kMicrosecond ? 1e3
                           : r.time_unit == benchmark::kMillisecond ? 1e6
                                                                    : 1e9;
      const Times t{r.GetAdjustedCPUTime() * to_ns, r.GetAdjustedRealTime() * to_ns};
      std::string name = r.run_name.function_name;
      if (!r.run_name.args.empty()) name += "/" + r.run_name.args;
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "min") times_[name] = t;
      } else if (r.repetitions <= 1) {
        times_[name] = t;  // --benchmark_repetitions=1: no aggregates
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // CPU ns per call of `name` (benchmark name without "/repeats:N"), or a
  // negative number if it was not run (filtered out).
  double ns(const std::string& name) const { return get(name).cpu_ns; }
  double real_ns(const std::string& name) const { return get(name).real_ns; }
  const std::map<std::string, Times>& all() const { return times_; }

 private:
  Times get(const std::string& name) const {
    const auto it = times_.find(name);
    return it == times_.end() ? Times{} : it->second;
  }
  std::map<std::string, Times> times_;
};

inline void print_ratio(const char* what, double num, double den) {
  if (num > 0 && den > 0)
    std::printf("  %-58s %10.1f ns / %10.1f ns = %6.2fx\n", what, num, den, num / den);
  else
    std::printf("  %-58s (not run)\n", what);
}

// The 1-minute load average, recorded in the output: on a shared 2-core
// machine the numbers are only as good as the machine was quiet.
inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// Standard main body: flags, context, run with the recording reporter.
template <class Summary>
int run_main(int argc, char** argv, Summary&& summary) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("loadavg_at_start", load_average());
#ifdef NEURALSIM_BENCH_NATIVE
  benchmark::AddCustomContext("neuralsim_flags", "-O3 -march=native");
#else
  benchmark::AddCustomContext("neuralsim_flags", "project default (Release -O3)");
#endif
  // Colours only on a terminal (files written via tee stay plain text).
  RecordingReporter reporter(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                   : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nload average at end: %s\n", load_average().c_str());
  summary(reporter);
  benchmark::Shutdown();
  return 0;
}

// The whole main() of a benchmark program: flags, setup (which may throw when
// a model or data file is missing), run, summary.
template <class Setup, class Summary>
int bench_main(int argc, char** argv, const char* program, Setup&& setup, Summary&& summary) {
  scan_flags(argc, argv);
  try {
    if (!setup()) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: setup failed: %s\n", program, e.what());
    return 1;
  }
  return run_main(argc, argv, summary);
}

}  // namespace neuralsim::bench
