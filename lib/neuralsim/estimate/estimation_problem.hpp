// One identification problem: residual blocks over the training data for a
// chosen formulation, solved locally by Levenberg–Marquardt (ceres::Problem)
// or L-BFGS (ceres::GradientProblem over the same residuals).
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "neuralsim/core/communicator.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/estimate/solve_progress.hpp"

namespace neuralsim {

enum class Formulation { kSingleShooting, kMultipleShooting, kInverseDynamics };
enum class LocalSolver { kLevenbergMarquardt, kLbfgs };
enum class Loss { kNone, kHuber, kCauchy };

const char* formulation_name(Formulation f);  // "single_shooting", ...
const char* local_solver_name(LocalSolver s);  // "levenberg_marquardt", "lbfgs"
const char* loss_name(Loss l);                 // "none", "huber", "cauchy"

struct ProblemOptions {
  Formulation formulation = Formulation::kSingleShooting;
  int window = 50;                 // samples per shooting window / segment
  int stride = 0;                  // window start spacing (0 = window)
  // Multiple shooting's continuity residuals (docs/simid.md, "Continuity
  // weight"). A number w >= 0: fixed, w·(q_end ⊖ q_next) [rad] and
  // w·(q̇_end − q̇_next) [rad/s], as before issue #41. NaN (the default,
  // `continuity_weight: auto`): in the data's units, the weights with which
  // a segment's own N samples over T seconds hold its starting state,
  // w0·√N on q and w0·T·√(N/3) on q̇ (w0 the q observation's weight, 1 when
  // q is not observed); then a quadratic-penalty schedule (Nocedal & Wright
  // 2006, §17.1): while the segments' RMS joint gap exceeds
  // continuity_tolerance times the RMS q misfit, the weights ×10 and the
  // solve resumes from its solution, up to continuity_rounds times.
  double continuity_weight = std::numeric_limits<double>::quiet_NaN();
  int continuity_rounds = 4;
  double continuity_tolerance = 0.1;
  int filter_window = 5;           // inverse dynamics: moving-average width (central_difference)
  // Inverse dynamics: how q̇, q̈ are estimated (derivative_filter.hpp);
  // with central_difference its window is filter_window.
  DerivativeOptions derivatives;
  int sample_stride = 1;           // inverse dynamics: use every n-th sample
  // The torque residuals' samples of trajectory `tr`, as the problem forms them.
  InverseDynamicsSamples torque_samples(const Trajectory& tr) const {
    DerivativeOptions d = derivatives;
    if (d.method == DerivativeMethod::kCentralDifference) d.window = filter_window;
    return prepare_inverse_dynamics(tr, d, sample_stride);
  }
  // Shooting formulations: > 0 adds the inverse-dynamics residuals of every
  // trajectory with recorded τ, times this weight (rad per N·m), to the
  // simulation residuals: one objective for both measures, whose weight
  // moves the fit along their Pareto front.
  double torque_weight = 0;
  Loss loss = Loss::kNone;
  double loss_scale = 1;
  // Single shooting: each window's starting state (q in tangent coordinates
  // around the recorded sample, q̇) as a nuisance parameter block, for
  // recordings whose first samples are noisy (residuals.hpp).
  StartStateFit fit_initial_state;
  // Inverse-dynamics residuals from the precomputed regressor when the
  // parameters allow it (regressor_route_applies, residuals.hpp) and no
  // robust loss is set (a loss acts on each sample's residuals, the regressor
  // route's blocks hold `window` samples); false: always RNEA on Jets.
  bool regressor = true;
  // After an inverse-dynamics fit of link inertias, also fit the base
  // parameters themselves, unconstrained (residual.base_parameters:
  // least_squares; estimate/base_parameter_least_squares.hpp). The problem
  // itself does not read it.
  bool base_parameter_least_squares = false;
  // Prior toward the model's values (estimate.prior: {weight: w}): one
  // residual √w·(x_i − x_nominal,i) per fitted parameter, in the optimizer's
  // variables x (identity: (p − p₀)/scale; log: log(p/p₀); a log-Cholesky
  // block: its ten coordinates), so w weighs a unit of x against a unit of
  // the data's residuals. An entry's own `prior` (EstimatedParameter::
  // prior_weight) replaces w for it; 0 and no entry: no prior.
  double prior_weight = 0;
  // The geometric prior (estimate.prior: {geometric: w}): per link whose
  // inertia a parameter changes, ten residuals √w·svec(log(L0⁻¹ J L0⁻ᵀ))
  // whose squared norm is w times the affine-invariant distance² between
  // its pseudo-inertia J and the model's J0 = L0 L0ᵀ (estimate/
  // inertia_prior.hpp; Lee, Wensing & Park 2020). Unit-free: w weighs one
  // unit of squared log-eigenvalue against a unit of the data's residuals.
  // 0: none.
  double geometric_prior_weight = 0;
};

struct SolverOptions {
  LocalSolver solver = LocalSolver::kLevenbergMarquardt;
  int max_iterations = 100;
  double function_tolerance = 1e-10;
  double gradient_tolerance = 1e-12;
  double parameter_tolerance = 1e-10;
  // Residual blocks evaluated in parallel on TBB inside one solve: 1 =
  // serial, otherwise as many workers as the current TBB arena allows (capped
  // by --threads through tbb::global_control). Each block is evaluated into
  // its own cache and Ceres then sums them serially in block order, so the
  // result is bit-identical at any value (Ceres' own num_threads sums cost
  // and gradient per thread, in an order that depends on timing).
  int num_threads = 0;
  // Polled every iteration and before every residual block's evaluation
  // (Ctrl-C, time budget), from the TBB workers too: thread-safe. Once it
  // says yes inside an evaluation, the rest of the evaluation is skipped
  // and the solve returns its last accepted iterate (LocalResult), so a
  // stop takes effect within one block's evaluation, not one iteration's.
  std::function<bool()> should_abort;
  // Processes that run this solve together (null: this one). Collective:
  // every process calls solve() with the same arguments; each evaluates the
  // residual blocks it owns (block b on rank b mod size) and gathers the
  // rest, so the result is the same, bit for bit, as on one process. The
  // abort poll is agreed (any process's yes stops all).
  const Communicator* communicator = nullptr;
  SolveProgressCallback on_iteration;  // called every iteration (solve_progress.hpp)
};

// How well multiple shooting's segments join (EstimationProblem::
// continuity()): the state mismatch at every joint between consecutive
// segments, q in rad (tangent space), q̇ in rad/s, against the RMS misfit
// of the observed q samples (rad, the noise level the fit reached).
struct ContinuityReport {
  int joins = 0;                       // segment joints (0: not multiple shooting)
  double weight_q = 0, weight_qd = 0;  // the final weights (of the first segment, auto: T varies at a trajectory's end)
  double gap_q_max = 0, gap_q_rms = 0, gap_qd_max = 0, gap_qd_rms = 0;
  // RMS over joins and coordinates of max(|Δq|, T·|Δq̇|) [rad], the
  // schedule's measure, and the RMS q misfit of the data rows [rad].
  double gap_rms = 0, misfit_rms = 0;
  int rounds = 0;        // penalty rounds after the first solve (auto weight)
  double factor = 1;     // the weights' factor at the end (10^rounds)
  double tolerance = 0;  // ProblemOptions::continuity_tolerance
  // Joined: within the tolerance, or below 1e-9 rad (a numerical zero, for
  // noise-free data whose misfit vanishes with the gaps).
  bool joined() const { return joins == 0 || gap_rms <= tolerance * misfit_rms || gap_rms <= 1e-9; }
};

struct LocalResult {
  std::vector<double> x;  // optimizer variables
  // The nuisance states at the solution, every state block in problem
  // order (multiple-shooting segments; fitted window starts); empty when
  // the problem has none.
  std::vector<double> states;
  double initial_cost = 0, cost = 0;  // ½ Σ r²
  int iterations = 0;
  // ½ Σ r² of the iterate after each Ceres iteration (iteration 0: the
  // start): the convergence trace of the solve.
  std::vector<double> cost_history;
  bool usable = false;     // Ceres produced a usable solution
  // The stop flag (SolverOptions::should_abort) ended the solve, at the end
  // of an iteration or inside an evaluation; x is then the last accepted
  // iterate (none, and usable false, when it came inside the first one).
  bool stopped = false;
  std::string report;      // one-line Ceres summary
  double seconds = 0;
  ContinuityReport continuity;  // multiple shooting: the segments' joints at x
};

// One configuration of a joint fit (simid's `configurations:`): its model,
// parameters and channels, its training data, and where each of its
// parameters sits in the joint vector: entry i of ctx.parameters is
// variable columns[i] of the joint ParameterSet (empty: the identity).
struct ProblemPart {
  ResidualContext ctx;
  std::vector<const Trajectory*> train;
  std::vector<int> columns;
};

class EstimationProblem {
 public:
  EstimationProblem(const ResidualContext& ctx, const std::vector<const Trajectory*>& train,
                    const ProblemOptions& options);
  // A joint fit over several configurations that share some parameters of
  // `joint` and not others: one problem whose residual blocks are each
  // part's, in part order (trajectories, states and clusters numbered
  // across the parts in that order); its variables are `joint`'s, and the
  // prior acts on them. `joint` must outlive the problem.
  EstimationProblem(const ParameterSet& joint, std::vector<ProblemPart> parts, const ProblemOptions& options);
  ~EstimationProblem();
  EstimationProblem(const EstimationProblem&) = delete;
  EstimationProblem& operator=(const EstimationProblem&) = delete;

  // Local solve from variables x0 (the nuisance states restart from data).
  LocalResult solve(const std::vector<double>& x0, const SolverOptions& options);

  // The nuisance states (multiple-shooting segment states, fitted window
  // starts): their number of variables, and setting them to a solution's
  // LocalResult::states before an analysis of that solution (evaluate,
  // cost_per_trajectory, parameter_jacobian, start_states use them; a new
  // problem holds the recorded states). Throws InvalidArgument on a size
  // mismatch.
  int num_state_variables() const;
  void set_states(const std::vector<double>& states);
  // The states the nuisance blocks stand for, per trajectory in the order
  // of `train` (empty without nuisance states): every window's or
  // segment's start sample with its q and q̇.
  std::vector<StartStates> start_states() const;

  // A stop flag for the evaluations outside solve() (evaluate,
  // cost_per_trajectory, parameter_jacobian: a post-fit analysis), polled
  // before every residual block as in a solve (SolverOptions::should_abort);
  // once it says yes the evaluation is cut short and stopped() is true until
  // the next set_stop() or solve(). Its results are then meaningless.
  // Null (the default): never stop.
  void set_stop(std::function<bool()> stop);
  bool stopped() const;

  // ½ Σ r² at x (and its gradient when `gradient` is not null); false when
  // the simulation fails (diverges) there, or a stop cut it short.
  bool evaluate(const std::vector<double>& x, double* cost, std::vector<double>* gradient);

  // Per-trajectory cost at x, in the order of `train`: one evaluation of
  // every block, linear in the number of blocks.
  std::vector<double> cost_per_trajectory(const std::vector<double>& x);

  // Jacobian of all residuals w.r.t. θ at x (rows = residuals), for
  // covariance and identifiability; also returns the residuals. With
  // nuisance states, their columns are profiled out (profile_nuisance in
  // covariance.hpp): the covariance of θ computed from it is θ's block of
  // the joint problem's, so the states' freedom widens θ's intervals.
  // Cut short by set_stop's flag: 0 rows (stopped() says so).
  Eigen::MatrixXd parameter_jacobian(const std::vector<double>& x, Eigen::VectorXd* residuals);

  // Multiple shooting: the joints between segments at variables x and the
  // current states (a solve leaves its solution there; set_states), with
  // the current weights; joins 0 otherwise. `rounds` is left 0.
  ContinuityReport continuity(const std::vector<double>& x);
  // The penalty schedule's factor on every continuity weight (1 in a new
  // problem; a solve starts at 1 and leaves its last round's factor,
  // ContinuityReport::factor). An analysis of a solution (set_states) sets
  // it too, so that it weighs the joints as the solve ended.
  void set_continuity_factor(double factor);

  int num_residuals() const;
  // How the torque residuals are evaluated, one line for the log: the
  // regressor route or RNEA on Jets and why (empty without torque residuals).
  const std::string& torque_route() const { return torque_route_; }
  // Residual blocks (windows, segments, samples): the units a solve
  // evaluates in parallel.
  int num_residual_blocks() const;
  // How often a residual block was evaluated or looked up in its cache since
  // construction (every call Ceres or this class made on a block): the work
  // counter tests use to check that a pass over the blocks is linear.
  long long residual_block_visits() const;

  // The cluster of every row of parameter_jacobian(), in row order: the
  // trajectory of its residual block (in the order of `train`), or its
  // window: a shooting window or segment, or for inverse dynamics a run of
  // `window` consecutive samples (the torque rows of a combined objective
  // follow their trajectory's shooting rows as runs of their own).
  std::vector<int> residual_clusters(ClusterBy by) const;

 private:
  void build();
  bool use_regressor(const ResidualContext& ctx);  // sets torque_route_
  void add_prior();      // the prior's block, last
  void reset_states();
  LocalResult solve_once(const std::vector<double>& x0, const SolverOptions& options, bool restart_states);
  // After a Levenberg–Marquardt solve: the rounds that hold the variables at
  // their bounds (an active-set method; estimation_problem.cpp).
  struct BoundSolve;
  void solve_at_bounds(BoundSolve& b, LocalResult& result);

  const ParameterSet* joint_ = nullptr;  // the variables: the parts' parameters, each once
  std::vector<ProblemPart> parts_;
  std::vector<const Trajectory*> train_;  // every part's training data, in part order
  std::vector<int> train_part_;           // the part of each
  int num_parts_with_regressor_ = 0;
  ProblemOptions options_;
  std::vector<double> theta_;
  std::vector<std::vector<double>> states_;  // multiple shooting segment states, or fitted window starts
  struct StateOrigin { const Trajectory* tr; int sample; int part; };
  std::vector<StateOrigin> state_origin_;
  std::vector<int> block_trajectory_;        // residual block -> trajectory index
  std::vector<int> block_window_;            // residual block -> window (ClusterBy::kWindow)
  // Multiple shooting's segments with continuity rows: residual block, nv,
  // the weights before continuity_factor_, the segment's duration [s] and
  // the q observation's weight (1 when q is not observed).
  struct Join {
    size_t block;
    int nv;
    ContinuityWeights weights;
    double duration, q_weight;
    int per_sample, q_rows;  // data rows per sample; the first q_rows are the misfit's (q's, or all)
  };
  std::vector<Join> joins_;
  double continuity_factor_ = 1;  // the penalty schedule's factor (auto weight)
  std::string torque_route_;
  int prior_rows_ = 0;  // the prior's residuals, the problem's last block
  std::function<bool()> stop_;  // set_stop()
  bool regressor_route_ = false;
  struct CeresState;
  std::unique_ptr<CeresState> ceres_;
};

}  // namespace neuralsim
