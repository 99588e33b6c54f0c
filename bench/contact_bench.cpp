// Contact benchmarks: one step of Laikago standing on its four toe contacts
// (semi-implicit Euler, PD-held joints, the state of
// configs/rollout_laikago_standing.yaml after settling) with each contact
// model: h = 1 ms for the impulse model and without contact, h = 0.1 ms for
// the force models (the step they need on Laikago), and the PGS iteration counts of the impulse model with and
// without warm starting. Target: a Laikago step with contact <= 10 µs.
//
// Counters: allocs/step (heap allocations inside Stepper::step, counted by
// tests/support/allocation_counter.hpp; -1 when not countable), contacts,
// pgs_iters (mean PGS sweeps per solve), pgs_max.
#include <benchmark/benchmark.h>

#include <random>

#include "support/allocation_counter.hpp"
#include "support/scenario.hpp"

namespace neuralsim {
namespace {

// The standing scenario with one contact model, settled for 1 s.
struct Standing : testing::Scenario {
  Standing(const std::string& contact_model, bool warm_start = true)
      : testing::Scenario("rollout_laikago_standing", overrides(contact_model, warm_start)) {
    if (contact_model == "none") {  // the same robot and controller, without the contact hooks
      stepper.hooks().clear();
      stepper.velocity_hooks().clear();
      contact.reset();
    }
    for (int i = 0; i < std::llround(1.0 / options.dt); ++i) step();
  }
  static std::vector<std::string> overrides(const std::string& m, bool warm) {
    std::vector<std::string> o = {"contact.pgs.warm_start=" + std::string(warm ? "true" : "false")};
    // Force models need a 0.1 ms step on Laikago (explicit stability of the
    // stiff toe contacts, as in tests/contact/laikago_standing_test.cpp); the
    // benchmark times one such integration step.
    if (m == "hunt_crossley" || m == "penalty") o.push_back("sim.dt=0.0001");
    if (m != "none") o.push_back("contact.model=" + m);
    if (m == "penalty") {
      o.push_back("contact.parameters.stiffness=1e8");
      o.push_back("contact.parameters.damping=1e5");
    }
    return o;
  }
};

void LaikagoStep(benchmark::State& state, const std::string& contact_model) {
  Standing s(contact_model);
  const long long k0 = s.contact ? s.contact->impulse_stats().total_iterations : 0;
  const long long solves0 = s.contact ? s.contact->impulse_stats().solves : 0;
  long steps = 0, allocations = 0;
  for (auto _ : state) {
    testing::AllocationCounter counter;
    s.step();
    allocations += counter.count();
    ++steps;
  }
  state.counters["allocs/step"] =
      testing::AllocationCounter::available() ? double(allocations) / std::max(1L, steps) : -1.0;
  state.counters["contacts"] = s.contact ? s.contact->num_contacts() : 0;
  if (contact_model == "impulse") {
    const ImpulseStats& st = s.contact->impulse_stats();
    state.counters["pgs_iters"] = double(st.total_iterations - k0) / std::max(1LL, st.solves - solves0);
    state.counters["pgs_max"] = st.max_iterations;
  }
}

// PGS sweeps to reach the configured tolerance (1e-6 relative) on the
// settled standing state, from zero (cold) or last step's impulses (warm).
void PgsIterations(benchmark::State& state, bool warm) {
  Standing s("impulse", warm);
  const ImpulseStats before = s.contact->impulse_stats();
  for (auto _ : state) s.step();
  const ImpulseStats& st = s.contact->impulse_stats();
  state.counters["pgs_iters"] = double(st.total_iterations - before.total_iterations) / (st.solves - before.solves);
  state.counters["unconverged"] = double(st.unconverged - before.unconverged);
}

BENCHMARK_CAPTURE(LaikagoStep, no_contact, std::string("none"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(LaikagoStep, hunt_crossley, std::string("hunt_crossley"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(LaikagoStep, penalty, std::string("penalty"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(LaikagoStep, impulse, std::string("impulse"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(PgsIterations, cold_start, false)->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(PgsIterations, warm_start, true)->Unit(benchmark::kMicrosecond)->Iterations(2000);

}  // namespace
}  // namespace neuralsim

BENCHMARK_MAIN();
