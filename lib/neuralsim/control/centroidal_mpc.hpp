// Convex model-predictive control of a quadruped's ground reaction forces on
// the single-rigid-body ("centroidal") model of J. Di Carlo, P. M. Wensing,
// B. Katz, G. Bledt, S. Kim, "Dynamic Locomotion in the MIT Cheetah 3
// Through Convex Model-Predictive Control", IROS 2018 ("DC" below).
//
// The model (DC eq. 16). State x = [Θ; p; ω; ṗ; g] (13): Θ = (roll φ,
// pitch θ, yaw ψ) ZYX Euler angles (R = Rz(ψ) Ry(θ) Rx(φ)), p the CoM
// position, ω the angular velocity and ṗ the CoM velocity (both in the
// frame of p), g = -9.81 the gravity state that makes the model linear
// (p̈_z = Σ f_z / m + g). With roll and pitch small, Θ̇ ≈ Rz(ψ)ᵀ ω (DC
// eq. 12), and with ω small the body's angular dynamics are
// I_w ω̇ = Σ r_i × f_i, I_w = Rz(ψ) I_b Rz(ψ)ᵀ (DC eq. 15, I_b the body
// inertia about the CoM in base axes, roll and pitch neglected); r_i is the
// foot position minus the CoM:
//
//   ẋ = A_c(ψ) x + B_c(r_1..r_4, ψ) f,   f = [f_1; f_2; f_3; f_4] (12)
//
// Linearization per horizon interval k (DC §IV-C): ψ and the CoM are taken
// from the reference at the interval's start (x0 for k = 0), the feet from
// the input, so A_k, B_k vary along the horizon. Each interval is
// discretized exactly for a force held constant over dt (zero-order hold):
// A_c is nilpotent (A_c³ = 0, A_c² B_c = 0), so
//   A_k = I + A_c dt + A_c² dt²/2,  B_k = (I dt + A_c dt²/2) B_c.
//
// The QP (DC eq. 27-30), condensed onto the forces U = [f(0); ...; f(N-1)]
// (12 N variables): X = [x_1; ...; x_N] = Φ x0 + Γ U and
//
//   minimize   Σ_k ‖x_k - x_ref,k‖²_Q + ‖f(k)‖²_R
//              = ½ Uᵀ H U + gᵀ U + const,  H = 2 (Γᵀ Q̄ Γ + R̄),  g = 2 Γᵀ Q̄ (Φ x0 - X_ref)
//   subject to |f_x|, |f_y| ≤ μ f_z              (friction pyramid, 4 rows per foot and step)
//              f_min ≤ f_z ≤ f_max              (stance feet: variable bounds)
//              f = 0                            (swing feet)
//
// (the factor 2 is dropped: it does not change the minimizer). Swing feet's
// f = 0 is imposed exactly by decoupling their variables (their rows and
// columns of H cleared but the diagonal, their g zero: the QP separates
// into the stance QP and a problem whose minimizer is 0), not by equality
// bounds, which Goldfarb–Idnani would re-add one O(n²) step each at every
// solve because H changes (measured: half the solve time of a trot). The pyramid
// is aligned with the axes of the input's frame, so the friction rows and
// their matrix are constant and set once; each solve updates H, g and the
// bounds and warm-starts QpSolver (Goldfarb–Idnani, qp_solver.hpp) from
// the previous solve's active set.
//
// Frames. The MPC works in any frame with z up and gravity along -z; the
// quadruped controller uses the yaw-aligned frame at the current CoM
// (quadruped_controller.hpp), in which the solution is invariant to the
// robot's heading and horizontal position.
//
// Everything is allocated at construction; solve() does not touch the heap
// (Eigen's Cholesky of H may for horizons above about 12, see qp_solver.hpp).
#pragma once

#include <Eigen/Dense>

#include "neuralsim/control/gait.hpp"
#include "neuralsim/control/qp_solver.hpp"

namespace neuralsim {

constexpr int kMpcStates = 13;
using MpcState = Eigen::Matrix<double, kMpcStates, 1>;

// Rz(ψ): the rotation about the world's vertical axis by the yaw ψ.
Eigen::Matrix3d yaw_rotation(double psi);

// State indices.
struct MpcIndex {
  static constexpr int kTheta = 0, kPosition = 3, kOmega = 6, kVelocity = 9, kGravity = 12;
};

struct CentroidalMpcParameters {
  double mass = 25.0;                                          // [kg], > 0
  Eigen::Matrix3d inertia = Eigen::Vector3d(0.3, 0.8, 0.9).asDiagonal();  // I_b about the CoM [kg m²], SPD
  double friction = 0.6;                                       // μ of the pyramid, > 0
  double fz_min = 0.0;                                         // [N], ≥ 0
  double fz_max = 300.0;                                       // [N], > fz_min
  int horizon = 10;                                            // N ≥ 1 (≥ 10 for locomotion)
  double dt = 0.03;                                            // [s], > 0
  double gravity = 9.81;                                       // |g| [m/s²], > 0
  // Diagonal of Q per state (Θ, p, ω, ṗ, g); finite, ≥ 0. The pattern of
  // the MIT Cheetah software (DC §V), ×10, with roll, pitch and their rates
  // weighted more (the Laikago's narrow stance). R is small against Q
  // because ‖f‖²_R penalizes the weight-bearing force itself: with these
  // weights a robot at rest gets Σf_z within 0.02 % of m g.
  MpcState state_weights = (MpcState() << 20, 20, 10, 20, 20, 500, 1, 1, 3, 5, 5, 2, 0).finished();
  double force_weight = 1e-6;                                  // R = force_weight · I, > 0
  QpSettings qp;                                               // passed to QpSolver
  // Throws InvalidArgument naming the field when a value is not finite or
  // out of range (including an inertia that is not symmetric positive definite).
  void check() const;
};

// What one solve needs, in one z-up frame. Sized for a horizon N by the
// constructor; the MPC only reads it.
struct CentroidalMpcInput {
  explicit CentroidalMpcInput(int horizon);
  MpcState x0;                        // current state; x0[12] = -gravity
  Eigen::Matrix<double, kMpcStates, Eigen::Dynamic> x_ref;  // 13 x N: column k is the reference of x_{k+1}
  Eigen::Matrix<double, 3, kNumLegs> feet;                  // foot positions (same frame as p)
  Eigen::Matrix<double, kNumLegs, Eigen::Dynamic> contact;  // 4 x N: 1 stance, 0 swing, in interval k
};

class CentroidalMpc {
 public:
  using Mat13 = Eigen::Matrix<double, kMpcStates, kMpcStates>;
  using Mat13x12 = Eigen::Matrix<double, kMpcStates, 3 * kNumLegs>;

  explicit CentroidalMpc(const CentroidalMpcParameters& parameters);  // checks the parameters

  const CentroidalMpcParameters& parameters() const { return p_; }
  int horizon() const { return p_.horizon; }
  int num_variables() const { return 3 * kNumLegs * p_.horizon; }

  // Builds the condensed QP for `input` and solves it (warm-started from the
  // previous solve unless `warm_start` is false). Throws InvalidArgument on
  // mis-sized input or a non-finite value in it. The status is the QP's; on
  // anything but kOptimal the previous forces are kept.
  QpStatus solve(const CentroidalMpcInput& input, bool warm_start = true);

  // The forces of the last successful solve: all of U (12 N), and the first
  // interval's 3 x 4 (column i: foot i's ground reaction force on the robot).
  const Eigen::VectorXd& forces() const { return U_; }
  Eigen::Matrix<double, 3, kNumLegs> first_forces() const;
  const QpResult& qp_result() const { return qp_.result(); }
  bool has_solution() const { return has_solution_; }

  // The model pieces, for tests and inspection. discretize(): A_k, B_k of
  // interval k for `input` (see the file comment). condense(): Φ (13N x 13)
  // and Γ (13N x 12N), available afterwards from condensed_*(); solve()
  // calls it. predict(): X = Φ x0 + Γ U (13 N) with the current Φ, Γ.
  void discretize(const CentroidalMpcInput& input, int k, Mat13& A, Mat13x12& B) const;
  void condense(const CentroidalMpcInput& input);
  const Eigen::MatrixXd& condensed_state_matrix() const { return Phi_; }
  const Eigen::MatrixXd& condensed_input_matrix() const { return Gamma_; }
  void predict(const MpcState& x0, const Eigen::Ref<const Eigen::VectorXd>& U, Eigen::Ref<Eigen::VectorXd> X) const;
  // The QP's H and g of the last solve (½UᵀHU + gᵀU).
  const Eigen::MatrixXd& hessian() const { return H_; }
  const Eigen::VectorXd& gradient() const { return g_; }
  // The friction-pyramid rows (16 N x 12 N, constant) with their sides, and
  // the variable bounds of the last solve.
  const Eigen::MatrixXd& constraint_matrix() const { return C_; }
  const Eigen::VectorXd& constraint_lower() const { return c_lo_; }
  const Eigen::VectorXd& constraint_upper() const { return c_hi_; }
  const Eigen::VectorXd& lower_bounds() const { return lo_; }
  const Eigen::VectorXd& upper_bounds() const { return hi_; }

 private:
  void check_input(const CentroidalMpcInput& input) const;

  CentroidalMpcParameters p_;
  Eigen::Matrix3d inertia_inv_;
  QpSolver qp_;
  Eigen::MatrixXd Phi_, Gamma_, W_, H_;
  Eigen::VectorXd g_, err_, lo_, hi_, U_, c_lo_, c_hi_;
  Eigen::MatrixXd C_;
  Mat13 A_;
  Mat13x12 B_;
  bool has_solution_ = false;
};

}  // namespace neuralsim
