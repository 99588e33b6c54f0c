// Small dense multilayer perceptrons placed inside the dynamics (NeuralSim
// paper §III): learned residual forces, friction or drag terms evaluated at
// every step, in every scalar type the engine runs in.
//
// Numeric only: no I/O, no YAML, no logging (weight files: io/network_file).
//
// ---------------------------------------------------------------- layout
// A network maps an input x ∈ R^{n_0} to an output y ∈ R^{n_L} through L
// dense layers, layer l (0-based) mapping
// n_l -> n_{l+1}:
//
//   x̃     = (x - input_mean) ⊘ input_std              input normalization
//   a_0    = x̃
//   z_l    = W_l a_l + b_l,   W_l: n_{l+1} × n_l      pre-activation
//   a_{l+1}= σ_l(z_l)                                 per-layer activation
//   y      = output_scale ⊙ a_L + output_offset       output scaling
//
// (⊘, ⊙ elementwise.) Normalization and scaling are stored with the weights
// but are not trainable parameters: they are not part of the flat parameter
// vector and receive no gradient.
//
// Flat parameter vector (num_parameters() = Σ_l n_{l+1} (n_l + 1) entries),
// layer by layer, each layer's weight matrix row-major then its bias:
//
//   [ W_0(0,0) W_0(0,1) … W_0(0,n_0-1)  W_0(1,0) … W_0(n_1-1,n_0-1)  b_0(0) … b_0(n_1-1)
//     W_1 row-major …  b_1 …  …  W_{L-1} …  b_{L-1} … ]
//
// weight_offset(l) and bias_offset(l) give the start of W_l and b_l. The
// same layout is used by get_parameters/set_parameters, by
// forward_with_parameters and by the parameter gradient of backward(). The
// Mlp stores its weights in exactly this vector (as double).
//
// ---------------------------------------------------------------- scalars
// forward<S> runs in any scalar S: double (Eigen matrix–vector fast path),
// ceres::Jet (forward-mode derivatives) and a future reverse-mode scalar.
// The generic path needs from S: construction from double, S±double,
// S*double, S/double, S+S, S*S, and ADL functions tanh, exp, expm1, log1p,
// sin; branches (relu, elu, softplus, sigmoid) test neuralsim::to_double(z),
// which is correct for derivative-carrying scalars because each branch is the
// function's exact local expression (at z == 0 exactly, relu and elu take
// the z <= 0 branch: derivative 0 for relu, 1 for elu).
//
// ---------------------------------------------------------------- memory
// All scratch space lives in a Workspace<S>, allocated once by its
// constructor. forward, forward_with_parameters and backward do not touch the
// heap (tests/nn/mlp_test.cpp counts malloc), except to build the exception
// on an error. One Workspace per thread: a const Mlp can be shared.
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/scalar.hpp"

namespace neuralsim::nn {

using Index = Eigen::Index;
using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// ---------------------------------------------------------------- activations

enum class Activation { kIdentity, kTanh, kRelu, kElu, kSoftplus, kSigmoid, kSin };

// "identity", "tanh", "relu", "elu", "softplus", "sigmoid", "sin".
const char* activation_name(Activation a);
// All valid names, in enum order.
const std::vector<std::string>& activation_names();
// Exact, case-sensitive name -> Activation; InvalidArgument listing the valid
// names otherwise.
Activation parse_activation(const std::string& name);

// σ(z). elu uses α = 1: z for z > 0, e^z − 1 otherwise. softplus is
// log(1 + e^z) evaluated without overflow; sigmoid is 1 / (1 + e^−z)
// evaluated without overflow.
template <class S>
S activate(Activation a, const S& z) {
  using std::exp;
  using std::expm1;
  using std::log1p;
  using std::sin;
  using std::tanh;
  switch (a) {
    case Activation::kIdentity:
      return z;
    case Activation::kTanh:
      return tanh(z);
    case Activation::kRelu:
      return to_double(z) > 0.0 ? z : S(0.0);
    case Activation::kElu:
      return to_double(z) > 0.0 ? z : S(expm1(z));
    case Activation::kSoftplus:
      return to_double(z) > 0.0 ? S(z + log1p(exp(-z))) : S(log1p(exp(z)));
    case Activation::kSigmoid:
      if (to_double(z) >= 0.0) return S(1.0 / (1.0 + exp(-z)));
      {
        const S e = exp(z);
        return S(e / (1.0 + e));
      }
    case Activation::kSin:
      return sin(z);
  }
  return z;  // unreachable: every enumerator is handled above
}

// dσ/dz at z (double), the value backward() uses.
double activation_derivative(Activation a, double z);

// ---------------------------------------------------------------- initialization

// Weight initialization schemes; biases are always set to zero.
//   Xavier (Glorot) uniform: U(−r, r), r = √(6 / (fan_in + fan_out))
//   Xavier (Glorot) normal:  N(0, 2 / (fan_in + fan_out))
//   He uniform:              U(−r, r), r = √(6 / fan_in)
//   He normal:               N(0, 2 / fan_in)
// (fan_in = n_l, fan_out = n_{l+1}; the uniform ones have the same variance
// as their normal counterparts.)
enum class Init { kXavierUniform, kXavierNormal, kHeUniform, kHeNormal };

// Bit-reproducible random numbers. std::uniform_real_distribution and
// std::normal_distribution are implementation-defined (libstdc++, libc++ and
// MSVC give different numbers for the same engine), and std::log/sin/cos
// may differ in the last bit between math libraries, so neither is used.
// Only the std::mt19937_64 engine (fully specified by the standard), IEEE-754
// +, −, ×, ÷, √ and explicit std::fma (all correctly rounded) and std::frexp
// (exact) are involved, and every multiply-add is written as std::fma so that
// the compiler's FMA contraction (-ffp-contract) cannot change a bit. The
// same seed therefore gives the same weights on every IEEE-754 platform.
namespace random {

// (engine() >> 11) · 2^−53: the 53 high bits of one draw, in [0, 1).
double uniform01(std::mt19937_64& engine);

// Natural logarithm of a positive finite x from IEEE basic operations only
// (frexp, then 2·atanh((m−1)/(m+1)) by its series); within 2 ulp of the
// correctly rounded value. Used by the normal sampler; exposed for tests.
double portable_log(double x);

// Standard normal draws by the Marsaglia polar form of Box–Muller: draw
// u, v = 2·uniform01 − 1 until 0 < s = u² + v² < 1, then return
// u·√(−2 ln s / s) and keep v·√(−2 ln s / s) for the next call.
class NormalSampler {
 public:
  double operator()(std::mt19937_64& engine);

 private:
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace random

// ---------------------------------------------------------------- network

// One dense layer: its number of outputs and its activation.
struct LayerSpec {
  Index outputs = 0;
  Activation activation = Activation::kIdentity;
};

class Mlp;

// Scratch space for one evaluation of one network shape: the normalized
// input, every layer's pre-activation z_l and activation a_{l+1} (kept for
// backward) and two gradient buffers. Constructing it is the only
// allocation; it fits every Mlp with the same layer sizes.
template <class S>
class Workspace {
 public:
  Workspace() = default;
  explicit Workspace(const Mlp& net);

  // True if this workspace was made for a network with `net`'s layer sizes.
  bool fits(const Mlp& net) const;

  // Values cached by the last forward pass (for inspection and tests).
  const S* normalized_input() const { return buf_.data(); }
  const S* pre_activation(Index layer) const { return buf_.data() + z_offset_[layer]; }
  const S* activation_output(Index layer) const {
    return buf_.data() + z_offset_[layer] + dims_[layer + 1];
  }

 private:
  friend class Mlp;
  S* x() { return buf_.data(); }
  S* z(Index l) { return buf_.data() + z_offset_[l]; }
  S* a(Index l) { return buf_.data() + z_offset_[l] + dims_[l + 1]; }

  std::vector<Index> dims_;      // n_0 … n_L of the network it was made for
  std::vector<Index> z_offset_;  // start of z_l; a_{l+1} follows it
  std::vector<S> buf_;
  Index g0_offset_ = 0, g1_offset_ = 0;  // two gradient buffers, max width each
  std::uint64_t stamp_ = 0;  // Mlp::stamp_ of the forward<double> pass cached here; 0 = none
};

class Mlp {
 public:
  // Floor of the fitted input standard deviation: an input that is (nearly)
  // constant in the training data is scaled by 1 / floor, not by 1 / 0.
  static constexpr double kDefaultStdFloor = 1e-6;

  // An empty network (no layers); it must be replaced before use.
  Mlp();
  // `input_dim` ≥ 1 inputs, then the layers in order (each outputs ≥ 1).
  // Weights and biases start at zero, normalization at (mean 0, std 1),
  // output scaling at (scale 1, offset 0).
  Mlp(Index input_dim, std::vector<LayerSpec> layers);
  // input -> hidden_widths[0] -> … -> output_dim, the hidden layers with
  // `hidden`, the last with `output` activation.
  Mlp(Index input_dim, const std::vector<Index>& hidden_widths, Index output_dim,
      Activation hidden, Activation output = Activation::kIdentity);

  // ------------------------------------------------ shape
  Index input_dim() const { return dims_.front(); }
  Index output_dim() const { return dims_.back(); }
  Index num_layers() const { return static_cast<Index>(activations_.size()); }
  Index layer_input_dim(Index layer) const { return dims_[check_layer(layer)]; }
  Index layer_output_dim(Index layer) const { return dims_[check_layer(layer) + 1]; }
  Activation activation(Index layer) const { return activations_[check_layer(layer)]; }
  // n_0 … n_L.
  const std::vector<Index>& dims() const { return dims_; }
  // Largest n_l, l = 0 … L.
  Index max_width() const;
  // "8 -> 16 tanh -> 16 tanh -> 4 identity".
  std::string describe() const;

  // ------------------------------------------------ parameters (flat layout above)
  Index num_parameters() const { return static_cast<Index>(params_.size()); }
  Index weight_offset(Index layer) const { return offsets_[check_layer(layer)]; }
  Index bias_offset(Index layer) const;
  const double* parameters() const { return params_.data(); }
  void get_parameters(double* out) const;
  // Copies num_parameters() values; InvalidArgument (naming the layer and
  // entry) if any is not finite, in which case nothing is changed.
  void set_parameters(const double* values);
  Eigen::Map<const RowMatrixXd> weight(Index layer) const;
  Eigen::Map<const Eigen::VectorXd> bias(Index layer) const;
  // Sets W_l (row-major, n_{l+1} × n_l) and b_l; finite values only.
  void set_layer(Index layer, const double* weight_row_major, const double* bias);

  // ------------------------------------------------ normalization and scaling
  const Eigen::VectorXd& input_mean() const { return mean_; }
  const Eigen::VectorXd& input_std() const { return std_; }
  const Eigen::VectorXd& output_scale() const { return scale_; }
  const Eigen::VectorXd& output_offset() const { return offset_; }
  // mean finite, std finite and > 0, sizes input_dim().
  void set_input_normalization(const Eigen::VectorXd& mean, const Eigen::VectorXd& std);
  // Fits mean and (population, 1/N) standard deviation per input on
  // `num_samples` ≥ 1 row-major samples (sample k, input i at
  // samples[k·input_dim() + i]); a std below `std_floor` (> 0) is raised to
  // it. Two passes (mean, then squared deviations) for accuracy.
  void fit_input_normalization(const double* samples, Index num_samples,
                               double std_floor = kDefaultStdFloor);
  // scale and offset finite, sizes output_dim().
  void set_output_scaling(const Eigen::VectorXd& scale, const Eigen::VectorXd& offset);

  // ------------------------------------------------ initialization
  // Draws every layer's weights (layer 0 first, each W row-major, one draw
  // per weight; normal schemes use the polar sampler's pairs in order, one
  // sampler for the whole call) and zeroes the biases. Normalization and
  // scaling are left unchanged. Bit-reproducible for a seed (see random::).
  void initialize(Init scheme, std::mt19937_64& engine);
  // The same for one layer (e.g. He for relu layers, Xavier for the last).
  void initialize_layer(Index layer, Init scheme, std::mt19937_64& engine);

  // ------------------------------------------------ evaluation
  // output[0 … output_dim) = network(input[0 … input_dim)) with this
  // network's (double) weights. For S = double the activations are cached in
  // `ws` for backward(). InvalidArgument if `ws` does not fit this network
  // or a pointer is null; NumericalError if an input or output is not finite.
  template <class S>
  void forward(const S* input, S* output, Workspace<S>& ws) const;
  // The same with the sizes of the caller's arrays checked (InvalidArgument).
  template <class S>
  void forward(const S* input, Index input_size, S* output, Index output_size,
               Workspace<S>& ws) const;

  // The network with the weights taken from `params` (flat layout,
  // num_parameters() scalars) instead of the stored ones, so that
  // derivatives with respect to the weights can be taken (ceres::Jet seeds
  // on params). Normalization and scaling are the stored ones. The cached
  // activations are not usable by backward().
  template <class S>
  void forward_with_parameters(const S* params, const S* input, S* output,
                               Workspace<S>& ws) const;
  template <class S>
  void forward_with_parameters(const S* params, Index num_params, const S* input,
                               Index input_size, S* output, Index output_size,
                               Workspace<S>& ws) const;

  // Exact reverse pass (vector–Jacobian product, no tape) through the
  // forward<double> pass cached in `ws`, which must be the last pass run in
  // `ws` and with this network's current weights (InvalidArgument otherwise).
  // Given g = ∂L/∂y (output_dim values):
  //   grad_input  (if not null) := ∂L/∂x      (input_dim values, overwritten)
  //   grad_params (if not null) += ∂L/∂θ      (num_parameters values, flat
  //                                            layout, accumulated)
  // Cost: one Wᵀ·δ product and one rank-1 update δ·a_lᵀ per layer, i.e.
  // ≈ 2× the multiply-adds of forward() (≈ 1× without grad_params) plus one
  // derivative per unit (tanh, sigmoid, relu and identity reuse the cached
  // activation; elu, softplus and sin evaluate exp or cos once per unit).
  // Measured (bench/nn_bench.cpp, 12 inputs, 6 outputs, 2–3 hidden layers
  // of width 64–256): the full pass takes ≈ 3–3.5× a relu forward, within
  // ~±20% of a bare Eigen chain of the same products (the rank-1 updates
  // read and write the whole gradient, which is memory-bound); the
  // input-only pass ≈ 1–1.3×. A tanh forward pays one std::tanh per unit,
  // which backward does not.
  void backward(const double* grad_output, double* grad_input, double* grad_params,
                Workspace<double>& ws) const;
  // The same with array sizes checked; a null pointer's size is ignored.
  void backward(const double* grad_output, Index grad_output_size, double* grad_input,
                Index grad_input_size, double* grad_params, Index grad_params_size,
                Workspace<double>& ws) const;

 private:
  template <class S>
  friend class Workspace;

  Index check_layer(Index layer) const;
  template <class S>
  void check_call(const void* input, const void* output, const Workspace<S>& ws,
                  const char* function) const;
  void check_sizes(const char* function, const char* what, Index expected, Index actual) const;
  template <class S>
  void check_input(const S* input, const char* function) const;
  template <class S>
  void check_output(const S* output, const char* function) const;
  [[noreturn]] void fail_not_finite(const char* function, const char* what, Index index,
                                    double value) const;
  void forward_double(const double* params, const double* input, double* output,
                      Workspace<double>& ws) const;
  template <class S, class P>
  void forward_generic(const P* params, const S* input, S* output, Workspace<S>& ws) const;
  void touch();  // new stamp_ after any change of weights, normalization or scaling

  std::vector<Index> dims_;              // n_0 … n_L
  std::vector<Activation> activations_;  // σ_0 … σ_{L−1}
  std::vector<Index> offsets_;           // start of W_l in params_
  std::vector<double> params_;           // flat layout above
  Eigen::VectorXd mean_, std_;           // input normalization (n_0)
  Eigen::VectorXd scale_, offset_;       // output scaling (n_L)
  std::uint64_t stamp_ = 0;              // unique per content version (process-wide counter)
};

// ============================================================ implementation

template <class S>
Workspace<S>::Workspace(const Mlp& net) : dims_(net.dims_) {
  if (net.num_layers() == 0) throw InvalidArgument("nn::Workspace: the network has no layers");
  Index size = dims_[0];
  z_offset_.resize(dims_.size() - 1);
  for (size_t l = 0; l + 1 < dims_.size(); ++l) {
    z_offset_[l] = size;
    size += 2 * dims_[l + 1];
  }
  const Index width = net.max_width();
  g0_offset_ = size;
  g1_offset_ = size + width;
  buf_.assign(static_cast<size_t>(size + 2 * width), S(0.0));
}

template <class S>
bool Workspace<S>::fits(const Mlp& net) const {
  return dims_ == net.dims_;
}

template <class S>
void Mlp::check_call(const void* input, const void* output, const Workspace<S>& ws,
                     const char* function) const {
  if (activations_.empty()) {
    throw InvalidArgument(std::string("nn::Mlp::") + function + ": the network has no layers");
  }
  if (!ws.fits(*this)) {
    throw InvalidArgument(std::string("nn::Mlp::") + function +
                          ": the workspace was made for a different network shape (network " +
                          describe() + ")");
  }
  if (input == nullptr || output == nullptr) {
    throw InvalidArgument(std::string("nn::Mlp::") + function + ": null input or output pointer");
  }
}

template <class S>
void Mlp::check_input(const S* input, const char* function) const {
  for (Index i = 0; i < input_dim(); ++i) {
    if (!is_finite(input[i])) fail_not_finite(function, "input", i, to_double(input[i]));
  }
}

template <class S>
void Mlp::check_output(const S* output, const char* function) const {
  for (Index i = 0; i < output_dim(); ++i) {
    if (!is_finite(output[i])) fail_not_finite(function, "output", i, to_double(output[i]));
  }
}

template <class S, class P>
void Mlp::forward_generic(const P* params, const S* input, S* output, Workspace<S>& ws) const {
  S* xt = ws.x();
  for (Index i = 0; i < dims_[0]; ++i) xt[i] = (input[i] - mean_[i]) / std_[i];
  const S* prev = xt;
  for (Index l = 0; l < num_layers(); ++l) {
    const Index n_in = dims_[l], n_out = dims_[l + 1];
    const P* W = params + offsets_[l];
    const P* b = W + n_in * n_out;
    S* z = ws.z(l);
    S* a = ws.a(l);
    const Activation act = activations_[l];
    for (Index i = 0; i < n_out; ++i) {
      S acc = S(b[i]);
      const P* row = W + i * n_in;
      for (Index j = 0; j < n_in; ++j) acc += row[j] * prev[j];
      z[i] = acc;
      a[i] = activate(act, acc);
    }
    prev = a;
  }
  for (Index i = 0; i < output_dim(); ++i) output[i] = scale_[i] * prev[i] + offset_[i];
}

template <class S>
void Mlp::forward(const S* input, S* output, Workspace<S>& ws) const {
  check_call(input, output, ws, "forward");
  check_input(input, "forward");
  if constexpr (std::is_same_v<S, double>) {
    ws.stamp_ = 0;
    forward_double(params_.data(), input, output, ws);
    check_output(output, "forward");
    ws.stamp_ = stamp_;
  } else {
    forward_generic<S, double>(params_.data(), input, output, ws);
    check_output(output, "forward");
  }
}

template <class S>
void Mlp::forward(const S* input, Index input_size, S* output, Index output_size,
                  Workspace<S>& ws) const {
  check_sizes("forward", "input", input_dim(), input_size);
  check_sizes("forward", "output", output_dim(), output_size);
  forward(input, output, ws);
}

template <class S>
void Mlp::forward_with_parameters(const S* params, const S* input, S* output,
                                  Workspace<S>& ws) const {
  check_call(input, output, ws, "forward_with_parameters");
  if (params == nullptr) {
    throw InvalidArgument("nn::Mlp::forward_with_parameters: null parameter pointer");
  }
  check_input(input, "forward_with_parameters");
  if constexpr (std::is_same_v<S, double>) {
    ws.stamp_ = 0;
    forward_double(params, input, output, ws);
  } else {
    forward_generic<S, S>(params, input, output, ws);
  }
  check_output(output, "forward_with_parameters");
}

template <class S>
void Mlp::forward_with_parameters(const S* params, Index num_params, const S* input,
                                  Index input_size, S* output, Index output_size,
                                  Workspace<S>& ws) const {
  check_sizes("forward_with_parameters", "parameter", num_parameters(), num_params);
  check_sizes("forward_with_parameters", "input", input_dim(), input_size);
  check_sizes("forward_with_parameters", "output", output_dim(), output_size);
  forward_with_parameters(params, input, output, ws);
}

}  // namespace neuralsim::nn
