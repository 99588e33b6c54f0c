#include "neuralsim/train/hybrid_window_model.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace {

std::string shape(long rows, long cols) { return std::to_string(rows) + "×" + std::to_string(cols); }

// "window (trajectory 3, start 120)": where a bad window came from.
std::string window_label(const TrainingWindow& w) {
  return "window (trajectory " + std::to_string(w.trajectory) + ", start " + std::to_string(w.start) + ")";
}


void check_shape(const char* where, const TrainingWindow& w, const char* field, const Eigen::MatrixXd& m, long rows,
                 long cols) {
  if (m.rows() != rows || m.cols() != cols)
    throw DataError(std::string(where) + ": " + window_label(w) + " " + field + " is " + shape(m.rows(), m.cols()) +
                    ", the model needs " + shape(rows, cols));
}

void check_finite(const char* where, const TrainingWindow& w, const char* field, const Eigen::MatrixXd& m) {
  for (Eigen::Index k = 0; k < m.cols(); ++k)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (!std::isfinite(m(i, k)))
        throw DataError(std::string(where) + ": " + window_label(w) + " " + field + "(" + std::to_string(i) + ", " +
                        std::to_string(k) + ") is " + std::to_string(m(i, k)) + " (not finite)");
}

void check_weights(const char* where, const char* field, const Eigen::VectorXd& v, long size) {
  if (v.size() != size)
    throw InvalidArgument(std::string(where) + ": loss weights " + field + " have " + std::to_string(v.size()) +
                          " entries, the model needs " + std::to_string(size));
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!(std::isfinite(v[i]) && v[i] >= 0.0))
      throw InvalidArgument(std::string(where) + ": loss weight " + field + "[" + std::to_string(i) + "] is " +
                            std::to_string(v[i]) + "; weights must be finite and ≥ 0");
}

// Recorded controls for the calls within its lifetime (none when recording
// is null), back to the held columns at its end, also on an exception.
class RecordedControlsScope {
 public:
  RecordedControlsScope(HybridRollout& sim, const Trajectory* recording, int first_interval) : sim_(sim) {
    if (recording) sim_.set_recorded_controls(recording, first_interval);
  }
  ~RecordedControlsScope() { sim_.set_recorded_controls(nullptr, 0); }
  RecordedControlsScope(const RecordedControlsScope&) = delete;
  RecordedControlsScope& operator=(const RecordedControlsScope&) = delete;

 private:
  HybridRollout& sim_;
};

}  // namespace

// Everything a call mutates. Held by pointer so that the loss term's capture
// (this Workspace) stays valid; built once, reused by every call.
struct HybridWindowModel::Workspace {
  explicit Workspace(const RolloutProblem& problem) : sim(problem) {
    loss.stage = [self = this](const LossState& s) { return self->term(s); };
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // The loss term of the state after step s.step of the current call, which
  // is step `offset` + s.step − 1 of the window; records the state when asked.
  Rev term(const LossState& s) const {
    if (record_q) {
      for (int i = 0; i < s.q.size(); ++i) (*record_q)(i, s.step - 1) = s.q[i].value();
      for (int i = 0; i < s.qd.size(); ++i) (*record_qd)(i, s.step - 1) = s.qd[i].value();
    }
    Rev L = 0.0;
    if (!window) return L;
    const int c = offset + s.step - 1;
    const Eigen::VectorXd& wq = weights->wq;
    const Eigen::VectorXd& wqd = weights->wqd;
    for (int i = 0; i < wq.size(); ++i)
      if (wq[i] != 0.0) {
        const Rev e = s.q[i] - window->q_next(i, c);
        L += (scale * wq[i]) * (e * e);
      }
    for (int i = 0; i < wqd.size(); ++i)
      if (wqd[i] != 0.0) {
        const Rev e = s.qd[i] - window->qd_next(i, c);
        L += (scale * wqd[i]) * (e * e);
      }
    return L;
  }

  HybridRollout sim;
  TrajectoryLoss loss;
  // Loss context of the current call.
  const TrainingWindow* window = nullptr;
  const WindowLossWeights* weights = nullptr;
  double scale = 1.0;  // 1/K
  int offset = 0;
  Eigen::MatrixXd* record_q = nullptr;
  Eigen::MatrixXd* record_qd = nullptr;
  // Buffers, sized on first use.
  std::vector<double> x;
  HybridRolloutGradient out;
  Eigen::VectorXd q0, qd0;
  Eigen::MatrixXd zero_controls, u1;
  Eigen::MatrixXd pred_q, pred_qd;  // detached: states after each step of the double rollout
};

HybridWindowModel::HybridWindowModel(RolloutProblem problem) : problem_(std::move(problem)) {
  const ParameterSet& ps = problem_.physical;
  for (int i = 0; i < ps.size(); ++i)
    if (ps[i].kind() == ParameterKind::kInitialVelocity)
      throw InvalidArgument("HybridWindowModel: parameter '" + ps[i].name() +
                            "' sets the initial velocity, but every window starts from its recorded state");
  // HybridRollout starts every rollout at t = 0, so a window (and each
  // one-step problem) would see its own time from 0: the modes would not
  // be the same function of the data. Refused rather than silently wrong.
  for (const AugmentBlueprint& bp : problem_.augment)
    for (const AugmentInput& in : bp.inputs)
      if (in.kind == InputKind::kTime)
        throw InvalidArgument("HybridWindowModel: network '" + bp.name +
                              "' reads the input 'time', which window training does not support (every window "
                              "and one-step problem is simulated from t = 0)");
  ws_ = std::make_unique<Workspace>(problem_);
}

HybridWindowModel::~HybridWindowModel() = default;

const HybridParameters& HybridWindowModel::hybrid_parameters() const { return ws_->sim.parameters(); }
int HybridWindowModel::num_parameters() const { return hybrid_parameters().size(); }
int HybridWindowModel::num_physical() const { return hybrid_parameters().physical().size(); }
int HybridWindowModel::num_weights() const { return hybrid_parameters().num_weights(); }
std::vector<std::string> HybridWindowModel::parameter_names() const { return hybrid_parameters().names(); }

Eigen::VectorXd HybridWindowModel::initial_parameters() const {
  const std::vector<double> v = hybrid_parameters().initial_variables();
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

Eigen::VectorXd HybridWindowModel::lower_bounds() const {
  Eigen::VectorXd b(num_parameters());
  for (int i = 0; i < b.size(); ++i) b[i] = hybrid_parameters().variable_lower(i);
  return b;
}

Eigen::VectorXd HybridWindowModel::upper_bounds() const {
  Eigen::VectorXd b(num_parameters());
  for (int i = 0; i < b.size(); ++i) b[i] = hybrid_parameters().variable_upper(i);
  return b;
}

Eigen::VectorXd HybridWindowModel::physical_values(const Eigen::VectorXd& x) const {
  if (x.size() != num_parameters())
    throw InvalidArgument("HybridWindowModel::physical_values: x has " + std::to_string(x.size()) +
                          " entries, the model has " + std::to_string(num_parameters()) + " parameters");
  const ParameterSet& ps = hybrid_parameters().physical();
  Eigen::VectorXd p(ps.size());
  for (int i = 0; i < ps.size(); ++i) p[i] = ps.physical<double>(i, x[i]);
  return p;
}

std::vector<AugmentBlueprint> HybridWindowModel::blueprints_at(const Eigen::VectorXd& x) const {
  if (x.size() != num_parameters())
    throw InvalidArgument("HybridWindowModel::blueprints_at: x has " + std::to_string(x.size()) +
                          " entries, the model has " + std::to_string(num_parameters()) + " parameters");
  std::vector<AugmentBlueprint> bps = problem_.augment;
  Eigen::Index offset = hybrid_parameters().weights_offset();
  for (AugmentBlueprint& bp : bps) {  // blueprint order = the weight block's order
    bp.network.set_parameters(x.data() + offset);
    offset += bp.network.num_parameters();
  }
  return bps;
}

std::unique_ptr<WindowModel> HybridWindowModel::clone() const {
  auto m = std::make_unique<HybridWindowModel>(problem_);
  m->checkpoint_interval_ = checkpoint_interval_;
  return m;
}

void HybridWindowModel::check(const char* where, const Eigen::VectorXd& x, const TrainingWindow& w,
                              const WindowLossWeights& weights) const {
  const long nq = problem_.model.nq, nv = problem_.model.nv;
  if (x.size() != num_parameters())
    throw InvalidArgument(std::string(where) + ": x has " + std::to_string(x.size()) + " entries, the model has " +
                          std::to_string(num_parameters()) + " parameters (" + std::to_string(num_physical()) +
                          " physical + " + std::to_string(num_weights()) + " weights)");
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      throw InvalidArgument(std::string(where) + ": x[" + std::to_string(i) + "] (" +
                            hybrid_parameters().names()[static_cast<std::size_t>(i)] + ") is " +
                            std::to_string(x[i]) + " (not finite)");
  const long K = w.q.cols();
  if (K < 1) throw DataError(std::string(where) + ": " + window_label(w) + " has no steps");
  check_shape(where, w, "q", w.q, nq, K);
  check_shape(where, w, "qd", w.qd, nv, K);
  check_shape(where, w, "q_next", w.q_next, nq, K);
  check_shape(where, w, "qd_next", w.qd_next, nv, K);
  if (w.controls.rows() != 0) check_shape(where, w, "controls", w.controls, nv, K);
  else if (w.controls.cols() != 0 && w.controls.cols() != K)
    throw DataError(std::string(where) + ": " + window_label(w) + " controls is " +
                    shape(w.controls.rows(), w.controls.cols()) + ", the model needs " + shape(nv, K) + " or 0×" +
                    std::to_string(K));
  check_finite(where, w, "q", w.q);
  check_finite(where, w, "qd", w.qd);
  check_finite(where, w, "q_next", w.q_next);
  check_finite(where, w, "qd_next", w.qd_next);
  check_finite(where, w, "controls", w.controls);
  check_weights(where, "wq", weights.wq, nq);
  check_weights(where, "wqd", weights.wqd, nv);
}

void HybridWindowModel::load_x(const Eigen::VectorXd& x) { ws_->x.assign(x.data(), x.data() + x.size()); }

const Trajectory* HybridWindowModel::interpolated_controls(const Eigen::MatrixXd& controls,
                                                          const Trajectory* recording, const char* where) const {
  // A control delay reaches back across samples: it needs the recording too.
  const ControlSignal& signal = problem_.step.controls;
  if ((signal.is_zero_order_hold() && signal.delay == 0.0) || controls.rows() == 0) return nullptr;
  if (!recording)
    throw InvalidArgument(std::string(where) + ": sim.controls (interpolation '" +
                          control_interpolation_name(signal.interpolation) + "', delay " + std::to_string(signal.delay) +
                          " s) reads the recorded controls between samples, but no recording was given");
  return recording;
}

const Eigen::MatrixXd& HybridWindowModel::controls_of(const TrainingWindow& w) {
  if (w.controls.rows() != 0) return w.controls;
  ws_->zero_controls.setZero(problem_.model.nv, w.steps());  // no reallocation when the size is unchanged
  return ws_->zero_controls;
}

double HybridWindowModel::gradient_call(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                                        const Eigen::MatrixXd& controls, int offset, Eigen::VectorXd* grad_x,
                                        Eigen::VectorXd* grad_q0, Eigen::VectorXd* grad_qd0) {
  Workspace& ws = *ws_;
  ws.offset = offset;
  const int T = static_cast<int>(controls.cols());
  const int interval = checkpoint_interval_ > 0 ? checkpoint_interval_ : (T <= 1024 ? T : 0);
  const double L = ws.sim.gradient(ws.x, q0, qd0, controls, ws.loss, ws.out, interval);
  if (grad_x) *grad_x += ws.out.x;
  if (grad_q0) *grad_q0 = ws.out.q0;
  if (grad_qd0) *grad_qd0 = ws.out.qd0;
  return L;
}

double HybridWindowModel::loss(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                               const WindowLossWeights& weights, Eigen::VectorXd* grad) {
  return loss_with_state_gradient(x, w, mode, weights, grad, nullptr, nullptr);
}

double HybridWindowModel::loss_with_state_gradient(const Eigen::VectorXd& x, const TrainingWindow& w,
                                                   TrainingMode mode, const WindowLossWeights& weights,
                                                   Eigen::VectorXd* grad_x, Eigen::VectorXd* grad_q0,
                                                   Eigen::VectorXd* grad_qd0) {
  check("HybridWindowModel::loss", x, w, weights);
  double L = 0;
  try {
    L = evaluate(x, w, mode, weights, grad_x, grad_q0, grad_qd0);
  } catch (const NumericalError& e) {  // the stepper's "diverged at t = ...": say which window
    throw NumericalError(std::string("HybridWindowModel::loss: ") + window_label(w) + ", " + training_mode_name(mode) +
                         " mode: " + e.what());
  }
  if (problem_.step.check_finite) {
    // The double stepper throws on a non-finite state; the taped replay does
    // not, and a finite state can still overflow the loss: one rule for both.
    const char* what = !std::isfinite(L)                      ? "the loss"
                       : grad_x && !grad_x->allFinite()       ? "the gradient"
                       : grad_q0 && !grad_q0->allFinite()     ? "the gradient w.r.t. q0"
                       : grad_qd0 && !grad_qd0->allFinite()   ? "the gradient w.r.t. qd0"
                                                              : nullptr;
    if (what)
      throw NumericalError(std::string("HybridWindowModel::loss: ") + window_label(w) + ", " + training_mode_name(mode) +
                           " mode: " + what +
                           " is not finite (loss " + std::to_string(L) + ")");
  }
  return L;
}

double HybridWindowModel::evaluate(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                                   const WindowLossWeights& weights, Eigen::VectorXd* grad_x,
                                   Eigen::VectorXd* grad_q0, Eigen::VectorXd* grad_qd0) {
  load_x(x);
  Workspace& ws = *ws_;
  const int K = w.steps();
  ws.window = &w;
  ws.weights = &weights;
  ws.scale = 1.0 / K;
  ws.offset = 0;
  ws.record_q = ws.record_qd = nullptr;
  const Eigen::MatrixXd& U = controls_of(w);
  const bool derivatives = grad_x || grad_q0 || grad_qd0;
  if (grad_x) grad_x->setZero(num_parameters());
  ws.q0 = w.q.col(0);
  ws.qd0 = w.qd.col(0);
  const Trajectory* recording = interpolated_controls(w.controls, w.recording, "HybridWindowModel::loss");
  const RecordedControlsScope scope(ws.sim, recording, w.start);

  // Without derivatives the detached loss is the unrolled one: the same
  // predictions, only the gradient differs.
  if (mode == TrainingMode::kUnrolled || (mode == TrainingMode::kUnrolledDetached && !derivatives)) {
    if (!derivatives) return ws.sim.value(ws.x, ws.q0, ws.qd0, U, ws.loss);
    return gradient_call(ws.q0, ws.qd0, U, 0, grad_x, grad_q0, grad_qd0);
  }

  if (mode == TrainingMode::kUnrolledDetached) {
    // x̂_1..x̂_K by the double rollout (the states the one-step problems start from).
    ws.pred_q.resize(problem_.model.nq, K);
    ws.pred_qd.resize(problem_.model.nv, K);
    ws.record_q = &ws.pred_q;
    ws.record_qd = &ws.pred_qd;
    ws.sim.value(ws.x, ws.q0, ws.qd0, U, ws.loss);
    ws.record_q = ws.record_qd = nullptr;
  }

  // K one-step problems: from the recorded state k (kOneStep) or the
  // predicted x̂_k (kUnrolledDetached; x̂_0 is the recorded state 0).
  double L = 0.0;
  ws.u1.resize(problem_.model.nv, 1);
  for (int k = 0; k < K; ++k) {
    if (k > 0) {
      if (mode == TrainingMode::kUnrolledDetached) {
        ws.q0 = ws.pred_q.col(k - 1);
        ws.qd0 = ws.pred_qd.col(k - 1);
      } else {
        ws.q0 = w.q.col(k);
        ws.qd0 = w.qd.col(k);
      }
    }
    ws.u1 = U.col(k);
    if (recording) ws.sim.set_recorded_controls(recording, w.start + k);
    if (derivatives) {
      L += gradient_call(ws.q0, ws.qd0, ws.u1, k, grad_x, k == 0 ? grad_q0 : nullptr, k == 0 ? grad_qd0 : nullptr);
    } else {
      ws.offset = k;
      L += ws.sim.value(ws.x, ws.q0, ws.qd0, ws.u1, ws.loss);
    }
  }
  return L;
}

void HybridWindowModel::rollout(const Eigen::VectorXd& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                                const Eigen::MatrixXd& controls, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
                                const Trajectory* recording) {
  const char* where = "HybridWindowModel::rollout";
  const long nq = problem_.model.nq, nv = problem_.model.nv;
  if (x.size() != num_parameters())
    throw InvalidArgument(std::string(where) + ": x has " + std::to_string(x.size()) + " entries, the model has " +
                          std::to_string(num_parameters()) + " parameters");
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      throw InvalidArgument(std::string(where) + ": x[" + std::to_string(i) + "] is " + std::to_string(x[i]) +
                            " (not finite)");
  check_argument_size(where, "q0", q0.size(), nq);
  check_argument_size(where, "qd0", qd0.size(), nv);
  if (controls.rows() != 0 && controls.rows() != nv)
    throw InvalidArgument(std::string(where) + ": controls has " + std::to_string(controls.rows()) +
                          " rows, the model needs " + std::to_string(nv) + " (or 0 for none)");
  if (!q || !qd) throw InvalidArgument(std::string(where) + ": null output");
  const Eigen::Index T = controls.cols();
  q->resize(nq, T);
  qd->resize(nv, T);
  if (T == 0) return;
  Workspace& ws = *ws_;
  load_x(x);
  const Eigen::MatrixXd* U = &controls;
  if (controls.rows() == 0) {
    ws.zero_controls.setZero(nv, T);
    U = &ws.zero_controls;
  }
  const RecordedControlsScope scope(ws.sim, interpolated_controls(controls, recording, where), 0);
  ws.window = nullptr;  // the term only records
  ws.record_q = q;
  ws.record_qd = qd;
  try {
    ws.sim.value(ws.x, q0, qd0, *U, ws.loss);
  } catch (...) {
    ws.record_q = ws.record_qd = nullptr;
    throw;
  }
  ws.record_q = ws.record_qd = nullptr;
}

}  // namespace neuralsim
