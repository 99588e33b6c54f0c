// Cost of the reverse-mode tape (grad/tape.hpp) on the engine, against the
// double code and forward mode, on Laikago (floating base, 13 bodies,
// nv = 18), the 5-link swimmer (nv = 7) and the double pendulum (nv = 2):
//   ABA/<model>/double        aba<double>
//   ABA/<model>/rev_constant  aba<Rev> with constant inputs (nothing is
//                             recorded: the cost of the 24-byte scalar alone)
//   ABA/<model>/rev_record    aba<Rev> recording, q, q̇, τ variables (clear +
//                             variables + aba)
//   ABA/<model>/rev_reverse   the reverse sweep of that tape (seed q̈, sweep)
//   ABA/<model>/jet_nv        aba<Jet<double, nv>> (q̇ seeded): one call of
//                             forward mode gives ∂q̈/∂q̇, the per-step
//                             Jacobian costs 2 such calls (q and q̇)
//   RNEA/<model>/double, rev  rnea<double>; rnea<Rev> record + seed τ + reverse
//   Step/<model>/double       Stepper<double>::step, semi-implicit Euler
//   Step/<model>/rev_record   the same step recorded (state variables)
//   Step/<model>/rev_reverse  its reverse sweep (seed q⁺, q̇⁺, sweep)
//   Step/<model>/rev          record + seed + reverse + read the adjoints,
//                             the unit a BPTT driver repeats
// Counters: nodes per call, and "per_node" = time per recorded / reversed
// node. The summary prints the ratios (record+reverse)/double.
//
// Build and run (the repo's bench/CMakeLists.txt needs one line,
// `neuralsim_add_bench(bench_tape tape_bench.cpp)`):
//   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
//   nice -n 10 ninja -C build -j1 bench_tape
//   ./build/bench/bench_tape                        # all, 5 repetitions
//   ./build/bench/bench_tape --benchmark_filter=laikago --benchmark_repetitions=9
// On a shared machine compare the "min" rows (the summary uses them).
#include <ceres/jet.h>

#include <cstdio>
#include <string>
#include <type_traits>

#include "bench_common.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim::bench {
namespace {

std::string shared_dir() {
#ifdef NEURALSIM_SHARED_DIR
  return NEURALSIM_SHARED_DIR;
#else
  return std::string(NEURALSIM_SOURCE_DIR) + "/../shared";
#endif
}

struct Case {
  std::string name;
  Model<double> model;
  Model<Rev> model_rev;
  State state;
};

Case& get_case(const std::string& name) {
  static Case laikago{"laikago", {}, {}, {}}, swimmer{"swimmer5", {}, {}, {}}, pendulum{"double_pendulum", {}, {}, {}};
  Case* c = name == "laikago" ? &laikago : name == "swimmer5" ? &swimmer : &pendulum;
  if (c->model.num_bodies() == 0) {
    if (name == "laikago") {
      UrdfOptions opt;
      opt.floating_base = true;
      c->model = load_urdf_model(shared_dir() + "/models/laikago/laikago_toes_zup.urdf", opt);
    } else {
      c->model = load_yaml_model(std::string(NEURALSIM_SOURCE_DIR) + "/configs/models/" + name + ".yaml");
    }
    c->model_rev = c->model.cast<Rev>();
    c->state = random_state(c->model);
  }
  return *c;
}

void set_nodes(benchmark::State& st, const std::string& name, const Model<double>& m, double nodes) {
  st.SetLabel(name + " nv=" + std::to_string(m.nv) + " nodes=" + std::to_string(static_cast<long>(nodes)));
  st.counters["nodes"] = nodes;
  st.counters["per_node"] =
      benchmark::Counter(nodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void record_aba(Tape& tape, const Case& c, Data<Rev>& data, VecX<Rev>& q, VecX<Rev>& qd, VecX<Rev>& tau) {
  tape.clear();
  tape.variables(c.state.q.data(), q.size(), q.data());
  tape.variables(c.state.qd.data(), qd.size(), qd.data());
  tape.variables(c.state.tau.data(), tau.size(), tau.data());
  aba(c.model_rev, data, q, qd, tau);
}

void BM_AbaDouble(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Data<double> data(c.model);
  for (auto _ : st) {
    aba(c.model, data, c.state.q, c.state.qd, c.state.tau);
    benchmark::DoNotOptimize(data.qdd.data());
    benchmark::ClobberMemory();
  }
  label_model(st, name, c.model);
}

void BM_AbaRevConstant(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Data<Rev> data(c.model_rev);
  const VecX<Rev> q = c.state.q.cast<Rev>(), qd = c.state.qd.cast<Rev>(), tau = c.state.tau.cast<Rev>();
  for (auto _ : st) {
    aba(c.model_rev, data, q, qd, tau);
    benchmark::DoNotOptimize(data.qdd.data());
    benchmark::ClobberMemory();
  }
  label_model(st, name, c.model);
}

void BM_AbaRevRecord(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Data<Rev> data(c.model_rev);
  VecX<Rev> q(c.model.nq), qd(c.model.nv), tau(c.model.nv);
  Tape tape;
  record_aba(tape, c, data, q, qd, tau);  // grows the arena once
  for (auto _ : st) {
    record_aba(tape, c, data, q, qd, tau);
    benchmark::DoNotOptimize(data.qdd.data());
    benchmark::ClobberMemory();
  }
  set_nodes(st, name, c.model, static_cast<double>(tape.size()));
}

void BM_AbaRevReverse(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Data<Rev> data(c.model_rev);
  VecX<Rev> q(c.model.nq), qd(c.model.nv), tau(c.model.nv);
  Tape tape;
  record_aba(tape, c, data, q, qd, tau);
  double sink = 0;
  for (auto _ : st) {
    for (int i = 0; i < c.model.nv; ++i) tape.seed(data.qdd[i], 1.0);
    tape.reverse();
    sink += tape.adjoint(qd[0]);
  }
  benchmark::DoNotOptimize(sink);
  set_nodes(st, name, c.model, static_cast<double>(tape.size()));
}

template <int N>
void BM_AbaJet(benchmark::State& st, const std::string& name) {
  using J = ceres::Jet<double, N>;
  const Case& c = get_case(name);
  if (c.model.nv != N) {
    st.SkipWithError("nv != N");
    return;
  }
  const Model<J> m = c.model.cast<J>();
  Data<J> data(m);
  const VecX<J> q = c.state.q.cast<J>(), tau = c.state.tau.cast<J>();
  VecX<J> qd(c.model.nv);
  for (int i = 0; i < c.model.nv; ++i) qd[i] = J(c.state.qd[i], i);
  for (auto _ : st) {
    aba(m, data, q, qd, tau);
    benchmark::DoNotOptimize(data.qdd.data());
    benchmark::ClobberMemory();
  }
  label_model(st, name, c.model);
}

// Inverse dynamics, for the alternative of entering ABA as an external
// node whose VJP uses q̈ = M⁻¹(τ - b): λ = M⁻¹ȳ, τ̄ = λ, (q̄, q̇̄) = -λᵀ∂RNEA/∂(q, q̇).
void BM_RneaDouble(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Data<double> data(c.model);
  for (auto _ : st) {
    rnea(c.model, data, c.state.q, c.state.qd, c.state.tau);  // τ doubles as q̈
    benchmark::DoNotOptimize(data.tau.data());
    benchmark::ClobberMemory();
  }
  label_model(st, name, c.model);
}

void BM_RneaRev(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Data<Rev> data(c.model_rev);
  VecX<Rev> q(c.model.nq), qd(c.model.nv), qdd(c.model.nv);
  Tape tape;
  double sink = 0;
  auto once = [&] {
    tape.clear();
    tape.variables(c.state.q.data(), q.size(), q.data());
    tape.variables(c.state.qd.data(), qd.size(), qd.data());
    tape.variables(c.state.tau.data(), qdd.size(), qdd.data());
    rnea(c.model_rev, data, q, qd, qdd);
    for (int i = 0; i < c.model.nv; ++i) tape.seed(data.tau[i], 1.0);
    tape.reverse();
    sink += tape.adjoint(q[0]);
  };
  once();
  for (auto _ : st) once();
  benchmark::DoNotOptimize(sink);
  set_nodes(st, name, c.model, static_cast<double>(tape.size()));
}

void BM_StepDouble(benchmark::State& st, const std::string& name) {
  const Case& c = get_case(name);
  Stepper<double> stepper(c.model, StepOptions{Integrator::kSemiImplicitEuler, 1e-3, 1, false});
  VecX<double> q = c.state.q, qd = c.state.qd;
  for (auto _ : st) {
    // The same state every call (comparable with the taped step).
    q = c.state.q;
    qd = c.state.qd;
    stepper.step(q, qd, c.state.tau, 0.0);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  label_model(st, name, c.model);
}

struct TapedStep {
  const Case& c;
  Stepper<Rev> stepper;
  Tape tape;
  VecX<Rev> q, qd, q_in, qd_in, u;
  VecX<double> qbar, qdbar;
  explicit TapedStep(const Case& cs)
      : c(cs), stepper(cs.model_rev, StepOptions{Integrator::kSemiImplicitEuler, 1e-3, 1, false}),
        q(cs.model.nq), qd(cs.model.nv), q_in(cs.model.nq), qd_in(cs.model.nv), u(cs.state.tau.cast<Rev>()),
        qbar(cs.model.nq), qdbar(cs.model.nv) {}
  void record() {
    tape.clear();
    tape.variables(c.state.q.data(), q.size(), q.data());
    tape.variables(c.state.qd.data(), qd.size(), qd.data());
    q_in = q;
    qd_in = qd;
    stepper.step(q, qd, u, 0.0);
  }
  void reverse() {
    for (int i = 0; i < q.size(); ++i) tape.seed(q[i], 1.0);
    for (int i = 0; i < qd.size(); ++i) tape.seed(qd[i], 1.0);
    tape.reverse();
    tape.adjoints(q_in.data(), q_in.size(), qbar.data());
    tape.adjoints(qd_in.data(), qd_in.size(), qdbar.data());
  }
};

void BM_StepRevRecord(benchmark::State& st, const std::string& name) {
  TapedStep ts(get_case(name));
  ts.record();
  for (auto _ : st) {
    ts.record();
    benchmark::DoNotOptimize(ts.q.data());
    benchmark::ClobberMemory();
  }
  set_nodes(st, name, ts.c.model, static_cast<double>(ts.tape.size()));
}

void BM_StepRevReverse(benchmark::State& st, const std::string& name) {
  TapedStep ts(get_case(name));
  ts.record();
  for (auto _ : st) {
    ts.reverse();
    benchmark::DoNotOptimize(ts.qbar.data());
  }
  set_nodes(st, name, ts.c.model, static_cast<double>(ts.tape.size()));
}

void BM_StepRev(benchmark::State& st, const std::string& name) {
  TapedStep ts(get_case(name));
  ts.record();
  ts.reverse();
  const size_t growths = ts.tape.growth_count();
  for (auto _ : st) {
    ts.record();
    ts.reverse();
    benchmark::DoNotOptimize(ts.qbar.data());
  }
  if (ts.tape.growth_count() != growths) st.SkipWithError("the tape grew in steady state");
  set_nodes(st, name, ts.c.model, static_cast<double>(ts.tape.size()));
}

const char* kModels[] = {"laikago", "swimmer5", "double_pendulum"};

void register_all() {
  for (const char* m : kModels) {
    const std::string name = m;
    get_case(name);  // load now: a missing file fails setup, not a benchmark
    const std::string p = "ABA/" + name + "/";
    configure(benchmark::RegisterBenchmark((p + "double").c_str(), BM_AbaDouble, name));
    configure(benchmark::RegisterBenchmark((p + "rev_constant").c_str(), BM_AbaRevConstant, name));
    configure(benchmark::RegisterBenchmark((p + "rev_record").c_str(), BM_AbaRevRecord, name));
    configure(benchmark::RegisterBenchmark((p + "rev_reverse").c_str(), BM_AbaRevReverse, name));
    const int nv = get_case(name).model.nv;
    if (nv == 18) configure(benchmark::RegisterBenchmark((p + "jet_nv").c_str(), BM_AbaJet<18>, name));
    if (nv == 7) configure(benchmark::RegisterBenchmark((p + "jet_nv").c_str(), BM_AbaJet<7>, name));
    if (nv == 2) configure(benchmark::RegisterBenchmark((p + "jet_nv").c_str(), BM_AbaJet<2>, name));
    configure(benchmark::RegisterBenchmark(("RNEA/" + name + "/double").c_str(), BM_RneaDouble, name));
    configure(benchmark::RegisterBenchmark(("RNEA/" + name + "/rev").c_str(), BM_RneaRev, name));
    const std::string s = "Step/" + name + "/";
    configure(benchmark::RegisterBenchmark((s + "double").c_str(), BM_StepDouble, name));
    configure(benchmark::RegisterBenchmark((s + "rev_record").c_str(), BM_StepRevRecord, name));
    configure(benchmark::RegisterBenchmark((s + "rev_reverse").c_str(), BM_StepRevReverse, name));
    configure(benchmark::RegisterBenchmark((s + "rev").c_str(), BM_StepRev, name));
  }
}

// Nodes recorded by one ABA call and one taped step (deterministic).
void node_counts(const std::string& name, size_t& aba_nodes, size_t& step_nodes) {
  const Case& c = get_case(name);
  Data<Rev> data(c.model_rev);
  VecX<Rev> q(c.model.nq), qd(c.model.nv), tau(c.model.nv);
  Tape tape;
  record_aba(tape, c, data, q, qd, tau);
  aba_nodes = tape.size();
  TapedStep ts(c);
  ts.record();
  step_nodes = ts.tape.size();
}

void summary(const RecordingReporter& rep) {
  std::printf("\nSummary (min CPU time over the repetitions), ns per call\n");
  std::printf("%-16s %9s %9s %9s %9s %8s %7s %7s %9s %9s\n", "ABA", "double", "rev_const", "record", "reverse",
              "nodes", "rec/nd", "rev/nd", "(r+r)/dbl", "jet_nv/dbl");
  for (const char* m : kModels) {
    const std::string p = std::string("ABA/") + m + "/";
    const double d = rep.ns(p + "double"), k = rep.ns(p + "rev_constant"), r = rep.ns(p + "rev_record"),
                 b = rep.ns(p + "rev_reverse"), j = rep.ns(p + "jet_nv");
    if (d <= 0) continue;
    size_t an = 0, sn = 0;
    node_counts(m, an, sn);
    std::printf("%-16s %9.0f %9.0f %9.0f %9.0f %8zu %7.2f %7.2f %8.1fx %8.1fx\n", m, d, k, r, b, an, r / an, b / an,
                (r + b) / d, j / d);
  }
  std::printf("%-16s %9s %9s %9s %9s %8s %7s %7s %9s\n", "Step (Euler)", "double", "rev", "record", "reverse",
              "nodes", "rec/nd", "rev/nd", "rev/dbl");
  for (const char* m : kModels) {
    const std::string s = std::string("Step/") + m + "/";
    const double d = rep.ns(s + "double"), all = rep.ns(s + "rev"), r = rep.ns(s + "rev_record"),
                 b = rep.ns(s + "rev_reverse");
    if (d <= 0) continue;
    size_t an = 0, sn = 0;
    node_counts(m, an, sn);
    std::printf("%-16s %9.0f %9.0f %9.0f %9.0f %8zu %7.2f %7.2f %8.1fx\n", m, d, all, r, b, sn, r / sn, b / sn,
                all / d);
  }
  std::printf("(rec/nd, rev/nd: ns per recorded / reversed node; memory: %zu bytes per node)\n",
              sizeof(TapeNode) + sizeof(double));
  std::printf("%-16s %9s %12s %9s\n", "RNEA", "double", "rev (r+r)", "ratio");
  for (const char* m : kModels) {
    const std::string r = std::string("RNEA/") + m + "/";
    const double d = rep.ns(r + "double"), t = rep.ns(r + "rev");
    if (d > 0 && t > 0) std::printf("%-16s %9.0f %12.0f %8.1fx\n", m, d, t, t / d);
  }
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  return neuralsim::bench::bench_main(
      argc, argv, "bench_tape",
      [] {
        neuralsim::bench::register_all();
        return true;
      },
      neuralsim::bench::summary);
}
