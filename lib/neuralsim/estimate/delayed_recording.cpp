#include "neuralsim/estimate/delayed_recording.hpp"

#include <algorithm>
#include <string>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

FitDelays delays_at(const ResidualContext& ctx, const std::vector<double>& x) {
  FitDelays d;
  d.controls = ctx.step.controls.delay;
  d.q = ctx.observe.q_delay;
  d.qd = ctx.observe.qd_delay;
  const ParameterSet& ps = *ctx.parameters;
  if (x.size() != static_cast<size_t>(ps.size()))
    throw InvalidArgument("delays_at: " + std::to_string(x.size()) + " values for " + std::to_string(ps.size()) +
                          " parameters");
  for (int i = 0; i < ps.size(); ++i) {
    const double value = ps.physical<double>(i, x[static_cast<size_t>(i)]);
    if (ps[i].kind() == ParameterKind::kControlDelay) d.controls = value;
    if (ps[i].kind() == ParameterKind::kSensorDelay) (ps[i].target.channel == 0 ? d.q : d.qd) = value;
  }
  return d;
}

namespace {
RowMatrixXd rows(const RowMatrixXd& m, Eigen::Index first, Eigen::Index count) {
  return m.rows() == 0 ? m : RowMatrixXd(m.middleRows(first, count));
}
}  // namespace

Trajectory shift_velocity(const Trajectory& tr, double shift) {
  if (shift == 0) return tr;
  const Eigen::Index n = tr.size();
  const Eigen::VectorXd& t = tr.time;
  // Samples whose t_k + shift lies within [t_0, t_{n-1}] (a tolerance of
  // 1e-9 of the span, so that a shift of whole sample intervals keeps them).
  const double tol = n > 1 ? 1e-9 * (t[n - 1] - t[0]) : 0.0;
  Eigen::Index first = 0, last = n - 1;
  while (first < n && t[first] + shift < t[0] - tol) ++first;
  while (last >= first && t[last] + shift > t[n - 1] + tol) --last;
  if (last < first)
    throw InvalidArgument("shift_velocity: '" + tr.name + "' has no sample left after a velocity shift of " +
                          std::to_string(shift) + " s");
  const Eigen::Index count = last - first + 1;
  Trajectory out;
  out.name = tr.name;
  out.time = t.segment(first, count);
  out.q = rows(tr.q, first, count);
  out.tau = rows(tr.tau, first, count);
  out.tau_measured = rows(tr.tau_measured, first, count);
  out.current = rows(tr.current, first, count);
  for (const auto& [name, m] : tr.link_poses) out.link_poses[name] = rows(m, first, count);
  for (const auto& [name, m] : tr.imus) out.imus[name] = rows(m, first, count);
  out.qd.resize(count, tr.qd.cols());
  for (Eigen::Index k = 0; k < count; ++k) {
    const double s = std::clamp(t[first + k] + shift, t[0], t[n - 1]);
    // Interval [t_j, t_{j+1}] holding s.
    const Eigen::Index j =
        std::clamp<Eigen::Index>(static_cast<Eigen::Index>(std::upper_bound(t.data(), t.data() + n, s) - t.data()) - 1,
                                 0, std::max<Eigen::Index>(0, n - 2));
    if (n == 1) {
      out.qd.row(k) = tr.qd.row(0);
      continue;
    }
    const double w = std::clamp((s - t[j]) / (t[j + 1] - t[j]), 0.0, 1.0);
    out.qd.row(k) = (1 - w) * tr.qd.row(j) + w * tr.qd.row(j + 1);
  }
  return out;
}

RowMatrixXd controls_at_samples(const Trajectory& tr, const ControlSignal& signal, double delay) {
  if (delay == 0 || !tr.has_tau()) return tr.tau;
  RowMatrixXd u(tr.tau.rows(), tr.tau.cols());
  Eigen::VectorXd row(tr.tau.cols());
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    apply_control_stencil(delayed_control_stencil(signal, tr.time, tr.time[k], tr.time[k], delay), tr.tau, row);
    u.row(k) = row.transpose();
  }
  return u;
}

}  // namespace neuralsim
