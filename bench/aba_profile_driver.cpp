// A small driver for profiling ABA on Laikago under valgrind, e.g.
//   valgrind --tool=callgrind --dump-instr=yes ./bench_aba_profile 20000
//   callgrind_annotate --auto=yes callgrind.out.<pid>
// (build with -DCMAKE_BUILD_TYPE=RelWithDebInfo or add -g for per-line
// attribution). Not a benchmark: it only calls aba() N times.
#include <cstdio>
#include <cstdlib>

#include "bench_common.hpp"

int main(int argc, char** argv) {
  using namespace neuralsim;
  bench::scan_flags(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  const Model<double> model = bench::laikago_model();
  const bench::State s = bench::random_state(model);
  Data<double> data(model);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    aba(model, data, s.q, s.qd, s.tau);
    sum += data.qdd.sum();
  }
  std::printf("%d calls, checksum %.15g\n", n, sum);
  return 0;
}
