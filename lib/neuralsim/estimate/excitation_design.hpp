// Excitation design for inverse-dynamics identification (issue #36): the
// periodic joint trajectory, within position, velocity, acceleration and
// torque limits, whose torques say the most about a model's base inertial
// parameters (and, optionally, its joints' armature, damping, friction and
// torque offsets).
//
// Trajectory: a finite Fourier series per joint (Swevers, Ganseman, Tükel,
// De Schutter & Van Brussel, "Optimal robot excitation and identification",
// IEEE T-RA 13(5), 1997, eq. 5):
//
//   q_j(t) = q0_j + Σ_{l=1..L} a_jl/(ω l) sin(ω l t) − b_jl/(ω l) cos(ω l t),  ω = 2π/T
//   q̇_j(t) = Σ a_jl cos(ω l t) + b_jl sin(ω l t)
//   q̈_j(t) = Σ ω l (−a_jl sin(ω l t) + b_jl cos(ω l t))
//
// periodic with period T, so repeating it averages noise and it leaks no
// energy into frequencies outside l·ω. With `start_at_rest` the first
// harmonic's coefficients are eliminated so that q̇(0) = q̈(0) = 0
// (a_j1 = −Σ_{l≥2} a_jl, b_j1 = −Σ_{l≥2} l b_jl): the robot waits at q(0)
// and the trajectory starts (and, being periodic, ends) there at rest.
//
// Information: inverse dynamics is linear in the base parameters β
// (estimate/base_parameters.hpp; Gautier 1991): the recorded command u
// obeys gear·u = Y₁(q, q̇, q̈) β + (terms without β) + noise, with Y₁ the
// regressor's independent columns. With independent Gaussian noise σ_j on
// each joint's recorded command, the Fisher information of β over samples
// k is F = Σ_k Y₁ₖᵀ Σ⁻¹ Y₁ₖ, Σ = diag((gear_j σ_j)²), and the least-squares
// estimate's covariance is F⁻¹ (exact here: the model is linear in β). The
// criterion is −log det F (D-optimal) or log cond F (Swevers' choice,
// in the raw units of β), minimized over the Fourier coefficients and q0.
//
// Gradient: exact. F's derivative in the coefficients is
// d crit = Σ_k ⟨M_k, dY₁ₖ⟩ with M_k = 2 Σ⁻¹ Y₁ₖ ∂crit/∂F (∂(−log det F)/∂F =
// −F⁻¹; ∂ log cond/∂F = v_max v_maxᵀ/λ_max − v_min v_minᵀ/λ_min); dY₁ₖ in
// the sample's state (q, q̇, q̈) comes from the regressor on Ceres Jets
// (⌈3 nv / 8⌉ passes of Jet8 per sample), and the state is linear in the
// coefficients. Limits enter as a smooth quadratic penalty on the part of
// |x|/limit beyond 1 − margin at every sample of the optimization grid;
// the result is then checked at every sample of a grid `check_refinement`
// times finer, and when a limit fails there the oscillation about q0 is
// scaled down until none does. Minimized with Ceres' L-BFGS
// (GradientProblemSolver); deterministic for a seed.
//
// Parameters: the base parameters of the chosen links' standard inertial
// parameters and, with `joint_terms`, of every joint's armature, viscous
// damping, Coulomb friction level and torque offset, which enter the
// torque linearly too (columns q̈_j, q̇_j, the friction law's shape s(q̇_j),
// 1 in joint j's row; passive_forces.hpp). Other parameters (lengths,
// gravity, gear ratios, a Stribeck law's static level) are not in F.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// The Fourier coefficients of one excitation. Variables as a vector: per
// joint j a block of 1 + 2L values [q0_j, a_j1..a_jL, b_j1..b_jL].
struct FourierTrajectory {
  double period = 10;   // T (s)
  Eigen::VectorXd q0;   // nv
  Eigen::MatrixXd a, b; // nv × L

  int joints() const { return static_cast<int>(q0.size()); }
  int harmonics() const { return static_cast<int>(a.cols()); }
  double base_frequency() const;  // ω = 2π/T (rad/s)
  void evaluate(double t, Eigen::VectorXd& q, Eigen::VectorXd& qd, Eigen::VectorXd& qdd) const;
  Eigen::VectorXd pack() const;
  static FourierTrajectory unpack(double period, int joints, int harmonics, const Eigen::VectorXd& x);
};

enum class ExcitationCriterion { kLogDet, kCondition };

// Joint-local parameters identified beside the link inertias (every joint).
enum class ExcitationJointTerm { kArmature, kDamping, kFriction, kTorqueOffset };
const char* excitation_joint_term_name(ExcitationJointTerm t);  // armature, damping, friction, torque_offset
const char* excitation_criterion_name(ExcitationCriterion c);

// Per velocity coordinate; a non-finite entry is no limit. `tau` bounds
// the recorded command u (the joint torque divided by the gear ratio).
struct ExcitationLimits {
  Eigen::VectorXd q_lower, q_upper, qd, qdd, tau;
};
// The model's limits: joint lower/upper, velocity and effort where they are
// set (below 1e29), none on q̈.
ExcitationLimits model_excitation_limits(const Model<double>& model);

struct ExcitationDesignOptions {
  double period = 10;          // T (s)
  int harmonics = 5;           // L (≥ 2 with start_at_rest)
  double sample_rate = 50;     // Hz of the optimization grid (over one period)
  int check_refinement = 10;   // the final limit check runs on a grid this many times finer
  ExcitationLimits limits;     // empty vectors: model_excitation_limits
  ExcitationCriterion criterion = ExcitationCriterion::kLogDet;
  Eigen::VectorXd noise;       // σ of each joint's recorded command; empty: 1
  std::vector<int> bodies;     // the bodies whose inertial parameters are identified; empty: every body
  std::vector<ExcitationJointTerm> joint_terms;  // joint-local parameters identified too (every joint)
  bool start_at_rest = true;
  double margin = 0.05;        // the penalty starts at (1 − margin)·limit
  double penalty = 1e4;        // weight of the penalty's Σ over samples of (excess ratio)²
  double initial_fill = 0.5;   // the random start uses this fraction of the tightest limit
  unsigned long long seed = 1;
  int restarts = 1;            // random starts (seed, 0..restarts−1); the best criterion wins
  int max_iterations = 200;    // L-BFGS iterations per start
  double output_rate = 0;      // Hz of the sampled result; 0: sample_rate
  int periods = 1;             // periods in the sampled result (the predicted errors are for all of them)
};

// The criterion (with penalty) of a design as a function of the free
// variables z: x = P z (P eliminates the first harmonic under
// start_at_rest, identity otherwise). Exposed for the tests.
class ExcitationObjective {
 public:
  ExcitationObjective(const Model<double>& model, const ExcitationDesignOptions& options);
  ~ExcitationObjective();
  ExcitationObjective(const ExcitationObjective&) = delete;
  ExcitationObjective& operator=(const ExcitationObjective&) = delete;

  int num_free() const { return static_cast<int>(P_.cols()); }
  Eigen::VectorXd coefficients(const Eigen::VectorXd& z) const { return P_ * z; }
  // The free variables of coefficients x (least squares: exact when x = P z).
  Eigen::VectorXd free_variables(const Eigen::VectorXd& x) const;
  FourierTrajectory trajectory(const Eigen::VectorXd& z) const;
  // criterion(F) + penalty; false when F is not positive definite.
  bool evaluate(const Eigen::VectorXd& z, double* value, Eigen::VectorXd* gradient) const;
  // The criterion alone and the penalty alone (for reporting).
  double criterion(const Eigen::VectorXd& z) const;
  double penalty(const Eigen::VectorXd& z) const;

  const BaseParameters& base() const { return base_; }
  const std::vector<int>& selected() const { return selected_; }  // the chosen links' columns of π (β's index space)
  const std::vector<int>& columns() const { return columns_; }    // the columns of β in excitation_regressor
  const Eigen::VectorXd& grid() const { return grid_; }           // the optimization grid (s)
  const ExcitationLimits& limits() const { return limits_; }
  const Eigen::VectorXd& weights() const { return weights_; }   // 1/(gear σ)² per joint

 private:
  const Model<double>& model_;
  ExcitationDesignOptions options_;
  ExcitationLimits limits_;
  BaseParameters base_;
  std::vector<int> selected_, columns_, joint_of_;
  Eigen::VectorXd weights_;
  Eigen::MatrixXd P_;
  Eigen::VectorXd grid_;
  bool torque_limited_ = false;
};

// The regressor of everything identifiable: Y (nv × 10·num_bodies) beside
// one column per joint term and coordinate (term t of coordinate j at
// 10·num_bodies + t·nv + j, nonzero in row j only), so that the model's
// gear·u = [Y | terms] [π; values] + the rest (rotors, springs).
void excitation_regressor(const Model<double>& model, Data<double>& data, const std::vector<ExcitationJointTerm>& terms,
                          const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                          Eigen::MatrixXd& Y);

// F, its criteria and the predicted standard errors of β on given samples.
struct ExcitationInformation {
  Eigen::MatrixXd fisher;           // F (rank × rank)
  double log_det = 0;               // −inf when singular
  double condition = 0;             // λ_max/λ_min of F; +inf when singular
  Eigen::VectorXd std_errors;       // √diag F⁻¹ (NaN when singular)
};
// The samples of `f` at `times`.
void sample_trajectory(const FourierTrajectory& f, const Eigen::VectorXd& times, RowMatrixXd& q, RowMatrixXd& qd,
                       RowMatrixXd& qdd);

ExcitationInformation excitation_information(const Model<double>& model, const std::vector<ExcitationJointTerm>& terms,
                                             const std::vector<int>& columns,
                                             const Eigen::VectorXd& weights, const RowMatrixXd& q,
                                             const RowMatrixXd& qd, const RowMatrixXd& qdd);

// A limit's worst case over the checked grid, per joint: the largest |x|
// (q: the smallest distance to either bound) against its limit.
struct ExcitationLimitMargin {
  std::string quantity;  // "q", "qd", "qdd", "tau"
  int joint = 0;         // velocity coordinate
  double limit = 0;      // q: the range's half width; others: the bound
  double worst = 0;      // q: min distance to a bound (≥ 0 when inside); others: max |x|
  double margin = 0;     // fraction of the limit left: q: worst / half width; others: 1 − worst/limit
};

struct ExcitationDesignResult {
  FourierTrajectory trajectory;
  BaseParameters base;
  std::vector<int> columns;                 // the columns of β in excitation_regressor
  std::vector<std::string> parameter_names; // β_k written out (base_parameter_expression)
  Eigen::VectorXd base_values;              // β of the model
  // The sampled result (output_rate, `periods` periods, both ends).
  Eigen::VectorXd time;
  RowMatrixXd q, qd, qdd, tau;              // tau: the recorded command u = (RNEA − passive)/gear
  ExcitationInformation initial;            // the best start's random coefficients, on the output samples
  ExcitationInformation designed;           // the design, on the output samples
  std::vector<ExcitationLimitMargin> margins;  // on the check grid over one period
  double repair_scale = 1;                  // the oscillation's scale applied after the solve (1: none)
  int iterations = 0;                       // L-BFGS iterations of the chosen start
  int chosen_start = 0;
  std::string termination;                  // Ceres' message of the chosen start
  double seconds = 0;
};

// Throws InvalidArgument for options that cannot work (a joint without
// any finite limit, L < 2 with start_at_rest, a torque limit the model
// exceeds at rest, nq ≠ nv) and NumericalError when no start gives a
// positive-definite F or no scaling makes the design feasible.
ExcitationDesignResult design_excitation(const Model<double>& model, const ExcitationDesignOptions& options);

}  // namespace neuralsim
