// rnea_vjp (dynamics/rnea_vjp.hpp) against references that share none of
// its code: forward-mode Jacobians of rnea() on ceres::Jet (to ~1e-10) and
// central differences of rnea() in double (to ~1e-6), for every output —
// tangent-space q, q̇, q̈, external forces, the 10 inertial parameters of
// every body, armature, gravity and joint origins — on a tree with every
// joint type, every shipped YAML model and the floating Laikago, with random
// external forces and gravity with horizontal components. Plus: the
// by-products (τ, M w) against rnea() and crba(), no allocation, and a check
// that the comparison does catch a wrong derivative.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/rnea_vjp.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "support/files.hpp"
#include "support/allocation_counter.hpp"
#include "support/vjp_check.hpp"

namespace neuralsim {
namespace {

using testing::VjpCase;
using testing::VjpLayout;
using testing::VjpMode;

Eigen::VectorXd rnea_vjp_flat(const VjpCase& k) {
  Data<double> data(k.model);
  for (int b = 0; b < k.model.num_bodies(); ++b) data.f_ext[b] = k.f_ext[b];
  RneaVjp<double> out(k.model);
  rnea_vjp(k.model, data, k.q, k.qd, k.third, k.c, out);
  return testing::flatten(VjpLayout(k.model), out, out.a);
}

void check_rnea_vjp_against_jets_and_differences(const Model<double>& model, const std::string& name, int trials = 3) {
  for (int t = 0; t < trials; ++t) {
    const VjpCase k = testing::random_vjp_case(model, 100 + t);
    const VjpLayout L(k.model);
    const Eigen::VectorXd got = rnea_vjp_flat(k);
    const Eigen::VectorXd jet = testing::jet_gradient(k.model, k.q, k.qd, k.third, k.f_ext, k.c, VjpMode::kRnea);
    const Eigen::VectorXd fd = testing::fd_gradient(k.model, k.q, k.qd, k.third, k.f_ext, k.c, VjpMode::kRnea);
    const std::string what = name + " trial " + std::to_string(t);
    testing::expect_gradient_close(what + " vs Jet", L, VjpMode::kRnea, got, jet, 1e-10);
    testing::expect_gradient_close(what + " vs FD", L, VjpMode::kRnea, got, fd, 1e-6, 1e-4);
  }
}

TEST(RneaVjp, MatchesJetsAndDifferencesOnEveryJointType) {
  check_rnea_vjp_against_jets_and_differences(testing::mixed_joint_model(), "mixed");
  // Armature on the free root too (every armature partial non-trivial).
  Model<double> m = testing::mixed_joint_model();
  m.joints[0].dynamics.armature = 0.03;
  m.joints[1].dynamics.armature = 0.01;
  check_rnea_vjp_against_jets_and_differences(m, "mixed+armature");
}

TEST(RneaVjp, MatchesJetsAndDifferencesOnShippedYamlModels) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("configs/models"))) {
    if (entry.path().extension() != ".yaml") continue;
    const Model<double> model = load_yaml_model(entry.path().string());
    if (testing::has_rotors(model)) continue;  // refused: rotor_test.cpp
    check_rnea_vjp_against_jets_and_differences(model, entry.path().filename().string(), 2);
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(RneaVjp, MatchesJetsAndDifferencesOnFloatingLaikago) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  const std::string path = testing::shared_path("models/laikago/laikago_toes_zup.urdf");
  UrdfOptions floating;
  floating.floating_base = true;
  check_rnea_vjp_against_jets_and_differences(load_urdf_model(path, floating), "laikago", 2);
}

// The by-products: τ in data.tau equals rnea(), out.a = M w (crba, armature
// included) — and the output does not depend on what `out` held before.
TEST(RneaVjp, ByProductsMatchRneaAndCrba) {
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 5);
  Data<double> data(k.model), ref(k.model);
  for (int b = 0; b < k.model.num_bodies(); ++b) data.f_ext[b] = ref.f_ext[b] = k.f_ext[b];
  RneaVjp<double> out(k.model);
  out.q.setConstant(7);  // stale values must not leak into the result
  for (auto& g : out.inertia) g.setConstant(3);
  rnea_vjp(k.model, data, k.q, k.qd, k.third, k.c, out);
  rnea(k.model, ref, k.q, k.qd, k.third);
  EXPECT_LT((data.tau - ref.tau).norm(), 1e-12 * (1 + ref.tau.norm()));
  crba(k.model, ref, k.q);
  EXPECT_LT((out.a - ref.M * k.c).norm(), 1e-12 * (1 + out.a.norm()));
  const Eigen::VectorXd first = testing::flatten(VjpLayout(k.model), out, out.a);
  rnea_vjp(k.model, data, k.q, k.qd, k.third, k.c, out);
  EXPECT_EQ(testing::flatten(VjpLayout(k.model), out, out.a), first);
}

// rnea_vjp is a template: on Jets it gives forward-over-reverse second
// derivatives (Hessian–vector products of wᵀτ). The value part must equal the
// double result and the derivative parts central differences of the double
// VJP, here along a direction of q (tangent), of q̇ and of q̈ at once.
TEST(RneaVjp, RunsOnJetsForSecondDerivatives) {
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 12);
  const int nv = k.model.nv;
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::VectorXd dq = Eigen::VectorXd::NullaryExpr(nv, [&] { return u(rng); });
  const Eigen::VectorXd dv = Eigen::VectorXd::NullaryExpr(nv, [&] { return u(rng); });
  const Eigen::VectorXd da = Eigen::VectorXd::NullaryExpr(nv, [&] { return u(rng); });
  using J = Jet8;  // the width the library is instantiated for (lanes 0-2 used)
  const Model<J> mj = k.model.cast<J>();
  Data<J> dj(mj);
  for (int b = 0; b < k.model.num_bodies(); ++b) dj.f_ext[b] = k.f_ext[b].cast<J>();
  VecX<J> delta(nv), qdj(nv), qddj(nv);
  for (int i = 0; i < nv; ++i) {
    delta[i] = J(0.0, 0);
    delta[i].v[0] = dq[i];
    qdj[i] = J(k.qd[i], 1);
    qdj[i].v[1] = dv[i];
    qddj[i] = J(k.third[i], 2);
    qddj[i].v[2] = da[i];
  }
  const VecX<J> q0 = k.q.cast<J>();
  VecX<J> qj = q0;
  integrate_configuration(mj, q0, delta, qj);
  RneaVjp<J> out(mj);
  rnea_vjp(mj, dj, qj, qdj, qddj, VecX<J>(k.c.cast<J>()), out);
  const VecX<J> g = testing::flatten(VjpLayout(k.model), out, out.a);
  const Eigen::VectorXd value = g.unaryExpr([](const J& x) { return x.a; });
  const Eigen::VectorXd ref = rnea_vjp_flat(k);
  EXPECT_LT((value - ref).lpNorm<Eigen::Infinity>(), 1e-12 * ref.lpNorm<Eigen::Infinity>());
  // Central differences of the double VJP along each direction.
  const double h = 1e-5;
  for (int dir = 0; dir < 3; ++dir) {
    VjpCase plus = k, minus = k;
    const Eigen::VectorXd& d = dir == 0 ? dq : dir == 1 ? dv : da;
    if (dir == 0) {
      integrate_configuration(k.model, k.q, Eigen::VectorXd(h * d), plus.q);
      integrate_configuration(k.model, k.q, Eigen::VectorXd(-h * d), minus.q);
    } else {
      Eigen::VectorXd& xp = dir == 1 ? plus.qd : plus.third;
      Eigen::VectorXd& xm = dir == 1 ? minus.qd : minus.third;
      xp += h * d;
      xm -= h * d;
    }
    const Eigen::VectorXd fd = (rnea_vjp_flat(plus) - rnea_vjp_flat(minus)) / (2 * h);
    const Eigen::VectorXd jet = g.unaryExpr([dir](const J& x) { return x.v[dir]; });
    const double err = (jet - fd).lpNorm<Eigen::Infinity>() / fd.lpNorm<Eigen::Infinity>();
    EXPECT_LT(err, 1e-7) << "direction " << dir;
    std::printf("  [second derivatives, direction %d] relative error vs FD of the VJP %.2e\n", dir, err);
  }
}

TEST(RneaVjp, AllocatesNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 6);
  Data<double> data(k.model);
  RneaVjp<double> out(k.model);
  rnea_vjp(k.model, data, k.q, k.qd, k.third, k.c, out);
  testing::AllocationCounter counter;
  for (int r = 0; r < 10; ++r) rnea_vjp(k.model, data, k.q, k.qd, k.third, k.c, out);
  EXPECT_EQ(counter.count(), 0);
}

TEST(RneaVjp, RejectsWrongSizes) {
  const Model<double> model = testing::mixed_joint_model();
  Data<double> data(model);
  RneaVjp<double> out(model), unsized;
  const Eigen::VectorXd q = model.neutral_configuration(), z = Eigen::VectorXd::Zero(model.nv);
  const Eigen::VectorXd too_long = Eigen::VectorXd::Zero(model.nv + 1);
  EXPECT_ANY_THROW(rnea_vjp(model, data, q, z, z, too_long, out));
  EXPECT_ANY_THROW(rnea_vjp(model, data, q, z, z, z, unsized));
}

// The comparison is sharp enough to catch a wrong derivative: a VJP with one
// partial off by 1e-6 of its block's scale fails it. (Checked by hand once:
// with the (S q̇) ×* Ā term of eq. 8 dropped from rnea_vjp.hpp, the Jet and FD
// comparisons above fail in the q, v and origin blocks of every model with
// more than one joint; for a single joint the term has no effect, since
// Sᵀ(S q̇ ×* Ā) = 0 and a root's y_v = 0.)
TEST(RneaVjp, ComparisonCatchesAWrongPartial) {
  const VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 8);
  const VjpLayout L(k.model);
  Eigen::VectorXd got = rnea_vjp_flat(k);
  const Eigen::VectorXd jet = testing::jet_gradient(k.model, k.q, k.qd, k.third, k.f_ext, k.c, VjpMode::kRnea);
  const int entry = L.inertia() + 10 * 2 + 5;  // body 2, Ī_yy
  got[entry] += 1e-6 * std::max(1.0, std::abs(jet[entry]));
  EXPECT_NONFATAL_FAILURE(testing::expect_gradient_close("perturbed", L, VjpMode::kRnea, got, jet, 1e-10),
                          "block inertia");
}

}  // namespace
}  // namespace neuralsim
