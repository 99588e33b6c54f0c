#include "neuralsim/train/baseline_models.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <utility>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

std::string str(long long v) { return std::to_string(v); }

void check_dims(const char* who, int nq, int nv) {
  if (nq < 0 || nv < 0 || nq + nv < 1) {
    throw InvalidArgument(std::string(who) + ": nq and nv must be >= 0 with nq + nv >= 1, got nq " +
                          str(nq) + ", nv " + str(nv));
  }
}

void check_names(const char* who, const StateNames& names, int nq, int nv) {
  if (!names.q_names.empty() && static_cast<int>(names.q_names.size()) != nq) {
    throw InvalidArgument(std::string(who) + ": names.q_names has " + str(names.q_names.size()) +
                          " entries, expected nq = " + str(nq) + " (or none)");
  }
  if (!names.v_names.empty() && static_cast<int>(names.v_names.size()) != nv) {
    throw InvalidArgument(std::string(who) + ": names.v_names has " + str(names.v_names.size()) +
                          " entries, expected nv = " + str(nv) + " (or none)");
  }
}

std::string coord(const std::vector<std::string>& names, int i) {
  return names.empty() ? std::to_string(i) : names[static_cast<size_t>(i)];
}

std::vector<std::string> make_input_names(const StateNames& n, int nq, int nv, bool controls) {
  std::vector<std::string> out;
  for (int i = 0; i < nq; ++i) out.push_back("q." + coord(n.q_names, i));
  for (int j = 0; j < nv; ++j) out.push_back("qd." + coord(n.v_names, j));
  if (controls) {
    for (int j = 0; j < nv; ++j) out.push_back("u." + coord(n.v_names, j));
  }
  return out;
}

std::vector<std::string> make_output_names(const StateNames& n, int nq, int nv, bool delta) {
  const std::string prefix = delta ? "delta." : "next.";
  std::vector<std::string> out;
  for (int i = 0; i < nq; ++i) out.push_back(prefix + "q." + coord(n.q_names, i));
  for (int j = 0; j < nv; ++j) out.push_back(prefix + "qd." + coord(n.v_names, j));
  return out;
}

// Sum of per-trajectory partial sums in sorted order: independent of the
// order of the trajectories, bit for bit.
double sorted_sum(std::vector<double>& parts) {
  std::sort(parts.begin(), parts.end());
  double s = 0.0;
  for (double p : parts) s += p;
  return s;
}

// Checks a window against the model's dimensions and the loss weights;
// returns the weights as one vector [wq; wqd].
void check_window(const char* who, const TrainingWindow& w, const WindowLossWeights& weights,
                  int nq, int nv, bool controls, VectorXd& wts) {
  const Eigen::Index K = w.q.cols();
  if (K < 1) throw InvalidArgument(std::string(who) + ": the window has no steps (q has 0 columns)");
  auto shape = [&](const char* what, const MatrixXd& m, Eigen::Index rows) {
    if (m.rows() != rows || m.cols() != K) {
      throw InvalidArgument(std::string(who) + ": window " + what + " is " + str(m.rows()) + " x " +
                            str(m.cols()) + ", expected " + str(rows) + " x " + str(K) +
                            " (nq " + str(nq) + ", nv " + str(nv) + ", " + str(K) + " steps)");
    }
    for (Eigen::Index k = 0; k < K; ++k) {
      for (Eigen::Index i = 0; i < rows; ++i) {
        if (!std::isfinite(m(i, k))) {
          throw DataError(std::string(who) + ": window (trajectory " + str(w.trajectory) +
                          ", start " + str(w.start) + ") " + what + "(" + str(i) + ", " + str(k) +
                          ") is not finite (" + format_number(m(i, k)) + ")");
        }
      }
    }
  };
  shape("q", w.q, nq);
  shape("qd", w.qd, nv);
  shape("q_next", w.q_next, nq);
  shape("qd_next", w.qd_next, nv);
  if (controls) {
    shape("controls", w.controls, nv);
  } else if (w.controls.rows() != 0 && w.controls.size() != 0) {
    throw InvalidArgument(std::string(who) + ": window controls is " + str(w.controls.rows()) +
                          " x " + str(w.controls.cols()) +
                          ", expected 0 x K (the model was built without controls)");
  }
  if (weights.wq.size() != nq || weights.wqd.size() != nv) {
    throw InvalidArgument(std::string(who) + ": loss weights have sizes wq " + str(weights.wq.size()) +
                          ", wqd " + str(weights.wqd.size()) + ", expected " + str(nq) + ", " +
                          str(nv));
  }
  wts.resize(nq + nv);
  wts << weights.wq, weights.wqd;
  for (int i = 0; i < nq + nv; ++i) {
    if (!std::isfinite(wts[i]) || wts[i] < 0.0) {
      throw InvalidArgument(std::string(who) + ": loss weight " +
                            (i < nq ? "wq " + str(i) : "wqd " + str(i - nq)) +
                            " must be finite and >= 0, got " + format_number(wts[i]));
    }
  }
}

void check_parameters(const char* who, const VectorXd& x, long long expected) {
  if (x.size() != expected) {
    throw InvalidArgument(std::string(who) + ": parameter vector has size " + str(x.size()) +
                          ", expected " + str(expected));
  }
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    if (!std::isfinite(x[k])) {
      throw InvalidArgument(std::string(who) + ": parameter " + str(k) + " is not finite (" +
                            format_number(x[k]) + ")");
    }
  }
}

void check_rollout(const char* who, const VectorXd& q0, const VectorXd& qd0,
                   const MatrixXd& controls, int nq, int nv, bool use_controls, MatrixXd* q,
                   MatrixXd* qd) {
  if (q == nullptr || qd == nullptr) throw InvalidArgument(std::string(who) + ": null output");
  if (q0.size() != nq || qd0.size() != nv) {
    throw InvalidArgument(std::string(who) + ": q0, qd0 have sizes " + str(q0.size()) + ", " +
                          str(qd0.size()) + ", expected " + str(nq) + ", " + str(nv));
  }
  if (controls.cols() < 1) throw InvalidArgument(std::string(who) + ": no steps (controls has 0 columns)");
  const Eigen::Index want = use_controls ? nv : 0;
  if (controls.rows() != want) {
    throw InvalidArgument(std::string(who) + ": controls has " + str(controls.rows()) +
                          " rows, expected " + str(want) + (use_controls ? " (nv)" : " (no controls)"));
  }
  for (Eigen::Index i = 0; i < q0.size(); ++i) {
    if (!std::isfinite(q0[i])) throw DataError(std::string(who) + ": q0 " + str(i) + " is not finite");
  }
  for (Eigen::Index i = 0; i < qd0.size(); ++i) {
    if (!std::isfinite(qd0[i])) throw DataError(std::string(who) + ": qd0 " + str(i) + " is not finite");
  }
  if (!controls.allFinite()) throw DataError(std::string(who) + ": controls have a non-finite value");
}

}  // namespace

// ============================================================ statistics

StateStatistics state_statistics(const TrajectorySet& data, int nq, int nv, bool use_controls,
                                 double std_floor) {
  check_dims("state_statistics", nq, nv);
  if (!std::isfinite(std_floor) || !(std_floor > 0.0)) {
    throw InvalidArgument("state_statistics: std_floor must be finite and > 0, got " +
                          format_number(std_floor));
  }
  const int ns = nq + nv, nin = ns + (use_controls ? nv : 0);
  // Per trajectory: validate, then (after the means) partial sums.
  for (size_t t = 0; t < data.trajectories.size(); ++t) {
    const Trajectory& tr = data.trajectories[t];
    const std::string where = "trajectory " + str(static_cast<long long>(t)) +
                              (tr.name.empty() ? "" : " ('" + tr.name + "')");
    const Eigen::Index T = tr.q.rows();
    if (tr.q.cols() != nq || tr.qd.cols() != nv || tr.qd.rows() != T) {
      throw DataError("state_statistics: " + where + ": q is " + str(tr.q.rows()) + " x " +
                      str(tr.q.cols()) + " and qd " + str(tr.qd.rows()) + " x " + str(tr.qd.cols()) +
                      ", expected T x " + str(nq) + " and T x " + str(nv));
    }
    if (use_controls && T > 1 && (tr.tau.rows() != T || tr.tau.cols() != nv)) {
      throw DataError("state_statistics: " + where + ": tau is " + str(tr.tau.rows()) + " x " +
                      str(tr.tau.cols()) + ", expected " + str(T) + " x " + str(nv) +
                      " (the model takes controls)");
    }
    auto finite = [&](const RowMatrixXd& m, const char* what) {
      for (Eigen::Index k = 0; k < m.rows(); ++k) {
        for (Eigen::Index i = 0; i < m.cols(); ++i) {
          if (!std::isfinite(m(k, i))) {
            throw DataError("state_statistics: " + where + ": " + what + "(" + str(k) + ", " +
                            str(i) + ") is not finite (" + format_number(m(k, i)) + ")");
          }
        }
      }
    };
    finite(tr.q, "q");
    finite(tr.qd, "qd");
    if (use_controls) finite(tr.tau, "tau");
  }
  // Sample k of trajectory t: input [q_k; qd_k; u_k], next x_{k+1}, delta.
  auto input = [&](const Trajectory& tr, Eigen::Index k, int i) {
    if (i < nq) return tr.q(k, i);
    if (i < ns) return tr.qd(k, i - nq);
    return tr.tau(k, i - ns);
  };
  auto state = [&](const Trajectory& tr, Eigen::Index k, int i) {
    return i < nq ? tr.q(k, i) : tr.qd(k, i - nq);
  };
  long long n = 0;
  for (const Trajectory& tr : data.trajectories) n += std::max<Eigen::Index>(tr.q.rows() - 1, 0);
  if (n == 0) {
    throw DataError("state_statistics: no trajectory has two samples (" +
                    str(static_cast<long long>(data.trajectories.size())) +
                    " trajectories): nothing to learn a step from");
  }
  // Two passes (mean, then squared deviations), each as sorted sums of
  // per-trajectory sums.
  auto moments = [&](int dim, auto&& value) {
    VectorXd mean(dim), sd(dim);
    std::vector<double> parts;
    for (int i = 0; i < dim; ++i) {
      parts.clear();
      for (const Trajectory& tr : data.trajectories) {
        double s = 0.0;
        for (Eigen::Index k = 0; k + 1 < tr.q.rows(); ++k) s += value(tr, k, i);
        parts.push_back(s);
      }
      mean[i] = sorted_sum(parts) / static_cast<double>(n);
      parts.clear();
      for (const Trajectory& tr : data.trajectories) {
        double s = 0.0;
        for (Eigen::Index k = 0; k + 1 < tr.q.rows(); ++k) {
          const double d = value(tr, k, i) - mean[i];
          s += d * d;
        }
        parts.push_back(s);
      }
      sd[i] = std::max(std::sqrt(sorted_sum(parts) / static_cast<double>(n)), std_floor);
    }
    return std::pair{mean, sd};
  };
  StateStatistics st;
  st.samples = n;
  std::tie(st.input_mean, st.input_std) = moments(nin, input);
  std::tie(st.next_mean, st.next_std) =
      moments(ns, [&](const Trajectory& tr, Eigen::Index k, int i) { return state(tr, k + 1, i); });
  std::tie(st.delta_mean, st.delta_std) = moments(ns, [&](const Trajectory& tr, Eigen::Index k, int i) {
    return state(tr, k + 1, i) - state(tr, k, i);
  });
  return st;
}

// ============================================================ MLP

MlpStateModel::MlpStateModel(MlpStateModelOptions options) : options_(std::move(options)) {
  check_dims("MlpStateModel", options_.nq, options_.nv);
  check_names("MlpStateModel", options_.names, options_.nq, options_.nv);
  std::vector<nn::Index> hidden;
  for (size_t l = 0; l < options_.hidden_widths.size(); ++l) {
    if (options_.hidden_widths[l] < 1) {
      throw InvalidArgument("MlpStateModel: hidden layer " + str(static_cast<long long>(l)) +
                            " must have >= 1 units, got " + str(options_.hidden_widths[l]));
    }
    hidden.push_back(options_.hidden_widths[l]);
  }
  net_ = nn::Mlp(input_dim(), hidden, state_dim(), options_.activation, nn::Activation::kIdentity);
  std::mt19937_64 engine(options_.seed);
  net_.initialize(options_.init, engine);
  work_ = net_;
}

std::string MlpStateModel::name() const {
  return options_.predict_delta ? "mlp-delta" : "mlp-direct";
}

int MlpStateModel::num_parameters() const { return static_cast<int>(net_.num_parameters()); }

Eigen::VectorXd MlpStateModel::initial_parameters() const {
  return Eigen::Map<const VectorXd>(net_.parameters(), net_.num_parameters());
}

void MlpStateModel::fit_normalization(const TrajectorySet& data) {
  const StateStatistics st = state_statistics(data, options_.nq, options_.nv, options_.use_controls);
  if (options_.predict_delta) {
    set_normalization(st.input_mean, st.input_std, st.delta_mean, st.delta_std);
  } else {
    set_normalization(st.input_mean, st.input_std, st.next_mean, st.next_std);
  }
}

void MlpStateModel::set_normalization(const VectorXd& input_mean, const VectorXd& input_std,
                                      const VectorXd& output_offset, const VectorXd& output_scale) {
  nn::Mlp copy = net_;  // all or nothing
  copy.set_input_normalization(input_mean, input_std);
  copy.set_output_scaling(output_scale, output_offset);
  net_ = std::move(copy);
  work_.set_input_normalization(input_mean, input_std);
  work_.set_output_scaling(output_scale, output_offset);
}

nn::Mlp MlpStateModel::network(const VectorXd& x) const {
  check_parameters("MlpStateModel::network", x, net_.num_parameters());
  nn::Mlp out = net_;
  out.set_parameters(x.data());
  return out;
}

void MlpStateModel::set_network(const nn::Mlp& net) {
  if (net.dims() != net_.dims()) {
    throw InvalidArgument("MlpStateModel::set_network: network " + net.describe() +
                          " does not match the model's " + net_.describe());
  }
  for (nn::Index l = 0; l + 1 < net.num_layers(); ++l) {
    if (net.activation(l) != options_.activation) {
      throw InvalidArgument("MlpStateModel::set_network: layer " + str(l) + " activation " +
                            nn::activation_name(net.activation(l)) + ", expected " +
                            nn::activation_name(options_.activation));
    }
  }
  if (net.activation(net.num_layers() - 1) != nn::Activation::kIdentity) {
    throw InvalidArgument("MlpStateModel::set_network: the output layer must be identity, got " +
                          std::string(nn::activation_name(net.activation(net.num_layers() - 1))));
  }
  net_ = net;
  work_ = net;
}

std::vector<std::string> MlpStateModel::parameter_names() const {
  std::vector<std::string> out(static_cast<size_t>(net_.num_parameters()));
  for (nn::Index l = 0; l < net_.num_layers(); ++l) {
    const nn::Index n_in = net_.layer_input_dim(l), n_out = net_.layer_output_dim(l);
    const std::string layer = "mlp.layer" + str(l) + ".";
    for (nn::Index r = 0; r < n_out; ++r) {
      for (nn::Index c = 0; c < n_in; ++c) {
        out[static_cast<size_t>(net_.weight_offset(l) + r * n_in + c)] =
            layer + "weight(" + str(r) + ", " + str(c) + ")";
      }
      out[static_cast<size_t>(net_.bias_offset(l) + r)] = layer + "bias(" + str(r) + ")";
    }
  }
  return out;
}

std::vector<std::string> MlpStateModel::input_names() const {
  return make_input_names(options_.names, options_.nq, options_.nv, options_.use_controls);
}

std::vector<std::string> MlpStateModel::output_names() const {
  return make_output_names(options_.names, options_.nq, options_.nv, options_.predict_delta);
}

long long MlpStateModel::parameter_count(int nq, int nv, bool use_controls,
                                         const std::vector<int>& hidden_widths) {
  long long prev = nq + nv + (use_controls ? nv : 0), total = 0;
  for (int h : hidden_widths) {
    total += static_cast<long long>(h) * (prev + 1);
    prev = h;
  }
  return total + static_cast<long long>(nq + nv) * (prev + 1);
}

int MlpStateModel::hidden_width_for_parameter_count(long long target, int nq, int nv,
                                                    bool use_controls, int hidden_layers) {
  check_dims("MlpStateModel::hidden_width_for_parameter_count", nq, nv);
  if (target < 1 || hidden_layers < 1) {
    throw InvalidArgument("MlpStateModel::hidden_width_for_parameter_count: target and "
                          "hidden_layers must be >= 1, got " + str(target) + ", " + str(hidden_layers));
  }
  auto count = [&](int h) {
    return parameter_count(nq, nv, use_controls, std::vector<int>(static_cast<size_t>(hidden_layers), h));
  };
  int h = 1;
  while (count(h) < target && h < (1 << 20)) ++h;  // count is increasing in h
  if (h > 1 && target - count(h - 1) <= count(h) - target) --h;
  return h;
}

void MlpStateModel::load(const VectorXd& x, const char* function) {
  check_parameters(function, x, work_.num_parameters());
  if (!std::equal(x.data(), x.data() + x.size(), work_.parameters())) work_.set_parameters(x.data());
}

template <TrainingMode kMode>
double MlpStateModel::window_loss(const TrainingWindow& w, const VectorXd& wts, VectorXd* grad) {
  const int nq = options_.nq, nv = options_.nv, ns = state_dim(), nin = input_dim();
  const int K = w.steps();
  const bool delta = options_.predict_delta;
  while (static_cast<int>(ws_.size()) < K) ws_.emplace_back(work_);
  if (!ws_.front().fits(work_)) {
    for (auto& ws : ws_) ws = nn::Workspace<double>(work_);
  }
  inputs_.resize(nin, K);
  pred_.resize(ns, K + 1);
  resid_.resize(ns, K);
  out_.resize(ns);
  pred_.col(0) << w.q.col(0), w.qd.col(0);
  double loss = 0.0;
  for (int k = 0; k < K; ++k) {
    if constexpr (kMode == TrainingMode::kOneStep) {
      inputs_.col(k).head(ns) << w.q.col(k), w.qd.col(k);
    } else {
      inputs_.col(k).head(ns) = pred_.col(k);
    }
    if (options_.use_controls) inputs_.col(k).tail(nv) = w.controls.col(k);
    work_.forward(inputs_.col(k).data(), out_.data(), ws_[static_cast<size_t>(k)]);
    if (delta) {
      pred_.col(k + 1) = inputs_.col(k).head(ns) + out_;
    } else {
      pred_.col(k + 1) = out_;
    }
    resid_.col(k).head(nq) = pred_.col(k + 1).head(nq) - w.q_next.col(k);
    resid_.col(k).tail(nv) = pred_.col(k + 1).tail(nv) - w.qd_next.col(k);
    loss += resid_.col(k).cwiseAbs2().dot(wts);
  }
  loss /= K;
  if (grad == nullptr) return loss;

  grad->setZero(work_.num_parameters());
  lambda_.resize(ns);
  carry_.setZero(ns);
  dinput_.resize(nin);
  for (int k = K - 1; k >= 0; --k) {
    // λ = ∂L/∂x̂_{k+1}: the direct term, plus (kUnrolled) what flows back
    // from step k+1 through its input.
    lambda_ = (2.0 / K) * wts.cwiseProduct(resid_.col(k));
    if constexpr (kMode == TrainingMode::kUnrolled) lambda_ += carry_;
    const bool need_input = kMode == TrainingMode::kUnrolled && k > 0;
    work_.backward(lambda_.data(), need_input ? dinput_.data() : nullptr, grad->data(),
                   ws_[static_cast<size_t>(k)]);
    if (need_input) {
      carry_ = dinput_.head(ns);
      if (delta) carry_ += lambda_;
    }
  }
  return loss;
}

double MlpStateModel::loss(const VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                           const WindowLossWeights& weights, VectorXd* grad) {
  check_window("MlpStateModel::loss", w, weights, options_.nq, options_.nv, options_.use_controls, wts_);
  load(x, "MlpStateModel::loss");
  switch (mode) {
    case TrainingMode::kOneStep:
      return window_loss<TrainingMode::kOneStep>(w, wts_, grad);
    case TrainingMode::kUnrolledDetached:
      return window_loss<TrainingMode::kUnrolledDetached>(w, wts_, grad);
    case TrainingMode::kUnrolled:
      return window_loss<TrainingMode::kUnrolled>(w, wts_, grad);
  }
  throw InvalidArgument("MlpStateModel::loss: unknown training mode " + str(static_cast<int>(mode)));
}

void MlpStateModel::rollout(const VectorXd& x, const VectorXd& q0, const VectorXd& qd0,
                            const MatrixXd& controls, MatrixXd* q, MatrixXd* qd, const Trajectory* /*recording*/) {
  const int nq = options_.nq, nv = options_.nv, ns = state_dim();
  check_rollout("MlpStateModel::rollout", q0, qd0, controls, nq, nv, options_.use_controls, q, qd);
  load(x, "MlpStateModel::rollout");
  if (ws_.empty() || !ws_.front().fits(work_)) ws_.assign(1, nn::Workspace<double>(work_));
  const Eigen::Index T = controls.cols();
  q->resize(nq, T);
  qd->resize(nv, T);
  VectorXd in(input_dim()), out(ns);
  in.head(nq) = q0;
  in.segment(nq, nv) = qd0;
  for (Eigen::Index k = 0; k < T; ++k) {
    if (options_.use_controls) in.tail(nv) = controls.col(k);
    work_.forward(in.data(), out.data(), ws_.front());
    if (options_.predict_delta) {
      in.head(ns) += out;
    } else {
      in.head(ns) = out;
    }
    q->col(k) = in.head(nq);
    qd->col(k) = in.segment(nq, nv);
  }
}

std::unique_ptr<WindowModel> MlpStateModel::clone() const {
  return std::make_unique<MlpStateModel>(*this);
}

// ============================================================ LSTM

LstmStateModel::LstmStateModel(LstmStateModelOptions options) : options_(std::move(options)) {
  check_dims("LstmStateModel", options_.nq, options_.nv);
  check_names("LstmStateModel", options_.names, options_.nq, options_.nv);
  if (options_.hidden < 1) {
    throw InvalidArgument("LstmStateModel: hidden must be >= 1, got " + str(options_.hidden));
  }
  net_ = nn::Lstm(input_dim(), options_.hidden, state_dim());
  std::mt19937_64 engine(options_.seed);
  net_.initialize(engine, options_.forget_bias);
  work_ = net_;
}

std::string LstmStateModel::name() const { return "lstm-delta"; }

int LstmStateModel::num_parameters() const { return static_cast<int>(net_.num_parameters()); }

Eigen::VectorXd LstmStateModel::initial_parameters() const {
  return Eigen::Map<const VectorXd>(net_.parameters(), net_.num_parameters());
}

void LstmStateModel::fit_normalization(const TrajectorySet& data) {
  const StateStatistics st = state_statistics(data, options_.nq, options_.nv, options_.use_controls);
  set_normalization(st.input_mean, st.input_std, st.delta_mean, st.delta_std);
}

void LstmStateModel::set_normalization(const VectorXd& input_mean, const VectorXd& input_std,
                                       const VectorXd& output_offset, const VectorXd& output_scale) {
  nn::Lstm copy = net_;
  copy.set_input_normalization(input_mean, input_std);
  copy.set_output_scaling(output_scale, output_offset);
  net_ = std::move(copy);
  work_.set_input_normalization(input_mean, input_std);
  work_.set_output_scaling(output_scale, output_offset);
}

nn::Lstm LstmStateModel::network(const VectorXd& x) const {
  check_parameters("LstmStateModel::network", x, net_.num_parameters());
  nn::Lstm out = net_;
  out.set_parameters(x.data());
  return out;
}

void LstmStateModel::set_network(const nn::Lstm& net) {
  if (net.input_dim() != net_.input_dim() || net.hidden_size() != net_.hidden_size() ||
      net.output_dim() != net_.output_dim()) {
    throw InvalidArgument("LstmStateModel::set_network: network " + net.describe() +
                          " does not match the model's " + net_.describe());
  }
  net_ = net;
  work_ = net;
}

std::vector<std::string> LstmStateModel::parameter_names() const {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(net_.num_parameters()));
  for (nn::Index k = 0; k < net_.num_parameters(); ++k) out.push_back("lstm." + net_.parameter_name(k));
  return out;
}

std::vector<std::string> LstmStateModel::input_names() const {
  return make_input_names(options_.names, options_.nq, options_.nv, options_.use_controls);
}

std::vector<std::string> LstmStateModel::output_names() const {
  return make_output_names(options_.names, options_.nq, options_.nv, true);
}

long long LstmStateModel::parameter_count(int nq, int nv, bool use_controls, int hidden) {
  return nn::Lstm::parameter_count(nq + nv + (use_controls ? nv : 0), hidden, nq + nv);
}

int LstmStateModel::hidden_width_for_parameter_count(long long target, int nq, int nv,
                                                     bool use_controls) {
  check_dims("LstmStateModel::hidden_width_for_parameter_count", nq, nv);
  if (target < 1) {
    throw InvalidArgument("LstmStateModel::hidden_width_for_parameter_count: target must be >= 1, got " +
                          str(target));
  }
  int h = 1;
  while (parameter_count(nq, nv, use_controls, h) < target && h < (1 << 16)) ++h;
  if (h > 1 && target - parameter_count(nq, nv, use_controls, h - 1) <=
                   parameter_count(nq, nv, use_controls, h) - target) {
    --h;
  }
  return h;
}

void LstmStateModel::load(const VectorXd& x, const char* function) {
  check_parameters(function, x, work_.num_parameters());
  if (!std::equal(x.data(), x.data() + x.size(), work_.parameters())) work_.set_parameters(x.data());
}

template <TrainingMode kMode>
double LstmStateModel::window_loss(const TrainingWindow& w, const VectorXd& wts, VectorXd* grad) {
  const int nq = options_.nq, nv = options_.nv, ns = state_dim(), nin = input_dim();
  const int K = w.steps();
  if (!ws_.fits(work_) || ws_.capacity() < K) ws_.reserve(work_, K);
  input_.resize(nin);
  out_.resize(ns);
  pred_.resize(ns, K + 1);
  resid_.resize(ns, K);
  pred_.col(0) << w.q.col(0), w.qd.col(0);
  work_.begin(nullptr, nullptr, ws_);
  double loss = 0.0;
  for (int k = 0; k < K; ++k) {
    if constexpr (kMode == TrainingMode::kOneStep) {
      input_.head(ns) << w.q.col(k), w.qd.col(k);
    } else {
      input_.head(ns) = pred_.col(k);
    }
    if (options_.use_controls) input_.tail(nv) = w.controls.col(k);
    work_.forward_step(input_.data(), out_.data(), ws_);
    pred_.col(k + 1) = input_.head(ns) + out_;
    resid_.col(k).head(nq) = pred_.col(k + 1).head(nq) - w.q_next.col(k);
    resid_.col(k).tail(nv) = pred_.col(k + 1).tail(nv) - w.qd_next.col(k);
    loss += resid_.col(k).cwiseAbs2().dot(wts);
  }
  loss /= K;
  if (grad == nullptr) return loss;

  grad->setZero(work_.num_parameters());
  lambda_.resize(ns);
  carry_.setZero(ns);
  dinput_.resize(nin);
  work_.begin_backward(nullptr, nullptr, ws_);  // the final (h, c) is not in the loss
  for (int k = K - 1; k >= 0; --k) {
    lambda_ = (2.0 / K) * wts.cwiseProduct(resid_.col(k));
    if constexpr (kMode == TrainingMode::kUnrolled) lambda_ += carry_;
    const bool need_input = kMode == TrainingMode::kUnrolled && k > 0;
    // y_k enters x̂_{k+1} = x̂_k + y_k with coefficient 1: ∂L/∂y_k = λ.
    work_.backward_step(lambda_.data(), need_input ? dinput_.data() : nullptr, grad->data(), ws_);
    if (need_input) carry_ = dinput_.head(ns) + lambda_;
  }
  work_.end_backward(nullptr, nullptr, ws_);
  return loss;
}

double LstmStateModel::loss(const VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                            const WindowLossWeights& weights, VectorXd* grad) {
  check_window("LstmStateModel::loss", w, weights, options_.nq, options_.nv, options_.use_controls, wts_);
  load(x, "LstmStateModel::loss");
  switch (mode) {
    case TrainingMode::kOneStep:
      return window_loss<TrainingMode::kOneStep>(w, wts_, grad);
    case TrainingMode::kUnrolledDetached:
      return window_loss<TrainingMode::kUnrolledDetached>(w, wts_, grad);
    case TrainingMode::kUnrolled:
      return window_loss<TrainingMode::kUnrolled>(w, wts_, grad);
  }
  throw InvalidArgument("LstmStateModel::loss: unknown training mode " + str(static_cast<int>(mode)));
}

void LstmStateModel::rollout(const VectorXd& x, const VectorXd& q0, const VectorXd& qd0,
                             const MatrixXd& controls, MatrixXd* q, MatrixXd* qd, const Trajectory* /*recording*/) {
  const int nq = options_.nq, nv = options_.nv, ns = state_dim();
  check_rollout("LstmStateModel::rollout", q0, qd0, controls, nq, nv, options_.use_controls, q, qd);
  load(x, "LstmStateModel::rollout");
  if (!ws_.fits(work_)) ws_.reserve(work_, 1);
  const Eigen::Index T = controls.cols();
  q->resize(nq, T);
  qd->resize(nv, T);
  input_.resize(input_dim());
  out_.resize(ns);
  h_.setZero(work_.hidden_size());
  c_.setZero(work_.hidden_size());
  input_.head(nq) = q0;
  input_.segment(nq, nv) = qd0;
  for (Eigen::Index k = 0; k < T; ++k) {
    if (options_.use_controls) input_.tail(nv) = controls.col(k);
    work_.step(h_.data(), c_.data(), input_.data(), h_.data(), c_.data(), out_.data(), ws_);
    input_.head(ns) += out_;
    q->col(k) = input_.head(nq);
    qd->col(k) = input_.segment(nq, nv);
  }
}

std::unique_ptr<WindowModel> LstmStateModel::clone() const {
  return std::make_unique<LstmStateModel>(*this);
}

}  // namespace neuralsim
