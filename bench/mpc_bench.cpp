// The convex MPC of the quadruped controller (issue 14) on the Laikago:
//   MpcQp/Cold, MpcQp/Warm  the QP alone (QpSolver, 12 N variables, 16 N
//                            friction rows, the bounds of a trot), H fixed,
//                            g from consecutive control steps of a
//                            closed-loop trot; cold = solve(), warm =
//                            solve(previous active set);
//   MpcSolve/Cold, /Warm     one full MPC solve as the controller runs it:
//                            condensing, H and g, Cholesky of H, the QP, on
//                            the recorded sequence of MPC inputs;
//   ControllerStep/Mpc       one QuadrupedController::compute() that runs
//                            the MPC (kinematics, gait, footholds, MPC, legs);
//   ControllerStep/Hold      one compute() between MPC solves (legs only);
//   MpcNetwork/Forward       the distilled network in the QP's place
//                            (distill-mpc, docs/distill-mpc.md): one forward
//                            pass features -> 12 forces on the recorded
//                            features, side by side with MpcSolve (the full
//                            MPC solve, as the controller does it);
//   ControllerStep/Network   one compute() that runs the network instead of
//                            the MPC.
// The network is read from $NEURALSIM_DISTILL_WEIGHTS (a distill-mpc
// weights.h5, network mpc_forces) when set and of the horizon's input size;
// otherwise a seeded 25+4N -> 128 tanh -> 128 tanh -> 12 network of the
// shape configs/distill_laikago.yaml trains (inference time does not depend
// on the weights' values). The label says which.
// The inputs come from 1.5 s of closed-loop trotting at 0.2 m/s in the
// simulator (configs/rollout_laikago_standing.yaml, impulse contact).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "neuralsim/control/quadruped_controller.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "support/scenario.hpp"

namespace neuralsim::bench {
namespace {

struct Recording {
  std::vector<CentroidalMpcInput> inputs;
  std::vector<Eigen::VectorXd> features;  // what the MPC saw at each recorded input
  std::vector<Eigen::VectorXd> q, qd;
  std::vector<double> t;
  QuadrupedControllerOptions options;
  std::unique_ptr<testing::Scenario> scenario;  // keeps the model alive
};

Recording& recording(int horizon) {
  static std::map<int, std::unique_ptr<Recording>> cache;
  auto& r = cache[horizon];
  if (r) return *r;
  r = std::make_unique<Recording>();
  r->scenario = std::make_unique<testing::Scenario>("rollout_laikago_standing");
  testing::Scenario& s = *r->scenario;
  r->options.gait = GaitParameters::trot(0.3, 0.5);
  r->options.gait_start_time = 0.2;
  r->options.mpc.horizon = horizon;
  auto c = std::make_unique<QuadrupedController>(s.model, r->options);
  QuadrupedController* ctrl = c.get();
  Data<double> data(s.model);
  forward_kinematics(s.model, data, s.q, s.qd);
  QuadrupedCommand cmd;
  cmd.height = centroidal(s.model, data).com.z();
  cmd.forward_speed = 0.2;
  ctrl->set_command(cmd);
  s.controller = std::move(c);
  for (long long k = 0; k < s.steps(1.5); ++k) {
    r->q.push_back(s.q);
    r->qd.push_back(s.qd);
    r->t.push_back(s.t);
    s.step();
    if (ctrl->mpc_updated() && s.t > 0.4) {
      r->inputs.push_back(ctrl->mpc_input());
      r->features.push_back(ctrl->features());
    }
  }
  return *r;
}

void BM_MpcQp(benchmark::State& state, bool warm) {
  const int N = static_cast<int>(state.range(0));
  Recording& rec = recording(N);
  CentroidalMpcParameters p = rec.options.mpc;
  double m;
  QuadrupedController::composite_inertia(rec.scenario->model, Eigen::VectorXd(), &m, &p.inertia);
  p.mass = m;
  // H, the bounds and C of one trot input; g of every recorded step.
  CentroidalMpc mpc(p);
  mpc.solve(rec.inputs.front());
  const Eigen::MatrixXd H = mpc.hessian();
  const Eigen::VectorXd lo = mpc.lower_bounds(), hi = mpc.upper_bounds();
  std::vector<Eigen::VectorXd> g;
  for (const auto& in : rec.inputs) {
    CentroidalMpcInput x = rec.inputs.front();
    x.x0 = in.x0;
    x.x_ref = in.x_ref;
    mpc.solve(x);
    g.push_back(mpc.gradient());
  }
  QpSolver qp(mpc.num_variables(), 0, mpc.constraint_matrix().rows());
  qp.update_hessian(H);
  qp.update_inequalities(mpc.constraint_matrix(), mpc.constraint_lower(), mpc.constraint_upper());
  qp.update_bounds(lo, hi);
  qp.update_gradient(g[0]);
  qp.solve();
  QpActiveSet previous = qp.result().active_set;
  size_t k = 0;
  long iterations = 0, solves = 0;
  for (auto _ : state) {
    k = (k + 1) % g.size();
    qp.update_gradient(g[k]);
    const QpStatus st = warm ? qp.solve(previous) : qp.solve();
    if (st != QpStatus::kOptimal) {
      state.SkipWithError(to_string(st));
      break;
    }
    if (warm) previous = qp.result().active_set;
    iterations += qp.result().iterations;
    ++solves;
    benchmark::DoNotOptimize(qp.result().x.data());
  }
  state.counters["iters"] = static_cast<double>(iterations) / std::max(1L, solves);
  state.counters["n"] = mpc.num_variables();
}

void BM_MpcSolve(benchmark::State& state, bool warm) {
  const int N = static_cast<int>(state.range(0));
  Recording& rec = recording(N);
  CentroidalMpcParameters p = rec.options.mpc;
  double m;
  QuadrupedController::composite_inertia(rec.scenario->model, Eigen::VectorXd(), &m, &p.inertia);
  p.mass = m;
  CentroidalMpc mpc(p);
  size_t k = 0;
  long iterations = 0, solves = 0;
  for (auto _ : state) {
    k = (k + 1) % rec.inputs.size();
    const QpStatus st = mpc.solve(rec.inputs[k], warm);
    if (st != QpStatus::kOptimal) {
      state.SkipWithError(to_string(st));
      break;
    }
    iterations += mpc.qp_result().iterations;
    ++solves;
    benchmark::DoNotOptimize(mpc.forces().data());
  }
  state.counters["iters"] = static_cast<double>(iterations) / std::max(1L, solves);
  state.counters["n"] = mpc.num_variables();
}

void BM_ControllerStep(benchmark::State& state, bool with_mpc) {
  const int N = static_cast<int>(state.range(0));
  Recording& rec = recording(N);
  QuadrupedController ctrl(rec.scenario->model, rec.options);
  QuadrupedCommand cmd;
  cmd.forward_speed = 0.2;
  cmd.height = 0.28;
  ctrl.set_command(cmd);
  Eigen::VectorXd u = Eigen::VectorXd::Zero(rec.scenario->model.nv);
  size_t k = rec.q.size() / 3;
  ctrl.compute(0, rec.t[k], rec.q[k], rec.qd[k], u);
  for (auto _ : state) {
    k = std::max<size_t>(rec.q.size() / 3, (k + 1) % rec.q.size());
    // Step index 0 mod mpc_every runs the MPC; 1 holds (unless the contacts change).
    ctrl.compute(with_mpc ? 0 : 1, rec.t[k], rec.q[k], rec.qd[k], u);
    benchmark::DoNotOptimize(u.data());
  }
}

// The distilled network for horizon N (see the file comment) and its label.
std::shared_ptr<const nn::Mlp> distilled_network(int N, std::string* label) {
  const int inputs = 25 + kNumLegs * N;
  if (const char* path = std::getenv("NEURALSIM_DISTILL_WEIGHTS"); path && *path) {
    NamedNetwork net = read_network(path, "mpc_forces");
    if (net.network.input_dim() == inputs && net.network.output_dim() == 3 * kNumLegs) {
      *label = "trained " + net.network.describe();
      return std::make_shared<const nn::Mlp>(std::move(net.network));
    }
  }
  auto net = std::make_shared<nn::Mlp>(inputs, std::vector<nn::Index>{128, 128}, 3 * kNumLegs, nn::Activation::kTanh);
  std::mt19937_64 rng(1);
  net->initialize(nn::Init::kXavierUniform, rng);
  *label = "seeded " + net->describe();
  return net;
}

void BM_MpcNetwork(benchmark::State& state) {
  const int N = static_cast<int>(state.range(0));
  Recording& rec = recording(N);
  std::string label;
  const auto net = distilled_network(N, &label);
  nn::Workspace<double> ws(*net);
  Eigen::VectorXd f(3 * kNumLegs);
  size_t k = 0;
  for (auto _ : state) {
    k = (k + 1) % rec.features.size();
    net->forward(rec.features[k].data(), rec.features[k].size(), f.data(), f.size(), ws);
    benchmark::DoNotOptimize(f.data());
  }
  state.SetLabel(label);
}

void BM_ControllerStepNetwork(benchmark::State& state) {
  const int N = static_cast<int>(state.range(0));
  Recording& rec = recording(N);
  std::string label;
  const auto net = distilled_network(N, &label);
  auto ws = std::make_shared<nn::Workspace<double>>(*net);
  QuadrupedController ctrl(rec.scenario->model, rec.options);
  ctrl.set_force_policy([net, ws](const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y) {
    net->forward(x.data(), x.size(), y.data(), y.size(), *ws);
  });
  QuadrupedCommand cmd;
  cmd.forward_speed = 0.2;
  cmd.height = 0.28;
  ctrl.set_command(cmd);
  Eigen::VectorXd u = Eigen::VectorXd::Zero(rec.scenario->model.nv);
  size_t k = rec.q.size() / 3;
  ctrl.compute(0, rec.t[k], rec.q[k], rec.qd[k], u);
  for (auto _ : state) {
    k = std::max<size_t>(rec.q.size() / 3, (k + 1) % rec.q.size());
    ctrl.compute(0, rec.t[k], rec.q[k], rec.qd[k], u);
    benchmark::DoNotOptimize(u.data());
  }
  state.SetLabel(label);
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"horizon"});
  b->Arg(10)->Arg(16);
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_MpcQp, Cold, false)->Apply(args);
BENCHMARK_CAPTURE(BM_MpcQp, Warm, true)->Apply(args);
BENCHMARK_CAPTURE(BM_MpcSolve, Cold, false)->Apply(args);
BENCHMARK_CAPTURE(BM_MpcSolve, Warm, true)->Apply(args);
BENCHMARK_CAPTURE(BM_ControllerStep, Mpc, true)->Apply(args);
BENCHMARK_CAPTURE(BM_ControllerStep, Hold, false)->Apply(args);
BENCHMARK(BM_MpcNetwork)->Name("MpcNetwork/Forward")->Apply(args);
BENCHMARK(BM_ControllerStepNetwork)->Name("ControllerStep/Network")->Apply(args);

}  // namespace
}  // namespace neuralsim::bench

BENCHMARK_MAIN();
