// Config readers for what every fitting tool shares (simid, train-augment):
// the parameters to estimate and what is observed.
#pragma once

#include <string>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/core/derivative_filter.hpp"
#include "neuralsim/estimate/observation.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/derivative_config.hpp"
#include "neuralsim/parameters/parameter_set.hpp"
#include "neuralsim/step/control_signal.hpp"

namespace neuralsim {

// The list at `key` of `owner`: {name, initial | range: [lo, hi], bounds:
// [lo, hi] (±.inf allowed), scale, transform: identity | log | log_cholesky}.
// `name: link.<body>.inertial` with `transform: log_cholesky` estimates the
// link's whole inertia (mass, COM, rotational inertia) through its ten
// log-Cholesky coordinates, which stay physically consistent for any value.
// Unknown names list the valid ones; every error names file, line and key.
// Without `initial` a parameter starts at the model's value (`contact` holds
// the experiment's contact parameters, null when it has no contact); a model
// value outside the bounds starts at the middle of the range (or bounds),
// with a warning appended to `warnings` when not null. `controls.delay`
// (the actuation latency, seconds) is allowed only with `controls` (the
// tool's sim.controls, whose delay it starts from): it needs bounds
// [lower >= 0, finite upper] and a linear or cubic interpolation (a
// piecewise-constant signal has no derivative in the delay).
//
// In a joint fit over several configurations (simid's `configurations:`,
// experiment/configurations.hpp) an entry may also say `configurations:
// [names]` (the ones it applies to; default all) and `per_configuration:
// true` (one value per configuration instead of one shared); `configuration`
// (with the list `all_configurations`) reads the set of that configuration
// alone. Without configurations these keys are refused.
ParameterSet read_parameter_set(const Config& owner, const std::string& key, const Model<double>& model,
                                const ContactParameters<double>* contact = nullptr,
                                std::vector<std::string>* warnings = nullptr,
                                const ControlSignal* controls = nullptr, const std::string& configuration = {},
                                const std::vector<std::string>& all_configurations = {});

// The configurations an entry of estimate.parameters applies to: its
// `configurations:` list, checked against `all` (default: all of them).
std::vector<std::string> entry_configurations(const Config& entry, const std::vector<std::string>& all);

// `observe:` section: {q: w, qd: w, link_positions: [{link, point, data,
// weight}]} (a marker at `point` on the link, compared with link_poses/<data>:
// LinkPositionChannel), link_orientations: [{link, weight}];
// a joint channel may be {weight, delay}: its sensor latency in seconds
// (finite, >= 0; fitted as observe.q.delay / observe.qd.delay); `imus:`
// [{name, link, position, rpy, gyro_weight, accel_weight}] (ImuChannel).
ObservationSpec read_observation(const Config& section, const Model<double>& model);

// The list `key` of `section` as link positions and markers ([{link, point,
// data, weight}]: estimate.observe.link_positions, rollout's
// compare.markers), each checked as read_observation checks it.
std::vector<LinkPositionChannel> read_link_positions(const Config& section, const char* key,
                                                     const Model<double>& model);

// `residual:` section: {type: single_shooting | multiple_shooting |
// inverse_dynamics, window, stride, continuity_weight: auto | w >= 0,
// continuity_rounds, continuity_tolerance, filter_window,
// derivatives, sample_stride, loss: none | huber | cauchy, loss_scale,
// fit_initial_state: {q, qd} (single_shooting only), regressor: auto | off}.
// filter_window (and a central_difference `derivatives` window) is
// ProblemOptions::filter_window. `model` (optional) picks the default
// derivatives and refuses savitzky_golay on quaternion joints.
ProblemOptions read_problem_options(const Config& section, const Model<double>* model = nullptr);

// `prior:` section of `estimate`: {weight: w >= 0, geometric: w >= 0}
// (ProblemOptions::prior_weight, geometric_prior_weight).
void read_prior(const Config& section, ProblemOptions& options);

// The derivatives of inverse dynamics and of every torque error (simid's
// residual and metrics, rollout --compare), from a section holding
// `derivatives: {method: savitzky_golay | central_difference, window
// (samples; default 31 for savitzky_golay, 5 for central_difference), order
// (savitzky_golay, default 3), filter_torque (default false)}`, or the older
// `filter_window: n` (central_difference with window n; not together with
// `derivatives`). Neither: default_derivative_options(model). Errors name
// the key.
DerivativeOptions read_derivative_options(const Config& section, const Model<double>* model = nullptr);

// The default: Savitzky–Golay, window 31, order 3, on the recording's own
// time stamps (a moving average assumes a uniform step and inflates the
// torque error of unevenly sampled data); central_difference with a
// 5-sample moving average on a model with quaternion joints (nq != nv),
// whose positions Savitzky–Golay cannot differentiate (the window and order
// defaults: io/derivative_config.hpp).
DerivativeOptions default_derivative_options(const Model<double>* model = nullptr);

// How residual rows are grouped for the robust covariances: by trajectory,
// or by window (a shooting window or segment; for inverse dynamics, runs of
// `residual.window` consecutive samples).
const char* cluster_by_name(ClusterBy c);  // "trajectory", "window"
struct UncertaintyOptions {
  CovarianceOptions covariance;
  ClusterBy cluster = ClusterBy::kWindow;
  // A warning when cond(JᵀJ) of the equilibrated Jacobian exceeds this.
  double condition_warning = 1e8;
};
// `uncertainty:` section: {method: gauss_newton | sandwich | bootstrap
// (default gauss_newton), cluster: trajectory | window (default window),
// samples (bootstrap replicates, 2..100000, default 200), seed (default: the
// run's seed), condition_warning (cond(JᵀJ) past which the fit warns,
// default 1e8)}.
UncertaintyOptions read_uncertainty_options(const Config& section, long long seed);
// `solver:` section: {type: levenberg_marquardt | lbfgs, max_iterations,
// function_tolerance, gradient_tolerance, parameter_tolerance}.
SolverOptions read_solver_options(const Config& section);
// `basin_hopping:` section: {enabled, population, rounds, cost_threshold,
// time_budget (s, .inf allowed), spread, decay, random_initial}.
BasinHoppingOptions read_basin_hopping(const Config& section, long long seed);

}  // namespace neuralsim
