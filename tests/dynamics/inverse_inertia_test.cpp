// M⁻¹ applied through ABA's articulated-body factorization
// (inverse_inertia.hpp) against the dense mass matrix from CRBA: for world
// forces F on bodies, q̈ = M⁻¹ Σ Jᵀ F, and the Delassus entries
// F₁ᵀ J M⁻¹ Jᵀ F₂ summed from per-joint terms. Jᵀ F comes from RNEA (with
// q̇ = q̈ = 0 and no gravity, RNEA returns -Σ Jᵀ f_ext), so three algorithms
// are checked against each other. The floating bases exercise
// complete_articulated_factorization (aba() leaves their D⁻¹ and U unformed).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <filesystem>

#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace {

// Jᵀ F for a world spatial force F = [n; f] (about the world origin) on `body`.
Eigen::VectorXd generalized_force(const Model<double>& model, int body, const Vec6<double>& F,
                                  const Eigen::VectorXd& q) {
  Model<double> no_gravity = model;
  no_gravity.gravity.setZero();
  Data<double> data(no_gravity);
  forward_kinematics(no_gravity, data, q);
  data.f_ext[body] = data.X_world[body].apply_force(F);  // world -> body coordinates
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  rnea(no_gravity, data, q, zero, zero);
  return -data.tau;
}

void expect_inverse_inertia_matches_crba(const Model<double>& model) {
  std::mt19937 rng(7);
  Data<double> data(model);
  InverseInertiaWorkspace<double> ws(model.num_bodies());
  std::uniform_int_distribution<int> pick(0, model.num_bodies() - 1);
  Eigen::VectorXd q, qd;
  for (int trial = 0; trial < 4; ++trial) {
    testing::random_state(model, rng, q, qd);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(model.nv);
    aba(model, data, q, qd, tau);  // any q̇, τ: the factorization depends on q only
    complete_articulated_factorization(model, data);

    crba(model, data, q);
    const Eigen::MatrixXd M = data.M;
    const int b1 = pick(rng), b2 = pick(rng);
    const Vec6<double> F1 = Vec6<double>::Random(), F2 = Vec6<double>::Random();
    const Eigen::VectorXd JF1 = generalized_force(model, b1, F1, q);
    const Eigen::VectorXd JF2 = generalized_force(model, b2, F2, q);
    ASSERT_GT(JF1.norm(), 1e-3);  // the test force does reach the joints

    // q̈ = M⁻¹ (Jᵀ F₁ + Jᵀ F₂).
    ws.clear();
    ws.add_force(b1, F1);
    ws.add_force(b2, F2);
    Eigen::VectorXd qdd(model.nv);
    apply_inverse_inertia(model, data, ws, &qdd);
    const Eigen::VectorXd expected = testing::spd_solve(M, JF1 + JF2);
    EXPECT_LT((qdd - expected).norm(), 1e-9 * (1 + expected.norm())) << model.name << " trial " << trial;

    // F₁ᵀ J M⁻¹ Jᵀ F₂ as the sum of u₁ᵀ D⁻¹ u₂ over the joints both paths share.
    std::vector<Vec6<double>> Y1(model.num_bodies(), Vec6<double>::Zero()), Y2 = Y1;
    inverse_inertia_path(model, data, b1, F1, Y1.data());
    inverse_inertia_path(model, data, b2, F2, Y2.data());
    double delassus = 0;
    for (int i = 0; i < model.num_bodies(); ++i)
      delassus += inverse_inertia_term(model.joints[i], data, i, Y1[i], Y2[i]);
    const double expected_delassus = JF1.dot(testing::spd_solve(M, JF2).col(0));
    EXPECT_NEAR(delassus, expected_delassus, 1e-9 * (1 + std::abs(expected_delassus))) << model.name;
  }
}

TEST(InverseInertia, MatchesCrbaOnEveryJointType) {
  expect_inverse_inertia_matches_crba(testing::mixed_joint_model());
  Model<double> with_armature = testing::mixed_joint_model();  // general free-joint path
  with_armature.joints[0].dynamics.armature = 0.03;
  expect_inverse_inertia_matches_crba(with_armature);
}

// aba() leaves a floating base's U and D⁻¹ unformed; using the factorization
// before complete_articulated_factorization() is an error, not a wrong M⁻¹.
TEST(InverseInertia, RefusesAnIncompleteFactorization) {
  const Model<double> model = testing::mixed_joint_model();
  Data<double> data(model);
  InverseInertiaWorkspace<double> ws(model.num_bodies());
  const Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Zero(model.nv);
  aba(model, data, q, qd, qd);
  ws.add_force(2, Vec6<double>::Ones());
  Eigen::VectorXd qdd(model.nv);
  EXPECT_THROW(apply_inverse_inertia(model, data, ws, &qdd), std::logic_error);
  std::vector<Vec6<double>> Y(model.num_bodies(), Vec6<double>::Zero());
  const Vec6<double> F = Vec6<double>::Ones();
  EXPECT_THROW(inverse_inertia_path(model, data, 2, F, Y.data()), std::logic_error);
  complete_articulated_factorization(model, data);
  ws.clear();
  ws.add_force(2, Vec6<double>::Ones());
  EXPECT_NO_THROW(apply_inverse_inertia(model, data, ws, &qdd));
  EXPECT_TRUE(qdd.allFinite());
}

TEST(InverseInertia, MatchesCrbaOnFloatingLaikago) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  const std::string path = testing::shared_path("models/laikago/laikago_toes_zup.urdf");
  UrdfOptions floating;
  floating.floating_base = true;
  expect_inverse_inertia_matches_crba(
      load_urdf_model(path, floating));
}

}  // namespace
}  // namespace neuralsim
