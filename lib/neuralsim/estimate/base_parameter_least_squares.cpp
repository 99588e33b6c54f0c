#include "neuralsim/estimate/base_parameter_least_squares.hpp"

#include <ceres/ceres.h>

#include <cmath>
#include <limits>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/estimate/inertia_prior.hpp"

namespace neuralsim {
namespace {

// The columns of π that β replaces and stands for (residuals.hpp's
// BaseColumns): every column of the fitted links; the independent ones,
// numbered over those links' 10·f columns in `base`, mapped to π's.
BaseColumns base_columns(const std::vector<int>& bodies, const BaseParameters& base) {
  BaseColumns c;
  for (int b : bodies)
    for (int k = 0; k < 10; ++k) c.replaced.push_back(10 * b + k);
  for (int j : base.independent) c.beta.push_back(c.replaced.at(static_cast<size_t>(j)));
  return c;
}

struct Block {
  ceres::CostFunction* cost;
  Eigen::Index row;
};

}  // namespace

BaseParameterLeastSquares fit_base_parameters_least_squares(
    const ResidualContext& ctx, const std::vector<std::shared_ptr<const InverseDynamicsSamples>>& samples,
    const BaseParameterFit& consistent, const std::vector<double>& x, const BaseParameterLeastSquaresOptions& options,
    const std::vector<std::shared_ptr<const InverseDynamicsSamples>>& validation) {
  const char* who = "fit_base_parameters_least_squares: ";
  if (!ctx.model || !ctx.parameters) throw InvalidArgument(std::string(who) + "no model or parameters");
  const Model<double>& model = *ctx.model;
  const ParameterSet& params = *ctx.parameters;
  const int P = params.size(), nv = model.nv;
  if (static_cast<int>(x.size()) != P)
    throw InvalidArgument(who + std::to_string(x.size()) + " values for " + std::to_string(P) + " parameters");
  std::string why_not;
  if (!regressor_route_applies(model, params, &why_not)) throw InvalidArgument(who + why_not);
  const std::vector<int> bodies = inertial_bodies(params);
  if (consistent.links.empty() || static_cast<int>(bodies.size()) * 10 != consistent.standard ||
      consistent.estimates.size() != consistent.base.independent.size())
    throw InvalidArgument(std::string(who) + "the consistent fit's base parameters do not match the fitted links");
  const BaseColumns columns = base_columns(bodies, consistent.base);
  const int B = static_cast<int>(columns.beta.size());

  // θ: the links' inertial entries held (β stands for them), the others free
  // within their bounds; β starts at the consistent fit's values.
  BaseParameterLeastSquares out;
  out.x = x;
  std::vector<double> beta(static_cast<size_t>(B));
  for (int k = 0; k < B; ++k) beta[static_cast<size_t>(k)] = consistent.estimates[static_cast<size_t>(k)].value;
  std::vector<int> held, free;
  for (int i = 0; i < P; ++i) (inertial_body(params[i]) >= 0 ? held : free).push_back(i);
  ceres::Problem problem;
  std::vector<Block> blocks;
  constexpr int kSamplesPerBlock = 256;
  for (const std::shared_ptr<const InverseDynamicsSamples>& s : samples) {
    const std::shared_ptr<const RegressorSamples> rs = prepare_regressor_samples(model, s);
    const int n = static_cast<int>(s->q.rows());
    for (int first = 0; first < n; first += kSamplesPerBlock) {
      const int count = std::min(kSamplesPerBlock, n - first);
      ceres::CostFunction* cost = make_base_parameter_inverse_dynamics_cost(ctx, rs, columns, first, count, 1.0);
      blocks.push_back({cost, out.residuals});
      out.residuals += static_cast<long long>(count) * nv;
      problem.AddResidualBlock(cost, nullptr, out.x.data(), beta.data());
    }
  }
  if (blocks.empty()) throw InvalidArgument(std::string(who) + "no samples");
  if (free.empty()) {
    problem.SetParameterBlockConstant(out.x.data());
  } else {
    problem.SetManifold(out.x.data(), new ceres::SubsetManifold(P, held));
    for (int i : free) {
      if (std::isfinite(params.variable_lower(i))) problem.SetParameterLowerBound(out.x.data(), i, params.variable_lower(i));
      if (std::isfinite(params.variable_upper(i))) problem.SetParameterUpperBound(out.x.data(), i, params.variable_upper(i));
    }
  }
  ceres::Solver::Options so;
  so.linear_solver_type = ceres::DENSE_QR;  // at most a few hundred columns; β's can be poorly scaled
  so.max_num_iterations = options.max_iterations;
  so.function_tolerance = options.function_tolerance;
  so.num_threads = 1;  // deterministic sums
  so.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  out.cost = summary.final_cost;
  out.iterations = static_cast<int>(summary.iterations.size());
  out.converged = summary.termination_type == ceres::CONVERGENCE;
  out.report = summary.BriefReport();
  out.rmse = std::sqrt(2 * out.cost / static_cast<double>(out.residuals));

  // The Jacobian over the free variables [θ_free, β] and the residuals, for
  // the Gauss–Newton covariance.
  const Eigen::Index m = out.residuals, nf = static_cast<Eigen::Index>(free.size());
  Eigen::MatrixXd J(m, nf + B);
  Eigen::VectorXd r(m);
  for (const Block& b : blocks) {
    const int rows = b.cost->num_residuals();
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Jx(rows, P), Jb(rows, B);
    const double* parameters[2] = {out.x.data(), beta.data()};
    double* jacobians[2] = {Jx.data(), Jb.data()};
    if (!b.cost->Evaluate(parameters, r.data() + b.row, jacobians))
      throw InvalidArgument(std::string(who) + "the residual is not finite at the solution");
    for (Eigen::Index c = 0; c < nf; ++c) J.block(b.row, c, rows, 1) = Jx.col(free[static_cast<size_t>(c)]);
    J.block(b.row, nf, rows, B) = Jb;
  }
  CovarianceOptions co;
  co.singular_threshold = options.singular_threshold;
  const CovarianceEstimate cov = estimate_covariance(J, r, std::vector<int>(static_cast<size_t>(m), 0), co);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.std_error.assign(static_cast<size_t>(P), nan);
  out.value.assign(static_cast<size_t>(P), nan);
  for (Eigen::Index c = 0; c < nf; ++c) {
    const int i = free[static_cast<size_t>(c)];
    out.value[static_cast<size_t>(i)] = params.physical<double>(i, out.x[static_cast<size_t>(i)]);
    const bool seen = J.col(c).norm() > 0;
    out.std_error[static_cast<size_t>(i)] =
        seen ? cov.std_error[c] * std::abs(physical_derivative(params, i, out.x[static_cast<size_t>(i)])) : nan;
  }
  for (int k = 0; k < B; ++k) {
    BaseParameterEstimate e = consistent.estimates[static_cast<size_t>(k)];
    e.value = beta[static_cast<size_t>(k)];
    e.std_error = cov.std_error[nf + k];
    const double z = (consistent.estimates[static_cast<size_t>(k)].value - e.value) / e.std_error;
    out.z.push_back(std::isfinite(z) ? z : nan);
    out.estimates.push_back(e);
  }
  // The held-out torque error, by the same cost at the fitted values.
  double squares = 0;
  long long count = 0;
  for (const std::shared_ptr<const InverseDynamicsSamples>& s : validation) {
    const int n = static_cast<int>(s->q.rows());
    if (n == 0) continue;
    const std::unique_ptr<ceres::CostFunction> cost(
        make_base_parameter_inverse_dynamics_cost(ctx, prepare_regressor_samples(model, s), columns, 0, n, 1.0));
    Eigen::VectorXd rv(cost->num_residuals());
    const double* parameters[2] = {out.x.data(), beta.data()};
    if (!cost->Evaluate(parameters, rv.data(), nullptr)) rv.setConstant(nan);
    squares += rv.squaredNorm();
    count += rv.size();
  }
  out.validation_rmse = count > 0 ? std::sqrt(squares / static_cast<double>(count)) : nan;
  return out;
}

}  // namespace neuralsim
