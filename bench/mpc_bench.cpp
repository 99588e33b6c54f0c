// Placeholder: the MPC benchmarks (issue 14).
#include <benchmark/benchmark.h>
BENCHMARK_MAIN();
