#include "neuralsim/estimate/residuals.hpp"

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/link_poses.hpp"
#include "neuralsim/step/replay.hpp"

namespace neuralsim {

InverseDynamicsSamples prepare_inverse_dynamics(const Trajectory& tr, int filter_window, int stride) {
  const int T = static_cast<int>(tr.size());
  const int half = std::max(0, filter_window / 2);
  const int nv = static_cast<int>(tr.qd.cols());
  // Centred moving average (a zero-phase low-pass: no lag between q and τ).
  auto smooth = [&](const RowMatrixXd& x) {
    Eigen::MatrixXd out = x;
    for (int k = half; k < T - half; ++k) out.row(k) = x.middleRows(k - half, 2 * half + 1).colwise().mean();
    return out;
  };
  const Eigen::MatrixXd q = smooth(tr.q), qd = smooth(tr.qd);
  std::vector<int> rows;
  for (int k = half + 1; k < T - half - 1; k += std::max(1, stride)) rows.push_back(k);
  InverseDynamicsSamples s;
  const int n = static_cast<int>(rows.size());
  s.q.resize(n, q.cols());
  s.qd.resize(n, nv);
  s.qdd.resize(n, nv);
  s.tau.resize(n, nv);
  for (int i = 0; i < n; ++i) {
    const int k = rows[i];
    s.q.row(i) = q.row(k);
    s.qd.row(i) = qd.row(k);
    // Central difference on non-uniform samples (second-order accurate).
    const double h0 = tr.time[k] - tr.time[k - 1], h1 = tr.time[k + 1] - tr.time[k];
    s.qdd.row(i) = (h0 * h0 * (qd.row(k + 1) - qd.row(k)) + h1 * h1 * (qd.row(k) - qd.row(k - 1))) /
                   (h0 * h1 * (h0 + h1));
    s.tau.row(i) = tr.has_tau() ? Eigen::RowVectorXd(tr.tau.row(k)) : Eigen::RowVectorXd::Zero(nv);
  }
  return s;
}

Trajectory windowed_prediction(const ResidualContext& ctx, const std::vector<double>& x, const Trajectory& data,
                               int window) {
  Model<double> model = *ctx.model;
  ctx.parameters->apply(x.data(), model);
  Stepper<double> stepper(model, ctx.step);
  if (ctx.contact) {
    const std::shared_ptr<ContactSystem<double>> contact = install_contact(*ctx.contact, *ctx.model, stepper);
    ctx.parameters->apply_contact(x.data(), contact->parameters());
  }
  Eigen::VectorXd qd0 = data.qd.row(0).transpose();
  ctx.parameters->apply_initial_velocity(x.data(), qd0);
  Trajectory out = predict_recording(stepper, data, window, &qd0);
  std::vector<LinkRef> links;
  for (const auto& [name, pose] : data.link_poses)
    if (const auto link = find_link(model, name)) links.push_back(*link);
  record_link_poses(model, links, out);
  return out;
}

}  // namespace neuralsim
