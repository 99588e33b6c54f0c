// Forward-mode cost: ABA on Laikago with double and with ceres::Jet<double, N>
// (N = 4, 16 derivative directions). The model is cast with Model::cast<Jet>()
// and q, q̇, τ carry seeded derivative parts, so every operation propagates
// N directional derivatives. The summary prints the cost ratio to double and
// compares it with central/forward finite differences (N + 1 double calls).
#include <ceres/jet.h>

#include <cstdio>
#include <memory>
#include <string>

#include "bench_common.hpp"

namespace neuralsim::bench {
namespace {

const Model<double>& laikago() {
  static const Model<double> m = laikago_model();
  return m;
}

// The double state with derivative parts seeded: input coordinate i of
// (q, q̇, τ) gets direction i mod N, so all N directions are exercised.
template <int N>
void seed(const VecX<double>& x, VecX<ceres::Jet<double, N>>& out, int& counter) {
  out.resize(x.size());
  for (int i = 0; i < x.size(); ++i) out[i] = ceres::Jet<double, N>(x[i], counter++ % N);
}

template <class S>
void BM_ABA_AD(benchmark::State& state) {
  const Model<double>& md = laikago();
  const State s = random_state(md);
  if constexpr (std::is_same_v<S, double>) {
    Data<double> data(md);
    for (auto _ : state) {
      aba(md, data, s.q, s.qd, s.tau);
      benchmark::DoNotOptimize(data.qdd.data());
      benchmark::ClobberMemory();
    }
  } else {
    constexpr int N = S::DIMENSION;
    const Model<S> model = md.template cast<S>();
    Data<S> data(model);
    VecX<S> q, qd, tau;
    int counter = 0;
    seed<N>(s.q, q, counter);
    seed<N>(s.qd, qd, counter);
    seed<N>(s.tau, tau, counter);
    for (auto _ : state) {
      aba(model, data, q, qd, tau);
      benchmark::DoNotOptimize(data.qdd.data());
      benchmark::ClobberMemory();
    }
  }
  label_model(state, "laikago", md);
}

void register_all() {
  laikago();
  configure(benchmark::RegisterBenchmark("ABA_AD/laikago/double", BM_ABA_AD<double>));
  configure(benchmark::RegisterBenchmark("ABA_AD/laikago/Jet4", BM_ABA_AD<ceres::Jet<double, 4>>));
  configure(benchmark::RegisterBenchmark("ABA_AD/laikago/Jet16", BM_ABA_AD<ceres::Jet<double, 16>>));
}

void summary(const RecordingReporter& rep) {
  const double d = rep.ns("ABA_AD/laikago/double");
  std::printf("\nSummary (min CPU time over the repetitions): ABA on Laikago, ns per call\n");
  for (int n : {4, 16}) {
    const double j = rep.ns("ABA_AD/laikago/Jet" + std::to_string(n));
    const std::string what = "Jet<double," + std::to_string(n) + "> / double";
    print_ratio(what.c_str(), j, d);
    if (j > 0 && d > 0)
      std::printf("  %-58s %6.2fx per direction; forward differences would cost %dx\n", "", j / d / n,
                  n + 1);
  }
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  return neuralsim::bench::bench_main(
      argc, argv, "bench_autodiff",
      [] {
        neuralsim::bench::register_all();
        return true;
      },
      neuralsim::bench::summary);
}
