// aba_derivatives (dynamics/aba_derivatives.hpp) against references that
// share none of its code: Richardson-extrapolated central differences of
// aba() on the configuration manifold (∂q̈/∂q in tangent coordinates,
// ∂q̈/∂q̇), the reverse mode forward_dynamics_vjp (μᵀ∂q̈/∂q, μᵀ∂q̈/∂q̇,
// μᵀM⁻¹ for random μ), the inverse of crba()'s M (∂q̈/∂τ) and crba()'s M
// itself (∂τ/∂q̈, left in data.M); on a tree with every joint type (with and
// without armature on the free root, which switches aba()'s floating-base
// solve off), the double pendulum, the swimmer, the cart-pole, the
// fixed-base Panda and the floating Laikago, at random states with
// body-frame external forces and a tilted gravity. Plus: M⁻¹ after a plain
// aba(), no allocation, rotors and wrong sizes refused.
#include <gtest/gtest.h>

#include <cstdio>

#include <Eigen/Dense>

#include "neuralsim/dynamics/aba_derivatives.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/forward_dynamics_vjp.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/allocation_counter.hpp"
#include "support/files.hpp"
#include "support/manifold_differences.hpp"
#include "support/test_models.hpp"
#include "support/vjp_check.hpp"

namespace neuralsim {
namespace aba_derivatives_test {
namespace {

// One random state (q, q̇, τ = k.third, f_ext, μ = k.c) of `model`.
void check_aba_derivatives(const Model<double>& model, const std::string& name, unsigned seed) {
  const testing::VjpCase k = testing::random_vjp_case(model, seed);
  Data<double> data(k.model), ref(k.model);
  for (int b = 0; b < k.model.num_bodies(); ++b) data.f_ext[b] = ref.f_ext[b] = k.f_ext[b];
  data.Minv.setConstant(5);  // stale values must not leak into the result
  aba_derivatives(k.model, data, k.q, k.qd, k.third);

  aba(k.model, ref, k.q, k.qd, k.third);
  EXPECT_EQ(data.qdd, ref.qdd) << name;  // q̈ is aba()'s, bit for bit
  crba(k.model, ref, k.q);
  const Eigen::MatrixXd Minv_crba = ref.M.inverse();
  const double em = testing::max_relative_difference(data.M, ref.M);
  const double ei = testing::max_relative_difference(data.Minv, Minv_crba);
  EXPECT_LE(em, 1e-13) << name;
  EXPECT_LE(ei, 1e-10) << name << "\n" << data.Minv << "\nCRBA⁻¹\n" << Minv_crba;

  Eigen::MatrixXd Jq, Jv;
  testing::manifold_central_jacobians(
      k.model, k.q, k.qd,
      [&](const Eigen::VectorXd& q, const Eigen::VectorXd& qd) {
        aba(k.model, ref, q, qd, k.third);
        return ref.qdd;
      },
      Jq, Jv);
  const double eq = testing::max_relative_difference(data.dqdd_dq, Jq);
  const double ev = testing::max_relative_difference(data.dqdd_dv, Jv);
  EXPECT_LE(eq, 1e-7) << name << " ∂q̈/∂q\n" << data.dqdd_dq << "\nFD\n" << Jq;
  EXPECT_LE(ev, 1e-7) << name << " ∂q̈/∂q̇\n" << data.dqdd_dv << "\nFD\n" << Jv;

  aba(k.model, ref, k.q, k.qd, k.third);
  ForwardDynamicsVjp<double> vjp(k.model);
  forward_dynamics_vjp(k.model, ref, k.q, k.qd, ref.qdd, k.c, vjp);
  const Eigen::VectorXd mq = data.dqdd_dq.transpose() * k.c, mv = data.dqdd_dv.transpose() * k.c,
                        mt = data.Minv.transpose() * k.c;
  const double rq = testing::max_relative_difference(mq, vjp.q), rv = testing::max_relative_difference(mv, vjp.v),
               rt = testing::max_relative_difference(mt, vjp.tau);
  EXPECT_LE(rq, 1e-11) << name;
  EXPECT_LE(rv, 1e-11) << name;
  EXPECT_LE(rt, 1e-11) << name;
  std::printf(
      "  [%s] M⁻¹ vs CRBA⁻¹ %.1e; vs central differences: dq %.1e dv %.1e; vs forward_dynamics_vjp: dq %.1e "
      "dv %.1e dτ %.1e\n",
      name.c_str(), ei, eq, ev, rq, rv, rt);
}

// Every joint type, the YAML models, the fixed-base Panda and the floating
// Laikago (support/manifold_differences.hpp).
TEST(AbaDerivatives, MatchDifferencesVjpAndCrba) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
  for (const testing::DerivativeTestModel& m : testing::derivative_test_models())
    check_aba_derivatives(m.model, m.label, m.seed);
}

// M⁻¹ from the factorization right after a plain aba() call too.
TEST(AbaDerivatives, InverseInertiaMatrixAfterAba) {
  const testing::VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 9);
  Data<double> data(k.model);
  aba(k.model, data, k.q, k.qd, k.third);
  inverse_inertia_matrix(k.model, data);
  crba(k.model, data, k.q);
  EXPECT_LE(testing::max_relative_difference(data.Minv * data.M, Eigen::MatrixXd::Identity(k.model.nv, k.model.nv)),
            1e-12);
}

TEST(AbaDerivatives, AllocatesNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const testing::VjpCase k = testing::random_vjp_case(testing::mixed_joint_model(), 6);
  Data<double> data(k.model);
  aba_derivatives(k.model, data, k.q, k.qd, k.third);
  testing::AllocationCounter counter;
  for (int r = 0; r < 10; ++r) aba_derivatives(k.model, data, k.q, k.qd, k.third);
  EXPECT_EQ(counter.count(), 0);
}

TEST(AbaDerivatives, RefusesRotorsAndWrongSizes) {
  Model<double> model = testing::mixed_joint_model();
  Data<double> data(model);
  const Eigen::VectorXd q = model.neutral_configuration(), z = Eigen::VectorXd::Zero(model.nv),
                        z_long = Eigen::VectorXd::Zero(model.nv + 1), z_short = Eigen::VectorXd::Zero(2);
  EXPECT_THROW(aba_derivatives(model, data, q, z, z_long), InvalidArgument);
  EXPECT_THROW(aba_derivatives(model, data, z_short, z, z), InvalidArgument);
  Data<double> unsized;
  EXPECT_THROW(aba_derivatives(model, unsized, q, z, z), InvalidArgument);
  model.joints[2].has_rotor = true;
  EXPECT_THROW(aba_derivatives(model, data, q, z, z), InvalidArgument);
}

}  // namespace
}  // namespace aba_derivatives_test
}  // namespace neuralsim
