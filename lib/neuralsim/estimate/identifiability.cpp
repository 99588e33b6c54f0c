#include "neuralsim/estimate/identifiability.hpp"

#include <cmath>
#include <sstream>

#include "neuralsim/core/dense.hpp"

namespace neuralsim {
double physical_derivative(const ParameterSet& params, int i, double x) {
  const EstimatedParameter& p = params[i];
  const double value = params.physical<double>(i, x);
  return p.transformation == Transformation::kLog ? value * p.scale : p.scale;
}

namespace {

std::string describe(const ParameterSet& params, const Eigen::VectorXd& v) {
  // v is a direction in d(log|p|) space along which the cost does not change.
  std::vector<int> big;
  for (int i = 0; i < v.size(); ++i)
    if (std::abs(v[i]) > 0.2) big.push_back(i);
  std::ostringstream s;
  s.precision(3);
  if (big.size() == 1) {
    s << "'" << params[big[0]].name() << "' is not identifiable from this data";
  } else if (big.size() == 2) {
    // Invariance along (v_a, v_b) in log space leaves p_a^(v_b) · p_b^(-v_a)
    // as the only combination the data determines.
    const int a = big[0], b = big[1];
    const double k = -v[a] / v[b];  // exponent of p_b once p_a's is 1
    s << "only " << params[a].name();
    if (std::abs(k - 1) < 0.05)
      s << " · " << params[b].name();
    else if (std::abs(k + 1) < 0.05)
      s << " / " << params[b].name();
    else
      s << " · " << params[b].name() << "^" << k;
    s << " is identifiable (the data cannot separate the two)";
  } else {
    s << "the combination";
    for (int i : big) s << " " << (v[i] >= 0 ? "+" : "-") << std::abs(v[i]) << "·log|" << params[i].name() << "|";
    s << " is not identifiable";
  }
  return s.str();
}

}  // namespace

Identifiability analyze_identifiability(const ParameterSet& params, const std::vector<double>& x,
                                        const Eigen::MatrixXd& J, const Eigen::VectorXd& r,
                                        double singular_threshold) {
  const int P = params.size();
  const int m = static_cast<int>(J.rows());
  Identifiability id;
  id.value.resize(P);
  // Jacobian w.r.t. physical values, and w.r.t. log|p| for scale-free analysis.
  Eigen::MatrixXd Jp(m, P), Jlog(m, P);
  for (int i = 0; i < P; ++i) {
    id.value[i] = params.physical<double>(i, x[i]);
    const double dpdx = physical_derivative(params, i, x[i]);
    Jp.col(i) = J.col(i) / dpdx;
    // Scale by |p| (relative changes); a parameter at 0 falls back to its
    // declared scale, so units do not distort the singular values.
    Jlog.col(i) = Jp.col(i) * (std::abs(id.value[i]) > 1e-12 ? std::abs(id.value[i]) : params[i].scale);
  }
  id.residual_variance = m > P ? r.squaredNorm() / (m - P) : std::numeric_limits<double>::quiet_NaN();

  const SingularValueDecomposition svd = singular_value_decomposition(Jlog, SingularVectors::kFullV);
  const Eigen::VectorXd& sv = svd.values;
  id.singular_values.assign(sv.data(), sv.data() + sv.size());
  const double smax = sv.size() ? sv[0] : 0;
  for (int k = 0; k < sv.size(); ++k) {
    const double rel = smax > 0 ? sv[k] / smax : 0;
    if (rel < singular_threshold) {
      UnidentifiableDirection d;
      d.relative_singular_value = rel;
      const Eigen::VectorXd v = svd.V.col(k);
      d.direction.assign(v.data(), v.data() + v.size());
      d.description = describe(params, v);
      id.weak_directions.push_back(d);
    }
  }

  // Fewer residuals than parameters: the SVD has only m singular values and
  // the remaining P - m right-singular vectors span the null space exactly.
  for (int k = static_cast<int>(sv.size()); k < P; ++k) {
    UnidentifiableDirection d;
    d.relative_singular_value = 0;
    const Eigen::VectorXd v = svd.V.col(k);
    d.direction.assign(v.data(), v.data() + v.size());
    d.description = describe(params, v);
    id.weak_directions.push_back(d);
  }

  // Covariance of physical values; pseudo-inverse keeps it finite when J is
  // rank-deficient, and unidentifiable parameters get NaN standard errors.
  const SingularValueDecomposition svdp = singular_value_decomposition(Jp, SingularVectors::kThinUV);
  const Eigen::VectorXd& s = svdp.values;
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(P, P);
  const double smaxp = s.size() ? s[0] : 0;
  for (int k = 0; k < s.size(); ++k)
    if (s[k] > singular_threshold * smaxp)
      cov += svdp.V.col(k) * svdp.V.col(k).transpose() / (s[k] * s[k]);
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

}  // namespace neuralsim
