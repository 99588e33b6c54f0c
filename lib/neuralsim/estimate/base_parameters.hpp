// Base inertial parameters: the linear combinations of the standard
// inertial parameters π (dynamics/inverse_dynamics_regressor.hpp) that
// inverse dynamics can determine, by the numerical method of Gautier
// ("Numerical calculation of the base inertial parameters of robots",
// J. Robotic Systems 8(4), 1991; Gautier & Khalil, IEEE T-RA 6(3), 1990).
//
// Stack the regressor over states, W = [Y(x_1); Y(x_2); …]; its column
// space is what any inverse-dynamics data of the model can see. A QR
// decomposition with column pivoting, W P = Q [R1 R2; 0 0], picks b
// independent columns (W_1) and expresses the others (W_2) through them,
// W_2 = W_1 K with K = R1⁻¹ R2, so that
//   W π = W_1 (π_1 + K π_2) = W_1 β,   β = π_1 + K π_2 (the base parameters).
// Any two π with the same β give the same torques at every state the stack
// represents; β is what a fit determines.
//
// Rank: columns are first scaled to unit norm (the decision must not depend
// on the parameters' units: kg, kg·m, kg·m²), then |R_kk| ≤ tol·|R_11|
// counts as zero, with tol = max(rows, cols) · ε · 100 by default (the
// usual numerical-rank threshold of LAPACK's xGELSY, enlarged by 100 for
// the regressor's rounding; Golub & Van Loan, §5.5.7). Columns whose norm
// is at most tol times the largest column's (a parameter with no effect,
// or one whose effect cancels in theory and leaves rounding) are
// dependent with K's column zero.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

struct BaseParameters {
  int rank = 0;
  double tolerance = 0;              // relative threshold on |R_kk| / |R_11| used
  std::vector<int> independent;      // columns of π kept (π_1), in pivot order
  std::vector<int> dependent;        // the others (π_2), ascending
  Eigen::MatrixXd K;                 // rank × dependent.size(): β = π_1 + K π_2
  // β = B π: B is rank × n (row k: 1 at independent[k], K(k, :) at dependent).
  Eigen::MatrixXd combination_matrix(int n) const;
  Eigen::VectorXd base_values(const Eigen::VectorXd& pi) const;  // β of π
};

// `W` the stacked regressor (rows: equations, columns: parameters);
// `tolerance` ≤ 0 takes the default above.
BaseParameters compute_base_parameters(const Eigen::MatrixXd& W, double tolerance = 0);

// The regressor of `model` stacked over `count` random states (configuration
// uniform on each joint's range, or ±π where it has none; q̇, q̈ uniform in
// ±2; a seeded generator): the structural base parameters of the model,
// independent of any recording.
Eigen::MatrixXd random_state_regressor(const Model<double>& model, int count, unsigned seed);

// The names of π's columns: "<link>.<m|hx|hy|hz|Ixx|Ixy|Iyy|Ixz|Iyz|Izz>"
// (h = m·c, I about the link frame's origin).
std::vector<std::string> standard_parameter_names(const Model<double>& model);

// β_k written out: "panda_link2.Izz + 0.0946·panda_link3.m - …" (terms with
// |K| below 1e-9·max(1, max|K|) dropped: rounding of the model's geometry, e.g. 4.9e-12
// from a URDF angle 1.57079632679 written for π/2).
std::string base_parameter_expression(const BaseParameters& base, int k, const std::vector<std::string>& names);

// The base parameters of an inverse-dynamics fit of link inertias: the
// links whose inertia `params` fits (log-Cholesky blocks, mass, COM,
// inertia), their regressor stacked over the fit's samples (W, the rows of
// the torque residuals), β̂ = π̂_1 + K π̂_2 at the fitted values, and their
// standard errors by the delta method, Σ_β = G Σ_x Gᵀ with G = ∂β/∂x =
// B ∂π/∂x (forward-mode Jets) and Σ_x = s² (JᵀJ)⁺ from the data's rows of
// J (the prior's rows left out: the errors are the data's). The
// pseudo-inverse: the log-Cholesky coordinates have directions no torque
// sees, and every generalized inverse gives an estimable β the same
// variance; a β with a part in J's null space is not determined (NaN).
struct BaseParameterEstimate {
  std::string expression;  // base_parameter_expression
  double value = 0;
  double std_error = 0;    // NaN when the data do not determine it
};
struct BaseParameterFit {
  std::vector<std::string> links;  // the fitted links, in body order
  int standard = 0;                // 10 per fitted link
  BaseParameters base;
  std::vector<BaseParameterEstimate> estimates;
};

// `x` the optimizer variables of `params` at the fit; `data_jacobian` the
// data's rows of the Jacobian of the fit's residuals (EstimationProblem::
// parameter_jacobian without the prior's rows), whose column columns[i] is
// params' variable i (empty `columns`: the identity). A joint fit over
// several configurations passes every configuration's rows and the joint
// vector's columns, so that β's errors use all the data; `samples` are this
// model's. `residual_variance` s². Empty `links` when no link inertia is
// fitted.
BaseParameterFit fit_base_parameters(const Model<double>& model, const ParameterSet& params,
                                     const std::vector<double>& x,
                                     const std::vector<const InverseDynamicsSamples*>& samples,
                                     const Eigen::Ref<const Eigen::MatrixXd>& data_jacobian, double residual_variance,
                                     const std::vector<int>& columns = {});

}  // namespace neuralsim
