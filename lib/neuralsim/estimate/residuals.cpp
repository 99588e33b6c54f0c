#include "neuralsim/estimate/residuals.hpp"

#include <algorithm>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/estimate/residual_common.hpp"
#include "neuralsim/estimate/sensor_prediction.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/link_poses.hpp"
#include "neuralsim/step/replay.hpp"

namespace neuralsim {

InverseDynamicsSamples prepare_inverse_dynamics(const Trajectory& tr, const DerivativeOptions& derivatives,
                                                int stride) {
  const FilteredDerivatives f = filter_derivatives(tr, derivatives);
  const int nv = static_cast<int>(tr.qd.cols());
  // A missing sample (NaN) spreads over the filter's window: the samples
  // whose filtered q, q̇ or q̈ it reaches are dropped (docs/simid.md, gaps).
  auto complete = [&](int i) {
    return f.q.row(i).allFinite() && f.qd.row(i).allFinite() && f.qdd.row(i).allFinite();
  };
  std::vector<int> keep;
  for (int i = 0; i < static_cast<int>(f.rows.size()); i += std::max(1, stride))
    if (complete(i)) keep.push_back(i);
  InverseDynamicsSamples s;
  s.trajectory = &tr;
  const int n = static_cast<int>(keep.size());
  s.q.resize(n, tr.q.cols());
  s.qd.resize(n, nv);
  s.qdd.resize(n, nv);
  s.tau.resize(n, nv);
  s.rows.resize(n);
  for (int i = 0; i < n; ++i) {
    s.rows[i] = f.rows[keep[i]];
    s.q.row(i) = f.q.row(keep[i]);
    s.qd.row(i) = f.qd.row(keep[i]);
    s.qdd.row(i) = f.qdd.row(keep[i]);
    s.tau.row(i) = tr.has_tau() ? Eigen::RowVectorXd(f.tau.row(keep[i])) : Eigen::RowVectorXd::Zero(nv);
  }
  return s;
}

InverseDynamicsSamples prepare_inverse_dynamics(const Trajectory& tr, int filter_window, int stride) {
  DerivativeOptions d;
  d.method = DerivativeMethod::kCentralDifference;
  d.window = std::max(1, filter_window);
  return prepare_inverse_dynamics(tr, d, stride);
}

StepOptions step_options_at(const ResidualContext& ctx, const std::vector<double>& x) {
  StepOptions step = ctx.step;
  if (const int i = ctx.parameters->find(ParameterKind::kControlDelay); i >= 0)
    step.controls.delay = ctx.parameters->physical<double>(i, x[static_cast<size_t>(i)]);
  return step;
}

void start_state(const Model<double>& model, const Trajectory& tr, int sample, const StartStateFit& fit,
                 const double* block, Eigen::VectorXd& q, Eigen::VectorXd& qd) {
  q = tr.q.row(sample).transpose();
  qd = tr.qd.row(sample).transpose();
  residual_internal::apply_start_block(model, fit, block, q, qd);
  normalize_configuration(model, q);
}

Trajectory windowed_prediction(const ResidualContext& ctx, const std::vector<double>& x, const Trajectory& data,
                               int window, const StartStates* starts) {
  Model<double> model = *ctx.model;
  ctx.parameters->apply(x.data(), model);
  Stepper<double> stepper(model, step_options_at(ctx, x));
  if (ctx.contact) {
    const std::shared_ptr<ContactSystem<double>> contact = install_contact(*ctx.contact, *ctx.model, stepper);
    ctx.parameters->apply_contact(x.data(), contact->parameters());
  }
  Eigen::VectorXd qd0 = data.qd.row(0).transpose();
  ctx.parameters->apply_initial_velocity(x.data(), qd0);
  // Sensor delays: each window's joint channels read at t_k − d, as the
  // residuals read them, once the window is simulated (a lead reads later
  // samples); what they mask, the recording.
  const bool delayed =
      ctx.observe.q_delay != 0 || ctx.observe.qd_delay != 0 || ctx.parameters->has(ParameterKind::kSensorDelay);
  RowMatrixXd seen_q = data.q, seen_qd = data.qd;
  const auto readout = [&](long long start, long long length, const Trajectory& simulated) {
    const int first = static_cast<int>(start), last = static_cast<int>(start + length);
    if (last == first) return;  // the recording's last sample alone: masked
    residual_internal::SensorDelays<double> sensors(ctx, x.data(), model, data, first, last - first);
    for (int k = first; k <= last; ++k)
      sensors.record(k, simulated.q.row(k).transpose(), simulated.qd.row(k).transpose());
    for (int k = first; k <= last; ++k) {
      const residual_internal::DelayedJointChannels<double> seen = sensors.observe(k);
      if (seen.q) seen_q.row(k) = seen.q->transpose();
      if (seen.qd) seen_qd.row(k) = seen.qd->transpose();
    }
  };
  Trajectory out = predict_recording(stepper, data, window, &qd0, starts, delayed ? readout : WindowCallback{});
  // The observed markers under their data names, then every other entry
  // of the data that names a link or frame (its origin).
  std::vector<LinkRef> links;
  std::vector<Eigen::Vector3d> points;
  for (const LinkPositionChannel& ch : ctx.observe.link_positions) {
    links.emplace_back(ch.data_name(), ch.body);
    points.push_back(ch.point);
  }
  for (const auto& [name, pose] : data.link_poses) {
    const auto link = find_link(model, name);
    const auto observed = [&name = name](const LinkRef& l) { return l.first == name; };
    if (!link || std::any_of(links.begin(), links.end(), observed)) continue;
    links.push_back(*link);
    points.push_back(Eigen::Vector3d::Zero());
  }
  record_link_poses(model, links, out, points);
  predict_sensors(ctx, x, data, out);
  if (delayed) {
    out.q = seen_q;
    out.qd = seen_qd;
  }
  return out;
}

}  // namespace neuralsim
