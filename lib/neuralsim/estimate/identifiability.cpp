#include "neuralsim/estimate/identifiability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include <sstream>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/estimate/covariance.hpp"

namespace neuralsim {
double physical_derivative(const ParameterSet& params, int i, double x) {
  const EstimatedParameter& p = params[i];
  const double value = params.physical<double>(i, x);
  return p.transformation == Transformation::kLog ? value * p.scale : p.scale;
}

namespace {

// `u` is a weak direction in the equilibrated coordinates u_i = ‖J_i‖ Δp_i;
// Δp = D u with D = diag(1/‖J_i‖) (`scale`). Between parameters whose values
// are away from zero it is said as a product of powers (the direction in
// log|p|: ℓ_i = Δp_i / |p_i|), otherwise as a linear trade-off.
std::string describe(const ParameterSet& params, const Eigen::VectorXd& u, const Eigen::VectorXd& scale,
                     const std::vector<double>& value) {
  std::vector<int> big;
  for (int i = 0; i < u.size(); ++i)
    if (std::abs(u[i]) > 0.2) big.push_back(i);
  std::ostringstream s;
  s.precision(3);
  if (big.size() == 1) {
    s << "'" << params[big[0]].name() << "' is not identifiable from this data";
    return s.str();
  }
  bool nonzero = true;
  for (int i : big) nonzero = nonzero && std::abs(value[static_cast<std::size_t>(i)]) > 1e-12;
  Eigen::VectorXd dp = scale.cwiseProduct(u);
  if (big.size() == 2) {
    const int a = big[0], b = big[1];
    if (nonzero) {
      // Invariance along (ℓ_a, ℓ_b) leaves p_a^(ℓ_b) · p_b^(-ℓ_a) as the only
      // combination the data determines.
      const double la = dp[a] / std::abs(value[static_cast<std::size_t>(a)]);
      const double lb = dp[b] / std::abs(value[static_cast<std::size_t>(b)]);
      const double k = -la / lb;  // exponent of p_b once p_a's is 1
      s << "only " << params[a].name();
      if (std::abs(k - 1) < 0.05)
        s << " · " << params[b].name();
      else if (std::abs(k + 1) < 0.05)
        s << " / " << params[b].name();
      else
        s << " · " << params[b].name() << "^" << k;
      s << " is identifiable (the data cannot separate the two)";
    } else {
      s << "changing " << params[a].name() << " by " << dp[a] / dp[b] << " per unit change of " << params[b].name()
        << " leaves the fit unchanged (the data cannot separate the two)";
    }
    return s.str();
  }
  s << "the combination";
  for (int i : big) s << " " << (dp[i] >= 0 ? "+" : "-") << std::abs(dp[i]) / dp.cwiseAbs().maxCoeff() << "·Δ" << params[i].name();
  s << " is not identifiable";
  return s.str();
}

}  // namespace

Identifiability analyze_identifiability(const ParameterSet& params, const std::vector<double>& x,
                                        const Eigen::MatrixXd& J, const Eigen::VectorXd& r,
                                        double singular_threshold, int nuisance) {
  const int P = params.size();
  const int m = static_cast<int>(J.rows());
  Identifiability id;
  id.value.resize(P);
  // The Jacobian w.r.t. physical values, then equilibrated: every column
  // scaled to unit norm (van der Sluis, "Condition numbers and equilibration
  // of matrices", Numer. Math. 1969). Singular values, weak directions and
  // the truncation of the covariance are then the same whatever the
  // parameters' units and sizes (a parameter's column only changes by a
  // factor when its unit or value does); a column of zeros is a parameter
  // the data does not see at all.
  // One m × P copy (Js holds the physical column, then scales it in place):
  // J has 10⁵ rows on a 1 kHz recording.
  Eigen::MatrixXd Js(m, P);
  Eigen::VectorXd scale(P);
  for (int i = 0; i < P; ++i) {
    id.value[i] = params.physical<double>(i, x[i]);
    const double dpdx = physical_derivative(params, i, x[i]);
    Js.col(i) = J.col(i) / dpdx;
    const double norm = Js.col(i).norm();
    scale[i] = norm > 0 ? 1.0 / norm : 1.0;
    if (!(norm > 0)) id.unseen.push_back(i);
    Js.col(i) *= scale[i];
  }
  id.nuisance = std::max(0, nuisance);
  const int dof = informative_rows(J, r) - P - id.nuisance;  // missing entries take none (covariance.hpp)
  id.residual_variance = dof > 0 ? r.squaredNorm() / dof : std::numeric_limits<double>::quiet_NaN();

  const SingularValueDecomposition svd = singular_value_decomposition(Js, SingularVectors::kFullV);
  const Eigen::VectorXd& sv = svd.values;
  id.singular_values.assign(sv.data(), sv.data() + sv.size());
  const double smax = sv.size() ? sv[0] : 0;
  const double smin = sv.size() == static_cast<Eigen::Index>(P) && P > 0 ? sv[P - 1] : 0;
  id.condition_number = smin > 0 ? (smax / smin) * (smax / smin) : std::numeric_limits<double>::infinity();
  const auto weak_direction = [&](int k, double rel) {
    UnidentifiableDirection d;
    d.relative_singular_value = rel;
    const Eigen::VectorXd v = svd.V.col(k);
    d.direction.assign(v.data(), v.data() + v.size());
    d.description = describe(params, v, scale, id.value);
    id.weak_directions.push_back(d);
  };
  for (int k = 0; k < sv.size(); ++k) {
    const double rel = smax > 0 ? sv[k] / smax : 0;
    if (rel < singular_threshold) weak_direction(k, rel);
  }
  // Fewer residuals than parameters: the SVD has only m singular values and
  // the remaining P - m right-singular vectors span the null space exactly.
  for (int k = static_cast<int>(sv.size()); k < P; ++k) weak_direction(k, 0.0);

  // Covariance of physical values: the pseudo-inverse of the equilibrated
  // JᵀJ (truncated at the same relative threshold), scaled back, which keeps
  // it finite when J is rank-deficient; unidentifiable parameters get NaN
  // standard errors.
  // The same decomposition as above (its first min(m, P) columns of V are
  // the thin ones): a second SVD of the m × P Jacobian, with U, cost as much
  // as the first on 10⁵ rows.
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(P, P);
  for (int k = 0; k < sv.size(); ++k)
    if (sv[k] > singular_threshold * smax) cov += svd.V.col(k) * svd.V.col(k).transpose() / (sv[k] * sv[k]);
  cov = scale.asDiagonal() * cov * scale.asDiagonal();
  cov *= id.residual_variance;
  id.std_error.resize(P);
  id.correlation = Eigen::MatrixXd::Identity(P, P);
  std::vector<bool> weak(P, false);
  for (const auto& d : id.weak_directions)
    for (int i = 0; i < P; ++i)
      if (std::abs(d.direction[i]) > 0.2) weak[i] = true;
  for (int i = 0; i < P; ++i) id.std_error[i] = weak[i] ? std::numeric_limits<double>::quiet_NaN() : std::sqrt(cov(i, i));
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < P; ++j)
      if (i != j && cov(i, i) > 0 && cov(j, j) > 0) id.correlation(i, j) = cov(i, j) / std::sqrt(cov(i, i) * cov(j, j));
  return id;
}

const char* bound_reached(const ParameterSet& params, int i, double x) {
  // Within 1e-6 of the bounds' span (or of the value's size for a one-sided
  // bound), in optimizer variables as the solver stops.
  const double lo = params.variable_lower(i), hi = params.variable_upper(i);
  const double span = std::isfinite(hi - lo) ? hi - lo : std::max(1.0, std::abs(x));
  return std::isfinite(lo) && x - lo <= 1e-6 * span ? "lower" : std::isfinite(hi) && hi - x <= 1e-6 * span ? "upper" : nullptr;
}

std::vector<std::string> uncertainty_warnings(const ParameterSet& params, const std::vector<double>& x,
                                              const Identifiability& id, double condition_warning, bool fitted) {
  std::vector<std::string> w;
  if (id.condition_number > condition_warning)
    w.push_back(format_printf("cond(JᵀJ) = %.3g (of the column-equilibrated Jacobian) exceeds %.3g: the intervals "
                              "of the parameters in its weakest direction are not to be trusted%s",
                              id.condition_number, condition_warning,
                              id.weak_directions.empty() ? "" : (" (" + id.weak_directions.front().description + ")").c_str()));
  if (fitted)
    for (int i = 0; i < params.size(); ++i) {
      const char* which = bound_reached(params, i, x[static_cast<size_t>(i)]);
      if (which)
        w.push_back(format_printf("%s ended at its %s bound %.6g: the optimum may lie beyond it, and its interval "
                                  "assumes it does not",
                                  params[i].name().c_str(), which,
                                  std::string(which) == "lower" ? params[i].lower : params[i].upper));
    }
  for (int i : id.unseen)
    w.push_back(id.nuisance > 0 ? "'" + params[i].name() + "' changes no residual in a way the fitted states "
                                  "(starting states, segments) cannot reproduce: the data cannot tell it from them"
                                : "'" + params[i].name() + "' has no effect on any residual (its column of the "
                                  "Jacobian is zero): the data cannot see it; check the name and what the data "
                                  "observe");
  return w;
}

}  // namespace neuralsim
