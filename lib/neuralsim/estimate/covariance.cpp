#include "neuralsim/estimate/covariance.hpp"

#include <Eigen/SparseCholesky>
#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <string>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A counter-based SplitMix64 stream (core/splitmix.hpp), so replicate b's
// draws depend only on (seed, b).
uint64_t next_splitmix64(uint64_t& state) {
  const uint64_t z = splitmix64(state);
  state += 0x9E3779B97F4A7C15ull;
  return z;
}

// Pseudo-inverse of the symmetric positive semi-definite A = JᵀJ, keeping
// eigenvalues above (threshold · σ_max(J))².
Eigen::MatrixXd pseudo_inverse_normal(const Eigen::MatrixXd& J, double threshold) {
  const int P = static_cast<int>(J.cols());
  const SingularValueDecomposition svd = singular_value_decomposition(J, SingularVectors::kThinV);
  const Eigen::VectorXd& s = svd.values;
  Eigen::MatrixXd inv = Eigen::MatrixXd::Zero(P, P);
  const double smax = s.size() ? s[0] : 0;
  for (int k = 0; k < s.size(); ++k)
    if (s[k] > threshold * smax && s[k] > 0) inv += svd.V.col(k) * svd.V.col(k).transpose() / (s[k] * s[k]);
  return inv;
}

Eigen::MatrixXd pseudo_inverse_spd(const Eigen::MatrixXd& A, double threshold) {
  const SymmetricEigen eig = symmetric_eigen(A);
  const Eigen::VectorXd& l = eig.values;
  const double lmax = l.size() ? l.maxCoeff() : 0;
  Eigen::MatrixXd inv = Eigen::MatrixXd::Zero(A.rows(), A.cols());
  for (int k = 0; k < l.size(); ++k)
    if (l[k] > threshold * threshold * lmax && l[k] > 0)
      inv += eig.vectors.col(k) * eig.vectors.col(k).transpose() / l[k];
  return inv;
}

}  // namespace

const char* uncertainty_method_name(UncertaintyMethod m) {
  switch (m) {
    case UncertaintyMethod::kGaussNewton: return "gauss_newton";
    case UncertaintyMethod::kSandwich: return "sandwich";
    case UncertaintyMethod::kBootstrap: return "bootstrap";
  }
  return "?";
}

const char* uncertainty_assumption(UncertaintyMethod m) {
  switch (m) {
    case UncertaintyMethod::kGaussNewton:
      return "holds when residuals are independent with equal variance and the model is right; too small under "
             "model mismatch or correlated residuals";
    case UncertaintyMethod::kSandwich:
      return "cluster-robust: holds for any variance and correlation within a cluster and for model mismatch, if "
             "clusters are independent and many (clusters >> parameters)";
    case UncertaintyMethod::kBootstrap:
      return "cluster bootstrap (one Gauss-Newton step per replicate): holds like the sandwich when clusters are "
             "independent and many (clusters >> parameters), linearized at the optimum";
  }
  return "?";
}

std::vector<int> clusters_from_sizes(const std::vector<int>& sizes) {
  std::vector<int> out;
  for (size_t g = 0; g < sizes.size(); ++g) out.insert(out.end(), std::max(0, sizes[g]), static_cast<int>(g));
  return out;
}

Eigen::MatrixXd profile_nuisance(const Eigen::MatrixXd& J_theta, const Eigen::SparseMatrix<double>& J_nuisance) {
  if (J_nuisance.rows() != J_theta.rows())
    throw InvalidArgument("profile_nuisance: " + std::to_string(J_nuisance.rows()) + " nuisance rows for a Jacobian of " +
                          std::to_string(J_theta.rows()) + " rows");
  const Eigen::Index N = J_nuisance.cols();
  if (N == 0) return J_theta;
  Eigen::SparseMatrix<double> A = Eigen::SparseMatrix<double>(J_nuisance.transpose()) * J_nuisance;
  // A nuisance no residual sees has a zero diagonal: shift it by the
  // largest diagonal's scale instead.
  double largest = 0;
  for (Eigen::Index k = 0; k < N; ++k) largest = std::max(largest, A.coeff(k, k));
  if (!(largest > 0)) return J_theta;
  for (Eigen::Index k = 0; k < N; ++k) A.coeffRef(k, k) += 1e-12 * std::max(A.coeff(k, k), largest * 1e-6);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(A);
  if (ldlt.info() != Eigen::Success)
    throw NumericalError("profile_nuisance: the nuisance states' normal matrix could not be factorized");
  const Eigen::MatrixXd B = J_nuisance.transpose() * J_theta;
  const Eigen::MatrixXd X = ldlt.solve(B);
  Eigen::MatrixXd profiled = J_theta - J_nuisance * X;
  // What is left of a column the nuisance columns reproduce is rounding:
  // exactly zero, so that the analysis reports the parameter as unseen
  // rather than equilibrating noise to a unit column.
  for (Eigen::Index c = 0; c < profiled.cols(); ++c)
    if (profiled.col(c).norm() <= 1e-8 * J_theta.col(c).norm()) profiled.col(c).setZero();
  return profiled;
}

int informative_rows(const Eigen::MatrixXd& J, const Eigen::VectorXd& r) {
  int n = 0;
  for (Eigen::Index i = 0; i < J.rows(); ++i) n += r[i] != 0 || !J.row(i).isZero(0) ? 1 : 0;
  return n;
}

CovarianceEstimate estimate_covariance(const Eigen::MatrixXd& J, const Eigen::VectorXd& r,
                                       const std::vector<int>& cluster, const CovarianceOptions& options) {
  const int m = static_cast<int>(J.rows()), P = static_cast<int>(J.cols());
  if (r.size() != m)
    throw InvalidArgument("estimate_covariance: " + std::to_string(r.size()) + " residuals for a Jacobian of " +
                          std::to_string(m) + " rows");
  CovarianceEstimate e;
  e.method = options.method;
  const Eigen::MatrixXd Ainv = pseudo_inverse_normal(J, options.singular_threshold);
  if (options.method == UncertaintyMethod::kGaussNewton) {
    const int dof = informative_rows(J, r) - P - std::max(0, options.nuisance);
    const double s2 = dof > 0 ? r.squaredNorm() / dof : kNaN;
    e.covariance = s2 * Ainv;
  } else {
    if (static_cast<int>(cluster.size()) != m)
      throw InvalidArgument("estimate_covariance: " + std::to_string(cluster.size()) + " cluster ids for " +
                            std::to_string(m) + " residuals");
    int G = 0;
    for (int c : cluster) {
      if (c < 0) throw InvalidArgument("estimate_covariance: negative cluster id");
      G = std::max(G, c + 1);
    }
    e.clusters = G;
    // Per-cluster score s_g = J_gᵀ r_g and, for the bootstrap, H_g = J_gᵀ J_g.
    Eigen::MatrixXd score = Eigen::MatrixXd::Zero(P, G);
    std::vector<Eigen::MatrixXd> H;
    if (options.method == UncertaintyMethod::kBootstrap) H.assign(G, Eigen::MatrixXd::Zero(P, P));
    for (int i = 0; i < m; ++i) {
      score.col(cluster[i]) += J.row(i).transpose() * r[i];
      if (!H.empty()) H[cluster[i]].noalias() += J.row(i).transpose() * J.row(i);
    }
    if (G < 2) {
      e.covariance = Eigen::MatrixXd::Constant(P, P, kNaN);
    } else if (options.method == UncertaintyMethod::kSandwich) {
      const Eigen::MatrixXd B = score * score.transpose();
      e.covariance = Ainv * B * Ainv * (static_cast<double>(G) / (G - 1));
    } else {
      const int nb = options.bootstrap_samples;
      if (nb < 2) throw InvalidArgument("estimate_covariance: the bootstrap needs at least 2 samples");
      Eigen::MatrixXd delta(P, nb);
      tbb::parallel_for(0, nb, [&](int b) {
        uint64_t state = options.seed * 0xD1B54A32D192ED03ull + static_cast<uint64_t>(b);
        next_splitmix64(state);
        Eigen::VectorXi count = Eigen::VectorXi::Zero(G);
        for (int k = 0; k < G; ++k) {
          const uint64_t u = next_splitmix64(state);
          ++count[static_cast<int>((static_cast<unsigned __int128>(u) * static_cast<uint64_t>(G)) >> 64)];
        }
        Eigen::MatrixXd Hb = Eigen::MatrixXd::Zero(P, P);
        Eigen::VectorXd sb = Eigen::VectorXd::Zero(P);
        for (int g = 0; g < G; ++g)
          if (count[g]) {
            Hb += count[g] * H[g];
            sb += count[g] * score.col(g);
          }
        delta.col(b) = -pseudo_inverse_spd(Hb, options.singular_threshold) * sb;
      });
      const Eigen::VectorXd mean = delta.rowwise().mean();
      const Eigen::MatrixXd centred = delta.colwise() - mean;
      e.covariance = centred * centred.transpose() / (nb - 1);
      e.bootstrap_samples = nb;
    }
  }
  e.std_error = e.covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  for (int i = 0; i < P; ++i)
    if (std::isnan(e.covariance(i, i))) e.std_error[i] = kNaN;
  return e;
}

}  // namespace neuralsim
