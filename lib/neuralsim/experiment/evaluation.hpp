// Prediction errors of a model on recorded trajectories: RMSE per
// trajectory, per horizon (the first N samples), per window in seconds
// (restarted from the measured state), of observed link positions, and the
// inverse-dynamics torque error. The predictions themselves come from the one replay routine
// (step/replay.hpp).
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

struct PredictionError {
  std::string name;
  // sqrt(Σ_k |q_k ⊖ q̂_k|² / (T·nv)) over all T samples (tangent space for
  // quaternions), and likewise for q̇.
  double rmse_q = 0, rmse_qd = 0;
  // (N, RMSE of q over the first N samples) for each horizon N, in the order
  // given. A horizon longer than the trajectory keeps its key N with a NaN
  // value (missing: reported as null), never a shorter, renamed horizon.
  std::vector<std::pair<long long, double>> rmse_q_by_horizon;
  long long samples = 0;  // T
  // Task space: the positions of the links or frames (markers) that the
  // recording observes (its link_poses) and the prediction holds, in
  // metres: sqrt(Σ |p_k − p̂_k|² / (3·n)) over the n (sample, link) pairs,
  // overall and over the first N samples per horizon (the RMSE per
  // coordinate, as simid's link_position_rmse). NaN, and no links, when the
  // recording observes none.
  std::vector<std::string> position_links;
  double rmse_position = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<long long, double>> rmse_position_by_horizon;
  long long position_samples = 0;  // n
};

PredictionError prediction_error(const Model<double>& model, const Trajectory& recorded, const Trajectory& predicted,
                                 const std::vector<long long>& horizons = {});

// The same errors pooled over trajectories: every sample counts once (a
// long recording weighs more than a short one), where the mean of the
// per-trajectory RMSEs weighs every recording alike. A horizon N pools the
// first N samples of every trajectory at least N long (NaN when none is).
struct PooledPredictionError {
  double rmse_q = 0, rmse_qd = 0;
  std::vector<std::pair<long long, double>> rmse_q_by_horizon;  // the per-trajectory horizons, in order
  long long samples = 0;
  // Observed link positions (NaN when no trajectory observes any): every
  // (sample, link) pair counts once; a horizon pools as rmse_q_by_horizon.
  double rmse_position = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<long long, double>> rmse_position_by_horizon;
};
PooledPredictionError pooled_prediction_error(const std::vector<PredictionError>& errors);

// RMSE in metres of the observed link positions (links or markers, by their
// data names) over every sample but the first (where the prediction starts
// from the data); a name that the recording or the prediction lacks is
// left out; 0 without links.
double link_position_rmse(const std::vector<std::string>& links, const Trajectory& recorded,
                          const Trajectory& predicted);

// Replays `recorded` open loop from its first state (the recording's time
// stamps and controls) with `model`, its options, optional contact and
// neural augmentations (a hybrid model).
Trajectory replay_recording(const Model<double>& model, const StepOptions& options,
                            const std::optional<ContactSettings>& contact, const Trajectory& recorded,
                            const std::vector<AugmentBlueprint>& augment = {});

// The "no motion" reference predictor (issue #38): q held at the recording's
// first value, q̇ = 0, at every recorded time stamp. Its errors are those of
// a model that predicts nothing; a results table carries them beside every
// model so that a small RMSE on a recording that barely moves is seen as
// such. The one implementation, used by train-augment and rollout --compare.
Trajectory no_motion_prediction(const Trajectory& recorded);

// ---------------------------------------------------------------------------
// Windowed evaluation in seconds (issue #13): restart from the measured state
// every `every_s` seconds of the recording's clock and predict `horizon_s`
// seconds with the recorded controls. Seconds, not samples, so that files
// sampled at different or non-uniform rates are compared over the same
// physical horizon.

struct EvaluationWindows {
  double every_s = 0;    // T: a window starts at time[0] + k·T, k = 0, 1, ...
  double horizon_s = 0;  // H: each window predicts H seconds
};

// Samples [start, end] of one trajectory (end > start): the prediction
// starts from the measured state at `start` and is compared at start+1..end.
struct SampleWindow {
  Eigen::Index start = 0, end = 0;
};

struct WindowSelection {
  std::vector<SampleWindow> windows;
  // Nominal starts t0 = time[0] + k·T ≤ time[last] whose window does not fit:
  // t(start) + H lies beyond the last sample, or fewer than 2 samples fall in
  // [t(start), t(start) + H] (a gap in the recording), or its start sample
  // is the previous window's (a gap longer than T: one window, not two).
  long long skipped = 0;
};

// Window k starts at the first sample with time ≥ time[0] + k·T and ends at
// the last sample with time ≤ time[start] + H. Comparisons allow a relative
// tolerance of 1e-9·(T + H) so that time stamps written as multiples of the
// sampling period (0.3 vs 0.1 + 0.2) select the intended sample. Throws
// InvalidArgument unless T and H are finite and > 0.
WindowSelection select_windows(const Eigen::VectorXd& time, const EvaluationWindows& spec);

struct WindowError {
  std::string trajectory;
  SampleWindow samples;
  double t0 = 0, t1 = 0;  // time[start], time[end]
  // sqrt(Σ_{k=start+1..end} |q_k ⊖ q̂_k|² / (n·nv)), n = end - start (the
  // start sample is the measured state and is not counted), and likewise
  // for q̇. +inf when the prediction diverged.
  double rmse_q = 0, rmse_qd = 0;
  bool diverged = false;
};

// Mean and median over a set of windows (over every window of every
// trajectory, or over one trajectory's windows).
struct WindowStatistics {
  long long count = 0, skipped = 0;
  double mean_rmse_q = 0, median_rmse_q = 0, mean_rmse_qd = 0, median_rmse_qd = 0;
};
WindowStatistics window_statistics(const std::vector<WindowError>& windows, long long skipped);

struct WindowedEvaluation {
  EvaluationWindows spec;
  WindowStatistics overall;
  std::vector<std::pair<std::string, WindowStatistics>> per_trajectory;
  std::vector<WindowError> per_window;  // trajectory order, then time order
};

// What predicts a window: from the measured state at sample `start` of
// `recorded` (q normalized), the states of samples start+1 .. start+length,
// each handed to on_sample(k, q, q̇) in order. Returns false (or throws
// NumericalError) when the prediction diverged. The physical model's is
// the one replay routine (step/replay.hpp: replay_window); a trained
// data-driven model's is its free rollout (tools/rollout.cpp).
using WindowSampleSink = std::function<void(int k, const Eigen::VectorXd& q, const Eigen::VectorXd& qd)>;
using WindowPredictor = std::function<bool(const Trajectory& recorded, int start, int length, Eigen::VectorXd& q,
                                           Eigen::VectorXd& qd, const WindowSampleSink& on_sample)>;

// Errors of each selected window of `recorded` under `predict`.
std::vector<WindowError> window_errors(const Model<double>& model, const Trajectory& recorded,
                                       const WindowSelection& selection, const WindowPredictor& predict);

// Every trajectory of `data` with `model`, its options, optional contact
// and augmentations (as replay_recording builds them).
WindowedEvaluation evaluate_windows(const Model<double>& model, const StepOptions& options,
                                    const std::optional<ContactSettings>& contact, const TrajectorySet& data,
                                    const EvaluationWindows& spec, const std::vector<AugmentBlueprint>& augment = {});

// Called after each trajectory of a long evaluation (progress).
using TrajectoryDone = std::function<void(const Trajectory&)>;

// Every trajectory of `data` under any predictor (a trained baseline's).
WindowedEvaluation evaluate_windows(const Model<double>& model, const TrajectorySet& data,
                                    const EvaluationWindows& spec, const WindowPredictor& predict,
                                    const TrajectoryDone& done = {});

// Every trajectory of `data` with the parameters x of `ctx` applied exactly
// as the residuals apply them (model and contact parameters; every window
// starts from the measured state, so initial.qd.* estimates are not used).
WindowedEvaluation evaluate_windows(const ResidualContext& ctx, const std::vector<double>& x,
                                    const TrajectorySet& data, const EvaluationWindows& spec,
                                    const TrajectoryDone& done = {});

// ---------------------------------------------------------------------------
// Inverse-dynamics torque error: the residual of simid's inverse-dynamics
// formulation (estimate/residuals.hpp), evaluated rather than minimized, so
// the metric and the residual are one computation:
//   e_k = RNEA(q_k, q̇_k, q̈_k; θ) − τ_passive(q_k, q̇_k; θ) − gear ⊙ τ_measured,k
// with q, q̇, q̈ estimated by prepare_inverse_dynamics with the given
// derivative options (core/derivative_filter.hpp; the tools' default is
// Savitzky–Golay on the recording's own, possibly non-uniform, time stamps).
// In joint units (N·m or N at the joint, after the gear ratio).
struct TorqueError {
  std::vector<std::string> names;  // velocity coordinates (Model::velocity_names)
  Eigen::VectorXd rmse_per_dof;    // sqrt(mean_k e_k,i²) over every sample of every trajectory used
  double rmse = 0;                 // sqrt(mean over samples and coordinates)
  long long samples = 0;
  std::vector<std::string> without_tau;  // trajectories skipped: no recorded τ
  std::vector<std::string> too_short;    // trajectories skipped: too few samples
  // The same per trajectory used, in data order.
  struct PerTrajectory {
    std::string name;
    Eigen::VectorXd rmse_per_dof;
    double rmse = 0;
    long long samples = 0;
  };
  std::vector<PerTrajectory> per_trajectory;
  // What the model says the actuators apply at each sample used, in the
  // recording's units (before the gear): τ_model = (RNEA − τ_passive) ⊘ gear,
  // at the recording's time stamps, with the filtered q and q̇ the residual
  // saw. One per trajectory used, named as in the data.
  std::vector<Trajectory> model_torque;
};

// nullopt (with the reason in *note when given) when no trajectory of
// `data` has both recorded τ and enough samples.
std::optional<TorqueError> torque_error(const ResidualContext& ctx, const std::vector<double>& x,
                                        const TrajectorySet& data, const DerivativeOptions& derivatives,
                                        std::string* note = nullptr, const TrajectoryDone& done = {});
// central_difference with a moving average of `filter_window` samples.
std::optional<TorqueError> torque_error(const ResidualContext& ctx, const std::vector<double>& x,
                                        const TrajectorySet& data, int filter_window = 1,
                                        std::string* note = nullptr);
// The model as given (no estimated parameters); `controls` (optional) the
// replay's control signal, whose delay the torque is read at (rollout
// --compare of a fit with a control delay).
std::optional<TorqueError> torque_error(const Model<double>& model, const TrajectorySet& data,
                                        const DerivativeOptions& derivatives, std::string* note = nullptr,
                                        const ControlSignal* controls = nullptr);
std::optional<TorqueError> torque_error(const Model<double>& model, const TrajectorySet& data,
                                        int filter_window = 1, std::string* note = nullptr);

// ---------------------------------------------------------------------------
// Config and report (shared by rollout --compare and simid).

// Longest accepted window period or horizon, in seconds.
constexpr double kMaxEvaluationSeconds = 1e6;

// `{every: T, horizon: H}` (seconds): both required, finite, > 0 and at
// most kMaxEvaluationSeconds; errors name the key.
EvaluationWindows read_evaluation_windows(const Config& section);

// Fails on `section`'s 'horizon' key (a ConfigError: exit 2) when no window
// of `spec` fits in any trajectory of `sets`: a horizon longer than the data.
void check_windows_fit(const Config& section, const EvaluationWindows& spec,
                       const std::vector<const TrajectorySet*>& sets);

// `{every_s, horizon_s, count, skipped, mean_rmse_q, median_rmse_q,
// mean_rmse_qd, median_rmse_qd, per_trajectory: [...], per_window:
// [{trajectory, t0, t1, rmse_q, rmse_qd}]}`; non-finite values are null.
nlohmann::json windows_json(const WindowedEvaluation& e);

// `{rmse_per_joint: {name: value}, rmse, samples}`.
nlohmann::json torque_json(const TorqueError& e);
// `{method, window, order, filter_torque}`: how a torque error's q̇, q̈ were
// estimated (order only for savitzky_golay).
nlohmann::json derivatives_json(const DerivativeOptions& d);

}  // namespace neuralsim
