// inverse_dynamics_regressor (dynamics/inverse_dynamics_regressor.hpp)
// against rnea(), which shares none of its code past the kinematics: Y π
// equals RNEA's τ (less armature·q̈) to 1e-10 at random states of every
// joint type, the double pendulum, the Panda and the floating Laikago (the
// six rows of the free base included), with a tilted gravity. Also: each
// column is the torque of its parameter alone (linearity, by changing one
// parameter), and the body regressor is the net force I a + v ×* I v.
#include <gtest/gtest.h>

#include <random>

#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "support/manifold_differences.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace inverse_dynamics_regressor_test {
namespace {

double rnea_minus_armature_error(const Model<double>& model, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  const Eigen::VectorXd qdd = Eigen::VectorXd::NullaryExpr(model.nv, [&] { return 2.0 * u(rng); });
  Data<double> data(model), ref(model);
  Eigen::MatrixXd Y;
  inverse_dynamics_regressor(model, data, q, qd, qdd, Y);
  EXPECT_EQ(Y.rows(), model.nv);
  EXPECT_EQ(Y.cols(), 10 * model.num_bodies());
  rnea(model, ref, q, qd, qdd);
  Eigen::VectorXd tau = ref.tau;
  for (const Joint<double>& j : model.joints)
    for (int k = 0; k < j.nv; ++k) tau[j.idx_v + k] -= j.dynamics.armature * qdd[j.idx_v + k];
  const Eigen::VectorXd Ypi = Y * model_inertial_parameters(model);
  return (Ypi - tau).cwiseAbs().maxCoeff() / std::max(1.0, tau.cwiseAbs().maxCoeff());
}

TEST(InverseDynamicsRegressor, TimesParametersEqualsRnea) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  for (const testing::DerivativeTestModel& m : testing::derivative_test_models()) {
    if (testing::has_rotors(m.model)) continue;  // rotor terms are outside Y π
    Model<double> model = m.model;
    model.gravity += Eigen::Vector3d(0.4, -0.3, 0.1);
    for (unsigned s = 0; s < 3; ++s) {
      const double e = rnea_minus_armature_error(model, 10 * m.seed + s);
      EXPECT_LE(e, 1e-10) << m.label << " seed " << s;
    }
  }
}

// Column c is ∂τ/∂π_c: raising one parameter by δ raises RNEA's τ by δ Y[:, c]
// (exactly, τ being linear in π); checked on every column of the mixed tree.
TEST(InverseDynamicsRegressor, ColumnsAreTorquesOfSingleParameters) {
  const Model<double> model = testing::mixed_joint_model();
  std::mt19937 rng(3);
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  const Eigen::VectorXd qdd = Eigen::VectorXd::LinSpaced(model.nv, -1.0, 1.5);
  Data<double> data(model);
  Eigen::MatrixXd Y;
  inverse_dynamics_regressor(model, data, q, qd, qdd, Y);
  rnea(model, data, q, qd, qdd);
  const Eigen::VectorXd tau0 = data.tau;
  for (int c = 0; c < Y.cols(); ++c) {
    Model<double> moved = model;
    Eigen::Matrix<double, 10, 1> p = inertial_parameters(moved.bodies[c / 10].inertia);
    p[c % 10] += 0.5;
    moved.bodies[c / 10].inertia = inertia_from_parameters(p);
    Data<double> d2(moved);
    rnea(moved, d2, q, qd, qdd);
    const Eigen::VectorXd expected = 0.5 * Y.col(c);
    EXPECT_LE((d2.tau - tau0 - expected).cwiseAbs().maxCoeff(), 1e-11 * std::max(1.0, tau0.cwiseAbs().maxCoeff()))
        << "column " << c;
  }
}

TEST(InverseDynamicsRegressor, BodyRegressorIsNetForce) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int t = 0; t < 5; ++t) {
    const Inertia<double> I = testing::random_inertia(rng);
    const Vec6<double> v = Vec6<double>::NullaryExpr([&] { return u(rng); });
    const Vec6<double> a = Vec6<double>::NullaryExpr([&] { return u(rng); });
    const Vec6<double> f = I * a + cross_force(v, Vec6<double>(I * v));
    const Vec6<double> Ap = body_regressor(v, a) * inertial_parameters(I);
    EXPECT_LE((Ap - f).cwiseAbs().maxCoeff(), 1e-13 * std::max(1.0, f.cwiseAbs().maxCoeff()));
    const Inertia<double> back = inertia_from_parameters(inertial_parameters(I));
    EXPECT_EQ(back.mass, I.mass);
    EXPECT_EQ(back.h, I.h);
    EXPECT_LE((back.I_origin - I.I_origin).cwiseAbs().maxCoeff(), 1e-16);  // I.I_origin symmetric to rounding
  }
}

}  // namespace
}  // namespace inverse_dynamics_regressor_test
}  // namespace neuralsim
