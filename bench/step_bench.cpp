// One Stepper::step (dt = 1 ms, one substep) with semi-implicit Euler and
// with RK4, on Laikago (floating base, no contact: free flight) and on the
// double pendulum. The state evolves from step to step as in a rollout and
// is reset to the initial state every kResetEvery steps, so long runs do not
// drift into unrepresentative states (the copy costs < 0.1 ns per step).
// TransitionJacobians/*: the exact ∂x⁺/∂x and ∂x⁺/∂u of one such step
// (step/transition_jacobians.hpp: analytical for semi-implicit Euler, Jets
// for RK4), against which the summary sets the cost
// of central differences (6 nv steps) and one-sided ones (3 nv + 1 steps,
// MuJoCo's mjd_transitionFD default).
#include <cstdio>
#include <memory>
#include <string>

#include "bench_common.hpp"
#include "neuralsim/step/stepper.hpp"
#include "neuralsim/step/transition_jacobians.hpp"

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

void BM_TransitionJacobians(benchmark::State& state, const std::string& name, Integrator integrator) {
  const Model<double>& model = *models().at(name);
  StepOptions opt;
  opt.integrator = integrator;
  opt.dt = 1e-3;
  TransitionJacobianSolver solver(model, opt);
  const State s0 = random_state(model);
  TransitionJacobians J;
  for (auto _ : state) {
    solver.compute(s0.q, s0.qd, s0.tau, 0.0, J);
    benchmark::DoNotOptimize(J.A.data());
    benchmark::ClobberMemory();
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
  for (const char* name : {"laikago", "double_pendulum"})
    for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4})
      configure(benchmark::RegisterBenchmark(
          (std::string("TransitionJacobians/") + name + "/" + integrator_name(integ)).c_str(), BM_TransitionJacobians,
          std::string(name), integ));
}

void summary(const RecordingReporter& rep) {
  std::printf("\nSummary (min CPU time over the repetitions, ns per step):\n");
  std::printf("  %-16s %20s %10s\n", "model", "semi_implicit_euler", "rk4");
  for (const char* name : {"laikago", "double_pendulum"}) {
    const std::string base = std::string("Step/") + name + "/";
    std::printf("  %-16s %20.1f %10.1f\n", name, rep.ns(base + "semi_implicit_euler"), rep.ns(base + "rk4"));
  }
  std::printf("\nTransition Jacobians (exact: semi-implicit Euler analytical, RK4 forward mode): ns per call, and per call / one step\n");
  std::printf("  (central differences need 6 nv steps, one-sided 3 nv + 1):\n");
  for (const char* name : {"laikago", "double_pendulum"}) {
    const int nv = models().at(name)->nv;
    for (const char* integ : {"semi_implicit_euler", "rk4"}) {
      const double jac = rep.ns(std::string("TransitionJacobians/") + name + "/" + integ);
      const double step = rep.ns(std::string("Step/") + name + "/" + integ);
      std::printf("  %-16s %-20s %10.1f ns  %6.1f steps  (FD: %d central, %d one-sided)\n", name, integ, jac,
                  jac / step, 6 * nv, 3 * nv + 1);
    }
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
