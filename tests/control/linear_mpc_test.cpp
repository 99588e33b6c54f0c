// Linear MPC (control/linear_mpc.hpp) against closed forms: the DARE
// solution satisfies the Riccati equation; with constraints inactive the
// first control equals the finite-horizon Riccati recursion's −K₀x₀ for an
// arbitrary terminal cost (dynamic programming, computed here
// independently), and the infinite-horizon LQR law with the DARE terminal
// cost at any horizon; an active input bound gives the clamped scalar
// optimum; the closed loop is stable; inconsistent state limits are
// reported infeasible.
#include <gtest/gtest.h>

#include <cmath>

#include "neuralsim/control/linear_mpc.hpp"
#include "neuralsim/core/errors.hpp"
#include "support/allocation_counter.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace linear_mpc_test_detail {

LinearMpcParameters lm_di_parameters(int horizon) {
  LinearMpcParameters p;
  double_integrator(0.05, 2.0, &p.A, &p.B);
  p.Q = Eigen::Vector2d(10.0, 1.0).asDiagonal();
  p.R = Eigen::MatrixXd::Constant(1, 1, 0.1);
  p.horizon = horizon;
  return p;
}

// u₀ = −K₀ x₀ of Σ xᵀQx + uᵀRu + x_NᵀP x_N by the backward Riccati recursion.
Eigen::MatrixXd lm_finite_horizon_gain(const LinearMpcParameters& p, const Eigen::MatrixXd& P_N) {
  Eigen::MatrixXd P = P_N, K;
  for (int k = p.horizon - 1; k >= 0; --k) {
    const Eigen::MatrixXd S = p.R + p.B.transpose() * P * p.B;
    K = S.inverse() * p.B.transpose() * P * p.A;
    P = p.Q + p.A.transpose() * P * p.A - p.A.transpose() * P * p.B * K;
  }
  return K;
}

}  // namespace linear_mpc_test_detail

using linear_mpc_test_detail::lm_di_parameters;
using linear_mpc_test_detail::lm_finite_horizon_gain;

TEST(LinearMpc, DoubleIntegratorMatchesSemiImplicitEuler) {
  Eigen::MatrixXd A, B;
  double_integrator(0.01, 3.0, &A, &B);
  // v⁺ = v + h u/m, x⁺ = x + h v⁺ by hand.
  const double x = 0.3, v = -1.2, u = 4.0, h = 0.01, m = 3.0;
  const double v1 = v + h * u / m, x1 = x + h * v1;
  const Eigen::Vector2d next = A * Eigen::Vector2d(x, v) + B * u;
  EXPECT_NEAR(next[0], x1, 1e-15);
  EXPECT_NEAR(next[1], v1, 1e-15);
}

TEST(LinearMpc, DareSolutionSatisfiesTheRiccatiEquation) {
  const LinearMpcParameters p = lm_di_parameters(1);
  const Eigen::MatrixXd P = solve_dare(p.A, p.B, p.Q, p.R);
  const Eigen::MatrixXd S = p.R + p.B.transpose() * P * p.B;
  const Eigen::MatrixXd residual =
      p.Q + p.A.transpose() * P * p.A - p.A.transpose() * P * p.B * S.inverse() * p.B.transpose() * P * p.A - P;
  EXPECT_LT(residual.norm(), 1e-8 * P.norm());
  // The LQR closed loop M = A − BK is stable. Its spectral radius is below 1:
  // both roots of λ² − tr(M) λ + det(M) lie inside the unit circle iff
  // |det M| < 1 and |tr M| < 1 + det M (Jury's test for a 2x2 M). And P is
  // a Lyapunov function of it: P ≻ 0, P − MᵀPM ≻ 0 (discrete Lyapunov
  // theorem; Kailath, Linear Systems, 1980).
  const Eigen::MatrixXd K = lqr_gain(p.A, p.B, p.R, P);
  const Eigen::MatrixXd M = p.A - p.B * K;
  ASSERT_EQ(M.rows(), 2);
  const double det = M.determinant(), trace = M.trace();
  EXPECT_LT(std::abs(det), 1.0);
  EXPECT_LT(std::abs(trace), 1.0 + det);
  EXPECT_GT(testing::min_eigenvalue(P), 0);
  EXPECT_GT(testing::min_eigenvalue(P - M.transpose() * P * M), 0);
}

TEST(LinearMpc, FirstControlIsTheRiccatiRecursionsWhenConstraintsAreInactive) {
  LinearMpcParameters p = lm_di_parameters(15);
  p.P = Eigen::Vector2d(3.0, 0.5).asDiagonal();  // an arbitrary terminal cost
  p.u_min = Eigen::VectorXd::Constant(1, -1e3);  // present but inactive
  p.u_max = Eigen::VectorXd::Constant(1, 1e3);
  LinearMpc mpc(p);
  const Eigen::MatrixXd K0 = lm_finite_horizon_gain(p, p.P);
  for (const Eigen::Vector2d& x0 : {Eigen::Vector2d(1.0, 0.0), Eigen::Vector2d(-0.4, 2.0), Eigen::Vector2d(0.2, -0.3)}) {
    ASSERT_EQ(mpc.solve(x0), QpStatus::kOptimal);
    const double expected = -(K0 * x0)[0];
    EXPECT_NEAR(mpc.first_control()[0], expected, 1e-8 * (1 + std::abs(expected)));
  }
}

TEST(LinearMpc, WithTheDareTerminalCostEveryHorizonGivesTheLqrLaw) {
  for (int N : {1, 5, 40}) {
    LinearMpc mpc(lm_di_parameters(N));
    const Eigen::MatrixXd K = lqr_gain(mpc.parameters().A, mpc.parameters().B, mpc.parameters().R, mpc.terminal_cost());
    const Eigen::Vector2d x0(0.7, -0.5);
    ASSERT_EQ(mpc.solve(x0), QpStatus::kOptimal);
    EXPECT_NEAR(mpc.first_control()[0], -(K * x0)[0], 1e-7) << "N = " << N;
  }
}

TEST(LinearMpc, ActiveInputBoundGivesTheClampedScalarOptimum) {
  // N = 1, one input: the QP is a strictly convex parabola in u₀, so its
  // bounded minimizer is the unconstrained one clamped to the bounds.
  LinearMpcParameters p = lm_di_parameters(1);
  LinearMpc free_mpc(p);
  const Eigen::Vector2d x0(2.0, 1.0);
  ASSERT_EQ(free_mpc.solve(x0), QpStatus::kOptimal);
  const double unconstrained = free_mpc.first_control()[0];
  ASSERT_LT(unconstrained, -1.0);
  p.u_min = Eigen::VectorXd::Constant(1, -1.0);
  p.u_max = Eigen::VectorXd::Constant(1, 1.0);
  LinearMpc mpc(p);
  ASSERT_EQ(mpc.solve(x0), QpStatus::kOptimal);
  EXPECT_DOUBLE_EQ(mpc.first_control()[0], -1.0);
}

TEST(LinearMpc, ClosedLoopWithInputLimitsConvergesToTheOrigin) {
  LinearMpcParameters p = lm_di_parameters(20);
  p.u_min = Eigen::VectorXd::Constant(1, -5.0);
  p.u_max = Eigen::VectorXd::Constant(1, 5.0);
  LinearMpc mpc(p);
  Eigen::VectorXd x(2);
  x << 1.5, 0.0;
  for (int k = 0; k < 400; ++k) {
    ASSERT_EQ(mpc.solve(x), QpStatus::kOptimal) << k;
    EXPECT_LE(std::abs(mpc.first_control()[0]), 5.0 + 1e-9);
    x = p.A * x + p.B * mpc.first_control();
  }
  EXPECT_LT(x.norm(), 1e-4);
}

// The MPC runs every control step: after construction, cold and warm
// solves with input and state limits allocate nothing.
TEST(LinearMpc, SolvesAllocateNothing) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  LinearMpcParameters p = lm_di_parameters(20);
  p.u_min = Eigen::VectorXd::Constant(1, -5.0);
  p.u_max = Eigen::VectorXd::Constant(1, 5.0);
  p.x_min = Eigen::Vector2d(-10.0, -10.0);
  p.x_max = Eigen::Vector2d(10.0, 10.0);
  LinearMpc mpc(p);
  Eigen::VectorXd x(2), next(2);
  x << 1.5, 0.0;
  ASSERT_EQ(mpc.solve(x), QpStatus::kOptimal);
  int optimal = 0;
  long allocations = 0;
  {
    testing::AllocationCounter counter;
    for (int k = 0; k < 50; ++k) {
      optimal += mpc.solve(x, k % 2 == 0) == QpStatus::kOptimal;
      next.noalias() = p.A * x;
      next.noalias() += p.B * mpc.first_control();
      x = next;
    }
    allocations = counter.count();
  }
  EXPECT_EQ(optimal, 50);
  EXPECT_EQ(allocations, 0);
}

TEST(LinearMpc, InconsistentStateLimitsAreInfeasibleAndBadParametersAreRefused) {
  LinearMpcParameters p = lm_di_parameters(5);
  p.u_min = Eigen::VectorXd::Constant(1, -1.0);
  p.u_max = Eigen::VectorXd::Constant(1, 1.0);
  p.x_min = Eigen::Vector2d(-10, -0.5);
  p.x_max = Eigen::Vector2d(10, 0.5);
  LinearMpc mpc(p);
  // |v| = 3 cannot drop below 0.5 in one step with |u| ≤ 1 (Δv = h/m = 0.025).
  EXPECT_EQ(mpc.solve(Eigen::Vector2d(0.0, 3.0)), QpStatus::kInfeasible);
  EXPECT_EQ(mpc.solve(Eigen::Vector2d(0.0, 0.1)), QpStatus::kOptimal);
  LinearMpcParameters bad = p;
  bad.u_min[0] = 2.0;
  EXPECT_THROW(LinearMpc{bad}, InvalidArgument);
  bad = p;
  bad.R(0, 0) = 0.0;
  EXPECT_THROW(LinearMpc{bad}, InvalidArgument);
}

}  // namespace neuralsim
