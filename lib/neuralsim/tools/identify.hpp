// identify: fit named model parameters to recorded trajectories (the work
// of the `simid` tool; config reference docs/simid.md).
//
//   IdentificationRequest request{Config::load("configs/simid_double_pendulum_lengths.yaml"), 1};
//   IdentificationResult result = identify(request);
//   std::cout << result.full_report();   // values, standard errors, identifiability
//
// Top to bottom: the config is read and checked against the model and the
// data (ConfigError, DataError, ModelError: nothing has run yet); then
// parallel basin hopping with local Ceres solves (a checkpoint after every
// complete round; resumable bit for bit); then, at the best point, the
// Jacobian with respect to the parameters, the identifiability analysis
// and the standard errors of the chosen method; then predictions and errors
// on the training and validation data (per trajectory, per window in
// seconds, inverse-dynamics torque), physical consistency and the errors
// against `ground_truth`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/base_parameter_least_squares.hpp"
#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/estimate/inertial_estimate.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/grad/gradient_check.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

struct IdentificationRequest {
  Config config;       // the experiment (docs/simid.md), overrides applied
  long long seed = 0;  // basin hopping's starts, the bootstrap
  // Evaluate only (no fit): the estimated parameters' values from this
  // parameter file (a params.json), then every metric a fit reports. Also
  // without a file when estimate.solver.max_iterations is 0 (the
  // configured initial values).
  std::string evaluate;
};

struct IdentifiedParameter {
  std::string name;
  double value = 0;                   // the fitted physical value
  double std_error = 0;               // of the reported method; NaN: the data do not determine it
  double gauss_newton_std_error = 0;  // NaN likewise
  double initial = 0, lower = 0, upper = 0;  // bounds may be infinite
  std::string transformation = "identity";   // the optimizer's variable: "identity", "log", "log_cholesky"
  std::string at_bound;                      // "lower", "upper": the fit ended at that bound; empty: inside
};

// Predictions restarted from the measured state every `prediction_window`
// samples, and their errors.
struct TrajectoryFit {
  std::string name;
  double rmse_q = 0;              // NaN for reach targets; +inf when the prediction diverged
  double rmse_link_position = 0;  // of the observed links (target data: the distance to the target); NaN without links
  double cost = 0;                // ½Σr² of the trajectory's residuals (training data; NaN for validation)
  // The sensor channels' RMSE along the prediction (estimate/sensor_prediction.hpp):
  // "imus.<name>.gyro", "imus.<name>.accel", "joint_torques", "motor_currents".
  std::map<std::string, double> rmse_sensors;
};
struct FitEvaluation {
  // mean_rmse_link_position: over the trajectories that hold an observed
  // link or marker (NaN when none does).
  double mean_rmse_q = 0, mean_rmse_link_position = 0;
  std::vector<TrajectoryFit> per_trajectory;
  TrajectorySet predictions;  // the predicted trajectories (diverged ones are left out)
};

// The inverse-dynamics torque error at the fitted and at the initial values.
struct TorqueEvaluation {
  TorqueError fitted;
  std::optional<TorqueError> initial;
};

// The fitted starting states of one training trajectory: every
// single-shooting window's start (residual.fit_initial_state) or every
// multiple-shooting segment's state.
struct FittedStartStates {
  std::string name;  // the training trajectory
  StartStates states;
};

struct IdentificationResult : RunReport {
  // A joint fit over several configurations (`configurations:`, docs/simid.md
  // "Several configurations"): the parameters, covariance, identifiability
  // and search are the joint vector's (a per-configuration parameter named
  // "<name>@<configuration>"), `train`, `validation` and `test` hold every
  // configuration's trajectories named "<configuration>.<trajectory>", and
  // each configuration's own result (its model, its parameters under their
  // names in it with the joint fit's values and errors, its predictions,
  // windows and torque errors) is in `configurations`, in config order.
  std::vector<IdentificationResult> configurations;
  std::string configuration;  // in `configurations`: its name

  std::string model_name;
  Model<double> fitted_model;  // the config's model with the fitted values (before the fit: as configured)
  bool has_fit = false;  // false: no local solve produced a usable solution (status kDiverged or kInterrupted)
  bool evaluate_only = false;    // the values were given (--evaluate, max_iterations 0), not fitted
  std::string evaluated_file;    // --evaluate: the parameter file
  std::vector<IdentifiedParameter> parameters;  // in the order of estimate.parameters
  std::vector<ExperimentParameter> fixed;       // the values held fixed (params:, params_file:, --set)
  double cost = 0;                              // ½Σr² at the fit
  LocalResult best;                             // the best local solve
  BasinHoppingOptions basin_hopping;
  BasinHoppingResult search;                    // rounds, history, why it stopped

  // False when a stop (Ctrl-C) came before the post-fit analysis finished
  // and it was abandoned (docs/simid.md, "Interrupts"): `parameters` then
  // hold the fitted values without standard errors (NaN), `identifiability`
  // only those values, and there are no predictions, windows or torque errors.
  bool analysis_done = true;
  Identifiability identifiability;
  UncertaintyOptions uncertainty;
  CovarianceEstimate robust;  // the sandwich or bootstrap estimate (method kGaussNewton: unused)
  // Each estimated link inertia (link.<body>.inertial) in physical
  // coordinates (mass, COM, inertia about the COM) with the reported
  // method's standard errors, beside its log-Cholesky coordinates.
  std::vector<InertialEstimate> inertials;
  // An inverse-dynamics fit of link inertias: the base parameters (the
  // combinations of the links' standard parameters the data determine,
  // Gautier & Khalil) with their estimates and standard errors
  // (estimate/base_parameters.hpp); `links` empty otherwise.
  BaseParameterFit base_parameters;
  // residual.base_parameters: least_squares: β fitted directly, without the
  // consistency constraint, with the joint-local parameters
  // (estimate/base_parameter_least_squares.hpp).
  std::optional<BaseParameterLeastSquares> base_least_squares;

  bool targets = false;       // the data are reach targets
  int prediction_window = 0;  // samples between restarts of the evaluation's predictions
  FitEvaluation train;
  std::optional<FitEvaluation> validation;
  // data.test: evaluated once with the fitted parameters; not in the fit,
  // the search or any choice (issue #38).
  std::optional<FitEvaluation> test;
  std::optional<WindowedEvaluation> train_windows, validation_windows;
  std::optional<TorqueEvaluation> train_torque, validation_torque;
  ProblemOptions problem;  // the residual's options (the torque metric's derivatives and filter window)
  ObservationSpec observe;  // the channels the residuals compare (q, q̇, link positions)
  std::string torque_note;  // why a torque error is missing or what it leaves out
  // Missing (NaN) entries of the observed channels in the training data,
  // whose residuals are dropped: per channel ("q", "qd",
  // "link_positions.<data name>"), and the total against the observed entries.
  ObservationSpec::Missing missing;
  bool physically_consistent = true;
  std::map<std::string, double> relative_error;  // |fit − truth| / |truth| for each `ground_truth` entry
  std::optional<double> max_relative_error;       // over those entries (set when ground_truth is given)
  TrajectorySet measured;  // the training, validation and test data ("validation_", "test_" prefixed), as predicted below
  TrajectorySet fitted;    // the predictions of the fitted model, with the same names
  // Per training trajectory, in data order (empty without fitted states, and
  // for an evaluation): also in `fitted` as "fitted_start_<name>".
  std::vector<FittedStartStates> start_states;

  // The identifiability report: values ± standard errors, the singular
  // values of the scaled Jacobian and each near-singular direction.
  std::string full_report() const;
};

// Fits the parameters of `request.config`. Throws ConfigError, DataError
// and ModelError for bad inputs (before context.observer->started()).
IdentificationResult identify(const IdentificationRequest& request, const RunContext& context = {});

// `simid --check-gradients`: the gradient of the fit's cost ½Σr² that the
// solver uses (forward mode: Ceres' Jets; simid has no reverse-mode path)
// against central differences of the same cost, at the initial values, with
// respect to the optimizer's variables (after each parameter's
// transformation and scale, as the solver sees them). Status
// kGradientCheckFailed when a coordinate disagrees past the tolerance.
struct IdentificationGradientCheckOptions {
  GradientCheckOptions check;
  // Test only: multiplies the derivative of this parameter by
  // `derivative_scale` before the comparison, to show that the check
  // catches a wrong derivative.
  std::string scale_derivative_of;
  double derivative_scale = 1;
};
struct IdentificationGradientCheck : RunReport {
  std::string formulation;  // "single_shooting", ...
  std::vector<std::string> transformations;  // per parameter: "identity", "log", ...
  GradientCheckSummary check;
};
IdentificationGradientCheck check_identification_gradient(const IdentificationRequest& request,
                                                          const IdentificationGradientCheckOptions& options = {},
                                                          const RunContext& context = {});

}  // namespace neuralsim
