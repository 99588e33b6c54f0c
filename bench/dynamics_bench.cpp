// ABA, RNEA and CRBA per call on the reference robots, and ABA / RNEA / CRBA
// on chains of 5..80 links to show how the cost grows with the number of
// bodies (ABA and RNEA are O(n); CRBA is O(n·depth), i.e. O(n²) on a chain).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim::bench {
namespace {

struct Robot {
  std::string name;
  Model<double> model;
};

// Models live for the whole program; benchmarks hold references.
std::vector<std::unique_ptr<Robot>>& robots() {
  static std::vector<std::unique_ptr<Robot>> r;
  return r;
}

const Model<double>& chain(int links) {
  static std::map<int, std::unique_ptr<Model<double>>> cache;
  auto& m = cache[links];
  if (!m) m = std::make_unique<Model<double>>(chain_model(links));
  return *m;
}

void BM_ABA(benchmark::State& state, const std::string& name, const Model<double>& model) {
  Data<double> data(model);
  const State s = random_state(model);
  for (auto _ : state) {
    aba(model, data, s.q, s.qd, s.tau);
    benchmark::DoNotOptimize(data.qdd.data());
    benchmark::ClobberMemory();
  }
  label_model(state, name, model);
}

void BM_RNEA(benchmark::State& state, const std::string& name, const Model<double>& model) {
  Data<double> data(model);
  const State s = random_state(model);
  const VecX<double> qdd = s.tau;  // any acceleration
  for (auto _ : state) {
    rnea(model, data, s.q, s.qd, qdd);
    benchmark::DoNotOptimize(data.tau.data());
    benchmark::ClobberMemory();
  }
  label_model(state, name, model);
}

void BM_CRBA(benchmark::State& state, const std::string& name, const Model<double>& model) {
  Data<double> data(model);
  const State s = random_state(model);
  for (auto _ : state) {
    crba(model, data, s.q);
    benchmark::DoNotOptimize(data.M.data());
    benchmark::ClobberMemory();
  }
  label_model(state, name, model);
}

// Scaling: state.range(0) = number of links.
template <void (*Fn)(benchmark::State&, const std::string&, const Model<double>&)>
void BM_chain(benchmark::State& state) {
  const int links = static_cast<int>(state.range(0));
  Fn(state, "chain" + std::to_string(links), chain(links));
  state.SetComplexityN(links);
}

void register_all() {
  auto add = [](const std::string& name, Model<double> m) {
    robots().push_back(std::make_unique<Robot>(Robot{name, std::move(m)}));
  };
  add("double_pendulum", double_pendulum_model());
  add("panda", panda_model());
  add("laikago", laikago_model());
  add("chain30", chain_model(30));
  for (const auto& r : robots()) {
    const Robot* rp = r.get();
    configure(benchmark::RegisterBenchmark(("ABA/" + rp->name).c_str(), BM_ABA, rp->name, std::cref(rp->model)));
    configure(benchmark::RegisterBenchmark(("RNEA/" + rp->name).c_str(), BM_RNEA, rp->name, std::cref(rp->model)));
    configure(benchmark::RegisterBenchmark(("CRBA/" + rp->name).c_str(), BM_CRBA, rp->name, std::cref(rp->model)));
  }
  const std::vector<int64_t> sizes = {5, 10, 20, 40, 80};
  auto scaling = [&](const char* name, void (*fn)(benchmark::State&), benchmark::BigO big_o) {
    auto* b = configure(benchmark::RegisterBenchmark(name, fn));
    for (int64_t n : sizes) b->Arg(n);
    b->Complexity(big_o);
  };
  scaling("ABA_chain", BM_chain<BM_ABA>, benchmark::oN);
  scaling("RNEA_chain", BM_chain<BM_RNEA>, benchmark::oN);
  scaling("CRBA_chain", BM_chain<BM_CRBA>, benchmark::oNSquared);
}

void summary(const RecordingReporter& rep) {
  std::printf("\nSummary (min CPU time over the repetitions, ns per call):\n");
  std::printf("  %-16s %10s %10s %10s\n", "model", "ABA", "RNEA", "CRBA");
  for (const auto& r : robots())
    std::printf("  %-16s %10.1f %10.1f %10.1f\n", r->name.c_str(), rep.ns("ABA/" + r->name),
                rep.ns("RNEA/" + r->name), rep.ns("CRBA/" + r->name));
  std::printf("  %-16s %10s %10s %10s   (ABA ns per body)\n", "chain", "ABA", "RNEA", "CRBA");
  for (int n : {5, 10, 20, 40, 80}) {
    const std::string a = "/" + std::to_string(n);
    const double aba_ns = rep.ns("ABA_chain" + a);
    std::printf("  %-16s %10.1f %10.1f %10.1f   %6.1f\n", ("chain" + std::to_string(n)).c_str(), aba_ns,
                rep.ns("RNEA_chain" + a), rep.ns("CRBA_chain" + a), aba_ns > 0 ? aba_ns / n : -1.0);
  }
  const double laikago = rep.ns("ABA/laikago");
  if (laikago > 0)
    std::printf("\nTarget: Laikago ABA <= 2000 ns per call: %.1f ns -> %s\n", laikago,
                laikago <= 2000 ? "MET" : "MISSED");
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  return neuralsim::bench::bench_main(
      argc, argv, "bench_dynamics",
      [] {
        neuralsim::bench::register_all();
        return true;
      },
      neuralsim::bench::summary);
}
