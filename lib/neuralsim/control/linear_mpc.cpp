// Linear MPC, condensed onto QpSolver; see linear_mpc.hpp.
#include "neuralsim/control/linear_mpc.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace linear_mpc_detail {

void lm_require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("LinearMpcParameters: " + what);
}

std::string lm_shape(const Eigen::MatrixXd& m) {
  return std::to_string(m.rows()) + " x " + std::to_string(m.cols());
}

void lm_check_limits(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, Eigen::Index n, const char* name) {
  const std::string l = std::string(name) + "_min", h = std::string(name) + "_max";
  lm_require(lo.size() == hi.size(), l + " and " + h + " must both be given or both be empty");
  if (lo.size() == 0) return;
  lm_require(lo.size() == n, l + " must have " + std::to_string(n) + " entries, got " + std::to_string(lo.size()));
  for (Eigen::Index i = 0; i < n; ++i) {
    lm_require(!std::isnan(lo[i]) && !std::isnan(hi[i]) && lo[i] < std::numeric_limits<double>::infinity() &&
                   hi[i] > -std::numeric_limits<double>::infinity(),
               l + "/" + h + " entry " + std::to_string(i) + " is NaN or infinite on the wrong side");
    lm_require(lo[i] <= hi[i], "infeasible: " + l + "[" + std::to_string(i) + "] = " + std::to_string(lo[i]) + " > " +
                                   h + "[" + std::to_string(i) + "] = " + std::to_string(hi[i]));
  }
}

}  // namespace linear_mpc_detail

void LinearMpcParameters::check() const {
  using namespace linear_mpc_detail;
  const Eigen::Index n = A.rows(), m = B.cols();
  lm_require(n >= 1 && A.cols() == n, "A must be square and non-empty, got " + lm_shape(A));
  lm_require(m >= 1 && B.rows() == n, "B must be " + std::to_string(n) + " x m (m >= 1), got " + lm_shape(B));
  lm_require(Q.rows() == n && Q.cols() == n, "Q must be " + std::to_string(n) + " x " + std::to_string(n) + ", got " + lm_shape(Q));
  lm_require(R.rows() == m && R.cols() == m, "R must be " + std::to_string(m) + " x " + std::to_string(m) + ", got " + lm_shape(R));
  lm_require(P.size() == 0 || (P.rows() == n && P.cols() == n), "P must be empty or " + std::to_string(n) + " x " +
                                                                     std::to_string(n) + ", got " + lm_shape(P));
  lm_require(A.allFinite() && B.allFinite() && Q.allFinite() && R.allFinite() && P.allFinite(),
             "A, B, Q, R and P must be finite");
  lm_require(horizon >= 1 && horizon <= 10000, "horizon must be in [1, 10000], got " + std::to_string(horizon));
  lm_require((Q - Q.transpose()).norm() <= 1e-12 * (1 + Q.norm()), "Q must be symmetric");
  lm_require((R - R.transpose()).norm() <= 1e-12 * (1 + R.norm()), "R must be symmetric");
  const SymmetricEigen rq = symmetric_eigen(Q, false), rr = symmetric_eigen(R, false);
  lm_require(rq.values.minCoeff() >= -1e-12 * (1 + Q.norm()), "Q must be positive semidefinite");
  lm_require(rr.values.minCoeff() > 0, "R must be positive definite");
  lm_check_limits(u_min, u_max, m, "u");
  lm_check_limits(x_min, x_max, n, "x");
}

Eigen::MatrixXd solve_dare(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& Q,
                           const Eigen::MatrixXd& R, double tolerance, int max_iterations) {
  Eigen::MatrixXd P = Q;
  for (int it = 0; it < max_iterations; ++it) {
    const Eigen::MatrixXd S = R + B.transpose() * P * B;
    const Eigen::MatrixXd K = S.ldlt().solve(B.transpose() * P * A);
    Eigen::MatrixXd Pn = Q + A.transpose() * P * (A - B * K);
    Pn = 0.5 * (Pn + Pn.transpose()).eval();
    if (!Pn.allFinite()) break;
    const double change = (Pn - P).norm();
    P = Pn;
    if (change <= tolerance * (1 + P.norm())) return P;
  }
  throw NumericalError("solve_dare: the Riccati iteration did not converge (is (A, B) stabilizable?)");
}

Eigen::MatrixXd lqr_gain(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& R,
                         const Eigen::MatrixXd& P) {
  return (R + B.transpose() * P * B).ldlt().solve(B.transpose() * P * A);
}

void double_integrator(double h, double mass, Eigen::MatrixXd* A, Eigen::MatrixXd* B) {
  if (!(h > 0) || !(mass > 0) || !std::isfinite(h) || !std::isfinite(mass))
    throw InvalidArgument("double_integrator: h and mass must be finite and > 0");
  A->resize(2, 2);
  *A << 1, h, 0, 1;
  B->resize(2, 1);
  *B << h * h / mass, h / mass;
}

LinearMpc::LinearMpc(const LinearMpcParameters& parameters) : p_(parameters) {
  p_.check();
  const Eigen::Index n = p_.A.rows(), m = p_.B.cols(), N = p_.horizon;
  P_ = p_.P.size() ? p_.P : solve_dare(p_.A, p_.B, p_.Q, p_.R);
  // Φ (nN × n), Γ (nN × mN): block row k (x_{k+1}) = A^{k+1} x0 + Σ_{j≤k} A^{k−j} B u_j.
  Phi_.resize(n * N, n);
  Gamma_ = Eigen::MatrixXd::Zero(n * N, m * N);
  Eigen::MatrixXd Ak = p_.A;  // A^{k+1}
  Eigen::MatrixXd AkB = p_.B;  // A^{k} B
  for (Eigen::Index k = 0; k < N; ++k) {
    Phi_.block(n * k, 0, n, n) = Ak;
    for (Eigen::Index j = 0; j + k < N; ++j) Gamma_.block(n * (j + k), m * j, n, m) = AkB;
    Ak = p_.A * Ak;
    AkB = p_.A * AkB;
  }
  Eigen::MatrixXd QG(n * N, m * N);  // Q̄ Γ
  for (Eigen::Index k = 0; k < N; ++k)
    QG.middleRows(n * k, n) = (k + 1 < N ? p_.Q : P_) * Gamma_.middleRows(n * k, n);
  Eigen::MatrixXd H = 2.0 * (Gamma_.transpose() * QG);
  for (Eigen::Index k = 0; k < N; ++k) H.block(m * k, m * k, m, m) += 2.0 * p_.R;
  H = 0.5 * (H + H.transpose()).eval();
  GtQbar_ = 2.0 * QG.transpose() * Phi_;
  has_rows_ = p_.x_min.size() > 0;
  qp_ = std::make_unique<QpSolver>(m * N, 0, has_rows_ ? n * N : 0);
  if (!qp_->update_hessian(H)) throw NumericalError("LinearMpc: the condensed Hessian is not positive definite");
  if (p_.u_min.size()) qp_->update_bounds(p_.u_min.replicate(N, 1), p_.u_max.replicate(N, 1));
  lo_.resize(has_rows_ ? n * N : 0);
  hi_.resize(has_rows_ ? n * N : 0);
  if (has_rows_) {
    qp_->update_inequalities(Gamma_, p_.x_min.replicate(N, 1), p_.x_max.replicate(N, 1));
  }
  g_ = Eigen::VectorXd::Zero(m * N);
  U_ = Eigen::VectorXd::Zero(m * N);
}

QpStatus LinearMpc::solve(const Eigen::VectorXd& x0, bool warm_start) {
  if (x0.size() != p_.A.rows())
    throw InvalidArgument("LinearMpc::solve: x0 has " + std::to_string(x0.size()) + " entries, expected " +
                          std::to_string(p_.A.rows()));
  if (!x0.allFinite()) throw InvalidArgument("LinearMpc::solve: x0 is not finite");
  const Eigen::Index n = p_.A.rows(), N = p_.horizon;
  g_.noalias() = GtQbar_ * x0;
  if (has_rows_) {
    for (Eigen::Index k = 0; k < N; ++k) {
      lo_.segment(n * k, n) = p_.x_min;
      hi_.segment(n * k, n) = p_.x_max;
    }
    lo_.noalias() -= Phi_ * x0;
    hi_.noalias() -= Phi_ * x0;
  }
  qp_->update_vectors(g_, empty_, lo_, hi_);
  const QpStatus s = (warm_start && solved_) ? qp_->solve(qp_->result().active_set) : qp_->solve();
  if (s == QpStatus::kOptimal) {
    U_ = qp_->result().x;
    solved_ = true;
  }
  return s;
}

}  // namespace neuralsim
