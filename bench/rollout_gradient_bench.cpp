// Reverse-mode gradients through whole rollouts (grad/rollout_gradient.hpp,
// parameters/hybrid_rollout.hpp): cost against a forward rollout, against
// forward mode (ceres::Jet), against MuJoCo finite differences, and memory
// with checkpointing.
//
// 1. Planar 5-link swimmer (semi-implicit Euler, dt = 2 ms), a drag_force
//    augmentation on every segment (residual; inputs: the segment's world
//    velocity and angle of attack), 900 steps, networks of hidden widths
//    {2}, {10, 10}, {40, 40}: 95, 965 and 9815 weights. Loss: joint-space
//    tracking every step (horizon-weighted), a link position, a terminal
//    cost. Timed:
//      Forward    the rollout in double (Stepper<double>, networks in double)
//      Gradient   loss + ∂L/∂(weights, 1 physical parameter, q0, q̇0, all
//                 controls): double forward with checkpoints every √T steps,
//                 taped replay per segment (ABA and networks as external
//                 nodes), reverse sweeps (/w/1: the terminal cost only, which
//                 shows what the per-step loss terms cost on the tape)
//      JetPass    one forward-mode rollout in ceres::Jet<double, 8> seeding 8
//                 weights; a full Jet gradient is ceil(W / 8) such passes
//                 (all passes cost the same: the summary multiplies).
// 2. Laikago (floating base, 18 DoF) on the ground with Hunt–Crossley
//    contact on its four toe spheres, 1000 steps (dt = 1 ms) under fixed
//    PD-derived torques, gradient w.r.t. 20 named physical parameters (13
//    link masses, 4 joint dampings, contact stiffness, damping, friction),
//    against central differences with MuJoCo: 40 rollouts of 1000 mj_step
//    on the same robot (shared/models/laikago/laikago_floating_mujoco.xml
//    plus a ground plane), each with one of 20 parameters (13 body masses,
//    7 joint dampings) moved by ±h (built only with libmujoco-dev).
//    The same with impulse contact (/1): aba<Rev> taped, the PGS solve one
//    node differentiated implicitly (pgs_node.hpp), 13 masses, 4 dampings,
//    friction, erp and restitution; the forward rollout with the same
//    settings (no warm start). BM_LaikagoGradient/C/1 runs contact
//    C with contact.gradient = taped (every contact operation and PGS
//    iteration on the tape) for comparison with the nodes (/C/0).
//    Then, on the impulse case at 100 steps and a fixed PGS iteration count
//    (tolerance 0): peak tape nodes and a gradient component against the
//    iteration count, implicit and taped (the summary's last table).
// 3. Peak memory of the gradient for 1k, 10k and 100k swimmer steps (965
//    weights): each measurement in a fresh process (this program re-run with
//    --bptt_memory_child), peak RSS (getrusage) minus the RSS before the
//    gradient, and the driver's own accounting (tape blocks, checkpoints);
//    with k = ceil(√T) and, for comparison, without checkpointing (k = T).
//
// 4. Tape nodes per swimmer step by phase (passive forces + τ + the
//    stepper's forward kinematics as the driver records them, one
//    KinematicsNode of 30 outputs per body, the augmentation hook, the ABA node, the
//    integrator, the loss terms), and the external calls per step.
// 6. --laikago_profile=N:I:T runs N Laikago gradients (I: impulse, T: taped
//    contact) for `perf record`; --impulse_iterations prints the table of 2.
// 5. --profile=gradient:W:N or --profile=forward:W:N runs N swimmer
//    gradients (or forward rollouts) of width index W after one warm-up and
//    exits: run it under `valgrind --tool=callgrind` for N = 1 and N = 3,
//    the difference / 2 is the instruction count of one call (set-up and
//    warm-up cancel), a load-independent measure on a shared machine.
//
// Timing goals are not asserted here (or in the tests): the summary prints
// ratios.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#ifdef NEURALSIM_BENCH_MUJOCO
#include <mujoco/mujoco.h>
#endif

#include "augment/augment_support.hpp"
#include "bench_common.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/hybrid_rollout.hpp"

namespace neuralsim::bench {
namespace {

using testing::Scene;

constexpr int kSwimmerSteps = 900;
const std::vector<std::vector<nn::Index>> kWidths = {{2}, {10, 10}, {40, 40}};

ParameterSet named_parameters(const Model<double>& model, const std::optional<ContactSettings>& contact,
                              const std::vector<std::string>& names) {
  std::vector<EstimatedParameter> ps;
  for (const std::string& n : names) {
    const auto t = resolve_named_parameter(n, model, contact.has_value());
    if (!t) throw InvalidArgument("unknown parameter " + n);
    EstimatedParameter p;
    p.target = *t;
    ContactParameters<double> c = contact ? contact->parameters : ContactParameters<double>();
    Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(model.nv);
    p.initial = named_parameter_value(*t, model, &c, &qd0);
    ps.push_back(p);
  }
  return ParameterSet(ps);
}

struct Swimmer {
  Scene scene = testing::swimmer_scene();
  RolloutProblem problem;
  Eigen::MatrixXd controls;
  TrajectoryLoss loss;
  int weights = 0;
};

Swimmer make_swimmer(int width_index, int steps) {
  Swimmer s;
  s.problem.model = s.scene.model;
  s.problem.step = s.scene.step;
  s.problem.augment = testing::swimmer_drag_blueprints(s.scene.model, kWidths[static_cast<std::size_t>(width_index)]);
  s.problem.physical = named_parameters(s.scene.model, std::nullopt, {"joint.joint1.damping"});
  for (const AugmentBlueprint& bp : s.problem.augment) s.weights += static_cast<int>(bp.network.num_parameters());
  s.controls.resize(s.scene.model.nv, steps);
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < s.scene.model.nv; ++i) s.controls(i, k) = s.scene.control(i, k * s.scene.step.dt);
  const int nq = s.scene.model.nq, nv = s.scene.model.nv;
  s.loss.stage = sum_of({state_tracking_loss(s.scene.q0, Eigen::VectorXd::Zero(nv), Eigen::VectorXd::Ones(nq),
                                             Eigen::VectorXd::Constant(nv, 0.1)),
                         link_position_loss(s.scene.model.num_bodies() - 1, Eigen::Vector3d(0.3, 0.1, 0.0))});
  s.loss.horizon_weight.resize(static_cast<std::size_t>(steps));
  for (int k = 0; k < steps; ++k) s.loss.horizon_weight[static_cast<std::size_t>(k)] = 1.0 + double(k) / steps;
  s.loss.terminal = [](const LossState& st) { return 10.0 * st.q[0] * st.q[0] + st.qd[0]; };
  return s;
}

void BM_SwimmerForward(benchmark::State& state) {
  const Swimmer s = make_swimmer(static_cast<int>(state.range(0)), kSwimmerSteps);
  Stepper<double> stepper(s.problem.model, s.problem.step);
  auto aug = install_augmentation<double>(s.problem.augment, s.problem.model, stepper);
  VecX<double> q, qd, u(s.scene.model.nv);
  for (auto _ : state) {
    q = s.scene.q0;
    qd = s.scene.qd0;
    for (int k = 0; k < kSwimmerSteps; ++k) {
      u = s.controls.col(k);
      stepper.step(q, qd, u, k * s.scene.step.dt);
    }
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["weights"] = s.weights;
}

void BM_SwimmerGradient(benchmark::State& state) {
  Swimmer s = make_swimmer(static_cast<int>(state.range(0)), kSwimmerSteps);
  if (state.range(1) == 1) s.loss.stage = nullptr;  // terminal cost only: the cost of the stage terms
  HybridRollout sim(s.problem);
  const std::vector<double> x = sim.parameters().initial_variables();
  HybridRolloutGradient g;
  for (auto _ : state) {
    sim.gradient(x, s.scene.q0, s.scene.qd0, s.controls, s.loss, g);
    benchmark::DoNotOptimize(g.x.data());
  }
  state.counters["weights"] = s.weights;
  state.counters["k"] = sim.driver().stats().checkpoint_interval;
  state.counters["tape_nodes"] = static_cast<double>(sim.driver().stats().peak_tape_nodes);
}

// One forward-mode pass: 8 weights seeded, the same loss in Jets.
void BM_SwimmerJetPass(benchmark::State& state) {
  using J = ceres::Jet<double, 8>;
  const Swimmer s = make_swimmer(static_cast<int>(state.range(0)), kSwimmerSteps);
  HybridParameters hp(s.problem.physical, s.problem.augment);
  const std::vector<double> x0 = hp.initial_variables();
  Model<J> m = s.problem.model.cast<J>();
  Stepper<J> stepper(m, s.problem.step);
  auto aug = install_augmentation<J>(s.problem.augment, s.problem.model, stepper);
  Data<J> d(m);
  std::vector<J> x(x0.size());
  VecX<J> q, qd, u(m.nv);
  const int nq = m.nq, nv = m.nv, last = m.num_bodies() - 1;
  for (auto _ : state) {
    for (std::size_t i = 0; i < x0.size(); ++i) x[i] = J(x0[i]);
    for (int k = 0; k < 8; ++k) x[static_cast<std::size_t>(1 + k)].v[k] = 1.0;
    m = s.problem.model.cast<J>();
    hp.apply<J>(x.data(), &m, nullptr, nullptr, aug.get());
    q = s.scene.q0.cast<J>();
    qd = s.scene.qd0.cast<J>();
    J L(0.0);
    for (int k = 0; k < kSwimmerSteps; ++k) {
      for (int i = 0; i < nv; ++i) u[i] = J(s.controls(i, k));
      stepper.step(q, qd, u, k * s.scene.step.dt);
      forward_kinematics(m, d, q, qd);
      J stage(0.0);
      for (int i = 0; i < nq; ++i) stage += 0.5 * (q[i] - s.scene.q0[i]) * (q[i] - s.scene.q0[i]);
      for (int i = 0; i < nv; ++i) stage += 0.05 * qd[i] * qd[i];
      const Eigen::Vector3d target(0.3, 0.1, 0.0);
      for (int c = 0; c < 3; ++c) stage += 0.5 * (d.X_world[last].r[c] - target[c]) * (d.X_world[last].r[c] - target[c]);
      L += (1.0 + double(k) / kSwimmerSteps) * stage;
    }
    L += 10.0 * q[0] * q[0] + qd[0];
    benchmark::DoNotOptimize(L.v.data());
  }
  state.counters["weights"] = s.weights;
}

// ------------------------------------------------------------------ Laikago
struct Laikago {
  RolloutProblem problem;
  Eigen::VectorXd q0, qd0;
  Eigen::MatrixXd controls;
  TrajectoryLoss loss;
  std::vector<std::string> names;
};

constexpr int kLaikagoSteps = 1000;
const double kLaikagoQ0[19] = {0, 0, 0.356162, 0, 0, 0, 1, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25};

// contact_model: hunt_crossley, or impulse (taped in reverse mode, PGS
// without warm start as HybridRollout runs it; its 3 contact parameters are
// friction, erp and restitution).
Laikago make_laikago(const std::string& contact_model, ContactGradient mode = ContactGradient::kNodes) {
  Laikago l;
  const bool impulse = contact_model == "impulse";
  const Config cfg = Config::load(std::string(NEURALSIM_SOURCE_DIR) + "/configs/rollout_laikago_standing.yaml",
                                  {"contact.model=" + contact_model});
  Experiment e = load_experiment(cfg);
  if (impulse) e.contact->pgs.warm_start = false;
  e.contact->gradient = mode;
  l.problem.model = e.model;
  l.problem.implicit_impulse = impulse && mode == ContactGradient::kNodes;
  l.problem.step = e.step;
  l.problem.contact = e.contact;
  const Model<double>& m = e.model;
  for (const Body<double>& b : m.bodies)
    if (b.inertia.mass > 0) l.names.push_back("link." + b.name + ".mass");
  int damped = 0;
  for (const Joint<double>& j : m.joints)
    if (j.type == JointType::kRevolute && damped < 4) {
      l.names.push_back("joint." + j.name + ".damping");
      ++damped;
    }
  if (impulse)
    for (const char* c : {"contact.friction", "contact.erp", "contact.restitution"}) l.names.push_back(c);
  else
    for (const char* c : {"contact.stiffness", "contact.damping", "contact.friction"}) l.names.push_back(c);
  l.names.resize(std::min<std::size_t>(l.names.size(), 20));
  l.problem.physical = named_parameters(m, e.contact, l.names);
  l.q0 = Eigen::Map<const Eigen::VectorXd>(kLaikagoQ0, 19);
  l.qd0 = Eigen::VectorXd::Zero(m.nv);
  // Open-loop torques: PD (kp 400, kd 4) about the initial pose along a
  // double rollout, then held fixed as the controls.
  Stepper<double> st(m, e.step);
  auto contact = install_contact<double>(*e.contact, m, st);
  VecX<double> q = l.q0, qd = l.qd0, u = VecX<double>::Zero(m.nv);
  l.controls = Eigen::MatrixXd::Zero(m.nv, kLaikagoSteps);
  for (int k = 0; k < kLaikagoSteps; ++k) {
    for (int i = 6; i < m.nv; ++i) u[i] = 400.0 * (l.q0[i + 1] - q[i + 1]) - 4.0 * qd[i];
    l.controls.col(k) = u;
    st.step(q, qd, u, k * e.step.dt);
  }
  l.loss.stage = state_tracking_loss(l.q0, l.qd0, Eigen::VectorXd::Ones(m.nq), Eigen::VectorXd::Constant(m.nv, 0.01));
  l.loss.terminal = link_position_loss(0, Eigen::Vector3d(0.0, 0.0, 0.4), 100.0);
  return l;
}

Laikago& laikago(bool impulse = false, bool taped = false) {
  static Laikago hunt_crossley = make_laikago("hunt_crossley");
  static Laikago with_impulse = make_laikago("impulse");
  static Laikago hunt_crossley_taped = make_laikago("hunt_crossley", ContactGradient::kTaped);
  static Laikago with_impulse_taped = make_laikago("impulse", ContactGradient::kTaped);
  if (taped) return impulse ? with_impulse_taped : hunt_crossley_taped;
  return impulse ? with_impulse : hunt_crossley;
}

void BM_LaikagoForward(benchmark::State& state) {
  Laikago& l = laikago(state.range(0) != 0);
  Stepper<double> st(l.problem.model, l.problem.step);
  auto contact = install_contact<double>(*l.problem.contact, l.problem.model, st);
  VecX<double> q, qd, u;
  for (auto _ : state) {
    q = l.q0;
    qd = l.qd0;
    for (int k = 0; k < kLaikagoSteps; ++k) {
      u = l.controls.col(k);
      st.step(q, qd, u, k * l.problem.step.dt);
    }
    benchmark::DoNotOptimize(q.data());
  }
}

void BM_LaikagoGradient(benchmark::State& state) {
  Laikago& l = laikago(state.range(0) != 0, state.range(1) != 0);
  HybridRollout sim(l.problem);
  const std::vector<double> x = sim.parameters().initial_variables();
  HybridRolloutGradient g;
  for (auto _ : state) {
    sim.gradient(x, l.q0, l.qd0, l.controls, l.loss, g);
    benchmark::DoNotOptimize(g.x.data());
  }
  state.counters["parameters"] = static_cast<double>(l.names.size());
  state.counters["tape_nodes"] = static_cast<double>(sim.driver().stats().peak_tape_nodes);
}

// Impulse Laikago, 100 steps, PGS with a fixed iteration count (tolerance
// 0): the gradient's peak tape and ∂L/∂(erp) against the count (the feet
// stick, so ∂L/∂(friction) is zero).
void impulse_iterations_summary() {
  std::printf("\nLaikago, impulse contact, 100 steps, PGS with a fixed iteration count (tolerance 0):\n");
  std::printf("  %10s %18s %18s %16s %22s %22s\n", "iterations", "tape nodes (impl)", "tape nodes (taped)",
              "tape MB (taped)", "dL/derp (impl)", "dL/derp (taped)");
  for (int iterations : {10, 25, 50, 100, 200}) {
    double g[2] = {0, 0};
    std::size_t nodes[2] = {0, 0}, bytes = 0;
    for (int taped = 0; taped < 2; ++taped) {
      Laikago l = make_laikago("impulse", taped ? ContactGradient::kTaped : ContactGradient::kNodes);
      l.problem.contact->pgs.max_iterations = iterations;
      l.problem.contact->pgs.tolerance = 0;
      const int T = 100;
      Eigen::MatrixXd U = l.controls.leftCols(T);
      HybridRollout sim(l.problem);
      const std::vector<double> x = sim.parameters().initial_variables();
      HybridRolloutGradient out;
      sim.gradient(x, l.q0, l.qd0, U, l.loss, out);
      const auto it = std::find(l.names.begin(), l.names.end(), "contact.erp");
      g[taped] = out.x[it - l.names.begin()];
      nodes[taped] = sim.driver().stats().peak_tape_nodes;
      if (taped) bytes = sim.driver().stats().tape_capacity_bytes;
    }
    std::printf("  %10d %18zu %18zu %16.1f %22.12e %22.12e\n", iterations, nodes[0], nodes[1], bytes / 1048576.0, g[0],
                g[1]);
  }
}

#ifdef NEURALSIM_BENCH_MUJOCO
struct MjDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
  void operator()(mjData* d) const { mj_deleteData(d); }
};

// The shared Laikago XML plus a ground plane (the toes are spheres).
mjModel* load_mujoco_laikago() {
  std::ifstream f(shared_model_path("laikago/laikago_floating_mujoco.xml"));
  std::stringstream ss;
  ss << f.rdbuf();
  std::string xml = ss.str();
  const std::string tag = "<worldbody>";
  const auto at = xml.find(tag);
  if (at == std::string::npos) return nullptr;
  xml.insert(at + tag.size(), "<geom name=\"floor\" type=\"plane\" size=\"0 0 1\"/>");
  char path[] = "/tmp/neuralsim_laikago_XXXXXX.xml";
  const int fd = mkstemps(path, 4);
  if (fd < 0) return nullptr;
  if (write(fd, xml.data(), xml.size()) != static_cast<ssize_t>(xml.size())) return nullptr;
  close(fd);
  char err[1000] = "";
  mjModel* m = mj_loadXML(path, nullptr, err, sizeof err);
  std::remove(path);
  if (!m) std::fprintf(stderr, "mj_loadXML: %s\n", err);
  return m;
}

// Central differences of the same kind of loss over 20 parameters: 40
// rollouts of 1000 mj_step (dt 1 ms), parameters moved in the mjModel.
void BM_MujocoCentralDifferences(benchmark::State& state) {
  std::unique_ptr<mjModel, MjDeleter> m(load_mujoco_laikago());
  if (!m) {
    state.SkipWithError("MuJoCo model not loaded");
    return;
  }
  m->opt.timestep = 1e-3;
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Laikago& l = laikago();
  // Parameters: body masses (bodies 1..), then joint dampings, 20 in all.
  std::vector<mjtNum*> params;
  for (int b = 1; b < m->nbody && params.size() < 13; ++b) params.push_back(&m->body_mass[b]);
  for (int v = 6; v < m->nv && params.size() < 20; ++v) params.push_back(&m->dof_damping[v]);
  // Our hinge torques to MuJoCo dofs by joint name (the free joint gets none).
  std::vector<int> dof_of(static_cast<std::size_t>(l.problem.model.nv), -1);
  for (const Joint<double>& j : l.problem.model.joints)
    if (j.type == JointType::kRevolute) {
      const int id = mj_name2id(m.get(), mjOBJ_JOINT, j.name.c_str());
      if (id >= 0) dof_of[static_cast<std::size_t>(j.idx_v)] = m->jnt_dofadr[id];
    }
  double contacts = 0;  // contacts per step, summed (a check that the toes touch the ground)
  auto rollout = [&]() {
    mj_resetData(m.get(), d.get());
    d->qpos[2] = l.q0[2];
    for (int i = 7; i < m->nq && i < 19; ++i) d->qpos[i] = l.q0[i];
    mjtNum L = 0;
    for (int k = 0; k < kLaikagoSteps; ++k) {
      for (int v = 0; v < l.problem.model.nv; ++v)
        if (dof_of[static_cast<std::size_t>(v)] >= 0) d->qfrc_applied[dof_of[static_cast<std::size_t>(v)]] = l.controls(v, k);
      mj_step(m.get(), d.get());
      contacts += d->ncon;
      for (int i = 0; i < m->nq; ++i) L += 0.5 * d->qpos[i] * d->qpos[i];
    }
    return L;
  };
  std::vector<double> grad(params.size());
  for (auto _ : state) {
    for (std::size_t p = 0; p < params.size(); ++p) {
      const double x = *params[p], h = 1e-6 * std::max(1.0, std::abs(x));
      *params[p] = x + h;
      const double Lp = rollout();
      *params[p] = x - h;
      const double Lm = rollout();
      *params[p] = x;
      grad[p] = (Lp - Lm) / (2 * h);
    }
    benchmark::DoNotOptimize(grad.data());
  }
  state.counters["parameters"] = static_cast<double>(params.size());
  state.counters["rollouts"] = 2.0 * static_cast<double>(params.size());
  state.counters["contacts_per_step"] =
      contacts / (static_cast<double>(state.iterations()) * 2.0 * static_cast<double>(params.size()) * kLaikagoSteps);
  state.SetLabel(std::string("MuJoCo ") + mj_versionString() + ", nv=" + std::to_string(m->nv));
}
#endif

// ------------------------------------------------------------------ tape nodes by phase
// One swimmer step on the tape, from variables, with marker hooks around the
// augmentation hook and the dynamics solver (an AbaNode, as the driver
// installs it); averaged over `steps` steps.
void tape_breakdown(int width_index) {
  const int steps = 30;
  Swimmer s = make_swimmer(width_index, steps);
  const Model<double>& md = s.problem.model;
  Tape tape;
  Model<Rev> m = md.cast<Rev>();
  Stepper<Rev> st(m, s.problem.step);
  auto aug = install_augmentation<Rev>(s.problem.augment, md, st);
  aug->set_tape(&tape);
  AbaNode node(m);
  KinematicsNode kinematics(m);
  std::size_t mark = 0, passive_fk = 0, hook = 0, dyn = 0, integ = 0, loss_nodes = 0, loss_own = 0;
  auto& hooks = st.hooks();
  hooks.insert(hooks.begin(), [&](const Model<Rev>&, Data<Rev>&, const VecX<Rev>&, const VecX<Rev>&, double) {
    passive_fk += tape.size() - mark;
    mark = tape.size();
  });
  hooks.push_back([&](const Model<Rev>&, Data<Rev>&, const VecX<Rev>&, const VecX<Rev>&, double) {
    hook += tape.size() - mark;
    mark = tape.size();
  });
  struct Ctx {
    Tape* tape;
    AbaNode* node;
    KinematicsNode* kinematics;
    std::size_t* mark;
    std::size_t* dyn;
  } ctx{&tape, &node, &kinematics, &mark, &dyn};
  DynamicsSolver<Rev> solver;
  solver.context = &ctx;
  solver.solve = [](void* c, const Model<Rev>& model, Data<Rev>& data, const VecX<Rev>& q, const VecX<Rev>& qd,
                    const VecX<Rev>& tau) {
    Ctx& x = *static_cast<Ctx*>(c);
    x.node->record(*x.tape, model, q, qd, tau, data.f_ext, data.qdd);
    *x.dyn += x.tape->size() - *x.mark;
    *x.mark = x.tape->size();
  };
  solver.kinematics = [](void* c, const Model<Rev>& model, Data<Rev>& data, const VecX<Rev>& q,
                         const VecX<Rev>& qd) {  // as RolloutGradient installs it
    Ctx& x = *static_cast<Ctx*>(c);
    x.kinematics->record(*x.tape, model, data, q, qd);
  };
  st.set_dynamics_solver(solver);
  VecX<Rev> q(md.nq), qd(md.nv), u(md.nv);
  for (int i = 0; i < md.nq; ++i) q[i] = tape.variable(s.scene.q0[i]);
  for (int i = 0; i < md.nv; ++i) qd[i] = tape.variable(s.scene.qd0[i]);
  Data<Rev> loss_data(m);
  const std::size_t start = tape.size(), ext0 = tape.num_externals();
  for (int k = 0; k < steps; ++k) {
    for (int i = 0; i < md.nv; ++i) u[i] = tape.variable(s.controls(i, k));
    mark = tape.size();
    st.step(q, qd, u, k * s.scene.step.dt);
    integ += tape.size() - mark;
    mark = tape.size();
    // The loss terms as the driver records them (link poses from the
    // stepper's kinematics: here those of the step's start, for counting)
    // and with kinematics of their own (a segment's last state).
    const LossState given(k + 1, (k + 1) * s.scene.step.dt, q, qd, m, loss_data, &st.data().X_world);
    benchmark::DoNotOptimize(s.loss.stage(given));
    loss_nodes += tape.size() - mark;
    mark = tape.size();
    const LossState own(k + 1, (k + 1) * s.scene.step.dt, q, qd, m, loss_data);
    benchmark::DoNotOptimize(s.loss.stage(own));
    loss_own += tape.size() - mark;
  }
  (void)start;
  const double n = steps;
  std::printf("  %8d weights: %4.0f nodes/step = passive+τ+kinematics %3.0f, augmentation hook %3.0f, ABA node %2.0f, "
              "integrator %2.0f, stage loss %3.0f (%3.0f with its own kinematics), controls %d; %.0f external "
              "calls/step\n",
              s.weights, (passive_fk + hook + dyn + integ + loss_nodes) / n + md.nv, passive_fk / n, hook / n, dyn / n,
              integ / n, loss_nodes / n, loss_own / n, md.nv, (tape.num_externals() - ext0) / n);
}

// --laikago_profile=N:I:T (see the top of the file), for perf record.
int laikago_profile(const char* spec) {
  int n = 1, impulse = 0, taped = 0;
  std::sscanf(spec, "%d:%d:%d", &n, &impulse, &taped);
  Laikago& l = laikago(impulse != 0, taped != 0);
  HybridRollout sim(l.problem);
  const std::vector<double> x = sim.parameters().initial_variables();
  HybridRolloutGradient g;
  for (int r = 0; r < n; ++r) sim.gradient(x, l.q0, l.qd0, l.controls, l.loss, g);
  std::printf("laikago gradient x%d, peak tape nodes %zu, loss %.17g\n", n, sim.driver().stats().peak_tape_nodes,
              g.loss);
  return 0;
}

// --profile=gradient:W:N / forward:W:N (see the top of the file).
int profile_child(const char* spec) {
  char what[16] = "";
  int w = 0, n = 1;
  if (std::sscanf(spec, "%15[a-z]:%d:%d", what, &w, &n) != 3) return 2;
  Swimmer s = make_swimmer(w, kSwimmerSteps);
  if (std::strcmp(what, "gradient") == 0) {
    HybridRollout sim(s.problem);
    const std::vector<double> x = sim.parameters().initial_variables();
    HybridRolloutGradient g;
    for (int r = 0; r <= n; ++r) sim.gradient(x, s.scene.q0, s.scene.qd0, s.controls, s.loss, g);
    std::printf("gradient %d weights, %d calls after warm-up, loss %.17g\n", s.weights, n, g.loss);
    return 0;
  }
  Stepper<double> stepper(s.problem.model, s.problem.step);
  auto aug = install_augmentation<double>(s.problem.augment, s.problem.model, stepper);
  VecX<double> q, qd, u(s.scene.model.nv);
  for (int r = 0; r <= n; ++r) {
    q = s.scene.q0;
    qd = s.scene.qd0;
    for (int k = 0; k < kSwimmerSteps; ++k) {
      u = s.controls.col(k);
      stepper.step(q, qd, u, k * s.scene.step.dt);
    }
  }
  std::printf("forward %d weights, %d calls after warm-up, q0 %.17g\n", s.weights, n, q[0]);
  return 0;
}

// ------------------------------------------------------------------ memory
long rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// Child: one gradient of T swimmer steps with interval k (0: √T); prints
// "T k peak_rss_increase_kB tape_bytes checkpoint_bytes seconds aba_cache_bytes".
int memory_child(int T, int k) {
  Swimmer s = make_swimmer(1, T);
  HybridRollout sim(s.problem);
  const std::vector<double> x = sim.parameters().initial_variables();
  HybridRolloutGradient g;
  // The result (∂L/∂u: nv × T) and the controls are O(T) by nature; allocate
  // them before measuring, so the increase is the driver's working memory.
  g.controls = Eigen::MatrixXd::Zero(s.scene.model.nv, T);
  const long before = rss_kb();
  rusage ru{};
  const auto t0 = std::chrono::steady_clock::now();
  sim.gradient(x, s.scene.q0, s.scene.qd0, s.controls, s.loss, g, k);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  getrusage(RUSAGE_SELF, &ru);
  const RolloutGradientStats& st = sim.driver().stats();
  std::printf("%d %d %ld %zu %zu %.3f %zu\n", T, st.checkpoint_interval, ru.ru_maxrss - before,
              st.tape_capacity_bytes, st.checkpoint_bytes, sec, st.aba_cache_bytes);
  return 0;
}

std::string g_self;

void memory_summary() {
  std::printf("\nPeak memory of one gradient (swimmer, 965 weights), each in a fresh process:\n");
  std::printf("  %8s %7s %18s %10s %16s %15s %9s\n", "steps", "k", "peak RSS incr (MB)", "tape (MB)",
              "checkpoints (kB)", "ABA cache (kB)", "time (s)");
  struct Run {
    int T, k;
  };
  const Run runs[] = {{1000, 0}, {10000, 0}, {100000, 0}, {1000, 1000}, {10000, 10000}};
  for (const Run& r : runs) {
    const std::string cmd = g_self + " --bptt_memory_child=" + std::to_string(r.T) + ":" + std::to_string(r.k);
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) continue;
    int T = 0, k = 0;
    long kb = 0;
    std::size_t tape = 0, ck = 0, aba = 0;
    double sec = 0;
    const int n = std::fscanf(p, "%d %d %ld %zu %zu %lf %zu", &T, &k, &kb, &tape, &ck, &sec, &aba);
    pclose(p);
    if (n != 7) {
      std::printf("  %8d: child failed\n", r.T);
      continue;
    }
    std::printf("  %8d %7d %18.1f %10.1f %16.1f %15.1f %9.2f%s\n", T, k, kb / 1024.0, tape / 1048576.0, ck / 1024.0,
                aba / 1024.0, sec, r.k == 0 ? "  (k = ceil(sqrt(T)))" : "  (no checkpointing)");
  }
  std::printf("  (100k steps without checkpointing would hold the whole rollout on the tape: about 100x the 1k "
              "figure.)\n");
}

void summary(const RecordingReporter& r) {
  std::printf("\nSwimmer, %d steps, per-link drag networks (CPU time, min of repetitions):\n", kSwimmerSteps);
  std::printf("  %8s %12s %12s %9s %12s %8s %14s %9s %10s\n", "weights", "forward ms", "gradient ms", "grad/fwd",
              "jet pass ms", "passes", "jet grad ms", "jet/fwd", "jet/grad");
  for (int w = 0; w < static_cast<int>(kWidths.size()); ++w) {
    const Swimmer s = make_swimmer(w, 1);
    const double f = r.ns("BM_SwimmerForward/" + std::to_string(w)) * 1e-6;
    const double g = r.ns("BM_SwimmerGradient/" + std::to_string(w) + "/0") * 1e-6;
    const double j = r.ns("BM_SwimmerJetPass/" + std::to_string(w)) * 1e-6;
    if (f <= 0 || g <= 0) {
      std::printf("  %8d (not run)\n", s.weights);
      continue;
    }
    if (j <= 0) {  // no Jet pass (filtered out): the reverse-mode columns only
      std::printf("  %8d %12.2f %12.2f %9.2f\n", s.weights, f, g, g / f);
      continue;
    }
    const int passes = (s.weights + 1 + 7) / 8;  // weights + the physical parameter
    std::printf("  %8d %12.2f %12.2f %9.2f %12.2f %8d %14.1f %9.1f %10.1f\n", s.weights, f, g, g / f, j, passes,
                j * passes, j * passes / f, j * passes / g);
  }
  print_ratio("95 weights: gradient with the terminal cost only / forward", r.ns("BM_SwimmerGradient/0/1"),
              r.ns("BM_SwimmerForward/0"));
  const double lf = r.ns("BM_LaikagoForward/0"), lg = r.ns("BM_LaikagoGradient/0/0");
  std::printf("\nLaikago, Hunt–Crossley contact, %d steps, 20 physical parameters:\n", kLaikagoSteps);
  print_ratio("reverse-mode gradient / forward rollout (contact nodes)", lg, lf);
  print_ratio("reverse-mode gradient / forward rollout (contact taped)", r.ns("BM_LaikagoGradient/0/1"), lf);
  std::printf("Laikago, impulse contact (aba taped), %d steps, 20 physical parameters:\n", kLaikagoSteps);
  print_ratio("reverse-mode gradient / forward rollout (PGS implicit)", r.ns("BM_LaikagoGradient/1/0"),
              r.ns("BM_LaikagoForward/1"));
  print_ratio("reverse-mode gradient / forward rollout (PGS taped)", r.ns("BM_LaikagoGradient/1/1"),
              r.ns("BM_LaikagoForward/1"));
#ifdef NEURALSIM_BENCH_MUJOCO
  const double mj = r.ns("BM_MujocoCentralDifferences");
  print_ratio("MuJoCo central differences (40 rollouts) / our gradient", mj, lg);
#else
  std::printf("  MuJoCo comparison not built (libmujoco-dev not found)\n");
#endif
  std::printf("\nTape nodes per swimmer step, by phase (the replay of a segment):\n");
  for (int w = 0; w < static_cast<int>(kWidths.size()); ++w) tape_breakdown(w);
  impulse_iterations_summary();
  memory_summary();
}

}  // namespace
}  // namespace neuralsim::bench

int main(int argc, char** argv) {
  using namespace neuralsim::bench;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--bptt_memory_child=", 20) == 0) {
      int T = 0, k = 0;
      std::sscanf(argv[i] + 20, "%d:%d", &T, &k);
      return memory_child(T, k);
    }
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--profile=", 10) == 0) return profile_child(argv[i] + 10);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--tape_breakdown") == 0) {
      for (int w = 0; w < static_cast<int>(kWidths.size()); ++w) tape_breakdown(w);
      return 0;
    }
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--laikago_profile=", 18) == 0) return laikago_profile(argv[i] + 18);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--impulse_iterations") == 0) {
      impulse_iterations_summary();
      return 0;
    }
  g_self = argv[0];
  return bench_main(
      argc, argv, "bench_rollout_gradient",
      [] {
        for (int w = 0; w < static_cast<int>(kWidths.size()); ++w) {
          configure(benchmark::RegisterBenchmark("BM_SwimmerForward", BM_SwimmerForward)->Arg(w))
              ->Unit(benchmark::kMillisecond);
          configure(benchmark::RegisterBenchmark("BM_SwimmerGradient", BM_SwimmerGradient)->Args({w, 0}))
              ->Unit(benchmark::kMillisecond);
          if (w == 0)
            configure(benchmark::RegisterBenchmark("BM_SwimmerGradient", BM_SwimmerGradient)->Args({w, 1}))
                ->Unit(benchmark::kMillisecond);
          configure(benchmark::RegisterBenchmark("BM_SwimmerJetPass", BM_SwimmerJetPass)->Arg(w))
              ->Unit(benchmark::kMillisecond);
        }
        for (int impulse = 0; impulse < 2; ++impulse) {
          configure(benchmark::RegisterBenchmark("BM_LaikagoForward", BM_LaikagoForward)->Arg(impulse))
              ->Unit(benchmark::kMillisecond);
          for (int taped = 0; taped < 2; ++taped)
            configure(benchmark::RegisterBenchmark("BM_LaikagoGradient", BM_LaikagoGradient)->Args({impulse, taped}))
                ->Unit(benchmark::kMillisecond);
        }
#ifdef NEURALSIM_BENCH_MUJOCO
        configure(benchmark::RegisterBenchmark("BM_MujocoCentralDifferences", BM_MujocoCentralDifferences))
            ->Unit(benchmark::kMillisecond)
            ->Repetitions(2);
#endif
        return true;
      },
      summary);
}
