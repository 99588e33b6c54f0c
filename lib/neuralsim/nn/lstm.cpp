#include "neuralsim/nn/lstm.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "neuralsim/core/format.hpp"
#include "neuralsim/nn/mlp.hpp"  // random::uniform01, RowMatrixXd

namespace neuralsim::nn {
namespace {

// Same role as Mlp's stamp: a workspace remembers which parameter state its
// forward pass used, so backward refuses a stale record.
std::atomic<std::uint64_t> g_next_lstm_stamp{1};

constexpr Index kMaxLstmDim = Index(1) << 20;

// 1 / (1 + e^−z) without overflow (the same formula as activate(kSigmoid)).
inline double sigmoid(double z) {
  if (z >= 0.0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

const char* const kGateNames[4] = {"i", "f", "g", "o"};

template <class V>
void grow(V& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

}  // namespace

// ============================================================ workspace

LstmWorkspace::LstmWorkspace(const Lstm& net, Index capacity) { reserve(net, capacity); }

void LstmWorkspace::reserve(const Lstm& net, Index capacity) {
  if (net.empty()) throw InvalidArgument("nn::LstmWorkspace: the network is empty");
  if (capacity < 1) {
    throw InvalidArgument("nn::LstmWorkspace: capacity must be >= 1 step, got " +
                          std::to_string(capacity));
  }
  const bool same_shape = fits(net);
  nx_ = net.input_dim();
  H_ = net.hidden_size();
  ny_ = net.output_dim();
  capacity_ = std::max(capacity, same_shape ? capacity_ : Index(0));
  const size_t T = static_cast<size_t>(capacity_);
  const size_t nx = static_cast<size_t>(nx_), H = static_cast<size_t>(H_),
               ny = static_cast<size_t>(ny_);
  grow(xt_, T * nx);
  grow(gates_, T * 4 * H);
  grow(h_, (T + 1) * H);
  grow(c_, (T + 1) * H);
  grow(tc_, T * H);
  grow(dh_, H);
  grow(dc_, H);
  grow(da_, 4 * H);
  grow(dy_, ny);
  grow(tmp_, std::max({nx, 4 * H, ny}));
  steps_ = 0;
  pending_ = -1;
  reverse_open_ = false;
  stamp_ = 0;
}

bool LstmWorkspace::fits(const Lstm& net) const {
  return capacity_ > 0 && nx_ == net.input_dim() && H_ == net.hidden_size() &&
         ny_ == net.output_dim();
}

// ============================================================ network

Lstm::Lstm(Index input_dim, Index hidden, Index output_dim) {
  for (auto [value, what] : {std::pair{input_dim, "input dimension"},
                             std::pair{hidden, "hidden size"}, std::pair{output_dim, "output dimension"}}) {
    if (value < 1 || value > kMaxLstmDim) {
      throw InvalidArgument(std::string("nn::Lstm: ") + what + " must be in [1, " +
                            std::to_string(kMaxLstmDim) + "], got " + std::to_string(value));
    }
  }
  nx_ = input_dim;
  H_ = hidden;
  ny_ = output_dim;
  params_.assign(static_cast<size_t>(parameter_count(nx_, H_, ny_)), 0.0);
  mean_ = Eigen::VectorXd::Zero(nx_);
  std_ = Eigen::VectorXd::Ones(nx_);
  scale_ = Eigen::VectorXd::Ones(ny_);
  offset_ = Eigen::VectorXd::Zero(ny_);
  touch();
}

Index Lstm::parameter_count(Index input_dim, Index hidden, Index output_dim) {
  return 4 * hidden * (input_dim + hidden + 1) + output_dim * (hidden + 1);
}

void Lstm::touch() { stamp_ = g_next_lstm_stamp.fetch_add(1, std::memory_order_relaxed); }

std::string Lstm::describe() const {
  return "lstm " + std::to_string(nx_) + " -> " + std::to_string(H_) + " -> " +
         std::to_string(ny_);
}

std::string Lstm::parameter_name(Index k) const {
  if (k < 0 || k >= num_parameters()) {
    throw InvalidArgument("nn::Lstm::parameter_name: index " + std::to_string(k) +
                          " out of range [0, " + std::to_string(num_parameters()) + ")");
  }
  auto rc = [](Index r, Index c) { return "(" + std::to_string(r) + ", " + std::to_string(c) + ")"; };
  if (k < hidden_weight_offset()) {
    const Index r = k / nx_, c = k % nx_;
    return std::string("weight_ih.") + kGateNames[r / H_] + rc(r % H_, c);
  }
  if (k < bias_offset()) {
    const Index j = k - hidden_weight_offset(), r = j / H_, c = j % H_;
    return std::string("weight_hh.") + kGateNames[r / H_] + rc(r % H_, c);
  }
  if (k < output_weight_offset()) {
    const Index r = k - bias_offset();
    return std::string("bias.") + kGateNames[r / H_] + "(" + std::to_string(r % H_) + ")";
  }
  if (k < output_bias_offset()) {
    const Index j = k - output_weight_offset();
    return "weight_out" + rc(j / H_, j % H_);
  }
  return "bias_out(" + std::to_string(k - output_bias_offset()) + ")";
}

void Lstm::get_parameters(double* out) const {
  if (out == nullptr) throw InvalidArgument("nn::Lstm::get_parameters: null pointer");
  std::copy(params_.begin(), params_.end(), out);
}

void Lstm::set_parameters(const double* values) {
  if (values == nullptr) throw InvalidArgument("nn::Lstm::set_parameters: null pointer");
  for (Index k = 0; k < num_parameters(); ++k) {
    if (!std::isfinite(values[k])) {
      throw InvalidArgument("nn::Lstm::set_parameters: " + parameter_name(k) + " (flat index " +
                            std::to_string(k) + ") is not finite (" + format_number(values[k]) +
                            ") in " + describe());
    }
  }
  std::copy(values, values + num_parameters(), params_.begin());
  touch();
}

void Lstm::set_input_normalization(const Eigen::VectorXd& mean, const Eigen::VectorXd& std) {
  if (mean.size() != nx_ || std.size() != nx_) {
    throw InvalidArgument("nn::Lstm::set_input_normalization: mean/std sizes " +
                          std::to_string(mean.size()) + "/" + std::to_string(std.size()) +
                          ", expected " + std::to_string(nx_) + " (" + describe() + ")");
  }
  for (Index i = 0; i < nx_; ++i) {
    if (!std::isfinite(mean[i]) || !std::isfinite(std[i]) || !(std[i] > 0.0)) {
      throw InvalidArgument("nn::Lstm::set_input_normalization: input " + std::to_string(i) +
                            " needs a finite mean and a finite std > 0, got " +
                            format_number(mean[i]) + ", " + format_number(std[i]));
    }
  }
  mean_ = mean;
  std_ = std;
  touch();
}

void Lstm::set_output_scaling(const Eigen::VectorXd& scale, const Eigen::VectorXd& offset) {
  if (scale.size() != ny_ || offset.size() != ny_) {
    throw InvalidArgument("nn::Lstm::set_output_scaling: scale/offset sizes " +
                          std::to_string(scale.size()) + "/" + std::to_string(offset.size()) +
                          ", expected " + std::to_string(ny_) + " (" + describe() + ")");
  }
  for (Index i = 0; i < ny_; ++i) {
    if (!std::isfinite(scale[i]) || !std::isfinite(offset[i])) {
      throw InvalidArgument("nn::Lstm::set_output_scaling: output " + std::to_string(i) +
                            " has a non-finite scale or offset (" + format_number(scale[i]) +
                            ", " + format_number(offset[i]) + ")");
    }
  }
  scale_ = scale;
  offset_ = offset;
  touch();
}

void Lstm::initialize(std::mt19937_64& engine, double forget_bias) {
  if (empty()) throw InvalidArgument("nn::Lstm::initialize: the network is empty");
  const double k = 1.0 / std::sqrt(static_cast<double>(H_));
  for (double& p : params_) p = k * std::fma(2.0, random::uniform01(engine), -1.0);
  if (!std::isnan(forget_bias)) {
    if (!std::isfinite(forget_bias)) {
      throw InvalidArgument("nn::Lstm::initialize: forget_bias must be finite or NaN, got " +
                            format_number(forget_bias));
    }
    std::fill_n(params_.begin() + bias_offset() + H_, H_, forget_bias);
  }
  touch();
}

// ------------------------------------------------ checks

void Lstm::check_ws(const LstmWorkspace& ws, const char* function) const {
  if (empty()) throw InvalidArgument(std::string("nn::Lstm::") + function + ": the network is empty");
  if (!ws.fits(*this)) {
    throw InvalidArgument(std::string("nn::Lstm::") + function +
                          ": the workspace was not sized for this network (" + describe() +
                          "); construct or reserve() it with the network");
  }
}

void Lstm::check_recorded(const LstmWorkspace& ws, const char* function) const {
  check_ws(ws, function);
  if (ws.stamp_ == 0 || ws.stamp_ != stamp_) {
    throw InvalidArgument(std::string("nn::Lstm::") + function +
                          ": the workspace does not hold a forward pass of this network with its "
                          "current parameters and normalization (run begin()/forward_step() or "
                          "forward() with the same workspace first)");
  }
}

// ------------------------------------------------ forward

void Lstm::begin(const double* h0, const double* c0, LstmWorkspace& ws) const {
  check_ws(ws, "begin");
  for (Index j = 0; j < H_; ++j) {
    const double h = h0 ? h0[j] : 0.0, c = c0 ? c0[j] : 0.0;
    if (!std::isfinite(h) || !std::isfinite(c)) {
      throw NumericalError("nn::Lstm::begin: initial state " + std::to_string(j) +
                           " is not finite (h " + format_number(h) + ", c " + format_number(c) +
                           ") in " + describe());
    }
    ws.h_[j] = h;
    ws.c_[j] = c;
  }
  ws.steps_ = 0;
  ws.pending_ = -1;
  ws.reverse_open_ = false;
  ws.stamp_ = stamp_;
}

void Lstm::forward_step(const double* input, double* output, LstmWorkspace& ws) const {
  using Eigen::Map;
  using Eigen::VectorXd;
  check_ws(ws, "forward_step");
  if (ws.stamp_ != stamp_ || ws.reverse_open_) {
    throw InvalidArgument("nn::Lstm::forward_step: call begin() first (no sequence open in the "
                          "workspace for this network's current parameters)");
  }
  if (input == nullptr || output == nullptr) {
    throw InvalidArgument("nn::Lstm::forward_step: null input or output pointer");
  }
  const Index t = ws.steps_;
  if (t >= ws.capacity_) {
    throw InvalidArgument("nn::Lstm::forward_step: the workspace holds " +
                          std::to_string(ws.capacity_) + " steps, step " + std::to_string(t) +
                          " does not fit (reserve() more)");
  }
  const Index H = H_, nx = nx_;
  double* xt = ws.xt_.data() + t * nx;
  for (Index j = 0; j < nx; ++j) {
    if (!std::isfinite(input[j])) {
      throw NumericalError("nn::Lstm::forward_step: input " + std::to_string(j) + " of step " +
                           std::to_string(t) + " is not finite (" + format_number(input[j]) +
                           ") in " + describe());
    }
    xt[j] = (input[j] - mean_[j]) / std_[j];
  }
  const double* h_prev = ws.h_.data() + t * H;
  const double* c_prev = ws.c_.data() + t * H;
  double* h = ws.h_.data() + (t + 1) * H;
  double* c = ws.c_.data() + (t + 1) * H;
  double* gates = ws.gates_.data() + t * 4 * H;
  double* tc = ws.tc_.data() + t * H;

  Map<VectorXd> a(gates, 4 * H);
  a = Map<const VectorXd>(params_.data() + bias_offset(), 4 * H);
  a.noalias() += Map<const RowMatrixXd>(params_.data(), 4 * H, nx) * Map<const VectorXd>(xt, nx);
  a.noalias() += Map<const RowMatrixXd>(params_.data() + hidden_weight_offset(), 4 * H, H) *
                 Map<const VectorXd>(h_prev, H);
  for (Index j = 0; j < H; ++j) {
    const double i = sigmoid(gates[j]);
    const double f = sigmoid(gates[H + j]);
    const double g = std::tanh(gates[2 * H + j]);
    const double o = sigmoid(gates[3 * H + j]);
    gates[j] = i;
    gates[H + j] = f;
    gates[2 * H + j] = g;
    gates[3 * H + j] = o;
    c[j] = f * c_prev[j] + i * g;
    tc[j] = std::tanh(c[j]);
    h[j] = o * tc[j];
  }
  Map<VectorXd> y(output, ny_);
  y = Map<const VectorXd>(params_.data() + output_bias_offset(), ny_);
  y.noalias() += Map<const RowMatrixXd>(params_.data() + output_weight_offset(), ny_, H) *
                 Map<const VectorXd>(h, H);
  for (Index k = 0; k < ny_; ++k) {
    output[k] = scale_[k] * output[k] + offset_[k];
    if (!std::isfinite(output[k])) {
      throw NumericalError("nn::Lstm::forward_step: output " + std::to_string(k) + " of step " +
                           std::to_string(t) + " is not finite (" + format_number(output[k]) +
                           ") in " + describe());
    }
  }
  ws.steps_ = t + 1;
}

void Lstm::forward(const double* inputs, Index steps, const double* h0, const double* c0,
                   double* outputs, LstmWorkspace& ws) const {
  check_ws(ws, "forward");
  if (steps < 1 || steps > ws.capacity_) {
    throw InvalidArgument("nn::Lstm::forward: " + std::to_string(steps) +
                          " steps, the workspace holds [1, " + std::to_string(ws.capacity_) + "]");
  }
  if (inputs == nullptr || outputs == nullptr) {
    throw InvalidArgument("nn::Lstm::forward: null inputs or outputs pointer");
  }
  begin(h0, c0, ws);
  for (Index t = 0; t < steps; ++t) forward_step(inputs + t * nx_, outputs + t * ny_, ws);
}

void Lstm::step(const double* h, const double* c, const double* input, double* h_next,
                double* c_next, double* output, LstmWorkspace& ws) const {
  if (h_next == nullptr || c_next == nullptr) {
    throw InvalidArgument("nn::Lstm::step: null h_next or c_next pointer");
  }
  begin(h, c, ws);
  forward_step(input, output, ws);
  std::copy(ws.hidden(0), ws.hidden(0) + H_, h_next);
  std::copy(ws.cell(0), ws.cell(0) + H_, c_next);
}

// ------------------------------------------------ backward through time

void Lstm::begin_backward(const double* grad_h_final, const double* grad_c_final,
                          LstmWorkspace& ws) const {
  check_recorded(ws, "begin_backward");
  if (ws.steps_ < 1) throw InvalidArgument("nn::Lstm::begin_backward: no step was run forward");
  for (Index j = 0; j < H_; ++j) {
    ws.dh_[j] = grad_h_final ? grad_h_final[j] : 0.0;
    ws.dc_[j] = grad_c_final ? grad_c_final[j] : 0.0;
    if (!std::isfinite(ws.dh_[j]) || !std::isfinite(ws.dc_[j])) {
      throw NumericalError("nn::Lstm::begin_backward: final-state gradient " + std::to_string(j) +
                           " is not finite");
    }
  }
  ws.pending_ = ws.steps_ - 1;
  ws.reverse_open_ = true;
}

Index Lstm::backward_step(const double* grad_output, double* grad_input, double* grad_params,
                          LstmWorkspace& ws) const {
  using Eigen::Map;
  using Eigen::VectorXd;
  check_recorded(ws, "backward_step");
  const Index t = ws.pending_;
  if (!ws.reverse_open_ || t < 0) {
    throw InvalidArgument(
        "nn::Lstm::backward_step: no step left to process (call begin_backward() first; every "
        "recorded step is processed once)");
  }
  const Index H = H_, nx = nx_, ny = ny_;
  const double* gates = ws.gates_.data() + t * 4 * H;
  const double* tc = ws.tc_.data() + t * H;
  const double* h = ws.h_.data() + (t + 1) * H;
  const double* h_prev = ws.h_.data() + t * H;
  const double* c_prev = ws.c_.data() + t * H;
  const double* xt = ws.xt_.data() + t * nx;
  double* dh = ws.dh_.data();
  double* dc = ws.dc_.data();
  double* da = ws.da_.data();

  // Output layer: y = s ⊙ (W_y h + b_y) + offset.
  if (grad_output != nullptr) {
    double* dy = ws.dy_.data();
    for (Index k = 0; k < ny; ++k) {
      if (!std::isfinite(grad_output[k])) {
        throw NumericalError("nn::Lstm::backward_step: grad_output " + std::to_string(k) +
                             " of step " + std::to_string(t) + " is not finite");
      }
      dy[k] = grad_output[k] * scale_[k];
    }
    const Map<const VectorXd> dyv(dy, ny);
    const Map<const RowMatrixXd> Wy(params_.data() + output_weight_offset(), ny, H);
    Map<VectorXd>(dh, H).noalias() += Wy.transpose() * dyv;
    if (grad_params != nullptr) {
      Map<RowMatrixXd>(grad_params + output_weight_offset(), ny, H).noalias() +=
          dyv * Map<const VectorXd>(h, H).transpose();
      Map<VectorXd>(grad_params + output_bias_offset(), ny) += dyv;
    }
  }
  // Cell and gates (dh, dc: total ∂L/∂h_t, ∂L/∂c_t from later steps and y_t).
  for (Index j = 0; j < H; ++j) {
    const double i = gates[j], f = gates[H + j], g = gates[2 * H + j], o = gates[3 * H + j];
    const double dct = dc[j] + dh[j] * o * (1.0 - tc[j] * tc[j]);
    da[j] = dct * g * i * (1.0 - i);
    da[H + j] = dct * c_prev[j] * f * (1.0 - f);
    da[2 * H + j] = dct * i * (1.0 - g * g);
    da[3 * H + j] = dh[j] * tc[j] * o * (1.0 - o);
    dc[j] = dct * f;  // ∂L/∂c_{t−1}
  }
  const Map<const VectorXd> dav(da, 4 * H);
  const Map<const RowMatrixXd> Wx(params_.data(), 4 * H, nx);
  const Map<const RowMatrixXd> Wh(params_.data() + hidden_weight_offset(), 4 * H, H);
  if (grad_params != nullptr) {
    Map<RowMatrixXd>(grad_params, 4 * H, nx).noalias() += dav * Map<const VectorXd>(xt, nx).transpose();
    Map<RowMatrixXd>(grad_params + hidden_weight_offset(), 4 * H, H).noalias() +=
        dav * Map<const VectorXd>(h_prev, H).transpose();
    Map<VectorXd>(grad_params + bias_offset(), 4 * H) += dav;
  }
  Map<VectorXd>(dh, H).noalias() = Wh.transpose() * dav;  // ∂L/∂h_{t−1}
  if (grad_input != nullptr) {
    Map<VectorXd> dx(ws.tmp_.data(), nx);
    dx.noalias() = Wx.transpose() * dav;
    for (Index j = 0; j < nx; ++j) grad_input[j] = dx[j] / std_[j];
  }
  ws.pending_ = t - 1;
  return t;
}

void Lstm::end_backward(double* grad_h0, double* grad_c0, LstmWorkspace& ws) const {
  check_recorded(ws, "end_backward");
  if (!ws.reverse_open_) {
    throw InvalidArgument("nn::Lstm::end_backward: no reverse pass is open (call begin_backward())");
  }
  if (ws.pending_ != -1) {
    throw InvalidArgument("nn::Lstm::end_backward: " + std::to_string(ws.pending_ + 1) +
                          " recorded steps were not processed by backward_step()");
  }
  ws.reverse_open_ = false;
  if (grad_h0) std::copy(ws.dh_.begin(), ws.dh_.begin() + H_, grad_h0);
  if (grad_c0) std::copy(ws.dc_.begin(), ws.dc_.begin() + H_, grad_c0);
}

void Lstm::backward(const double* grad_outputs, const double* grad_h_final,
                    const double* grad_c_final, double* grad_params, double* grad_inputs,
                    double* grad_h0, double* grad_c0, LstmWorkspace& ws) const {
  begin_backward(grad_h_final, grad_c_final, ws);
  for (Index t = ws.steps_ - 1; t >= 0; --t) {
    backward_step(grad_outputs ? grad_outputs + t * ny_ : nullptr,
                  grad_inputs ? grad_inputs + t * nx_ : nullptr, grad_params, ws);
  }
  end_backward(grad_h0, grad_c0, ws);
}

}  // namespace neuralsim::nn
