// Linear model-predictive control of a discrete-time linear system
//
//   x_{k+1} = A x_k + B u_k,
//
// regulating x to 0 over a horizon of N steps:
//
//   minimize   Σ_{k=0}^{N−1} (x_kᵀ Q x_k + u_kᵀ R u_k) + x_Nᵀ P x_N
//   subject to u_min ≤ u_k ≤ u_max,  x_min ≤ x_k ≤ x_max (k = 1 … N)
//
// condensed on U = [u_0; …; u_{N−1}] (X = Φ x_0 + Γ U, Φ = [A; A²; …; Aᴺ],
// Γ_{kj} = A^{k−1−j} B for j < k, k = 1 … N; Borrelli, Bemporad, Morari, "Predictive
// Control for Linear and Hybrid Systems", 2017, §8.2) into the QP
//   ½ Uᵀ H U + gᵀ U,  H = 2 (Γᵀ Q̄ Γ + R̄),  g = 2 Γᵀ Q̄ Φ x_0,
// Q̄ = diag(Q, …, Q, P), R̄ = diag(R, …, R), solved by QpSolver
// (Goldfarb–Idnani, qp_solver.hpp) with the input limits as variable bounds
// and the state limits as rows Γ U ∈ [x_min − Φ x_0, x_max − Φ x_0]. H and
// the rows do not depend on x_0: they are factorized once, and each solve
// updates g and the row bounds and warm-starts from the previous active set.
//
// With P the solution of the discrete algebraic Riccati equation (the
// default, solve_dare) and no active constraint, the first control equals
// the infinite-horizon LQR law u_0 = −K x_0 for any N (Bellman: the
// terminal cost is then the exact cost-to-go), which the tests check.
//
// The small case of the MPC distillation (issue 14): a double integrator
// whose MPC a network learns to imitate, fast enough for CI.
#pragma once

#include <Eigen/Dense>

#include <memory>

#include "neuralsim/control/qp_solver.hpp"

namespace neuralsim {

struct LinearMpcParameters {
  Eigen::MatrixXd A, B;        // n × n, n × m
  Eigen::MatrixXd Q, R;        // n × n symmetric PSD, m × m symmetric PD
  Eigen::MatrixXd P;           // terminal cost, n × n; empty: the DARE solution
  int horizon = 20;            // N ≥ 1
  Eigen::VectorXd u_min, u_max;  // m each (±inf allowed); empty: unbounded
  Eigen::VectorXd x_min, x_max;  // n each (±inf allowed); empty: no state limits
  // InvalidArgument naming the field: sizes, non-finite matrices, R not
  // positive definite, a lower limit above its upper limit.
  void check() const;
};

// The stabilizing solution of P = Q + AᵀPA − AᵀPB (R + BᵀPB)⁻¹ BᵀPA by
// iterating the Riccati recursion from P = Q until the relative change is
// below `tolerance`. NumericalError when it does not converge (an
// unstabilizable pair) within `max_iterations`.
Eigen::MatrixXd solve_dare(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& Q,
                           const Eigen::MatrixXd& R, double tolerance = 1e-12, int max_iterations = 100000);
// K = (R + BᵀPB)⁻¹ BᵀPA: the LQR feedback u = −K x for the cost-to-go P.
Eigen::MatrixXd lqr_gain(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& R,
                         const Eigen::MatrixXd& P);

// A point mass m on a line under a force u, discretized as the simulator's
// semi-implicit Euler does (v⁺ = v + h u/m, x⁺ = x + h v⁺), which is exact
// for this model: A = [1 h; 0 1], B = [h²/m; h/m]. State [position, velocity].
void double_integrator(double h, double mass, Eigen::MatrixXd* A, Eigen::MatrixXd* B);

class LinearMpc {
 public:
  // Condenses and factorizes (throws InvalidArgument from check(), or
  // NumericalError when the default P cannot be computed).
  explicit LinearMpc(const LinearMpcParameters& parameters);

  const LinearMpcParameters& parameters() const { return p_; }
  int num_states() const { return static_cast<int>(p_.A.rows()); }
  int num_controls() const { return static_cast<int>(p_.B.cols()); }
  const Eigen::MatrixXd& terminal_cost() const { return P_; }

  // Solves for x0 (size n). Allocates nothing: every buffer is sized at
  // construction (tested: LinearMpc.SolvesAllocateNothing).
  QpStatus solve(const Eigen::VectorXd& x0, bool warm_start = true);
  // The last optimal solve's controls: all of U (m N) and u_0 (m).
  const Eigen::VectorXd& controls() const { return U_; }
  Eigen::Ref<const Eigen::VectorXd> first_control() const { return U_.head(num_controls()); }
  const Eigen::MatrixXd& condensed_phi() const { return Phi_; }
  const Eigen::MatrixXd& condensed_gamma() const { return Gamma_; }

 private:
  LinearMpcParameters p_;
  Eigen::MatrixXd P_, Phi_, Gamma_, GtQbar_;  // GtQbar_ = 2 Γᵀ Q̄ Φ: g = GtQbar_ x0
  Eigen::VectorXd g_, lo_, hi_, U_, empty_;
  std::unique_ptr<QpSolver> qp_;
  bool has_rows_ = false, solved_ = false;
};

}  // namespace neuralsim
