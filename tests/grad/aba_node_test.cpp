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

#include "neuralsim/grad/aba_node.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/io/urdf_model.hpp"
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
  const std::string path = testing::shared_path("models/laikago/laikago_toes_zup.urdf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  UrdfOptions floating;
  floating.floating_base = true;
  expect_node_matches_full_tape(load_urdf_model(path, floating), "laikago", 3);
}

}  // namespace
}  // namespace neuralsim
