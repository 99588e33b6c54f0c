// forward_dynamics_vjp (dynamics/forward_dynamics_vjp.hpp) against the
// derivatives of aba() itself — not of RNEA — in forward mode (ceres::Jet,
// to ~1e-10) and by central differences (~1e-6): μᵀ dq̈/d(q, q̇, τ, f_ext,
// inertia, armature, gravity, origin) on a tree with every joint type (with
// and without a floating base solved directly by aba()), every shipped YAML
// model and the floating Laikago, with random external forces. Plus the
// joint-space M⁻¹ sweep (inverse_inertia_joint.hpp) against CRBA, no
// allocation, `data` left untouched, and a check that the comparison catches
// a wrong derivative.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/forward_dynamics_vjp.hpp"
#include "neuralsim/dynamics/inverse_inertia_joint.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "support/files.hpp"
#include "support/allocation_counter.hpp"
#include "support/vjp_check.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace {

using testing::VjpCase;
using testing::VjpLayout;
using testing::VjpMode;

Model<double> floating_laikago() {
  UrdfOptions floating;
  floating.floating_base = true;
  return load_urdf_model(testing::shared_path("models/laikago/laikago_toes_zup.urdf"), floating);
}

// k.third is τ; aba() then forward_dynamics_vjp with μ = k.c.
Eigen::VectorXd forward_dynamics_vjp_flat(const VjpCase& k) {
  Data<double> data(k.model);
  for (int b = 0; b < k.model.num_bodies(); ++b) data.f_ext[b] = k.f_ext[b];
  aba(k.model, data, k.q, k.qd, k.third);
  ForwardDynamicsVjp<double> out(k.model);
  forward_dynamics_vjp(k.model, data, k.q, k.qd, data.qdd, k.c, out);
  return testing::flatten(VjpLayout(k.model), out, out.tau);
}

void check_against_jets_and_differences(const Model<double>& model, const std::string& name, int trials = 3) {
  for (int t = 0; t < trials; ++t) {
    const VjpCase k = testing::random_vjp_case(model, 200 + t);
    const VjpLayout L(k.model);
    const VjpMode mode = VjpMode::kForwardDynamics;
    const Eigen::VectorXd got = forward_dynamics_vjp_flat(k);
    const Eigen::VectorXd jet = testing::jet_gradient(k.model, k.q, k.qd, k.third, k.f_ext, k.c, mode);
    const Eigen::VectorXd fd = testing::fd_gradient(k.model, k.q, k.qd, k.third, k.f_ext, k.c, mode);
    const std::string what = name + " trial " + std::to_string(t);
    testing::expect_gradient_close(what + " vs Jet(aba)", L, mode, got, jet, 1e-10);
    testing::expect_gradient_close(what + " vs FD(aba)", L, mode, got, fd, 1e-6, 1e-4);
  }
}

TEST(ForwardDynamicsVjp, MatchesAbaJetsAndDifferencesOnEveryJointType) {
  // Free root without armature: aba() solves the base directly.
  check_against_jets_and_differences(testing::mixed_joint_model(), "mixed");
  // With armature on the free root: the general 6-DoF factorization.
  Model<double> m = testing::mixed_joint_model();
  m.joints[0].dynamics.armature = 0.03;
  m.joints[1].dynamics.armature = 0.01;
  check_against_jets_and_differences(m, "mixed+armature");
}

TEST(ForwardDynamicsVjp, MatchesAbaJetsAndDifferencesOnShippedYamlModels) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("configs/models"))) {
    if (entry.path().extension() != ".yaml") continue;
    const Model<double> model = load_yaml_model(entry.path().string());
    if (testing::has_rotors(model)) continue;  // refused: rotor_test.cpp
    check_against_jets_and_differences(model, entry.path().filename().string(), 2);
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(ForwardDynamicsVjp, MatchesAbaJetsAndDifferencesOnFloatingLaikago) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  check_against_jets_and_differences(floating_laikago(), "laikago", 2);
}

// x = M⁻¹ μ through aba()'s factorization against a dense solve with CRBA's
// M, with the floating base solved directly or (after
// complete_articulated_factorization) through U and D⁻¹: the same result.
void expect_inverse_inertia_joint_matches_crba(const Model<double>& model) {
  std::mt19937 rng(3);
  Data<double> data(model);
  InverseInertiaWorkspace<double> ws(model.num_bodies());
  Eigen::VectorXd q, qd, x(model.nv), x2(model.nv);
  for (int t = 0; t < 3; ++t) {
    testing::random_state(model, rng, q, qd);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(model.nv), mu = Eigen::VectorXd::Random(model.nv);
    aba(model, data, q, qd, tau);
    apply_inverse_inertia_joint(model, data, mu, ws, x);
    crba(model, data, q);
    const Eigen::VectorXd expected = testing::spd_solve(data.M, mu);
    EXPECT_LT((x - expected).norm(), 1e-10 * (1 + expected.norm())) << model.name;
    aba(model, data, q, qd, tau);
    complete_articulated_factorization(model, data);
    apply_inverse_inertia_joint(model, data, mu, ws, x2);
    EXPECT_LT((x2 - expected).norm(), 1e-10 * (1 + expected.norm())) << model.name;
  }
}

TEST(InverseInertiaJoint, MatchesCrba) {
  expect_inverse_inertia_joint_matches_crba(testing::mixed_joint_model());
  Model<double> m = testing::mixed_joint_model();
  m.joints[0].dynamics.armature = 0.03;
  expect_inverse_inertia_joint_matches_crba(m);
  for (const auto& f : testing::shipped_yaml_models())
    expect_inverse_inertia_joint_matches_crba(load_yaml_model(testing::source_path(f)));
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  expect_inverse_inertia_joint_matches_crba(floating_laikago());
}

// out.tau = λ = M⁻¹ μ, out.a zero; `data` is only read (bitwise unchanged),
// so the call can sit between aba() and the velocity hooks of a step.
TEST(ForwardDynamicsVjp, ReadsDataOnlyAndReturnsLambda) {
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 9);
  Data<double> data(k.model);
  for (int b = 0; b < k.model.num_bodies(); ++b) data.f_ext[b] = k.f_ext[b];
  aba(k.model, data, k.q, k.qd, k.third);
  const Data<double> before = data;
  ForwardDynamicsVjp<double> out(k.model);
  forward_dynamics_vjp(k.model, data, k.q, k.qd, data.qdd, k.c, out);
  EXPECT_EQ(data.factorization_complete, before.factorization_complete);
  for (int b = 0; b < k.model.num_bodies(); ++b) {
    EXPECT_EQ(data.X_up[b].E, before.X_up[b].E);
    EXPECT_EQ(data.oYaba[b], before.oYaba[b]);
    EXPECT_EQ(data.U[b], before.U[b]);
    EXPECT_EQ(data.Dinv[b], before.Dinv[b]);
    EXPECT_EQ(data.oa[b], before.oa[b]);
  }
  EXPECT_EQ(data.qdd, before.qdd);
  Data<double> ref(k.model);
  crba(k.model, ref, k.q);
  EXPECT_LT((ref.M * out.tau - k.c).norm(), 1e-10 * (1 + k.c.norm()));
  EXPECT_TRUE(out.a.isZero(0.0));
}

// forward_dynamics_vjp is a template too: after aba() on Jets it gives the
// directional derivative of μᵀ∂q̈/∂x (forward over reverse), here along a
// direction of q̇; checked against central differences of the double VJP.
TEST(ForwardDynamicsVjp, RunsOnJetsForSecondDerivatives) {
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 13);
  const int nv = k.model.nv;
  const Eigen::VectorXd d = Eigen::VectorXd::LinSpaced(nv, -1.0, 1.0);
  using J = Jet8;  // the width the library is instantiated for (lane 0 used)
  const Model<J> mj = k.model.cast<J>();
  Data<J> dj(mj);
  for (int b = 0; b < k.model.num_bodies(); ++b) dj.f_ext[b] = k.f_ext[b].cast<J>();
  VecX<J> qdj(nv);
  for (int i = 0; i < nv; ++i) qdj[i] = J(k.qd[i]);
  for (int i = 0; i < nv; ++i) qdj[i].v[0] = d[i];
  const VecX<J> qj = k.q.cast<J>(), tauj = k.third.cast<J>(), muj = k.c.cast<J>();
  aba(mj, dj, qj, qdj, tauj);
  ForwardDynamicsVjp<J> out(mj);
  forward_dynamics_vjp(mj, dj, qj, qdj, dj.qdd, muj, out);
  const VecX<J> g = testing::flatten(VjpLayout(k.model), out, out.tau);
  const Eigen::VectorXd value = g.unaryExpr([](const J& x) { return x.a; });
  const Eigen::VectorXd ref = forward_dynamics_vjp_flat(k);
  EXPECT_LT((value - ref).lpNorm<Eigen::Infinity>(), 1e-12 * ref.lpNorm<Eigen::Infinity>());
  const double h = 1e-5;
  VjpCase plus = k, minus = k;
  plus.qd += h * d;
  minus.qd -= h * d;
  const Eigen::VectorXd fd = (forward_dynamics_vjp_flat(plus) - forward_dynamics_vjp_flat(minus)) / (2 * h);
  const Eigen::VectorXd jet = g.unaryExpr([](const J& x) { return x.v[0]; });
  const double err = (jet - fd).lpNorm<Eigen::Infinity>() / fd.lpNorm<Eigen::Infinity>();
  EXPECT_LT(err, 1e-7);
  std::printf("  [second derivatives along q-dot] relative error vs FD of the VJP %.2e\n", err);
}

TEST(ForwardDynamicsVjp, AllocatesNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 10);
  Data<double> data(k.model);
  aba(k.model, data, k.q, k.qd, k.third);
  ForwardDynamicsVjp<double> out(k.model);
  forward_dynamics_vjp(k.model, data, k.q, k.qd, data.qdd, k.c, out);
  testing::AllocationCounter counter;
  for (int r = 0; r < 10; ++r) forward_dynamics_vjp(k.model, data, k.q, k.qd, data.qdd, k.c, out);
  EXPECT_EQ(counter.count(), 0);
}

// A sign error in one partial (here ∂L/∂τ of one joint, flipped) fails the
// comparison with aba()'s Jets. (Checked by hand once: with w = +λ instead of
// -λ in forward_dynamics_vjp.hpp, the Jet and FD comparisons fail on every
// model, in every block except τ and those that vanish for the model.)
TEST(ForwardDynamicsVjp, ComparisonCatchesAWrongPartial) {
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 11);
  const VjpLayout L(k.model);
  Eigen::VectorXd got = forward_dynamics_vjp_flat(k);
  const Eigen::VectorXd jet =
      testing::jet_gradient(k.model, k.q, k.qd, k.third, k.f_ext, k.c, VjpMode::kForwardDynamics);
  got[L.third() + 7] = -got[L.third() + 7];
  EXPECT_NONFATAL_FAILURE(
      testing::expect_gradient_close("perturbed", L, VjpMode::kForwardDynamics, got, jet, 1e-10), "block tau");
}

}  // namespace
}  // namespace neuralsim
