#include "neuralsim/estimate/residuals.hpp"

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/rollout/experiment.hpp"

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
  std::shared_ptr<ContactSystem<double>> contact;
  if (ctx.contact) {
    contact = install_contact(*ctx.contact, model, stepper);
    ctx.parameters->apply_contact(x.data(), contact->parameters());
  }
  Trajectory out;
  out.name = data.name;
  out.time = data.time;
  out.q.resize(data.size(), model.nq);
  out.qd.resize(data.size(), model.nv);
  if (data.has_tau()) out.tau = data.tau;
  Eigen::VectorXd q, qd, u = Eigen::VectorXd::Zero(model.nv);
  for (Eigen::Index k = 0; k < data.size(); ++k) {
    if (k % window == 0) {
      q = data.q.row(k).transpose();
      qd = data.qd.row(k).transpose();
      if (k == 0) ctx.parameters->apply_initial_velocity(x.data(), qd);
      normalize_configuration(model, q);
    }
    out.q.row(k) = q.transpose();
    out.qd.row(k) = qd.transpose();
    if (k + 1 == data.size()) break;
    if (data.has_tau()) u = data.tau.row(k).transpose();
    stepper.step(q, qd, u, data.time[k], data.time[k + 1] - data.time[k]);
  }
  std::vector<std::string> links;
  for (const auto& [name, pose] : data.link_poses)
    if (model.body_index(name) >= 0 || model.frame_index(name) >= 0) links.push_back(name);
  record_link_poses(model, resolve_links(model, links, "data link_poses"), out);
  return out;
}

}  // namespace neuralsim
