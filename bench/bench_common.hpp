// Shared helpers for the Google Benchmark programs in bench/: the robot
// models used throughout, reproducible random states, and a console reporter
// that remembers per-call times so a custom main can print ratios.
//
// Timing conventions: every benchmark reports time per call in ns
// (benchmark's "Time" column, Unit(kNanosecond)). Each is repeated
// (kRepetitions) and reports mean / median / stddev plus "min", the least
// disturbed repetition; the summaries printed at the end use "min" because
// on a shared 2-core machine the other repetitions measure the neighbours.
#pragma once

#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/model/urdf_model.hpp"
#include "neuralsim/model/yaml_model.hpp"

namespace neuralsim::bench {

// Robot files shared with the tests: /work/shared/models locally, ../shared
// next to the checkout in CI.
inline std::string shared_model_path(const std::string& rel) {
  return std::string(NEURALSIM_SOURCE_DIR) + "/../shared/models/" + rel;
}

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
  const YAML::Node node = YAML::Load("generator: chain\nlinks: " + std::to_string(links) + "\n");
  return build_yaml_model(node, "chain" + std::to_string(links));
}

// Random state: joint angles in [-0.5, 0.5] rad, velocities and torques in
// [-1, 1], unit quaternions, free-joint position near (0, 0, 0.5).
struct State {
  VecX<double> q, qd, tau;
};

inline State random_state(const Model<double>& model, unsigned seed = 42) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  State s;
  s.q = model.neutral_configuration();
  s.qd = VecX<double>(model.nv);
  s.tau = VecX<double>(model.nv);
  for (int i = 0; i < model.nv; ++i) {
    s.qd[i] = u(rng);
    s.tau[i] = u(rng);
  }
  for (const auto& j : model.joints) {
    switch (j.type) {
      case JointType::kFixed: break;
      case JointType::kRevolute:
      case JointType::kPrismatic: s.q[j.idx_q] = 0.5 * u(rng); break;
      case JointType::kSpherical:
      case JointType::kFree: {
        const int oq = j.type == JointType::kFree ? 3 : 0;
        if (j.type == JointType::kFree) {
          s.q[j.idx_q] = 0.1 * u(rng);
          s.q[j.idx_q + 1] = 0.1 * u(rng);
          s.q[j.idx_q + 2] = 0.5 + 0.1 * u(rng);
        }
        Vec4<double> quat(u(rng), u(rng), u(rng), u(rng));
        s.q.segment<4>(j.idx_q + oq) = quat.normalized();
        break;
      }
    }
  }
  return s;
}

inline constexpr int kRepetitions = 5;

inline double min_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

// Common settings: ns, repetitions, "min" aggregate, aggregates only in the
// console and JSON (the per-repetition rows are noise for the reader).
inline benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b) {
  return b->Unit(benchmark::kNanosecond)
      ->Repetitions(kRepetitions)
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
// (real time, ns per call) for the summary a custom main prints.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const double ns = r.GetAdjustedRealTime() *
                        (r.time_unit == benchmark::kNanosecond    ? 1.0
                         : r.time_unit == benchmark::kMicrosecond ? 1e3
                         : r.time_unit == benchmark::kMillisecond ? 1e6
                                                                  : 1e9);
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "min") min_ns_[r.run_name.str()] = ns;
      } else if (!min_ns_.count(r.run_name.str()) || ns < min_ns_[r.run_name.str()]) {
        min_ns_[r.run_name.str()] = ns;  // single runs (--benchmark_repetitions=1)
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // ns per call of `name` (the benchmark name without aggregate suffix), or
  // a negative number if it was not run (filtered out).
  double ns(const std::string& name) const {
    const auto it = min_ns_.find(name);
    return it == min_ns_.end() ? -1.0 : it->second;
  }

  const std::map<std::string, double>& all() const { return min_ns_; }

 private:
  std::map<std::string, double> min_ns_;
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
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nload average at end: %s\n", load_average().c_str());
  summary(reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace neuralsim::bench
