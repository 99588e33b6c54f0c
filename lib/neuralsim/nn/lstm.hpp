// A single-layer LSTM followed by a linear output layer: the recurrent
// data-driven baseline of the training layer (NeuralSim paper §IV-B, "an
// LSTM"), stepping a state from data alone.
//
// Numeric only, double only: no I/O, no YAML, no logging.
//
// ---------------------------------------------------------------- equations
// Long short-term memory (Hochreiter & Schmidhuber 1997) with the forget gate
// of Gers, Schmidhuber & Cummins (2000) and no peephole connections, in the
// form of Graves (2013, eq. 7–11 without the peephole terms) and of
// PyTorch's nn.LSTM (gate order i, f, g, o). With input x_t ∈ R^{n_x},
// hidden and cell states h_t, c_t ∈ R^H and output y_t ∈ R^{n_y}:
//
//   x̃_t = (x_t − input_mean) ⊘ input_std               input normalization
//   a_t = W_x x̃_t + W_h h_{t−1} + b                    a_t ∈ R^{4H}: [a_i a_f a_g a_o]
//   i_t = σ(a_i),  f_t = σ(a_f),  g_t = tanh(a_g),  o_t = σ(a_o)
//   c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t
//   h_t = o_t ⊙ tanh(c_t)
//   y_t = output_scale ⊙ (W_y h_t + b_y) + output_offset
//
// (σ the logistic function, ⊙/⊘ elementwise.) PyTorch has two bias vectors
// b_ih and b_hh that only ever appear as their sum; here there is one, b.
// Normalization and scaling are stored with the weights but are not
// trainable: they are not in the flat parameter vector and get no gradient.
//
// ---------------------------------------------------------------- layout
// Flat parameter vector, num_parameters() = 4H (n_x + H + 1) + n_y (H + 1):
//
//   W_x  4H × n_x, row-major   rows [0,H) gate i, [H,2H) f, [2H,3H) g, [3H,4H) o
//   W_h  4H × H,   row-major   same row blocks
//   b    4H                    same blocks
//   W_y  n_y × H,  row-major
//   b_y  n_y
//
// in that order; the *_offset() accessors give each block's start. The same
// layout is used by get/set_parameters and by the gradient of backward().
//
// ---------------------------------------------------------------- initialization
// initialize(): every weight and bias, in flat order, from U(−k, k) with
// k = 1/√H — PyTorch's nn.LSTM (and its nn.Linear output layer, whose fan-in
// is H, gives the same bound) — drawn as Mlp does (53-bit uniforms, fma), so
// it is bit-reproducible for a seed. Then the forget-gate biases b_f are SET
// to `forget_bias` (default 1; Gers et al. 2000, Jozefowicz, Zaremba &
// Sutskever 2015: a forget gate that starts near-open lets gradients pass
// through the cell over many steps at the start of training). PyTorch does
// not do this; pass forget_bias = NaN to keep the drawn values.
//
// ---------------------------------------------------------------- memory
// An LstmWorkspace holds, for up to `capacity` steps, what backward through
// time needs (x̃_t, the four gate activations, c_t, tanh c_t, h_t, and the
// initial h, c), and the reverse pass's carries. Constructing or reserve()-ing
// it is the only allocation: forward, forward_step, step and backward do not
// touch the heap (tests/nn/lstm_test.cpp counts malloc). One workspace per
// thread; a const Lstm can be shared.
//
// ---------------------------------------------------------------- two ways to run
// (1) Whole sequences: forward(inputs, T, h0, c0, outputs, ws), then
//     backward(...) with ∂L/∂y_t for every t (and optionally ∂L/∂h_T, ∂L/∂c_T).
// (2) Step by step, for models whose next input depends on the previous
//     output (a rollout fed back its own predictions): begin(), then
//     forward_step() T times; in reverse, begin_backward(), then
//     backward_step() T times (it processes steps T−1, …, 0 in that order,
//     each call taking ∂L/∂y_t of the step it processes), then
//     end_backward() for ∂L/∂(h_0, c_0). The caller may compute ∂L/∂y_t from
//     ∂L/∂x_{t+1} returned by the previous backward_step() call.
// (1) is a loop over (2). step(h, c, x) is one step without any record for
// backward, for free rollouts.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"

namespace neuralsim::nn {

using Index = Eigen::Index;

class Lstm;

class LstmWorkspace {
 public:
  LstmWorkspace() = default;
  // Fits `net`'s dimensions, room for `capacity` ≥ 1 steps.
  LstmWorkspace(const Lstm& net, Index capacity);
  // Makes it fit `net` with room for at least `capacity` steps; allocates
  // only if the dimensions change or the capacity grows. Forgets any pass.
  void reserve(const Lstm& net, Index capacity);

  bool fits(const Lstm& net) const;
  Index capacity() const { return capacity_; }
  // Steps run forward since the last begin().
  Index steps() const { return steps_; }

  // Cached values of the last forward pass, t = 0 … steps()−1 (for tests and
  // for the caller's own use). hidden(t)/cell(t) are h_t, c_t after step t;
  // initial_hidden()/initial_cell() are h_{−1} = h0, c_{−1} = c0.
  const double* normalized_input(Index t) const { return xt_.data() + t * nx_; }
  // [i f g o] after their nonlinearities, 4H values.
  const double* gates(Index t) const { return gates_.data() + t * 4 * H_; }
  const double* hidden(Index t) const { return h_.data() + (t + 1) * H_; }
  const double* cell(Index t) const { return c_.data() + (t + 1) * H_; }
  const double* initial_hidden() const { return h_.data(); }
  const double* initial_cell() const { return c_.data(); }

 private:
  friend class Lstm;
  Index nx_ = 0, H_ = 0, ny_ = 0, capacity_ = 0;
  Index steps_ = 0;     // forward steps recorded since begin()
  Index pending_ = -1;  // next step backward_step() processes (−1: none left)
  bool reverse_open_ = false;  // between begin_backward() and end_backward()
  std::uint64_t stamp_ = 0;  // Lstm::stamp_ of the recorded pass; 0 = none
  std::vector<double> xt_, gates_, h_, c_, tc_;  // per step (h_, c_ with the initial state first)
  std::vector<double> dh_, dc_, da_, dy_, tmp_;  // reverse-pass carries and scratch
};

class Lstm {
 public:
  static constexpr double kDefaultStdFloor = 1e-6;

  // An empty network; replace it before use.
  Lstm() = default;
  // input_dim, hidden, output_dim ≥ 1. Weights start at zero, normalization
  // at (0, 1), output scaling at (1, 0).
  Lstm(Index input_dim, Index hidden, Index output_dim);

  // ------------------------------------------------ shape
  Index input_dim() const { return nx_; }
  Index hidden_size() const { return H_; }
  Index output_dim() const { return ny_; }
  bool empty() const { return H_ == 0; }
  // "lstm 5 -> 32 -> 4".
  std::string describe() const;
  // 4H (n_x + H + 1) + n_y (H + 1), without constructing a network.
  static Index parameter_count(Index input_dim, Index hidden, Index output_dim);

  // ------------------------------------------------ parameters (layout above)
  Index num_parameters() const { return static_cast<Index>(params_.size()); }
  Index input_weight_offset() const { return 0; }
  Index hidden_weight_offset() const { return 4 * H_ * nx_; }
  Index bias_offset() const { return 4 * H_ * (nx_ + H_); }
  Index output_weight_offset() const { return 4 * H_ * (nx_ + H_ + 1); }
  Index output_bias_offset() const { return output_weight_offset() + ny_ * H_; }
  const double* parameters() const { return params_.data(); }
  const std::vector<double>& parameter_vector() const { return params_; }
  void get_parameters(double* out) const;
  // num_parameters() finite values, else InvalidArgument naming the block and
  // entry (nothing changed).
  void set_parameters(const double* values);
  // "weight_ih.f(3, 1)", "weight_hh.o(0, 2)", "bias.i(2)", "weight_out(1, 0)",
  // "bias_out(1)" for flat index k.
  std::string parameter_name(Index k) const;

  // ------------------------------------------------ normalization and scaling
  const Eigen::VectorXd& input_mean() const { return mean_; }
  const Eigen::VectorXd& input_std() const { return std_; }
  const Eigen::VectorXd& output_scale() const { return scale_; }
  const Eigen::VectorXd& output_offset() const { return offset_; }
  // mean finite; std finite and > 0; sizes input_dim().
  void set_input_normalization(const Eigen::VectorXd& mean, const Eigen::VectorXd& std);
  // scale, offset finite; sizes output_dim().
  void set_output_scaling(const Eigen::VectorXd& scale, const Eigen::VectorXd& offset);

  // ------------------------------------------------ initialization (see above)
  void initialize(std::mt19937_64& engine, double forget_bias = 1.0);

  // ------------------------------------------------ evaluation
  // Starts a sequence from (h0, c0) (H values each; null = zeros).
  void begin(const double* h0, const double* c0, LstmWorkspace& ws) const;
  // Runs the next step: output (n_y values) for input (n_x values), recorded
  // in ws for backward. InvalidArgument if ws does not fit or is full;
  // NumericalError on a non-finite input or output.
  void forward_step(const double* input, double* output, LstmWorkspace& ws) const;
  // Whole sequence: inputs n_x × T and outputs n_y × T column-major (step t
  // at inputs + t·n_x); T ≤ ws.capacity(). h0, c0 may be null (zeros).
  void forward(const double* inputs, Index steps, const double* h0, const double* c0,
               double* outputs, LstmWorkspace& ws) const;
  // One step without a record: (h, c, input) → (h_next, c_next, output). The
  // outputs may alias h and c. ws: any workspace that fits (its record of a
  // previous pass is discarded).
  void step(const double* h, const double* c, const double* input, double* h_next,
            double* c_next, double* output, LstmWorkspace& ws) const;

  // ------------------------------------------------ backward through time
  // Exact reverse pass (BPTT, no tape) through the forward pass recorded in
  // ws, which must be the last pass run in ws with this network's current
  // parameters and normalization (InvalidArgument otherwise).
  //
  // Opens the reverse pass with ∂L/∂h_{T−1}, ∂L/∂c_{T−1} of the last recorded
  // state (each null = 0).
  void begin_backward(const double* grad_h_final, const double* grad_c_final,
                      LstmWorkspace& ws) const;
  // Processes the latest step t not yet processed (T−1 first): given
  // grad_output = ∂L/∂y_t (n_y values; null = 0), adds ∂L/∂θ to grad_params
  // (num_parameters(), accumulated; null: not computed) and writes ∂L/∂x_t to
  // grad_input (n_x values, overwritten; null: not computed). Returns t.
  Index backward_step(const double* grad_output, double* grad_input, double* grad_params,
                      LstmWorkspace& ws) const;
  // After all T steps: ∂L/∂h0 and ∂L/∂c0 (H values each, overwritten; null:
  // not written). Closes the reverse pass.
  void end_backward(double* grad_h0, double* grad_c0, LstmWorkspace& ws) const;
  // The whole reverse pass: grad_outputs n_y × T (null = all 0), grad_inputs
  // n_x × T (overwritten; null = not computed), the rest as above.
  void backward(const double* grad_outputs, const double* grad_h_final,
                const double* grad_c_final, double* grad_params, double* grad_inputs,
                double* grad_h0, double* grad_c0, LstmWorkspace& ws) const;

 private:
  void check_ws(const LstmWorkspace& ws, const char* function) const;
  void check_recorded(const LstmWorkspace& ws, const char* function) const;
  void touch();

  Index nx_ = 0, H_ = 0, ny_ = 0;
  std::vector<double> params_;
  Eigen::VectorXd mean_, std_, scale_, offset_;
  std::uint64_t stamp_ = 0;
};

}  // namespace neuralsim::nn
