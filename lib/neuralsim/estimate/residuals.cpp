#include "neuralsim/estimate/residuals.hpp"

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/estimate/residual_common.hpp"
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
  Trajectory out = predict_recording(stepper, data, window, &qd0, starts);
  std::vector<LinkRef> links;
  for (const auto& [name, pose] : data.link_poses)
    if (const auto link = find_link(model, name)) links.push_back(*link);
  record_link_poses(model, links, out);
  return out;
}

}  // namespace neuralsim
