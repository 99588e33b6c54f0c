#include "neuralsim/core/derivative_filter.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <string>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

constexpr int kMaxOrder = 10;
constexpr int kMaxWindow = 100001;

// Centred moving average of 2·half + 1 samples (zero phase); the `half`
// samples at each end are left as recorded.
Eigen::MatrixXd moving_average(const RowMatrixXd& x, int half) {
  const int T = static_cast<int>(x.rows());
  Eigen::MatrixXd out = x;
  for (int k = half; k < T - half; ++k) out.row(k) = x.middleRows(k - half, 2 * half + 1).colwise().mean();
  return out;
}

FilteredDerivatives central_difference(const Trajectory& tr, const DerivativeOptions& o) {
  const int T = static_cast<int>(tr.size());
  const int half = std::max(0, o.window / 2);
  const Eigen::MatrixXd q = moving_average(tr.q, half), qd = moving_average(tr.qd, half);
  Eigen::MatrixXd tau;
  if (tr.has_tau()) tau = o.filter_torque ? moving_average(tr.tau, half) : Eigen::MatrixXd(tr.tau);
  FilteredDerivatives f;
  for (int k = half + 1; k < T - half - 1; ++k) f.rows.push_back(k);
  const int n = static_cast<int>(f.rows.size());
  f.q.resize(n, q.cols());
  f.qd.resize(n, qd.cols());
  f.qdd.resize(n, qd.cols());
  if (tr.has_tau()) f.tau.resize(n, tau.cols());
  for (int i = 0; i < n; ++i) {
    const int k = f.rows[i];
    f.q.row(i) = q.row(k);
    f.qd.row(i) = qd.row(k);
    // Central difference on non-uniform samples (second-order accurate).
    const double h0 = tr.time[k] - tr.time[k - 1], h1 = tr.time[k + 1] - tr.time[k];
    f.qdd.row(i) = (h0 * h0 * (qd.row(k + 1) - qd.row(k)) + h1 * h1 * (qd.row(k) - qd.row(k - 1))) /
                   (h0 * h1 * (h0 + h1));
    if (tr.has_tau()) f.tau.row(i) = tau.row(k);
  }
  return f;
}

FilteredDerivatives savitzky_golay_positions(const Trajectory& tr, const DerivativeOptions& o) {
  if (tr.q.cols() != tr.qd.cols())
    throw InvalidArgument("savitzky_golay differentiates positions, but trajectory '" + tr.name + "' has " +
                          std::to_string(tr.q.cols()) + " position and " + std::to_string(tr.qd.cols()) +
                          " velocity coordinates (quaternion joints): use central_difference");
  const int T = static_cast<int>(tr.size());
  const int half = o.window / 2;
  FilteredDerivatives f;
  if (T < o.window) {
    f.q.resize(0, tr.q.cols());
    f.qd.resize(0, tr.qd.cols());
    f.qdd.resize(0, tr.qd.cols());
    return f;
  }
  for (int k = half; k < T - half; ++k) f.rows.push_back(k);
  savitzky_golay(tr.time, tr.q, o.window, o.order, &f.q, &f.qd, &f.qdd);
  if (tr.has_tau()) {
    if (o.filter_torque) {
      savitzky_golay(tr.time, tr.tau, o.window, o.order, &f.tau, nullptr, nullptr);
    } else {
      f.tau = tr.tau.middleRows(half, T - 2 * half);
    }
  }
  return f;
}

}  // namespace

const char* derivative_method_name(DerivativeMethod m) {
  return m == DerivativeMethod::kSavitzkyGolay ? "savitzky_golay" : "central_difference";
}

void check_derivative_options(const DerivativeOptions& o) {
  if (o.window < 1 || o.window > kMaxWindow)
    throw InvalidArgument("window must be in [1, " + std::to_string(kMaxWindow) + "] samples, got " +
                          std::to_string(o.window));
  if (o.method == DerivativeMethod::kCentralDifference) return;
  if (o.order < 2 || o.order > kMaxOrder)
    throw InvalidArgument("order must be in [2, " + std::to_string(kMaxOrder) + "] (q̈ needs at least a quadratic), got " +
                          std::to_string(o.order));
  if (o.window % 2 == 0)
    throw InvalidArgument("window must be odd (a fit centred on each sample), got " + std::to_string(o.window));
  if (o.window < o.order + 1)
    throw InvalidArgument("window " + std::to_string(o.window) + " has fewer samples than a polynomial of order " +
                          std::to_string(o.order) + " has coefficients (" + std::to_string(o.order + 1) + ")");
}

int derivative_margin(const DerivativeOptions& o) {
  return o.method == DerivativeMethod::kSavitzkyGolay ? o.window / 2 : std::max(0, o.window / 2) + 1;
}

FilteredDerivatives filter_derivatives(const Trajectory& tr, const DerivativeOptions& o) {
  check_derivative_options(o);
  return o.method == DerivativeMethod::kSavitzkyGolay ? savitzky_golay_positions(tr, o) : central_difference(tr, o);
}

void savitzky_golay(const Eigen::VectorXd& time, const RowMatrixXd& x, int window, int order, Eigen::MatrixXd* value,
                    Eigen::MatrixXd* d1, Eigen::MatrixXd* d2) {
  if (window < 1 || window % 2 == 0 || order < 1 || order >= window || order > kMaxOrder)
    throw InvalidArgument("savitzky_golay: needs an odd window > order and order in [1, 10], got window " +
                          std::to_string(window) + ", order " + std::to_string(order));
  if (time.size() != x.rows())
    throw InvalidArgument("savitzky_golay: " + std::to_string(time.size()) + " time stamps for " +
                          std::to_string(x.rows()) + " samples");
  const int T = static_cast<int>(x.rows()), n = static_cast<int>(x.cols());
  const int half = window / 2;
  const int rows = std::max(0, T - 2 * half);
  if (value) value->resize(rows, n);
  if (d1) d1->resize(rows, n);
  if (d2) d2->resize(rows, n);
  // Sized once: the fit at every sample reuses the same workspace.
  Eigen::MatrixXd V(window, order + 1), C(order + 1, n);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(window, order + 1);
  for (int i = 0; i < rows; ++i) {
    const int k = i + half;
    // Time scaled to [-1, 1] over the window keeps the Vandermonde matrix
    // well conditioned whatever the units and the sampling rate.
    const double scale = std::max(time[k + half] - time[k], time[k] - time[k - half]);
    if (!(scale > 0)) throw InvalidArgument("savitzky_golay: time stamps must increase");
    for (int j = 0; j < window; ++j) {
      const double s = (time[k - half + j] - time[k]) / scale;
      double p = 1;
      for (int c = 0; c <= order; ++c, p *= s) V(j, c) = p;
    }
    qr.compute(V);
    C.noalias() = qr.solve(x.middleRows(k - half, window));
    // p(s) = Σ c_j s^j with s = (t − t_k)/scale: p(0) = c0, dp/dt = c1/scale,
    // d²p/dt² = 2·c2/scale².
    if (value) value->row(i) = C.row(0);
    if (d1) d1->row(i) = C.row(1) / scale;
    if (d2) d2->row(i) = order >= 2 ? Eigen::RowVectorXd(2.0 * C.row(2) / (scale * scale))
                                    : Eigen::RowVectorXd::Zero(n);
  }
}

}  // namespace neuralsim
