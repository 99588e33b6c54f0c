// Config readers for what every fitting tool shares (simid, train-augment):
// the parameters to estimate and what is observed.
#pragma once

#include <string>

#include "neuralsim/estimate/basin_hopping.hpp"
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
// sample_stride, loss: none | huber | cauchy, loss_scale}.
ProblemOptions read_problem_options(const Config& section);
// `solver:` section: {type: levenberg_marquardt | lbfgs, max_iterations,
// function_tolerance, gradient_tolerance, parameter_tolerance}.
SolverOptions read_solver_options(const Config& section);
// `basin_hopping:` section: {enabled, population, rounds, cost_threshold,
// time_budget (s, .inf allowed), spread, decay, random_initial}.
BasinHoppingOptions read_basin_hopping(const Config& section, long long seed);

}  // namespace neuralsim
