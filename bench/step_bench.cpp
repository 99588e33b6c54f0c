// One Stepper::step (dt = 1 ms, one substep) with semi-implicit Euler and
// with RK4, on Laikago (floating base, no contact: free flight) and on the
// double pendulum. The state evolves from step to step as in a rollout and
// is reset to the initial state every kResetEvery steps, so long runs do not
// drift into unrepresentative states (the copy costs < 0.1 ns per step).
#include <cstdio>
#include <memory>
#include <string>

#include "bench_common.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim::bench {
namespace {

constexpr int kResetEvery = 1000;

std::map<std::string, std::unique_ptr<Model<double>>>& models() {
  static std::map<std::string, std::unique_ptr<Model<double>>> m;
  return m;
}

void BM_Step(benchmark::State& state, const std::string& name, Integrator integrator) {
  const Model<double>& model = *models().at(name);
  StepOptions opt;
  opt.integrator = integrator;
  opt.dt = 1e-3;
  Stepper<double> stepper(model, opt);
  const State s0 = random_state(model);
  VecX<double> q = s0.q, qd = s0.qd;
  const VecX<double> control = s0.tau;
  int k = 0;
  double t = 0;
  for (auto _ : state) {
    stepper.step(q, qd, control, t);
    t += opt.dt;
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(qd.data());
    benchmark::ClobberMemory();
    if (++k == kResetEvery) {
      k = 0;
      t = 0;
      q = s0.q;
      qd = s0.qd;
    }
  }
  label_model(state, name + " " + integrator_name(integrator), model);
}

void register_all() {
  models()["double_pendulum"] = std::make_unique<Model<double>>(double_pendulum_model());
  models()["laikago"] = std::make_unique<Model<double>>(laikago_model());
  for (const char* name : {"laikago", "double_pendulum"})
    for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4})
      configure(benchmark::RegisterBenchmark(
          (std::string("Step/") + name + "/" + integrator_name(integ)).c_str(), BM_Step,
          std::string(name), integ));
}

void summary(const RecordingReporter& rep) {
  std::printf("\nSummary (min CPU time over the repetitions, ns per step):\n");
  std::printf("  %-16s %20s %10s\n", "model", "semi_implicit_euler", "rk4");
  for (const char* name : {"laikago", "double_pendulum"}) {
    const std::string base = std::string("Step/") + name + "/";
    std::printf("  %-16s %20.1f %10.1f\n", name, rep.ns(base + "semi_implicit_euler"), rep.ns(base + "rk4"));
  }
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  return neuralsim::bench::bench_main(
      argc, argv, "bench_step",
      [] {
        neuralsim::bench::register_all();
        return true;
      },
      neuralsim::bench::summary);
}
