// rnea_derivatives (dynamics/rnea_derivatives.hpp) against references that
// share none of its code: Richardson-extrapolated central differences of
// rnea() on the configuration manifold (∂τ/∂q in tangent coordinates,
// ∂τ/∂q̇), the hand-written reverse mode rnea_vjp (wᵀ∂τ/∂q, wᵀ∂τ/∂q̇, wᵀM for
// random w), crba() (M) and rnea() (τ); on a tree with every joint type
// (free, ball, hinge, slider, fixed), the double pendulum, the swimmer, the
// cart-pole, the fixed-base Panda and the floating Laikago, at random states
// with random body-frame external forces and a tilted gravity. Plus: a point
// pendulum's closed form, no allocation, rotors and wrong sizes refused.
#include <gtest/gtest.h>

#include <cstdio>

#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/dynamics/rnea_derivatives.hpp"
#include "neuralsim/dynamics/rnea_vjp.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/allocation_counter.hpp"
#include "support/files.hpp"
#include "support/manifold_differences.hpp"
#include "support/test_models.hpp"
#include "support/vjp_check.hpp"

namespace neuralsim {
namespace rnea_derivatives_test {
namespace {

// One random state (q, q̇, q̈ = k.third, f_ext, w = k.c) of `model`: every
// check of this file, with the largest relative errors printed.
void check_rnea_derivatives(const Model<double>& model, const std::string& name, unsigned seed) {
  const testing::VjpCase k = testing::random_vjp_case(model, seed);
  Data<double> data(k.model), ref(k.model);
  for (int b = 0; b < k.model.num_bodies(); ++b) data.f_ext[b] = ref.f_ext[b] = k.f_ext[b];
  data.dtau_dq.setConstant(7);  // stale values must not leak into the result
  data.M.setConstant(3);
  rnea_derivatives(k.model, data, k.q, k.qd, k.third);

  // τ and M against rnea() and crba().
  rnea(k.model, ref, k.q, k.qd, k.third);
  EXPECT_LE(testing::max_relative_difference(data.tau, ref.tau), 1e-13) << name;
  crba(k.model, ref, k.q);
  EXPECT_LE(testing::max_relative_difference(data.M, ref.M), 1e-13) << name;

  // Central differences on the manifold.
  Eigen::MatrixXd Jq, Jv;
  testing::manifold_central_jacobians(
      k.model, k.q, k.qd,
      [&](const Eigen::VectorXd& q, const Eigen::VectorXd& qd) {
        rnea(k.model, ref, q, qd, k.third);
        return ref.tau;
      },
      Jq, Jv);
  const double eq = testing::max_relative_difference(data.dtau_dq, Jq);
  const double ev = testing::max_relative_difference(data.dtau_dv, Jv);
  EXPECT_LE(eq, 1e-9) << name << " ∂τ/∂q\n" << data.dtau_dq << "\nFD\n" << Jq;
  EXPECT_LE(ev, 1e-9) << name << " ∂τ/∂q̇\n" << data.dtau_dv << "\nFD\n" << Jv;

  // Reverse mode: wᵀ of each Jacobian.
  RneaVjp<double> vjp(k.model);
  rnea_vjp(k.model, ref, k.q, k.qd, k.third, k.c, vjp);
  const Eigen::VectorXd wq = data.dtau_dq.transpose() * k.c, wv = data.dtau_dv.transpose() * k.c,
                        wa = data.M.transpose() * k.c;
  const double rq = testing::max_relative_difference(wq, vjp.q), rv = testing::max_relative_difference(wv, vjp.v),
               ra = testing::max_relative_difference(wa, vjp.a);
  EXPECT_LE(rq, 1e-12) << name;
  EXPECT_LE(rv, 1e-12) << name;
  EXPECT_LE(ra, 1e-12) << name;
  std::printf("  [%s] vs central differences: dq %.1e dv %.1e; vs rnea_vjp: dq %.1e dv %.1e M %.1e\n",
              name.c_str(), eq, ev, rq, rv, ra);
}

// Every joint type, the YAML models, the fixed-base Panda and the floating
// Laikago (support/manifold_differences.hpp).
TEST(RneaDerivatives, MatchDifferencesVjpAndCrba) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  for (const testing::DerivativeTestModel& m : testing::derivative_test_models())
    check_rnea_derivatives(m.model, m.label, m.seed);
}

// A pendulum at rest, horizontal: τ = m g l cos θ... the closed form
// ∂τ/∂θ = -m g l sin θ, ∂τ/∂θ̇ = 0, M = m l² for a point mass on a massless rod.
TEST(RneaDerivatives, PointPendulumClosedForm) {
  const Model<double> m = testing::pendulum_with_dynamics(JointDynamics<double>());
  Data<double> data(m);
  const double theta = 0.7, thetad = 1.3, g = m.gravity.norm();
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(1, theta), qd = Eigen::VectorXd::Constant(1, thetad),
                        qdd = Eigen::VectorXd::Constant(1, -0.4);
  rnea_derivatives(m, data, q, qd, qdd);
  // pendulum.yaml generator: 1 kg at 1 m, q = 0 hangs down: τ = q̈ + g sin θ.
  EXPECT_NEAR(data.tau[0], -0.4 + g * std::sin(theta), 1e-12);
  EXPECT_NEAR(data.dtau_dq(0, 0), g * std::cos(theta), 1e-12);
  EXPECT_NEAR(data.dtau_dv(0, 0), 0.0, 1e-12);
  EXPECT_NEAR(data.M(0, 0), 1.0, 1e-12);
}

TEST(RneaDerivatives, AllocatesNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const testing::VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 6);
  Data<double> data(k.model);
  rnea_derivatives(k.model, data, k.q, k.qd, k.third);
  testing::AllocationCounter counter;
  for (int r = 0; r < 10; ++r) rnea_derivatives(k.model, data, k.q, k.qd, k.third);
  EXPECT_EQ(counter.count(), 0);
}

TEST(RneaDerivatives, RefusesRotorsAndWrongSizes) {
  Model<double> model = testing::mixed_joint_model();
  Data<double> data(model);
  const Eigen::VectorXd q = model.neutral_configuration(), z = Eigen::VectorXd::Zero(model.nv),
                        z_long = Eigen::VectorXd::Zero(model.nv + 1), z_short = Eigen::VectorXd::Zero(2);
  EXPECT_THROW(rnea_derivatives(model, data, q, z_long, z), InvalidArgument);
  EXPECT_THROW(rnea_derivatives(model, data, q, z, z_short), InvalidArgument);
  Data<double> unsized;
  EXPECT_THROW(rnea_derivatives(model, unsized, q, z, z), InvalidArgument);
  model.joints[2].has_rotor = true;
  EXPECT_THROW(rnea_derivatives(model, data, q, z, z), InvalidArgument);
}

}  // namespace
}  // namespace rnea_derivatives_test
}  // namespace neuralsim
