// AbaNode (grad/aba_node.hpp): a semi-implicit Euler rollout on the tape
// with aba() entered as ONE external node must give the gradients of the
// same rollout taped operation by operation (aba<Rev>, which shares no code
// with forward_dynamics_vjp), w.r.t. everything: raw initial q (quaternions
// through the engine's normalization), q̇, the controls of every step,
// external forces, and the model's inertias, armatures, gravity and joint
// origins as tape variables. And it records far fewer nodes.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "neuralsim/augment/network_node.hpp"
#include "neuralsim/grad/aba_node.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

struct Rollout {
  Eigen::VectorXd grad;  // all variables, in creation order
  std::size_t nodes = 0;
  double loss = 0;
};

// L = cqᵀ q_K + cvᵀ q̇_K after K semi-implicit Euler steps from (q0, q̇0) with
// controls u_k and constant external forces f. Every input and every model
// parameter is a variable; `use_node` selects AbaNode or aba<Rev>.
Rollout taped_rollout(const Model<double>& md, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                      const std::vector<Eigen::VectorXd>& u, const std::vector<Vec6<double>>& f,
                      const Eigen::VectorXd& cq, const Eigen::VectorXd& cv, bool use_node) {
  Tape tape;
  std::vector<Rev> vars;
  auto var = [&](double x) {
    vars.push_back(tape.variable(x));
    return vars.back();
  };
  Model<Rev> m = md.cast<Rev>();
  for (auto& b : m.bodies) {
    Inertia<Rev>& I = b.inertia;
    I.mass = var(I.mass.value());
    for (int c = 0; c < 3; ++c) I.h[c] = var(I.h[c].value());
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r <= c; ++r) I.I_origin(r, c) = I.I_origin(c, r) = var(I.I_origin(r, c).value());
  }
  for (auto& j : m.joints) {
    j.dynamics.armature = var(j.dynamics.armature.value());
    for (int c = 0; c < 3; ++c) j.origin.r[c] = var(j.origin.r[c].value());
  }
  for (int c = 0; c < 3; ++c) m.gravity[c] = var(m.gravity[c].value());
  VecX<Rev> q(m.nq), qd(m.nv);
  for (int k = 0; k < m.nq; ++k) q[k] = var(q0[k]);
  for (int k = 0; k < m.nv; ++k) qd[k] = var(qd0[k]);
  Data<Rev> data(m);
  for (int b = 0; b < m.num_bodies(); ++b)
    for (int c = 0; c < 6; ++c) data.f_ext[b][c] = var(f[b][c]);
  AbaNode node(m);
  const double h = 0.01;
  VecX<Rev> qdd(m.nv), dv(m.nv), qn(m.nq);
  for (const auto& uk : u) {
    VecX<Rev> tau(m.nv);
    for (int k = 0; k < m.nv; ++k) tau[k] = var(uk[k]);
    if (use_node) {
      node.record(tape, m, q, qd, tau, data.f_ext, qdd);
    } else {
      aba(m, data, q, qd, tau);
      qdd = data.qdd;
    }
    semi_implicit_velocity_update(m, qd, qdd, h);
    dv = Rev(h) * qd;
    qn = q;
    integrate_configuration(m, q, dv, qn);
    q = qn;
    transport_free_velocities(m, dv, qd);
  }
  Rev L = 0.0;
  for (int k = 0; k < m.nq; ++k) L += cq[k] * q[k];
  for (int k = 0; k < m.nv; ++k) L += cv[k] * qd[k];
  Rollout r;
  r.nodes = tape.size();
  r.loss = L.value();
  tape.reverse(L);
  r.grad.resize(static_cast<Eigen::Index>(vars.size()));
  for (size_t k = 0; k < vars.size(); ++k) r.grad[static_cast<Eigen::Index>(k)] = tape.adjoint(vars[k]);
  return r;
}

void expect_node_matches_full_tape(const Model<double>& model, const std::string& name, int steps) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  Eigen::VectorXd q0, qd0;
  testing::random_state(model, rng, q0, qd0);
  std::vector<Eigen::VectorXd> u(steps);
  for (auto& uk : u) uk = Eigen::VectorXd::NullaryExpr(model.nv, [&] { return uni(rng); });
  std::vector<Vec6<double>> f(model.num_bodies());
  for (auto& fb : f) fb = Vec6<double>::NullaryExpr([&] { return uni(rng); });
  const Eigen::VectorXd cq = Eigen::VectorXd::NullaryExpr(model.nq, [&] { return uni(rng); });
  const Eigen::VectorXd cv = Eigen::VectorXd::NullaryExpr(model.nv, [&] { return uni(rng); });
  const Rollout full = taped_rollout(model, q0, qd0, u, f, cq, cv, false);
  const Rollout node = taped_rollout(model, q0, qd0, u, f, cq, cv, true);
  EXPECT_NEAR(node.loss, full.loss, 1e-12 * (1 + std::abs(full.loss))) << name;
  ASSERT_EQ(node.grad.size(), full.grad.size());
  const double err = (node.grad - full.grad).lpNorm<Eigen::Infinity>() / full.grad.lpNorm<Eigen::Infinity>();
  EXPECT_LT(err, 1e-10) << name << "\n node: " << node.grad.transpose() << "\n full: " << full.grad.transpose();
  std::printf("  [%s, %d steps] %ld variables, relative gradient error %.2e; tape nodes %zu (aba<Rev>) vs %zu "
              "(AbaNode)\n",
              name.c_str(), steps, static_cast<long>(full.grad.size()), err, full.nodes, node.nodes);
  EXPECT_LT(node.nodes * 5, full.nodes) << name;
}

TEST(AbaNode, MatchesTheFullyTapedRolloutOnEveryJointType) {
  expect_node_matches_full_tape(testing::mixed_joint_model(), "mixed", 5);
  Model<double> m = testing::mixed_joint_model();
  m.joints[0].dynamics.armature = 0.03;
  expect_node_matches_full_tape(m, "mixed+armature", 3);
  expect_node_matches_full_tape(load_yaml_model(testing::source_path("configs/models/swimmer5.yaml")), "swimmer5", 3);
}

TEST(AbaNode, MatchesTheFullyTapedRolloutOnFloatingLaikago) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  const std::string path = testing::shared_path("models/laikago/laikago_toes_zup.urdf");
  UrdfOptions floating;
  floating.floating_base = true;
  expect_node_matches_full_tape(load_urdf_model(path, floating), "laikago", 3);
}

// The forward cache (aba_node.hpp, network_node.hpp) is bookkeeping only: a
// call reversed from its cache entry, a call whose entry was released by a
// rewind below it, and a call recorded on a tape the node has left since
// (recomputed) all give exactly what a fresh node gives for the same calls.
Rev seeded_sum(const VecX<Rev>& y, const Eigen::VectorXd& c) {
  Rev L = 0.0;
  for (int k = 0; k < y.size(); ++k) L += c[k] * y[k];
  return L;
}

TEST(AbaNode, ForwardCacheSurvivesRewindsAndOtherTapes) {
  const Model<double> md = load_yaml_model(testing::source_path("configs/models/swimmer5.yaml"));
  const Model<Rev> m = md.cast<Rev>();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  auto rnd = [&](int n) { return Eigen::VectorXd(Eigen::VectorXd::NullaryExpr(n, [&] { return uni(rng); })); };
  const Eigen::VectorXd c = rnd(md.nv);
  Eigen::VectorXd qs[3], vs[3], ts[3];
  for (int i = 0; i < 3; ++i) {
    qs[i] = rnd(md.nq);
    vs[i] = rnd(md.nv);
    ts[i] = rnd(md.nv);
  }
  const std::vector<Vec6<Rev>> f(md.num_bodies(), Vec6<Rev>::Zero());
  struct Call {
    VecX<Rev> q, qd, tau, qdd;
  };
  auto record = [&](AbaNode& node, Tape& tape, int i) {
    Call k{VecX<Rev>(md.nq), VecX<Rev>(md.nv), VecX<Rev>(md.nv), VecX<Rev>(md.nv)};
    for (int j = 0; j < md.nq; ++j) k.q[j] = tape.variable(qs[i][j]);
    for (int j = 0; j < md.nv; ++j) k.qd[j] = tape.variable(vs[i][j]);
    for (int j = 0; j < md.nv; ++j) k.tau[j] = tape.variable(ts[i][j]);
    node.record(tape, m, k.q, k.qd, k.tau, f, k.qdd);
    return k;
  };
  auto grad = [&](Tape& tape, const Call& k) {
    std::vector<double> g;
    for (const VecX<Rev>* v : {&k.q, &k.qd, &k.tau})
      for (int j = 0; j < v->size(); ++j) g.push_back(tape.adjoint((*v)[j]));
    return g;
  };
  // Reference: each call alone, on a fresh node and tape.
  std::vector<double> ref[3];
  for (int i = 0; i < 3; ++i) {
    AbaNode fresh(m);
    Tape t;
    const Call k = record(fresh, t, i);
    t.reverse(seeded_sum(k.qdd, c));
    ref[i] = grad(t, k);
  }
  AbaNode node(m);
  // Calls 0 and 1, then a rewind below call 1 and call 2 in its place.
  Tape a;
  const Call k0 = record(node, a, 0);
  const std::size_t mark = a.size();
  record(node, a, 1);
  EXPECT_EQ(node.cached_calls(), 2u);
  a.rewind(mark);
  const Call k2 = record(node, a, 2);
  EXPECT_EQ(node.cached_calls(), 2u);  // call 1's entry released, call 2's pushed
  a.seed(seeded_sum(k0.qdd, c), 1.0);
  a.seed(seeded_sum(k2.qdd, c), 1.0);
  a.reverse();
  EXPECT_EQ(grad(a, k0), ref[0]);
  EXPECT_EQ(grad(a, k2), ref[2]);
  // A second tape: a new generation; tape a's calls are then recomputed.
  Tape b;
  const Call kb = record(node, b, 1);
  b.reverse(seeded_sum(kb.qdd, c));
  EXPECT_EQ(grad(b, kb), ref[1]);
  a.seed(seeded_sum(k0.qdd, c), 1.0);
  a.seed(seeded_sum(k2.qdd, c), 1.0);
  a.reverse();
  EXPECT_EQ(grad(a, k0), ref[0]);
  EXPECT_EQ(grad(a, k2), ref[2]);
  // Clearing the tape releases everything; the capacity is kept.
  a.clear();
  const Call kc = record(node, a, 0);
  EXPECT_EQ(node.cached_calls(), 1u);
  a.reverse(seeded_sum(kc.qdd, c));
  EXPECT_EQ(grad(a, kc), ref[0]);
}

// A call whose model parameters are all constants records only the state
// (q, q̇, τ, f_ext) as inputs: its state gradient is that of a call with
// every parameter a variable, bit for bit.
struct StateCall {
  std::vector<Rev> inputs;  // q, q̇, τ, f_ext
  VecX<Rev> qdd;
};
StateCall record_state_call(AbaNode& node, Tape& tape, const Model<Rev>& m, const Eigen::VectorXd& x) {
  StateCall k;
  int n = 0;
  VecX<Rev> q(m.nq), qd(m.nv), tau(m.nv);
  std::vector<Vec6<Rev>> f(m.num_bodies());
  auto var = [&]() {
    k.inputs.push_back(tape.variable(x[n++]));
    return k.inputs.back();
  };
  for (int j = 0; j < m.nq; ++j) q[j] = var();
  for (int j = 0; j < m.nv; ++j) qd[j] = var();
  for (int j = 0; j < m.nv; ++j) tau[j] = var();
  for (auto& fb : f)
    for (int c = 0; c < 6; ++c) fb[c] = var();
  k.qdd.resize(m.nv);
  node.record(tape, m, q, qd, tau, f, k.qdd);
  return k;
}

TEST(AbaNode, StateOnlyCallsGiveTheStateGradientOfFullCalls) {
  const Model<double> md = testing::mixed_joint_model();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  Eigen::VectorXd q0, qd0;
  testing::random_state(md, rng, q0, qd0);
  Eigen::VectorXd x(md.nq + 2 * md.nv + 6 * md.num_bodies());
  for (int k = 0; k < x.size(); ++k) x[k] = uni(rng);
  x.head(md.nq) = q0;
  const Eigen::VectorXd c = Eigen::VectorXd::NullaryExpr(md.nv, [&] { return uni(rng); });
  std::vector<double> g[2];
  for (int variable_parameters = 0; variable_parameters < 2; ++variable_parameters) {
    Tape tape;
    Model<Rev> m = md.cast<Rev>();
    if (variable_parameters) {
      for (auto& b : m.bodies) b.inertia.mass = tape.variable(b.inertia.mass.value());
      m.gravity[2] = tape.variable(m.gravity[2].value());
    }
    AbaNode node(m);
    const StateCall k = record_state_call(node, tape, m, x);
    tape.reverse(seeded_sum(k.qdd, c));
    for (const Rev& v : k.inputs) g[variable_parameters].push_back(tape.adjoint(v));
  }
  EXPECT_EQ(g[0], g[1]);
  EXPECT_GT(Eigen::Map<const Eigen::VectorXd>(g[0].data(), static_cast<long>(g[0].size())).norm(), 0.1);
}

// A state-only call reversed after its cache entry is gone is recomputed
// with the parameter values the node last saw; when those changed, the
// recomputed q̈ differs and the sweep refuses (no silently wrong gradient).
TEST(AbaNode, StateOnlyRecomputeRefusesChangedParameters) {
  const Model<double> md = testing::mixed_joint_model();
  Model<double> heavier = md;
  Inertia<double>& I = heavier.bodies[2].inertia;
  I.mass *= 2.0;
  I.h *= 2.0;
  I.I_origin *= 2.0;
  const Model<Rev> m1 = md.cast<Rev>(), m2 = heavier.cast<Rev>();
  std::mt19937 rng(6);
  Eigen::VectorXd q0, qd0;
  testing::random_state(md, rng, q0, qd0);
  Eigen::VectorXd x = Eigen::VectorXd::Constant(md.nq + 2 * md.nv + 6 * md.num_bodies(), 0.3);
  x.head(md.nq) = q0;
  const Eigen::VectorXd c = Eigen::VectorXd::Ones(md.nv);
  AbaNode node(m1);
  Tape a, b;
  const StateCall ka = record_state_call(node, a, m1, x);
  const StateCall kb = record_state_call(node, b, m2, x);  // a new tape: a's entry is gone
  a.seed(seeded_sum(ka.qdd, c), 1.0);
  EXPECT_THROW(a.reverse(), std::logic_error);
  b.reverse(seeded_sum(kb.qdd, c));  // its own entry: fine
}

// The same for NetworkNode (its cached workspaces).
TEST(AbaNode, NetworkNodeCacheSurvivesRewindsAndOtherTapes) {
  nn::Mlp net(3, std::vector<nn::Index>{6, 5}, 2, nn::Activation::kTanh);
  std::mt19937_64 eng(5);
  net.initialize(nn::Init::kXavierUniform, eng);
  const double xs[3][3] = {{0.3, -0.2, 0.5}, {-0.7, 0.1, 0.2}, {0.4, 0.9, -0.6}};
  auto run = [&](NetworkNode& node, Tape& tape, int i, Rev* x, Rev* y) {
    for (int j = 0; j < 3; ++j) x[j] = tape.variable(xs[i][j]);
    node.record(tape, x, y);
  };
  std::vector<double> wref[3], xref[3];
  for (int i = 0; i < 3; ++i) {
    std::vector<double> g(static_cast<std::size_t>(net.num_parameters()), 0.0);
    NetworkNode fresh(net, g.data());
    Tape t;
    Rev x[3], y[2];
    run(fresh, t, i, x, y);
    t.reverse(0.7 * y[0] - 1.3 * y[1]);
    wref[i] = g;
    for (const Rev& xi : x) xref[i].push_back(t.adjoint(xi));
  }
  std::vector<double> g(static_cast<std::size_t>(net.num_parameters()), 0.0);
  NetworkNode node(net, g.data());
  Tape a, b;
  Rev x0[3], y0[2], x1[3], y1[2], x2[3], y2[2];
  run(node, a, 0, x0, y0);
  const std::size_t mark = a.size();
  run(node, a, 1, x1, y1);
  a.rewind(mark);
  run(node, a, 2, x2, y2);
  EXPECT_EQ(node.cached_calls(), 2u);  // call 1's workspace released, call 2's pushed
  a.seed(0.7 * y0[0] - 1.3 * y0[1], 1.0);
  a.seed(0.7 * y2[0] - 1.3 * y2[1], 1.0);
  a.reverse();  // both from the cache
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.adjoint(x0[i]), xref[0][static_cast<std::size_t>(i)]);
    EXPECT_EQ(a.adjoint(x2[i]), xref[2][static_cast<std::size_t>(i)]);
  }
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], wref[2][i] + wref[0][i]) << i;
  std::fill(g.begin(), g.end(), 0.0);
  run(node, b, 1, x1, y1);  // another tape: a's calls are recomputed in its sweep
  a.seed(0.7 * y0[0] - 1.3 * y0[1], 1.0);
  a.reverse();
  std::vector<double> gx;
  for (const Rev& xi : x0) gx.push_back(a.adjoint(xi));
  EXPECT_EQ(gx, xref[0]);
  EXPECT_EQ(g, wref[0]);
  std::fill(g.begin(), g.end(), 0.0);
  b.reverse(0.7 * y1[0] - 1.3 * y1[1]);  // from the cache
  gx.clear();
  for (const Rev& xi : x1) gx.push_back(b.adjoint(xi));
  EXPECT_EQ(gx, xref[1]);
  EXPECT_EQ(g, wref[1]);
}

// The double copy the external nodes keep of a Model<Rev> is the whole
// model: every joint-dynamics field (the friction laws' parameters
// included), body drag and frames, not only what ABA reads today.
TEST(ModelValues, CopiesEveryFieldOfTheModel) {
  Model<double> md = testing::mixed_joint_model();
  JointDynamics<double>& jd = md.joints[2].dynamics;
  jd.damping = 0.1, jd.coulomb_friction = 0.2, jd.friction_velocity = 0.3, jd.friction_law = FrictionLaw::kSigmoid;
  jd.friction_static = 0.4, jd.stribeck_velocity = 0.5, jd.friction_slope = 6.0, jd.friction_shift = -0.7;
  jd.spring_stiffness = 0.8, jd.spring_rest = 0.9, jd.armature = 1.1, jd.gear_ratio = 1.2, jd.torque_offset = 1.3;
  md.bodies[1].drag.enabled = true;
  md.bodies[1].drag.linear << 1, 2, 3, 4, 5, 6;
  md.bodies[1].drag.quadratic << 7, 8, 9, 10, 11, 12;
  md.add_frame("tip", 2, Transform<double>(rpy_rotation<double>(0.1, 0.2, 0.3).transpose(), Vec3<double>(0.1, 0, -0.2)));
  const Model<double> back = model_values(md.cast<Rev>());
  const JointDynamics<double>& b = back.joints[2].dynamics;
  EXPECT_EQ(b.friction_law, FrictionLaw::kSigmoid);
  for (const auto& [got, want] : std::vector<std::pair<double, double>>{
           {b.damping, 0.1}, {b.coulomb_friction, 0.2}, {b.friction_velocity, 0.3}, {b.friction_static, 0.4},
           {b.stribeck_velocity, 0.5}, {b.friction_slope, 6.0}, {b.friction_shift, -0.7}, {b.spring_stiffness, 0.8},
           {b.spring_rest, 0.9}, {b.armature, 1.1}, {b.gear_ratio, 1.2}, {b.torque_offset, 1.3}})
    EXPECT_EQ(got, want);
  EXPECT_TRUE(back.bodies[1].drag.enabled);
  EXPECT_EQ(back.bodies[1].drag.linear, md.bodies[1].drag.linear);
  EXPECT_EQ(back.bodies[1].drag.quadratic, md.bodies[1].drag.quadratic);
  ASSERT_EQ(back.frames.size(), md.frames.size());
  EXPECT_EQ(back.frames.back().name, "tip");
  EXPECT_EQ(back.frames.back().body, 2);
  EXPECT_EQ(back.frames.back().placement.E, md.frames.back().placement.E);
  EXPECT_EQ(back.frames.back().placement.r, md.frames.back().placement.r);
}

}  // namespace
}  // namespace neuralsim
