// placeholder: one training epoch of experiment 1
#include <benchmark/benchmark.h>
BENCHMARK_MAIN();
