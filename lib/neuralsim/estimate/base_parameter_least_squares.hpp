// The base parameters fitted directly: inverse-dynamics least squares in
// the coordinates β of base_parameters.hpp (Gautier's IDIM-LS: Gautier &
// Khalil, IEEE T-RA 6(3), 1990; Gautier, "Dynamic identification of robots
// with power model", ICRA 1997), jointly with the fit's joint-local
// parameters (armature, damping, friction laws, springs, torque offsets),
// which keep their bounds. β itself is unbounded: no physical-consistency
// constraint, unlike the log-Cholesky coordinates of the main fit.
//
// Beside a physically consistent fit it answers two questions:
//  - what the torques alone say about each β (the Gauss–Newton standard
//    errors of an unconstrained fit, exact for a linear one);
//  - whether consistency moved the fit: z_k = (β_k(consistent) − β̂_k)/σ̂_k.
//    |z| of a few or more means the data pull towards inertias no body has
//    (an unmodelled effect, or noise on a poorly excited combination).
//
// The residual is the regressor route's (residuals.hpp,
// make_base_parameter_inverse_dynamics_cost); β is defined by the stacked
// regressor of the same samples, so the fit is exact for them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/estimate/residuals.hpp"

namespace neuralsim {

struct BaseParameterLeastSquaresOptions {
  int max_iterations = 100;
  double function_tolerance = 1e-12;
  double singular_threshold = 1e-4;  // of the covariance's pseudo-inverse (covariance.hpp)
};

struct BaseParameterLeastSquares {
  std::vector<BaseParameterEstimate> estimates;  // β̂ with their errors, in the order of the consistent fit's
  std::vector<double> z;                         // (β_k of the consistent fit − β̂_k) / σ̂_k (NaN: σ̂_k not finite)
  // params' variables: joint-local ones fitted, the links' inertial ones as given.
  std::vector<double> x;
  std::vector<double> value;      // physical, per entry of params (NaN for the links' inertial entries)
  std::vector<double> std_error;  // likewise
  double cost = 0;                // ½Σr²
  double rmse = 0;                // of the torque residuals (joint units)
  long long residuals = 0;
  double validation_rmse = 0;     // on `validation`'s samples (NaN without them)
  int iterations = 0;
  bool converged = false;
  std::string report;  // Ceres' brief report
};

// `consistent` the base parameters of the fit at `x` (fit_base_parameters on
// the same samples: its decomposition defines β, its values start β̂ and
// give z); `ctx` the fit's model and parameters (the regressor route must
// apply: regressor_route_applies). `validation`: held-out samples whose
// torque error the fitted β and parameters are scored on (at states the
// training samples did not span, W_2 = W_1 K may not hold: that error is
// the base-parameter model's). Throws InvalidArgument when `consistent`
// has no links or the route does not apply.
BaseParameterLeastSquares fit_base_parameters_least_squares(
    const ResidualContext& ctx, const std::vector<std::shared_ptr<const InverseDynamicsSamples>>& samples,
    const BaseParameterFit& consistent, const std::vector<double>& x,
    const BaseParameterLeastSquaresOptions& options = {},
    const std::vector<std::shared_ptr<const InverseDynamicsSamples>>& validation = {});

}  // namespace neuralsim
