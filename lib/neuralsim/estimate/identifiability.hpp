// Uncertainty and identifiability at an optimum from the parameter Jacobian.
//
// Gauss–Newton covariance Σ = s² (JᵀJ)⁻¹ with s² = Σr²/(m - P) (e.g. Ljung,
// *System Identification*, 2nd ed., §9.2), mapped to physical values by the
// delta method. Near-singular directions of J (small singular values of the
// column-equilibrated Jacobian: each column scaled to unit norm, so that the
// analysis does not depend on the parameters' units or current sizes) show
// which combinations the data cannot separate.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

struct UnidentifiableDirection {
  double relative_singular_value = 0;  // σ_i / σ_max
  std::vector<double> direction;       // unit vector over parameters, in equilibrated coordinates ‖J_i‖ Δp_i
  std::string description;             // e.g. "only link.m·link.l is identifiable"
};

struct Identifiability {
  std::vector<double> value;          // physical optimum
  std::vector<double> std_error;      // physical, NaN when not identifiable
  Eigen::MatrixXd correlation;        // P x P
  std::vector<double> singular_values;  // of the equilibrated Jacobian, descending
  std::vector<UnidentifiableDirection> weak_directions;
  double residual_variance = 0;
  // cond(JᵀJ) of the equilibrated Jacobian, (σ_max / σ_min)²: +inf when a
  // direction is not seen at all (or there are fewer residuals than
  // parameters).
  double condition_number = 0;
  // Parameters whose column of J is zero: no residual depends on them (a
  // name that maps to nothing the data sees), or, with nuisance parameters
  // profiled out, none in a way those cannot reproduce.
  std::vector<int> unseen;
  int nuisance = 0;  // nuisance parameters profiled out of J
};

// d p / d x of parameter i at optimizer variable x (J w.r.t. physical values
// is J.col(i) / physical_derivative): the delta method of the covariances.
double physical_derivative(const ParameterSet& params, int i, double x);

// `J` is d r / d x (optimizer variables), `r` the residuals at x.
// `nuisance`: the number of nuisance parameters profiled out of J
// (profile_nuisance, covariance.hpp), which the residual variance's
// degrees of freedom m − P − nuisance discount.
Identifiability analyze_identifiability(const ParameterSet& params, const std::vector<double>& x,
                                        const Eigen::MatrixXd& J, const Eigen::VectorXd& r,
                                        double singular_threshold = 1e-4, int nuisance = 0);

// "lower" or "upper" when optimizer variable `x` of parameter i is at that
// bound (within 1e-6 of the bounds' span), else null.
const char* bound_reached(const ParameterSet& params, int i, double x);

// What a user must read before trusting the intervals, one line each: the
// condition number of JᵀJ past `condition_warning` (with its value), each
// fitted parameter that ended at a bound (`fitted`: false for values given
// to evaluate), each parameter no residual depends on. `x` are the
// optimizer variables of `id`'s analysis.
std::vector<std::string> uncertainty_warnings(const ParameterSet& params, const std::vector<double>& x,
                                              const Identifiability& id, double condition_warning, bool fitted);

}  // namespace neuralsim
