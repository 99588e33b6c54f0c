// Cost of a step with neural augmentation sites (augment/) against the plain
// step: the planar 5-link swimmer (semi-implicit Euler, dt = 2 ms) with
//   plain        no fluid forces
//   analytical   the analytical drag law on every segment (5 ForceHooks)
//   augmented    a drag_force site per segment (residual on the same law),
//                each a 4 -> 16 tanh -> 16 tanh -> 3 network of the
//                segment's velocity and angle of attack
// in double and in reverse mode (Rev: recording 100 steps, then one reverse
// sweep; the networks enter the tape as external nodes), time per step.
//
// Not registered in bench/CMakeLists.txt yet; to build it add
//   neuralsim_add_bench(bench_augment augment_bench.cpp)
#include <benchmark/benchmark.h>

#include <memory>

#include "augment/augment_support.hpp"

namespace neuralsim {
namespace {

using testing::Scene;
using testing::Sim;

enum class Variant { kPlain, kAnalytical, kAugmented };

Scene scene_for(Variant v, std::vector<AugmentBlueprint>& bps) {
  Scene scene = testing::swimmer_scene();
  bps = testing::swimmer_drag_blueprints(scene.model, {16, 16});
  if (v == Variant::kAnalytical)
    for (const AugmentBlueprint& bp : bps) scene.drags.emplace_back(bp.site.body, bp.site.drag);
  return scene;
}

void BM_SwimmerDouble(benchmark::State& state, Variant v) {
  std::vector<AugmentBlueprint> bps;
  const Scene scene = scene_for(v, bps);
  Sim<double> sim(scene, v == Variant::kAugmented ? &bps : nullptr);
  int k = 0;
  for (auto _ : state) {
    sim.step();
    benchmark::DoNotOptimize(sim.q().data());
    if (++k == 1000) {
      k = 0;
      sim.q() = scene.q0;
      sim.qd() = scene.qd0;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SwimmerRev(benchmark::State& state, Variant v) {
  std::vector<AugmentBlueprint> bps;
  const Scene scene = scene_for(v, bps);
  Tape tape(1 << 20);
  Sim<Rev> sim(scene, v == Variant::kAugmented ? &bps : nullptr);
  if (sim.augmented()) sim.augmented()->set_tape(&tape);
  const int steps = 100;
  for (auto _ : state) {
    tape.clear();
    for (int i = 0; i < sim.q().size(); ++i) sim.q()[i] = tape.variable(scene.q0[i]);
    for (int i = 0; i < sim.qd().size(); ++i) sim.qd()[i] = tape.variable(scene.qd0[i]);
    sim.run(steps);
    tape.reverse(testing::final_state_loss<Rev>(sim.q(), sim.qd()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * steps);
  state.counters["nodes_per_step"] = static_cast<double>(tape.size()) / steps;
}

}  // namespace
}  // namespace neuralsim

int main(int argc, char** argv) {
  using neuralsim::Variant;
  for (auto [name, v] : {std::pair{"plain", Variant::kPlain}, std::pair{"analytical_drag", Variant::kAnalytical},
                         std::pair{"augmented_drag", Variant::kAugmented}}) {
    benchmark::RegisterBenchmark((std::string("Swimmer/double/") + name).c_str(), neuralsim::BM_SwimmerDouble, v)
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark((std::string("Swimmer/rev_100_steps/") + name).c_str(), neuralsim::BM_SwimmerRev, v)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
