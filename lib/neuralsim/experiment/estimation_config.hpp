// Config readers for what every fitting tool shares (simid, train-augment):
// the parameters to estimate and what is observed.
#pragma once

#include <string>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/estimate/derivative_filter.hpp"
#include "neuralsim/estimate/observation.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

// The list at `key` of `owner`: {name, initial | range: [lo, hi], bounds:
// [lo, hi] (±.inf allowed), scale, transform: identity | log | log_cholesky}.
// `name: link.<body>.inertial` with `transform: log_cholesky` estimates the
// link's whole inertia (mass, COM, rotational inertia) through its ten
// log-Cholesky coordinates, which stay physically consistent for any value.
// Unknown names list the valid ones; every error names file, line and key.
// `contact` holds the experiment's contact parameters (their values are the
// default initial values); null when the experiment has no contact.
ParameterSet read_parameter_set(const Config& owner, const std::string& key, const Model<double>& model,
                                const ContactParameters<double>* contact = nullptr);

// `observe:` section: {q: w, qd: w, link_positions: [{link, weight}]}.
ObservationSpec read_observation(const Config& section, const Model<double>& model);

// `residual:` section: {type: single_shooting | multiple_shooting |
// inverse_dynamics, window, stride, continuity_weight, filter_window,
// derivatives, sample_stride, loss: none | huber | cauchy, loss_scale}.
// filter_window (and a central_difference `derivatives` window) is
// ProblemOptions::filter_window.
ProblemOptions read_problem_options(const Config& section);
// The derivatives of inverse dynamics and of the torque error, from the same
// `residual:` section: `derivatives: {method: central_difference |
// savitzky_golay, window (samples; default 5 for central_difference, 31 for
// savitzky_golay), order (savitzky_golay, default 3), filter_torque (default
// false)}`, or the older `filter_window: n` (central_difference with window
// n; not together with `derivatives`). Errors name the key.
DerivativeOptions read_derivative_options(const Config& section);

// How residual rows are grouped for the robust covariances: by trajectory,
// or by window (a shooting window or segment; for inverse dynamics, runs of
// `residual.window` consecutive samples).
const char* cluster_by_name(ClusterBy c);  // "trajectory", "window"
struct UncertaintyOptions {
  CovarianceOptions covariance;
  ClusterBy cluster = ClusterBy::kWindow;
};
// `uncertainty:` section: {method: gauss_newton | sandwich | bootstrap
// (default gauss_newton), cluster: trajectory | window (default window),
// samples (bootstrap replicates, 2..100000, default 200), seed (default: the
// run's seed)}.
UncertaintyOptions read_uncertainty_options(const Config& section, long long seed);
// `solver:` section: {type: levenberg_marquardt | lbfgs, max_iterations,
// function_tolerance, gradient_tolerance, parameter_tolerance}.
SolverOptions read_solver_options(const Config& section);
// `basin_hopping:` section: {enabled, population, rounds, cost_threshold,
// time_budget (s, .inf allowed), spread, decay, random_initial}.
BasinHoppingOptions read_basin_hopping(const Config& section, long long seed);

}  // namespace neuralsim
