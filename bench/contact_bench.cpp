// Contact benchmarks: one step of Laikago standing on its four toe contacts
// (semi-implicit Euler, PD-held joints, the state of
// configs/rollout_laikago_standing.yaml after settling) with each contact
// model: h = 1 ms for the impulse model and without contact, h = 0.1 ms for
// the force models (the step they need on Laikago), and the PGS iteration counts of the impulse model with and
// without warm starting. Target: a Laikago step with contact <= 10 µs.
//
// Counters: allocs/step (heap allocations inside Stepper::step, counted by
// interposing malloc as tests/step/no_allocation_test.cpp does), contacts,
// pgs_iters (mean PGS sweeps per solve), pgs_max.
#include <benchmark/benchmark.h>

#include <cerrno>
#include <cstdlib>
#include <random>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/experiment/experiment.hpp"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
namespace {
thread_local bool g_counting = false;
thread_local long g_allocations = 0;
inline void count() {
  if (g_counting) ++g_allocations;
}
}  // namespace
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* malloc(size_t size) noexcept {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) noexcept {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) noexcept {
  count();
  return __libc_realloc(p, size);
}
void* aligned_alloc(size_t alignment, size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"
#else
namespace {
thread_local bool g_counting = false;
thread_local long g_allocations = -1;  // not counted
}  // namespace
#endif

namespace neuralsim {
namespace {

// The standing scenario with one contact model, settled for 1 s.
struct Standing {
  Config cfg;
  Model<double> model;
  StepOptions options;
  Stepper<double> stepper;
  std::shared_ptr<ContactSystem<double>> contact;
  std::unique_ptr<Controller<double>> controller;
  Eigen::VectorXd q, qd, u;
  long long k = 0;

  Standing(const std::string& contact_model, bool warm_start = true)
      : cfg(Config::load(std::string(NEURALSIM_SOURCE_DIR) + "/configs/rollout_laikago_standing.yaml",
                         overrides(contact_model, warm_start))),
        model(load_experiment_model(cfg)),
        options(read_step_options(cfg.at("sim"))),
        stepper(model, options) {
    std::mt19937_64 rng(1);
    const InitialState s = read_initial_states(cfg.at("initial_states"), model, rng).front();
    q = s.q;
    qd = s.qd;
    u = Eigen::VectorXd::Zero(model.nv);
    controller = make_controller(cfg.at("controls"), model, 0, nullptr);
    if (contact_model != "none") contact = install_contact(*contact_settings_from(cfg, model), model, stepper);
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
  void step() {
    controller->compute(k, k * options.dt, q, qd, u);
    stepper.step(q, qd, u, k * options.dt);
    ++k;
  }
};

void LaikagoStep(benchmark::State& state, const std::string& contact_model) {
  Standing s(contact_model);
  const long long k0 = s.contact ? s.contact->impulse_stats().total_iterations : 0;
  const long long solves0 = s.contact ? s.contact->impulse_stats().solves : 0;
  long steps = 0;
  g_allocations = 0;
  for (auto _ : state) {
    g_counting = true;
    s.step();
    g_counting = false;
    ++steps;
  }
  state.counters["allocs/step"] = double(g_allocations) / std::max(1L, steps);
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
