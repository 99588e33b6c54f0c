#include "neuralsim/experiment/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/delayed_recording.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/replay.hpp"

namespace neuralsim {

namespace {

// PredictionError's task-space part: squared position errors per sample,
// summed over the observed links.
void position_error(const Trajectory& recorded, const Trajectory& predicted, const std::vector<long long>& horizons,
                    PredictionError& e) {
  const Eigen::Index T = recorded.size();
  std::vector<double> sq(static_cast<size_t>(T), 0.0);
  std::vector<long long> count(static_cast<size_t>(T), 0);
  for (const auto& [link, observed] : recorded.link_poses) {
    const auto p = predicted.link_poses.find(link);
    if (p == predicted.link_poses.end() || p->second.rows() != T || observed.rows() != T) continue;
    e.position_links.push_back(link);
    for (Eigen::Index k = 0; k < T; ++k) {
      if (observed.row(k).head<3>().hasNaN()) continue;  // a missing sample
      sq[static_cast<size_t>(k)] += (observed.row(k).head<3>() - p->second.row(k).head<3>()).squaredNorm();
      ++count[static_cast<size_t>(k)];
    }
  }
  if (e.position_links.empty()) return;
  const auto rmse = [&](Eigen::Index n_samples, long long* pairs) {
    double s = 0;
    long long n = 0;
    for (Eigen::Index k = 0; k < n_samples; ++k) {
      s += sq[static_cast<size_t>(k)];
      n += count[static_cast<size_t>(k)];
    }
    if (pairs) *pairs = n;
    return n > 0 ? std::sqrt(s / (3.0 * static_cast<double>(n))) : std::numeric_limits<double>::quiet_NaN();
  };
  e.rmse_position = rmse(T, &e.position_samples);
  for (long long h : horizons)
    e.rmse_position_by_horizon.emplace_back(h, h > T ? std::numeric_limits<double>::quiet_NaN() : rmse(h, nullptr));
}

// The root mean square of the non-NaN values (NaN when there are none).
double root_mean_square(const std::vector<double>& values) {
  double sum = 0;
  int count = 0;
  for (double v : values)
    if (!std::isnan(v)) {
      sum += v * v;
      ++count;
    }
  return count > 0 ? std::sqrt(sum / count) : std::numeric_limits<double>::quiet_NaN();
}

// Adds the squared errors of the entries the recording holds (a NaN is a
// missing sample, docs/data-format.md) and counts them: a joint's position
// error when all its coordinates are present, each velocity on its own.
void add_present_errors(const Model<double>& model, const Eigen::VectorXd& recorded_q, const Eigen::VectorXd& dq,
                        const Eigen::VectorXd& recorded_qd, const Eigen::VectorXd& dqd, double& sum_q, double& sum_qd,
                        long long& n_q, long long& n_qd) {
  for (const Joint<double>& j : model.joints) {
    if (recorded_q.segment(j.idx_q, j.nq).hasNaN()) continue;
    sum_q += dq.segment(j.idx_v, j.nv).squaredNorm();
    n_q += j.nv;
  }
  for (Eigen::Index i = 0; i < recorded_qd.size(); ++i) {
    if (std::isnan(recorded_qd[i])) continue;
    sum_qd += dqd[i] * dqd[i];
    ++n_qd;
  }
}

}  // namespace

PredictionError prediction_error(const Model<double>& model, const Trajectory& recorded, const Trajectory& predicted,
                                 const std::vector<long long>& horizons) {
  PredictionError e;
  e.name = recorded.name;
  const Eigen::Index T = recorded.size();
  // Missing samples of the recording (NaN) are left out of every sum.
  std::vector<double> sq_q(T, 0.0);
  std::vector<long long> n_q(T, 0);
  Eigen::VectorXd dq(model.nv), rq, rqd;
  double sum_q = 0, sum_qd = 0;
  long long count_q = 0, count_qd = 0;
  for (Eigen::Index k = 0; k < T; ++k) {
    rq = recorded.q.row(k).transpose();
    rqd = recorded.qd.row(k).transpose();
    difference_configuration(model, rq, Eigen::VectorXd(predicted.q.row(k).transpose()), dq);
    double sq_qd = 0;
    long long n_qd = 0;
    add_present_errors(model, rq, dq, rqd, Eigen::VectorXd(predicted.qd.row(k).transpose() - rqd), sq_q[k], sq_qd,
                       n_q[k], n_qd);
    sum_q += sq_q[k];
    count_q += n_q[k];
    sum_qd += sq_qd;
    count_qd += n_qd;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  e.rmse_q = count_q > 0 ? std::sqrt(sum_q / static_cast<double>(count_q)) : nan;
  e.rmse_qd = count_qd > 0 ? std::sqrt(sum_qd / static_cast<double>(count_qd)) : nan;
  e.samples = T;
  for (long long h : horizons) {
    if (h > T) {  // missing, under its own key: a renamed horizon would be compared with the wrong one
      e.rmse_q_by_horizon.emplace_back(h, nan);
      continue;
    }
    double s = 0;
    long long n = 0;
    for (long long k = 0; k < h; ++k) {
      s += sq_q[k];
      n += n_q[k];
    }
    e.rmse_q_by_horizon.emplace_back(h, n > 0 ? std::sqrt(s / static_cast<double>(n)) : nan);
  }
  position_error(recorded, predicted, horizons, e);
  return e;
}

PooledPredictionError pooled_prediction_error(const std::vector<PredictionError>& errors) {
  PooledPredictionError p;
  double sum_q = 0, sum_qd = 0;  // Σ T·rmse² = Σ over samples of |e|²/nv
  for (const PredictionError& e : errors) {
    sum_q += static_cast<double>(e.samples) * e.rmse_q * e.rmse_q;
    sum_qd += static_cast<double>(e.samples) * e.rmse_qd * e.rmse_qd;
    p.samples += e.samples;
  }
  p.rmse_q = p.samples > 0 ? std::sqrt(sum_q / static_cast<double>(p.samples)) : std::numeric_limits<double>::quiet_NaN();
  p.rmse_qd = p.samples > 0 ? std::sqrt(sum_qd / static_cast<double>(p.samples)) : std::numeric_limits<double>::quiet_NaN();
  if (errors.empty()) return p;
  // A horizon N: every trajectory long enough contributes its first N
  // samples, so the pool is the root mean square of their RMSEs.
  std::vector<double> values;
  for (std::size_t h = 0; h < errors.front().rmse_q_by_horizon.size(); ++h) {
    values.clear();
    for (const PredictionError& e : errors) values.push_back(e.rmse_q_by_horizon.at(h).second);
    p.rmse_q_by_horizon.emplace_back(errors.front().rmse_q_by_horizon[h].first, root_mean_square(values));
  }
  double sum_position = 0;
  long long position_samples = 0;
  for (const PredictionError& e : errors)
    if (e.position_samples > 0) {
      sum_position += static_cast<double>(e.position_samples) * e.rmse_position * e.rmse_position;
      position_samples += e.position_samples;
    }
  if (position_samples == 0) return p;
  p.rmse_position = std::sqrt(sum_position / static_cast<double>(position_samples));
  for (std::size_t h = 0; h < errors.front().rmse_q_by_horizon.size(); ++h) {
    values.clear();
    for (const PredictionError& e : errors)
      if (h < e.rmse_position_by_horizon.size()) values.push_back(e.rmse_position_by_horizon[h].second);
    p.rmse_position_by_horizon.emplace_back(errors.front().rmse_q_by_horizon[h].first, root_mean_square(values));
  }
  return p;
}

double link_position_rmse(const std::vector<std::string>& links, const Trajectory& recorded,
                          const Trajectory& predicted) {
  double s = 0;
  long long n = 0;
  for (const std::string& link : links) {
    // A validation or test recording need not hold every observed marker.
    const auto r = recorded.link_poses.find(link), p = predicted.link_poses.find(link);
    if (r == recorded.link_poses.end() || p == predicted.link_poses.end()) continue;
    for (Eigen::Index k = 1; k < recorded.size(); ++k) {
      if (r->second.row(k).head<3>().hasNaN()) continue;  // a missing sample
      s += (r->second.row(k).head<3>() - p->second.row(k).head<3>()).squaredNorm();
      n += 3;
    }
  }
  return n > 0 ? std::sqrt(s / n) : 0.0;
}

namespace {

// A stepper for `model` with the experiment's contact and augmentations
// installed (its hooks keep them alive). Not movable: hooks point into it.
struct ReplayStepper {
  ReplayStepper(const Model<double>& model, const StepOptions& options, const std::optional<ContactSettings>& contact,
                const std::vector<AugmentBlueprint>& augment)
      : stepper(model, options) {
    if (contact) contact_system = install_contact(*contact, model, stepper);
    if (!augment.empty()) networks = install_augmentation<double>(augment, model, stepper, contact_system.get());
  }
  ReplayStepper(const ReplayStepper&) = delete;
  ReplayStepper& operator=(const ReplayStepper&) = delete;
  Stepper<double> stepper;
  std::shared_ptr<ContactSystem<double>> contact_system;
  std::shared_ptr<AugmentedDynamics<double>> networks;
};

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void check_spec(const EvaluationWindows& spec) {
  if (!(std::isfinite(spec.every_s) && spec.every_s > 0))
    throw InvalidArgument("evaluation windows: 'every' must be finite and > 0 seconds");
  if (!(std::isfinite(spec.horizon_s) && spec.horizon_s > 0))
    throw InvalidArgument("evaluation windows: 'horizon' must be finite and > 0 seconds");
}

// The physical model's predictor: the one replay routine on `stepper`.
WindowPredictor replay_predictor(Stepper<double>& stepper) {
  return [&stepper](const Trajectory& recorded, int start, int length, Eigen::VectorXd& q, Eigen::VectorXd& qd,
                    const WindowSampleSink& on_sample) {
    return replay_window(stepper, recorded, start, length, q, qd, on_sample);
  };
}

}  // namespace

Trajectory replay_recording(const Model<double>& model, const StepOptions& options,
                            const std::optional<ContactSettings>& contact, const Trajectory& recorded,
                            const std::vector<AugmentBlueprint>& augment) {
  ReplayStepper r(model, options, contact, augment);
  return predict_recording(r.stepper, recorded, recorded.size());
}

Trajectory no_motion_prediction(const Trajectory& recorded) {
  Trajectory p;
  p.name = recorded.name;
  p.time = recorded.time;
  p.q = recorded.size() > 0 ? RowMatrixXd(recorded.q.row(0).replicate(recorded.size(), 1))
                            : RowMatrixXd(0, recorded.q.cols());
  p.qd = RowMatrixXd::Zero(recorded.size(), recorded.qd.cols());
  return p;
}

WindowSelection select_windows(const Eigen::VectorXd& time, const EvaluationWindows& spec) {
  check_spec(spec);
  WindowSelection sel;
  const Eigen::Index T = time.size();
  if (T == 0) return sel;
  const double duration = time[T - 1] - time[0];
  if (duration / spec.every_s > 1e8)
    throw InvalidArgument("evaluation windows: 'every' = " + std::to_string(spec.every_s) + " s gives more than 10^8 "
                          "windows on a recording of " + std::to_string(duration) + " s");
  const double tol = 1e-9 * (spec.every_s + spec.horizon_s);
  const double* t = time.data();
  for (long long k = 0;; ++k) {
    const double t0 = time[0] + static_cast<double>(k) * spec.every_s;  // k·T, not a running sum: no drift
    if (t0 > time[T - 1] + tol) break;
    const Eigen::Index start = std::lower_bound(t, t + T, t0 - tol) - t;
    if (start >= T) break;
    if (!sel.windows.empty() && sel.windows.back().start == start) {  // a gap longer than T: counted once
      ++sel.skipped;
      continue;
    }
    const double t_end = time[start] + spec.horizon_s;
    if (t_end > time[T - 1] + tol) {
      ++sel.skipped;
      continue;
    }
    const Eigen::Index end = (std::upper_bound(t, t + T, t_end + tol) - t) - 1;
    if (end <= start) {
      ++sel.skipped;
      continue;
    }
    sel.windows.push_back({start, end});
  }
  return sel;
}

std::vector<WindowError> window_errors(const Model<double>& model, const Trajectory& recorded,
                                       const WindowSelection& selection, const WindowPredictor& predict) {
  std::vector<WindowError> out;
  out.reserve(selection.windows.size());
  Eigen::VectorXd q, qd, dq(model.nv), qk(model.nq), qdk(model.nv);
  for (const SampleWindow& w : selection.windows) {
    bool finite_prediction = true;
    WindowError e;
    e.trajectory = recorded.name;
    e.samples = w;
    e.t0 = recorded.time[w.start];
    e.t1 = recorded.time[w.end];
    q = recorded.q.row(w.start).transpose();
    qd = recorded.qd.row(w.start).transpose();
    normalize_configuration(model, q);
    double sum_q = 0, sum_qd = 0;
    long long n_q = 0, n_qd = 0;
    bool finite = false;
    try {
      finite = predict(recorded, static_cast<int>(w.start), static_cast<int>(w.end - w.start), q, qd,
                       [&](int k, const Eigen::VectorXd& qp, const Eigen::VectorXd& qdp) {
                         qk = recorded.q.row(k).transpose();
                         difference_configuration(model, qk, qp, dq);
                         qdk = recorded.qd.row(k).transpose();
                         // a prediction that diverged stays non-finite: only the recording's gaps are skipped
                         finite_prediction = finite_prediction && qp.allFinite() && qdp.allFinite();
                         add_present_errors(model, qk, dq, qdk, Eigen::VectorXd(qdp - qdk), sum_q, sum_qd, n_q, n_qd);
                       });
    } catch (const NumericalError&) {
      finite = false;
    }
    if (finite && finite_prediction && std::isfinite(sum_q) && std::isfinite(sum_qd)) {
      e.rmse_q = n_q > 0 ? std::sqrt(sum_q / static_cast<double>(n_q)) : std::numeric_limits<double>::quiet_NaN();
      e.rmse_qd = n_qd > 0 ? std::sqrt(sum_qd / static_cast<double>(n_qd)) : std::numeric_limits<double>::quiet_NaN();
    } else {
      e.diverged = true;
      e.rmse_q = e.rmse_qd = std::numeric_limits<double>::infinity();
    }
    out.push_back(std::move(e));
  }
  return out;
}

WindowStatistics window_statistics(const std::vector<WindowError>& windows, long long skipped) {
  WindowStatistics s;
  s.count = static_cast<long long>(windows.size());
  s.skipped = skipped;
  std::vector<double> q, qd;
  for (const WindowError& w : windows) {
    q.push_back(w.rmse_q);
    qd.push_back(w.rmse_qd);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto mean = [&](const std::vector<double>& v) {
    if (v.empty()) return nan;
    double m = 0;
    for (double x : v) m += x;
    return m / static_cast<double>(v.size());
  };
  s.mean_rmse_q = mean(q);
  s.mean_rmse_qd = mean(qd);
  s.median_rmse_q = median(q);
  s.median_rmse_qd = median(qd);
  return s;
}

WindowedEvaluation evaluate_windows(const Model<double>& model, const StepOptions& options,
                                    const std::optional<ContactSettings>& contact, const TrajectorySet& data,
                                    const EvaluationWindows& spec, const std::vector<AugmentBlueprint>& augment) {
  check_spec(spec);
  ReplayStepper r(model, options, contact, augment);
  return evaluate_windows(model, data, spec, replay_predictor(r.stepper));
}

WindowedEvaluation evaluate_windows(const ResidualContext& ctx, const std::vector<double>& x,
                                    const TrajectorySet& data, const EvaluationWindows& spec,
                                    const TrajectoryDone& done) {
  check_spec(spec);
  // As windowed_prediction (estimate/residuals.cpp) applies θ, and with the
  // fit's delays (estimate/delayed_recording.hpp): in the angle channel's
  // clock the controls act d_u + d_q late and the model's q̇ is the
  // recorded one d_qd − d_q later. A fit with a delay is scored with it.
  Model<double> model = *ctx.model;
  ctx.parameters->apply(x.data(), model);
  const FitDelays delays = delays_at(ctx, x);
  StepOptions options = step_options_at(ctx, x);
  options.controls.delay = delays.controls + delays.q;
  Stepper<double> stepper(model, options);
  if (ctx.contact) {
    const std::shared_ptr<ContactSystem<double>> contact = install_contact(*ctx.contact, *ctx.model, stepper);
    ctx.parameters->apply_contact(x.data(), contact->parameters());
  }
  if (delays.qd == delays.q) return evaluate_windows(model, data, spec, replay_predictor(stepper), done);
  TrajectorySet shifted;
  shifted.meta = data.meta;
  for (const Trajectory& tr : data.trajectories)
    shifted.trajectories.push_back(shift_velocity(tr, delays.qd - delays.q));
  return evaluate_windows(model, shifted, spec, replay_predictor(stepper), done);
}

WindowedEvaluation evaluate_windows(const Model<double>& model, const TrajectorySet& data,
                                    const EvaluationWindows& spec, const WindowPredictor& predict,
                                    const TrajectoryDone& done) {
  check_spec(spec);
  WindowedEvaluation out;
  out.spec = spec;
  long long skipped = 0;
  for (const Trajectory& tr : data.trajectories) {
    const WindowSelection sel = select_windows(tr.time, spec);
    std::vector<WindowError> errors = window_errors(model, tr, sel, predict);
    out.per_trajectory.emplace_back(tr.name, window_statistics(errors, sel.skipped));
    skipped += sel.skipped;
    for (WindowError& e : errors) out.per_window.push_back(std::move(e));
    if (done) done(tr);
  }
  out.overall = window_statistics(out.per_window, skipped);
  return out;
}

std::optional<TorqueError> torque_error(const ResidualContext& ctx, const std::vector<double>& x,
                                        const TrajectorySet& data, int filter_window, std::string* note) {
  DerivativeOptions d;
  d.window = std::max(1, filter_window);
  return torque_error(ctx, x, data, d, note);
}

std::optional<TorqueError> torque_error(const ResidualContext& ctx, const std::vector<double>& x,
                                        const TrajectorySet& data, const DerivativeOptions& derivatives,
                                        std::string* note, const TrajectoryDone& done) {
  const Model<double>& model = *ctx.model;
  const int nv = model.nv;
  if (x.size() != static_cast<size_t>(ctx.parameters->size()))
    throw InvalidArgument("torque_error: " + std::to_string(x.size()) + " values for " +
                          std::to_string(ctx.parameters->size()) + " parameters");
  TorqueError out;
  out.names = model.velocity_names();
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(nv), r(nv);
  const double dummy = 0;  // Ceres wants a pointer even for an empty parameter block
  const double* blocks[1] = {x.empty() ? &dummy : x.data()};
  // The gears at these values (a gear ratio may be estimated): the model's
  // torque in the recording's units is τ_measured + e ⊘ gear.
  Model<double> valued = model;
  ctx.parameters->apply(x.data(), valued);
  Eigen::VectorXd gear(nv);
  for (const Joint<double>& j : valued.joints)
    for (int k = 0; k < j.nv; ++k) gear[j.idx_v + k] = j.dynamics.gear_ratio;
  // The torque residuals alone (no IMU rows: the metric is the torque), of
  // every coordinate and unweighted whatever the fit compared.
  const FitDelays delays = delays_at(ctx, x);
  ResidualContext torque_ctx = ctx;
  torque_ctx.observe.imus.clear();
  torque_ctx.observe.joint_torques = {};
  torque_ctx.observe.motor_currents = {};
  torque_ctx.observe.commanded_torques = {};
  for (const Trajectory& tr : data.trajectories) {
    if (!tr.has_tau()) {
      out.without_tau.push_back(tr.name);
      if (done) done(tr);
      continue;
    }
    // The fit's delays (estimate/delayed_recording.hpp): the state of sample
    // k from the angle channel (its q̇ column, where a filter reads it, read
    // d_qd − d_q later), and the torque that acted then, u(t_k − d_u − d_q).
    // Without delays the recording is read as it is (no copy).
    Trajectory delayed;
    if (delays.any()) {
      Trajectory acted = tr;
      acted.tau = controls_at_samples(tr, ctx.step.controls, delays.controls + delays.q);
      delayed = shift_velocity(acted, delays.qd - delays.q);
    }
    const Trajectory& seen = delays.any() ? delayed : tr;
    // The residual's own samples and cost function: the metric is that residual.
    const auto samples = std::make_shared<const InverseDynamicsSamples>(prepare_inverse_dynamics(seen, derivatives, 1));
    if (samples->q.rows() == 0) {
      out.too_short.push_back(tr.name);
      if (done) done(tr);
      continue;
    }
    Eigen::VectorXd traj_sum = Eigen::VectorXd::Zero(nv);
    const long long n = samples->q.rows();
    Trajectory predicted;
    predicted.name = tr.name;
    predicted.time.resize(n);
    predicted.q = samples->q;
    predicted.qd = samples->qd;
    predicted.tau.resize(n, nv);
    for (int row = 0; row < n; ++row) {
      const std::unique_ptr<ceres::CostFunction> cost(make_inverse_dynamics_cost(torque_ctx, samples, row, 1.0));
      if (!cost->Evaluate(blocks, r.data(), nullptr))
        throw NumericalError("torque_error: the inverse-dynamics residual failed on '" + tr.name + "' (sample " +
                             std::to_string(row) + " of the filtered samples)");
      traj_sum += r.cwiseAbs2();
      predicted.time[row] = seen.time[samples->rows[row]];
      predicted.tau.row(row) = samples->tau.row(row) + r.cwiseQuotient(gear).transpose();
    }
    out.model_torque.push_back(std::move(predicted));
    sum += traj_sum;
    out.samples += n;
    TorqueError::PerTrajectory per;
    per.name = tr.name;
    per.samples = n;
    per.rmse_per_dof = (traj_sum / static_cast<double>(n)).cwiseSqrt();
    per.rmse = std::sqrt(traj_sum.sum() / (static_cast<double>(n) * std::max(1, nv)));
    out.per_trajectory.push_back(std::move(per));
    if (done) done(tr);
  }
  if (out.samples == 0) {
    if (note) {
      *note = "torque error not computed: ";
      if (data.trajectories.empty()) *note += "no trajectories";
      else if (out.too_short.empty()) *note += "no trajectory has recorded tau";
      else *note += std::string("no trajectory with recorded tau has enough samples (") +
                    derivative_method_name(derivatives.method) + " window " + std::to_string(derivatives.window) + ")";
    }
    return std::nullopt;
  }
  out.rmse_per_dof = (sum / static_cast<double>(out.samples)).cwiseSqrt();
  out.rmse = std::sqrt(sum.sum() / (static_cast<double>(out.samples) * std::max(1, nv)));
  if (note) {
    note->clear();
    if (!out.without_tau.empty())
      *note = "torque error over " + std::to_string(data.trajectories.size() - out.without_tau.size()) + " of " +
              std::to_string(data.trajectories.size()) + " trajectories: the others have no recorded tau";
  }
  return out;
}

std::optional<TorqueError> torque_error(const Model<double>& model, const TrajectorySet& data,
                                        const DerivativeOptions& derivatives, std::string* note,
                                        const ControlSignal* controls) {
  const ParameterSet none;
  ResidualContext ctx;
  ctx.model = &model;
  ctx.parameters = &none;
  if (controls) ctx.step.controls = *controls;
  return torque_error(ctx, {}, data, derivatives, note);
}

std::optional<TorqueError> torque_error(const Model<double>& model, const TrajectorySet& data, int filter_window,
                                        std::string* note) {
  DerivativeOptions d;
  d.window = std::max(1, filter_window);
  return torque_error(model, data, d, note);
}

namespace {
std::string seconds(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

EvaluationWindows read_evaluation_windows(const Config& section) {
  section.check_known_keys({"every", "horizon"});
  EvaluationWindows spec;
  for (const char* key : {"every", "horizon"}) {
    const double v = section.get<double>(key);  // required and finite (get refuses .inf and .nan)
    if (!(v > 0)) section.fail(key, "must be > 0 seconds, got " + seconds(v));
    if (v > kMaxEvaluationSeconds) section.fail(key, "must be at most 10^6 seconds, got " + seconds(v));
    (std::string(key) == "every" ? spec.every_s : spec.horizon_s) = v;
  }
  return spec;
}

void check_windows_fit(const Config& section, const EvaluationWindows& spec,
                       const std::vector<const TrajectorySet*>& sets) {
  double longest = 0;
  for (const TrajectorySet* set : sets)
    for (const Trajectory& tr : set->trajectories) {
      if (tr.size() > 0) longest = std::max(longest, tr.time[tr.size() - 1] - tr.time[0]);
      if (!select_windows(tr.time, spec).windows.empty()) return;
    }
  section.fail("horizon", "no window of " + seconds(spec.horizon_s) +
                              " s fits in the data: the longest trajectory lasts " + seconds(longest) +
                              " s (a window needs at least 2 samples)");
}

namespace {
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

void put_statistics(nlohmann::json& j, const WindowStatistics& s) {
  j["count"] = s.count;
  j["skipped"] = s.skipped;
  j["mean_rmse_q"] = finite_or_null(s.mean_rmse_q);
  j["median_rmse_q"] = finite_or_null(s.median_rmse_q);
  j["mean_rmse_qd"] = finite_or_null(s.mean_rmse_qd);
  j["median_rmse_qd"] = finite_or_null(s.median_rmse_qd);
}
}  // namespace

nlohmann::json windows_json(const WindowedEvaluation& e) {
  nlohmann::json j;
  j["every_s"] = e.spec.every_s;
  j["horizon_s"] = e.spec.horizon_s;
  put_statistics(j, e.overall);
  long long diverged = 0;
  nlohmann::json per_trajectory = nlohmann::json::array();
  for (const auto& [name, s] : e.per_trajectory) {
    nlohmann::json t{{"trajectory", name}};
    put_statistics(t, s);
    per_trajectory.push_back(t);
  }
  nlohmann::json per_window = nlohmann::json::array();
  for (const WindowError& w : e.per_window) {
    nlohmann::json pw{{"trajectory", w.trajectory}, {"t0", w.t0}, {"t1", w.t1},
                      {"rmse_q", finite_or_null(w.rmse_q)}, {"rmse_qd", finite_or_null(w.rmse_qd)}};
    if (w.diverged) {
      pw["diverged"] = true;
      ++diverged;
    }
    per_window.push_back(pw);
  }
  j["diverged"] = diverged;
  j["per_trajectory"] = per_trajectory;
  j["per_window"] = per_window;
  return j;
}

nlohmann::json derivatives_json(const DerivativeOptions& d) {
  nlohmann::json j{{"method", derivative_method_name(d.method)}, {"window", d.window}};
  if (d.method == DerivativeMethod::kSavitzkyGolay) j["order"] = d.order;
  j["filter_torque"] = d.filter_torque;
  return j;
}

nlohmann::json torque_json(const TorqueError& e) {
  nlohmann::json per = nlohmann::json::object();
  for (size_t i = 0; i < e.names.size(); ++i) per[e.names[i]] = finite_or_null(e.rmse_per_dof[static_cast<Eigen::Index>(i)]);
  nlohmann::json j{{"rmse_per_joint", per}, {"rmse", finite_or_null(e.rmse)}, {"samples", e.samples}};
  if (!e.without_tau.empty()) j["trajectories_without_tau"] = e.without_tau;
  if (!e.too_short.empty()) j["trajectories_too_short"] = e.too_short;
  nlohmann::json trajectories = nlohmann::json::array();
  for (const TorqueError::PerTrajectory& t : e.per_trajectory) {
    nlohmann::json joints = nlohmann::json::object();
    for (size_t i = 0; i < e.names.size(); ++i)
      joints[e.names[i]] = finite_or_null(t.rmse_per_dof[static_cast<Eigen::Index>(i)]);
    trajectories.push_back({{"name", t.name}, {"rmse_per_joint", joints}, {"rmse", finite_or_null(t.rmse)},
                            {"samples", t.samples}});
  }
  j["per_trajectory"] = trajectories;
  return j;
}

}  // namespace neuralsim
