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
// 1 in joint j's row; passive_forces.hpp).
//
// Named parameters (`parameters`: any model name simid can fit, resolved
// by parameters/named_parameter.hpp: link lengths, joint origins, gravity,
// gear ratios, a Stribeck law's static level, ...): the torque need not be
// linear in them, so their information is local, at the model's values:
// their columns of the observation Jacobian are J_k = ∂u_k/∂θ (u the
// recorded command by inverse dynamics at the sample's q, q̇, q̈), exact by
// Jets (excitation_parameters.hpp), appended to the base parameters'
// columns: F = Σ_k A_kᵀ Σ⁻¹ A_k with A_k = [∂u/∂β, ∂u/∂θ]. The predicted
// errors of θ are those of the linearized (Gauss–Newton) fit about the
// model's values: a local design, as good as the model's values are.
// A named parameter whose column, over random states of the chosen limits,
// lies in the span of the base parameters' and the earlier named ones'
// (relative residual ≤ 1e-7 after unit-norm scaling; zero when it has no
// effect on u at all, as the first joint's origin or gravity along a
// planar arm's joint axes) is not identifiable from torques: it is kept
// out of F and reported as such, with the combination it cannot be told
// from. The gradient needs ∂J/∂s: exact in the state (Jet8 lanes), a
// central difference in θ (excitation_parameters.hpp says why: the engine
// does not compile on nested Jets).
//
// Floating base on a stand (`mount`): a model whose root joint is free is
// held at `mount.pose` (q̇ = q̈ = 0 for the base); the design moves the
// other joints. With `mount.wrench` the stand's 6-axis force/torque sensor
// is observed too: the free joint's rows of inverse dynamics (the wrench
// [moment; force] the stand exerts on the base, base axes) with noise σ
// `force_noise` (N) and `torque_noise` (N·m). Those rows see the base
// link's and the whole robot's mass (statically: −M g in base axes), which
// the joint torques cannot: more base parameters become identifiable.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/estimate/excitation_parameters.hpp"
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

// The velocity coordinates a design moves: every 1-DOF joint's (revolute,
// prismatic). A free root joint is the mounted base (not designed); ball
// joints and a free joint elsewhere: InvalidArgument.
std::vector<int> excitation_coordinates(const Model<double>& model);

// Per designed coordinate; a non-finite entry is no limit. `tau` bounds
// the recorded command u (the joint torque divided by the gear ratio).
struct ExcitationLimits {
  Eigen::VectorXd q_lower, q_upper, qd, qdd, tau;
};
// The model's limits of the designed coordinates: joint lower/upper, velocity and effort where they are
// set (below 1e29), none on q̈.
ExcitationLimits model_excitation_limits(const Model<double>& model);

// A floating base held by a stand (ignored for a fixed-base model).
struct ExcitationMount {
  Eigen::VectorXd pose;     // the free joint's q: x y z qx qy qz qw (empty: origin, identity)
  bool wrench = false;      // the stand's force/torque sensor observes the free joint's rows
  double force_noise = 1;   // σ of each force row (N)
  double torque_noise = 1;  // σ of each moment row (N·m)
};

struct ExcitationDesignOptions {
  double period = 10;          // T (s)
  int harmonics = 5;           // L (≥ 2 with start_at_rest)
  double sample_rate = 50;     // Hz of the optimization grid (over one period)
  int check_refinement = 10;   // the final limit check runs on a grid this many times finer
  ExcitationLimits limits;     // empty vectors: model_excitation_limits
  ExcitationCriterion criterion = ExcitationCriterion::kLogDet;
  Eigen::VectorXd noise;       // σ of each joint's recorded command; empty: 1
  std::vector<int> bodies;     // the bodies whose inertial parameters are identified; empty: every body
  bool link_inertias = true;   // false (and `bodies` empty): no link's inertial parameters
  std::vector<ExcitationJointTerm> joint_terms;  // joint-local parameters identified too (every joint)
  std::vector<std::string> parameters;           // named model parameters (local information at the model's values)
  ExcitationMount mount;                         // a floating base's stand
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
  const Model<double>& model() const { return model_; }
  const ExcitationDesignOptions& options() const { return options_; }
  const ExcitationParameterJacobian* named_jacobian() const { return named_.get(); }  // null without named parameters
  const Eigen::VectorXd& weights() const { return weights_; }                         // 1/(scale σ)² per observed row
  const std::vector<int>& coordinates() const { return coords_; }  // the designed velocity coordinates
  const std::vector<int>& rows() const { return rows_; }           // the observed velocity coordinates
  // The named parameters in F (after β, in this order) and those left out.
  const std::vector<std::string>& named() const { return named_names_; }
  // Each left out: its name and the columns of F (β's, then named()) its
  // column is a combination of (largest first; empty: no effect at all).
  const std::vector<std::pair<std::string, std::vector<int>>>& unidentifiable() const { return unidentifiable_; }
  int size() const { return static_cast<int>(columns_.size() + named_names_.size()); }  // F's dimension
  // The model's q, q̇, q̈ at designed coordinates s (the base at its mount).
  void full_state(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd, Eigen::VectorXd& fq,
                  Eigen::VectorXd& fqd, Eigen::VectorXd& fqdd) const;
  // A (rows × size()): the observations' derivatives in [β; θ], scaled to
  // τ units (gear·∂u for the joints' rows), at one full state.
  void observation(Data<double>& data, ExcitationParameterJacobian::Workspace* ws, const Eigen::VectorXd& q,
                   const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd, Eigen::MatrixXd& A) const;

 private:
  void setup_rows();
  void check_named_overlap(const std::vector<int>& bodies) const;
  void select_named(const Eigen::MatrixXd& Wb, const Eigen::MatrixXd& Wn, const ExcitationParameterJacobian& all,
                    const Eigen::VectorXd& y_scale);
  void state_gradient(const Model<Jet8>& jm, Data<Jet8>& jd, ExcitationParameterJacobian::Workspace* ws,
                      const Eigen::RowVectorXd& s, const Eigen::MatrixXd* M, double* pen,
                      Eigen::Ref<Eigen::RowVectorXd> dS) const;

  const Model<double>& model_;
  ExcitationDesignOptions options_;
  ExcitationLimits limits_;
  BaseParameters base_;
  std::vector<int> selected_, columns_, joint_of_, coords_, q_index_, rows_;
  Eigen::VectorXd weights_, row_scale_, mount_q_;
  std::vector<std::string> named_names_;
  std::vector<std::pair<std::string, std::vector<int>>> unidentifiable_;
  std::unique_ptr<ExcitationParameterJacobian> named_;
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

// On samples of the designed coordinates (rows: samples). std_errors:
// β's, then the named parameters in F (objective.named()).
ExcitationInformation excitation_information(const ExcitationObjective& objective, const RowMatrixXd& q,
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
  std::vector<int> coordinates;             // the designed velocity coordinates
  std::vector<std::string> named;           // the named parameters in F (std_errors after β's), model values:
  std::vector<double> named_values;
  std::vector<std::pair<std::string, std::string>> unidentifiable;  // named parameters the torques cannot see: why
  // The sampled result (output_rate, `periods` periods, both ends), in the
  // designed coordinates.
  Eigen::VectorXd time;
  RowMatrixXd q, qd, qdd, tau;              // tau: the recorded command u = (RNEA − passive)/gear
  RowMatrixXd wrench;  // a mounted base: the stand's wrench [moment; force] (base axes); else empty
  // The same samples in the model's coordinates (a mounted base held at its
  // pose; tau: u per joint, the stand's wrench in the free joint's rows):
  // what excitation.h5 holds.
  RowMatrixXd model_q, model_qd, model_tau;
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
// exceeds at rest, a ball joint, an unknown or non-model named parameter) and NumericalError when no start gives a
// positive-definite F or no scaling makes the design feasible.
ExcitationDesignResult design_excitation(const Model<double>& model, const ExcitationDesignOptions& options);

}  // namespace neuralsim
