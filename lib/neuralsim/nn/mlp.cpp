#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/core/format.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

namespace neuralsim::nn {
namespace {

// Per-process counter behind Mlp::stamp_: a workspace remembers the stamp of
// the network state its forward pass used, so backward() can refuse a
// workspace filled by another network or before the weights changed.
std::atomic<std::uint64_t> g_next_stamp{1};

// Largest accepted layer width; keeps the products of sizes far from
// overflow. (Files are limited much more tightly, see io/network_file.hpp.)
constexpr Index kMaxLayerWidth = Index(1) << 24;

bool valid_activation(Activation a) {
  switch (a) {
    case Activation::kIdentity:
    case Activation::kTanh:
    case Activation::kRelu:
    case Activation::kElu:
    case Activation::kSoftplus:
    case Activation::kSigmoid:
    case Activation::kSin:
      return true;
  }
  return false;
}

// a[i] = σ(z[i]) with the switch hoisted out of the loop. The element
// functions are activate<double>, the same formulas as the generic path.
template <Activation A>
void activate_array(const double* z, double* a, Index n) {
  for (Index i = 0; i < n; ++i) a[i] = activate<double>(A, z[i]);
}

void activate_array(Activation act, const double* z, double* a, Index n) {
  switch (act) {
    case Activation::kIdentity:
      std::copy(z, z + n, a);
      return;
    case Activation::kTanh:
      return activate_array<Activation::kTanh>(z, a, n);
    case Activation::kRelu:
      return activate_array<Activation::kRelu>(z, a, n);
    case Activation::kElu:
      return activate_array<Activation::kElu>(z, a, n);
    case Activation::kSoftplus:
      return activate_array<Activation::kSoftplus>(z, a, n);
    case Activation::kSigmoid:
      return activate_array<Activation::kSigmoid>(z, a, n);
    case Activation::kSin:
      return activate_array<Activation::kSin>(z, a, n);
  }
}

// g[i] *= σ'(z[i]), using the cached activation a = σ(z) where that is exact.
void multiply_by_derivative(Activation act, const double* z, const double* a, double* g,
                            Index n) {
  switch (act) {
    case Activation::kIdentity:
      return;
    case Activation::kTanh:
      for (Index i = 0; i < n; ++i) g[i] *= 1.0 - a[i] * a[i];
      return;
    case Activation::kRelu:
      for (Index i = 0; i < n; ++i) g[i] = z[i] > 0.0 ? g[i] : 0.0;
      return;
    case Activation::kElu:
      // e^z, not a + 1: a + 1 loses all relative accuracy for z ≪ 0.
      for (Index i = 0; i < n; ++i) g[i] = z[i] > 0.0 ? g[i] : g[i] * std::exp(z[i]);
      return;
    case Activation::kSoftplus:
      for (Index i = 0; i < n; ++i) g[i] *= activate<double>(Activation::kSigmoid, z[i]);
      return;
    case Activation::kSigmoid:
      for (Index i = 0; i < n; ++i) g[i] *= a[i] * (1.0 - a[i]);
      return;
    case Activation::kSin:
      for (Index i = 0; i < n; ++i) g[i] *= std::cos(z[i]);
      return;
  }
}

// Draws one layer's weights (row-major) and zeroes its biases.
void draw_layer(Init scheme, Index n_in, Index n_out, double* weights, double* biases,
                std::mt19937_64& engine, random::NormalSampler& normal) {
  const double fan_sum = static_cast<double>(n_in + n_out);
  const double fan_in = static_cast<double>(n_in);
  const Index n = n_in * n_out;
  switch (scheme) {
    case Init::kXavierUniform:
    case Init::kHeUniform: {
      const double r = std::sqrt(6.0 / (scheme == Init::kXavierUniform ? fan_sum : fan_in));
      for (Index k = 0; k < n; ++k) weights[k] = r * std::fma(2.0, random::uniform01(engine), -1.0);
      break;
    }
    case Init::kXavierNormal:
    case Init::kHeNormal: {
      const double sigma = std::sqrt(2.0 / (scheme == Init::kXavierNormal ? fan_sum : fan_in));
      for (Index k = 0; k < n; ++k) weights[k] = sigma * normal(engine);
      break;
    }
    default:
      throw InvalidArgument("nn::Mlp::initialize: unknown initialization scheme " +
                            std::to_string(static_cast<int>(scheme)));
  }
  std::fill(biases, biases + n_out, 0.0);
}

}  // namespace

// ============================================================ activations

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kIdentity:
      return "identity";
    case Activation::kTanh:
      return "tanh";
    case Activation::kRelu:
      return "relu";
    case Activation::kElu:
      return "elu";
    case Activation::kSoftplus:
      return "softplus";
    case Activation::kSigmoid:
      return "sigmoid";
    case Activation::kSin:
      return "sin";
  }
  return "<invalid activation>";
}

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names = {
      activation_name(Activation::kIdentity), activation_name(Activation::kTanh),
      activation_name(Activation::kRelu),     activation_name(Activation::kElu),
      activation_name(Activation::kSoftplus), activation_name(Activation::kSigmoid),
      activation_name(Activation::kSin)};
  return names;
}

Activation parse_activation(const std::string& name) {
  const std::vector<std::string>& names = activation_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Activation>(i);
  }
  std::string valid;
  for (size_t i = 0; i < names.size(); ++i) valid += (i ? ", " : "") + names[i];
  throw InvalidArgument("unknown activation '" + name + "' (valid: " + valid + ")");
}

double activation_derivative(Activation a, double z) {
  switch (a) {
    case Activation::kIdentity:
      return 1.0;
    case Activation::kTanh: {
      const double t = std::tanh(z);
      return 1.0 - t * t;
    }
    case Activation::kRelu:
      return z > 0.0 ? 1.0 : 0.0;
    case Activation::kElu:
      return z > 0.0 ? 1.0 : std::exp(z);
    case Activation::kSoftplus:
      return activate<double>(Activation::kSigmoid, z);
    case Activation::kSigmoid: {
      const double s = activate<double>(Activation::kSigmoid, z);
      return s * (1.0 - s);
    }
    case Activation::kSin:
      return std::cos(z);
  }
  throw InvalidArgument("nn::activation_derivative: invalid activation " +
                        std::to_string(static_cast<int>(a)));
}

// ============================================================ random

namespace random {

double uniform01(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

double portable_log(double x) {
  if (std::isnan(x) || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  constexpr double kSqrtHalf = 0.70710678118654752440;
  constexpr double kLn2 = 0.69314718055994530942;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m·2^e, m ∈ [0.5, 1), exact
  if (m < kSqrtHalf) {
    m *= 2.0;  // exact
    --e;
  }
  // m ∈ [√½, √2): ln m = 2 atanh(t), t = (m − 1)/(m + 1), |t| ≤ 3 − 2√2.
  const double t = (m - 1.0) / (m + 1.0);
  const double t2 = t * t;  // ≤ 0.0295: t2^12 / 25 < 1e-20, the series is converged
  double p = 1.0 / 25.0;
  for (int k = 11; k >= 0; --k) p = std::fma(p, t2, 1.0 / (2.0 * k + 1.0));
  const double log_m = (2.0 * t) * p;
  return std::fma(static_cast<double>(e), kLn2, log_m);
}

double NormalSampler::operator()(std::mt19937_64& engine) {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u = 0.0, v = 0.0, s = 0.0;
  do {
    u = std::fma(2.0, uniform01(engine), -1.0);
    v = std::fma(2.0, uniform01(engine), -1.0);
    s = std::fma(u, u, v * v);
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * portable_log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

}  // namespace random

// ============================================================ Mlp

Mlp::Mlp() : dims_{0} { touch(); }

Mlp::Mlp(Index input_dim, std::vector<LayerSpec> layers) {
  if (input_dim < 1 || input_dim > kMaxLayerWidth) {
    throw InvalidArgument("nn::Mlp: input dimension must be in [1, " + std::to_string(kMaxLayerWidth) +
                          "], got " + std::to_string(input_dim));
  }
  if (layers.empty()) throw InvalidArgument("nn::Mlp: a network needs at least one layer");
  dims_.push_back(input_dim);
  Index total = 0;
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerSpec& spec = layers[l];
    if (spec.outputs < 1 || spec.outputs > kMaxLayerWidth) {
      throw InvalidArgument("nn::Mlp: layer " + std::to_string(l) + " must have [1, " +
                            std::to_string(kMaxLayerWidth) + "] outputs, got " +
                            std::to_string(spec.outputs));
    }
    if (!valid_activation(spec.activation)) {
      throw InvalidArgument("nn::Mlp: layer " + std::to_string(l) + " has an invalid activation " +
                            std::to_string(static_cast<int>(spec.activation)));
    }
    offsets_.push_back(total);
    total += spec.outputs * (dims_.back() + 1);
    dims_.push_back(spec.outputs);
    activations_.push_back(spec.activation);
  }
  params_.assign(static_cast<size_t>(total), 0.0);
  mean_ = Eigen::VectorXd::Zero(input_dim);
  std_ = Eigen::VectorXd::Ones(input_dim);
  scale_ = Eigen::VectorXd::Ones(dims_.back());
  offset_ = Eigen::VectorXd::Zero(dims_.back());
  touch();
}

Mlp::Mlp(Index input_dim, const std::vector<Index>& hidden_widths, Index output_dim,
         Activation hidden, Activation output)
    : Mlp(input_dim, [&] {
        std::vector<LayerSpec> layers;
        for (Index w : hidden_widths) layers.push_back({w, hidden});
        layers.push_back({output_dim, output});
        return layers;
      }()) {}

void Mlp::touch() { stamp_ = g_next_stamp.fetch_add(1, std::memory_order_relaxed); }

Index Mlp::check_layer(Index layer) const {
  if (layer < 0 || layer >= num_layers()) {
    throw InvalidArgument("nn::Mlp: layer index " + std::to_string(layer) + " out of range [0, " +
                          std::to_string(num_layers()) + ")");
  }
  return layer;
}

Index Mlp::bias_offset(Index layer) const {
  check_layer(layer);
  return offsets_[layer] + dims_[layer] * dims_[layer + 1];
}

Index Mlp::max_width() const { return *std::max_element(dims_.begin(), dims_.end()); }

std::string Mlp::describe() const {
  std::string out = std::to_string(dims_.front());
  for (Index l = 0; l < num_layers(); ++l) {
    out += " -> " + std::to_string(dims_[l + 1]) + " " + activation_name(activations_[l]);
  }
  return out;
}

void Mlp::check_sizes(const char* function, const char* what, Index expected,
                      Index actual) const {
  if (expected == actual) return;
  throw InvalidArgument(std::string("nn::Mlp::") + function + ": " + what + " size " +
                        std::to_string(actual) + " does not match the network (" + describe() +
                        "), expected " + std::to_string(expected));
}

void Mlp::fail_not_finite(const char* function, const char* what, Index index,
                          double value) const {
  throw NumericalError(std::string("nn::Mlp::") + function + ": " + what + " " +
                       std::to_string(index) + " is not finite (" + format_number(value) +
                       ") in network " + describe());
}

// ------------------------------------------------ parameters

void Mlp::get_parameters(double* out) const {
  if (out == nullptr) throw InvalidArgument("nn::Mlp::get_parameters: null pointer");
  std::copy(params_.begin(), params_.end(), out);
}

void Mlp::set_parameters(const double* values) {
  if (values == nullptr) throw InvalidArgument("nn::Mlp::set_parameters: null pointer");
  for (Index l = 0; l < num_layers(); ++l) {
    const Index n_in = dims_[l], n_out = dims_[l + 1];
    for (Index k = 0; k < n_out * (n_in + 1); ++k) {
      const double v = values[offsets_[l] + k];
      if (std::isfinite(v)) continue;
      const std::string where = k < n_out * n_in ? "weight (" + std::to_string(k / n_in) + ", " +
                                                       std::to_string(k % n_in) + ")"
                                                 : "bias " + std::to_string(k - n_out * n_in);
      throw InvalidArgument("nn::Mlp::set_parameters: layer " + std::to_string(l) + " " + where +
                            " (flat index " + std::to_string(offsets_[l] + k) + ") is not finite (" +
                            format_number(v) + ")");
    }
  }
  std::copy(values, values + params_.size(), params_.begin());
  touch();
}

Eigen::Map<const RowMatrixXd> Mlp::weight(Index layer) const {
  check_layer(layer);
  return Eigen::Map<const RowMatrixXd>(params_.data() + offsets_[layer], dims_[layer + 1],
                                       dims_[layer]);
}

Eigen::Map<const Eigen::VectorXd> Mlp::bias(Index layer) const {
  return Eigen::Map<const Eigen::VectorXd>(params_.data() + bias_offset(layer), dims_[layer + 1]);
}

void Mlp::set_layer(Index layer, const double* weight_row_major, const double* bias) {
  check_layer(layer);
  if (weight_row_major == nullptr || bias == nullptr) {
    throw InvalidArgument("nn::Mlp::set_layer: null pointer");
  }
  const Index n_in = dims_[layer], n_out = dims_[layer + 1];
  for (Index k = 0; k < n_out * n_in; ++k) {
    if (!std::isfinite(weight_row_major[k])) {
      throw InvalidArgument("nn::Mlp::set_layer: layer " + std::to_string(layer) + " weight (" +
                            std::to_string(k / n_in) + ", " + std::to_string(k % n_in) +
                            ") is not finite (" + format_number(weight_row_major[k]) + ")");
    }
  }
  for (Index i = 0; i < n_out; ++i) {
    if (!std::isfinite(bias[i])) {
      throw InvalidArgument("nn::Mlp::set_layer: layer " + std::to_string(layer) + " bias " +
                            std::to_string(i) + " is not finite (" + format_number(bias[i]) + ")");
    }
  }
  double* w = params_.data() + offsets_[layer];
  std::copy(weight_row_major, weight_row_major + n_out * n_in, w);
  std::copy(bias, bias + n_out, w + n_out * n_in);
  touch();
}

// ------------------------------------------------ normalization and scaling

void Mlp::set_input_normalization(const Eigen::VectorXd& mean, const Eigen::VectorXd& std) {
  check_sizes("set_input_normalization", "mean", input_dim(), mean.size());
  check_sizes("set_input_normalization", "std", input_dim(), std.size());
  for (Index i = 0; i < input_dim(); ++i) {
    if (!std::isfinite(mean[i])) {
      throw InvalidArgument("nn::Mlp::set_input_normalization: mean " + std::to_string(i) +
                            " is not finite (" + format_number(mean[i]) + ")");
    }
    if (!std::isfinite(std[i]) || !(std[i] > 0.0)) {
      throw InvalidArgument("nn::Mlp::set_input_normalization: std " + std::to_string(i) +
                            " must be finite and > 0, got " + format_number(std[i]));
    }
  }
  mean_ = mean;
  std_ = std;
  touch();
}

void Mlp::fit_input_normalization(const double* samples, Index num_samples, double std_floor) {
  if (num_layers() == 0) {
    throw InvalidArgument("nn::Mlp::fit_input_normalization: the network has no layers");
  }
  if (samples == nullptr || num_samples < 1) {
    throw InvalidArgument("nn::Mlp::fit_input_normalization: need at least one sample, got " +
                          std::to_string(samples == nullptr ? 0 : num_samples));
  }
  if (!std::isfinite(std_floor) || !(std_floor > 0.0)) {
    throw InvalidArgument("nn::Mlp::fit_input_normalization: std_floor must be finite and > 0, got " +
                          format_number(std_floor));
  }
  const Index n = input_dim();
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(n);
  for (Index k = 0; k < num_samples; ++k) {
    for (Index i = 0; i < n; ++i) {
      const double v = samples[k * n + i];
      if (!std::isfinite(v)) {
        throw InvalidArgument("nn::Mlp::fit_input_normalization: sample " + std::to_string(k) +
                              ", input " + std::to_string(i) + " is not finite (" +
                              format_number(v) + ")");
      }
      mean[i] += v;
    }
  }
  mean /= static_cast<double>(num_samples);
  Eigen::VectorXd var = Eigen::VectorXd::Zero(n);
  for (Index k = 0; k < num_samples; ++k) {
    for (Index i = 0; i < n; ++i) {
      const double d = samples[k * n + i] - mean[i];
      var[i] += d * d;
    }
  }
  var /= static_cast<double>(num_samples);
  Eigen::VectorXd std(n);
  for (Index i = 0; i < n; ++i) std[i] = std::max(std::sqrt(var[i]), std_floor);
  mean_ = mean;
  std_ = std;
  touch();
}

void Mlp::set_output_scaling(const Eigen::VectorXd& scale, const Eigen::VectorXd& offset) {
  check_sizes("set_output_scaling", "scale", output_dim(), scale.size());
  check_sizes("set_output_scaling", "offset", output_dim(), offset.size());
  for (Index i = 0; i < output_dim(); ++i) {
    if (!std::isfinite(scale[i]) || !std::isfinite(offset[i])) {
      throw InvalidArgument("nn::Mlp::set_output_scaling: output " + std::to_string(i) +
                            " has a non-finite scale or offset (" + format_number(scale[i]) +
                            ", " + format_number(offset[i]) + ")");
    }
  }
  scale_ = scale;
  offset_ = offset;
  touch();
}

// ------------------------------------------------ initialization

void Mlp::initialize(Init scheme, std::mt19937_64& engine) {
  random::NormalSampler normal;
  for (Index l = 0; l < num_layers(); ++l) {
    double* w = params_.data() + offsets_[l];
    draw_layer(scheme, dims_[l], dims_[l + 1], w, w + dims_[l] * dims_[l + 1], engine, normal);
  }
  touch();
}

void Mlp::initialize_layer(Index layer, Init scheme, std::mt19937_64& engine) {
  check_layer(layer);
  random::NormalSampler normal;
  double* w = params_.data() + offsets_[layer];
  draw_layer(scheme, dims_[layer], dims_[layer + 1], w, w + dims_[layer] * dims_[layer + 1],
             engine, normal);
  touch();
}

// ------------------------------------------------ evaluation

void Mlp::forward_double(const double* params, const double* input, double* output,
                         Workspace<double>& ws) const {
  using Eigen::Map;
  using Eigen::VectorXd;
  double* xt = ws.x();
  for (Index i = 0; i < dims_[0]; ++i) xt[i] = (input[i] - mean_[i]) / std_[i];
  const double* prev = xt;
  for (Index l = 0; l < num_layers(); ++l) {
    const Index n_in = dims_[l], n_out = dims_[l + 1];
    const Map<const RowMatrixXd> W(params + offsets_[l], n_out, n_in);
    const Map<const VectorXd> b(params + offsets_[l] + n_in * n_out, n_out);
    Map<VectorXd> z(ws.z(l), n_out);
    z = b;
    z.noalias() += W * Map<const VectorXd>(prev, n_in);
    activate_array(activations_[l], ws.z(l), ws.a(l), n_out);
    prev = ws.a(l);
  }
  for (Index i = 0; i < output_dim(); ++i) output[i] = scale_[i] * prev[i] + offset_[i];
}

void Mlp::backward(const double* grad_output, double* grad_input, double* grad_params,
                   Workspace<double>& ws) const {
  using Eigen::Map;
  using Eigen::VectorXd;
  check_call(grad_output, grad_output, ws, "backward");
  if (ws.stamp_ == 0 || ws.stamp_ != stamp_) {
    throw InvalidArgument(
        "nn::Mlp::backward: the workspace does not hold a forward<double> pass of this network "
        "with its current weights (run forward() with the same workspace first; "
        "forward_with_parameters() passes cannot be differentiated by backward())");
  }
  for (Index i = 0; i < output_dim(); ++i) {
    if (!std::isfinite(grad_output[i])) fail_not_finite("backward", "grad_output", i, grad_output[i]);
  }
  double* g = ws.buf_.data() + ws.g0_offset_;
  double* h = ws.buf_.data() + ws.g1_offset_;
  for (Index i = 0; i < output_dim(); ++i) g[i] = grad_output[i] * scale_[i];  // ∂L/∂a_L
  for (Index l = num_layers() - 1; l >= 0; --l) {
    const Index n_in = dims_[l], n_out = dims_[l + 1];
    multiply_by_derivative(activations_[l], ws.z(l), ws.a(l), g, n_out);  // g = δ_l = ∂L/∂z_l
    const Map<const VectorXd> delta(g, n_out);
    if (grad_params != nullptr) {
      const double* prev = l > 0 ? ws.a(l - 1) : ws.x();
      Map<RowMatrixXd> dW(grad_params + offsets_[l], n_out, n_in);
      Map<VectorXd> db(grad_params + offsets_[l] + n_in * n_out, n_out);
      dW.noalias() += delta * Map<const VectorXd>(prev, n_in).transpose();
      db += delta;
    }
    if (l > 0 || grad_input != nullptr) {
      const Map<const RowMatrixXd> W(params_.data() + offsets_[l], n_out, n_in);
      Map<VectorXd>(h, n_in).noalias() = W.transpose() * delta;  // ∂L/∂a_l
      std::swap(g, h);
    }
  }
  if (grad_input != nullptr) {
    for (Index i = 0; i < input_dim(); ++i) grad_input[i] = g[i] / std_[i];
  }
}

void Mlp::backward(const double* grad_output, Index grad_output_size, double* grad_input,
                   Index grad_input_size, double* grad_params, Index grad_params_size,
                   Workspace<double>& ws) const {
  check_sizes("backward", "grad_output", output_dim(), grad_output_size);
  if (grad_input != nullptr) check_sizes("backward", "grad_input", input_dim(), grad_input_size);
  if (grad_params != nullptr) {
    check_sizes("backward", "grad_params", num_parameters(), grad_params_size);
  }
  backward(grad_output, grad_input, grad_params, ws);
}

}  // namespace neuralsim::nn
