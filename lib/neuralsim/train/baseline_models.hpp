// Data-driven baselines: models with no physics that learn to step the state
// from data (NeuralSim paper §IV-B: "an MLP that predicts the next state or
// the state change; an LSTM"), trained and evaluated through the same
// WindowModel interface, windows and training modes as the hybrid
// simulators, so that the comparison differs only in the model.
//
// Both treat the state x = (q, q̇) as a plain vector of nq + nv numbers (a
// quaternion coordinate is predicted like any other and not renormalized)
// and step from one recorded sample to the next: they learn the recording's
// own sampling interval and ignore time stamps.
//
//   MlpStateModel   x̂_{k+1} = x̂_k + f_θ(x̂_k, u_k)      (predict_delta, default)
//                   x̂_{k+1} = f_θ(x̂_k, u_k)            (predict_delta = false)
//                   f_θ an nn::Mlp on the input [q; q̇; u] (u only with controls).
//   LstmStateModel  (y_k, h_k, c_k) = LSTM_θ([x̂_k; u_k], h_{k−1}, c_{k−1}),
//                   x̂_{k+1} = x̂_k + y_k, h_{−1} = c_{−1} = 0 at the start of
//                   every window and rollout (nn/lstm.hpp).
//
// Both networks normalize their input and scale their output with
// statistics of the training data (fit_normalization, or set_normalization
// with the caller's numbers): input mean/std of [q; q̇; u] over every sample
// that has a successor, output offset/scale = mean/std of the state change
// x_{k+1} − x_k (or of x_{k+1} for the direct MLP). The statistics are
// computed over the whole set, and per-trajectory partial sums are added in
// sorted order, so they are bit-identical whatever the order of the
// trajectories (they do not depend on the order data was seen).
//
// ---------------------------------------------------------------- modes
// With x̂_0 = x_0 (the window's first recorded state) and the loss of
// window_model.hpp, L = (1/K) Σ_k Σ_i w_i (x̂_{k+1,i} − x_{k+1,i})²:
//  - kOneStep: the input of step k is the recorded state x_k (teacher
//    forcing): x̂_{k+1} = x_k + f(x_k, u_k).
//  - kUnrolled: the input of step k is the prediction x̂_k; ∂L/∂θ by the
//    adjoint recursion λ_k = ∂L/∂x̂_k = 2 w ⊙ r_k / K + λ_{k+1} (delta only)
//    + (∂f_k/∂x̂_k)ᵀ λ_{k+1}, each step's network VJP (Mlp::backward,
//    Lstm::backward_step) applied to λ_{k+1}.
//  - kUnrolledDetached: the same rollout and loss value, but the state fed
//    from step k to step k+1 is treated as a constant (stop-gradient on
//    x̂_k, the identity skip of the delta form included): λ_{k+1} is just the
//    direct term 2 w ⊙ r_{k+1} / K. Equivalently, the gradient is the
//    kOneStep gradient of a window whose recorded states are replaced by the
//    model's own predictions (what tests/train/baseline_models_test.cpp
//    checks). This is "unrolling without temporal gradients" of seed 002
//    ("Differentiability in unrolled training of neural physics simulators
//    on transient dynamics", prediction setups): training sees its own
//    distribution shift but gets no long-term gradient through the
//    simulated state.
//
// The LSTM's hidden and cell states are carried across the window's steps
// from zero in ALL modes, and are differentiated through time in all modes
// (kOneStep and kUnrolledDetached included). Why: the detached mode of
// seed 002 cuts the gradient through the simulated *state* chain — the
// quantity a numerical solver would pass on, which is what carries the
// long-term gradients the comparison is about — while the hidden state is
// the network's own memory, part of the model's evaluation of one window.
// Detaching it as well would make every mode truncated BPTT of length 1 for
// W_h (the recurrent weights would only see the gradient of h_{k−1}'s value,
// never of what it remembers), a different and weaker model rather than a
// different training mode; with it kept, the three modes differ only in
// which inputs are used and in the state adjoint λ, exactly as for the MLP
// and for the hybrid simulators.
//
// Errors: sizes of x, windows, weights, q0, q̇0 and controls against the
// model are InvalidArgument (expected against actual); non-finite data in a
// window, a trajectory set or a rollout's initial state or controls is a
// DataError; non-finite x is InvalidArgument; a rollout that diverges to a
// non-finite prediction is a NumericalError (from the network).
//
// Saving (io/network_file.hpp, written by the tool layer): the MLP
// baseline's network is an ordinary nn::Mlp with its normalization and
// scaling (network(x), input_names(), output_names() give a NamedNetwork's
// fields); the LSTM exposes its dimensions, flat parameter vector and
// normalization through network(x) (nn::Lstm; no file format yet).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/nn/lstm.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/train/window_model.hpp"

namespace neuralsim {

// Statistics of a trajectory set for the baselines' normalization, over
// every sample k that has a successor (k < T − 1) of every trajectory.
struct StateStatistics {
  Eigen::VectorXd input_mean, input_std;  // nq + nv (+ nv with controls): [q; q̇; u_k]
  Eigen::VectorXd delta_mean, delta_std;  // nq + nv: x_{k+1} − x_k
  Eigen::VectorXd next_mean, next_std;    // nq + nv: x_{k+1}
  long long samples = 0;
};

// Population (1/N) means and standard deviations, each std raised to at
// least `std_floor`. Trajectories with fewer than two samples contribute
// nothing. DataError (naming the trajectory, sample and coordinate, expected
// against actual) on a q/q̇/τ shape that does not match nq, nv, on missing τ
// when use_controls, on a non-finite value, or when no trajectory has two
// samples. Bit-identical for any order of data.trajectories.
StateStatistics state_statistics(const TrajectorySet& data, int nq, int nv, bool use_controls,
                                 double std_floor = nn::Mlp::kDefaultStdFloor);

// Coordinate names for the network files' input/output names: input
// "q.<name>", "qd.<name>", "u.<name>"; output "delta.q.<name>" … or
// "next.q.<name>" …. <name> is q_names[i] / v_names[j] when given (sizes nq,
// nv), else the index.
struct StateNames {
  std::vector<std::string> q_names;  // empty or nq
  std::vector<std::string> v_names;  // empty or nv
};

// ============================================================ MLP

struct MlpStateModelOptions {
  int nq = 0;
  int nv = 0;
  bool use_controls = true;  // input [q; q̇; u] (u: nv values) or [q; q̇]
  std::vector<int> hidden_widths = {64, 64};
  nn::Activation activation = nn::Activation::kTanh;  // hidden layers; the output is linear
  nn::Init init = nn::Init::kXavierUniform;
  bool predict_delta = true;
  std::uint64_t seed = 1;  // std::mt19937_64 seed of the initial weights
  StateNames names;
};

class MlpStateModel final : public WindowModel {
 public:
  // Network [q; q̇; u] → hidden_widths (activation) → nq + nv (identity),
  // seeded initialization, normalization (0, 1) and scaling (1, 0) until
  // fit_normalization / set_normalization. InvalidArgument on bad options.
  explicit MlpStateModel(MlpStateModelOptions options);

  // "mlp-delta" or "mlp-direct".
  std::string name() const override;
  int num_parameters() const override;
  // The stored network's weights (the seeded ones, or those of set_network).
  Eigen::VectorXd initial_parameters() const override;
  double loss(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
              const WindowLossWeights& weights, Eigen::VectorXd* grad) override;
  void rollout(const Eigen::VectorXd& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
               const Eigen::MatrixXd& controls, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
               const Trajectory* recording = nullptr) override;  // recording: unused (sample controls)
  std::unique_ptr<WindowModel> clone() const override;

  // ------------------------------------------------ normalization
  // From state_statistics(data, nq, nv, use_controls): input (mean, std);
  // output (offset, scale) = (delta_mean, delta_std) or (next_mean, next_std).
  void fit_normalization(const TrajectorySet& data);
  // Caller's numbers: input_mean/std (input_dim()), output_offset/scale
  // (state_dim()); std > 0, everything finite.
  void set_normalization(const Eigen::VectorXd& input_mean, const Eigen::VectorXd& input_std,
                         const Eigen::VectorXd& output_offset, const Eigen::VectorXd& output_scale);

  // ------------------------------------------------ networks and names
  int state_dim() const { return options_.nq + options_.nv; }
  int input_dim() const { return state_dim() + (options_.use_controls ? options_.nv : 0); }
  const MlpStateModelOptions& options() const { return options_; }
  // The stored network (initial parameters, normalization, scaling).
  const nn::Mlp& network() const { return net_; }
  // A copy of it with parameters x (e.g. the trained ones), for saving.
  nn::Mlp network(const Eigen::VectorXd& x) const;
  // Replaces the stored network (e.g. read from a file): same layer
  // dimensions as the options give (InvalidArgument otherwise); its weights
  // become initial_parameters(), its normalization and scaling are used.
  void set_network(const nn::Mlp& net);
  // "mlp.layer<l>.weight(<row>, <col>)", "mlp.layer<l>.bias(<row>)", flat order.
  std::vector<std::string> parameter_names() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // ------------------------------------------------ sizing
  // Number of weights and biases of the model's MLP with these hidden widths
  // (Σ_l n_{l+1} (n_l + 1); no hidden layer = a linear model).
  static long long parameter_count(int nq, int nv, bool use_controls,
                                   const std::vector<int>& hidden_widths);
  // The width h ≥ 1 (all `hidden_layers` layers of width h) whose parameter
  // count is closest to `target` ≥ 1 (the smaller h on a tie), e.g. to match
  // a hybrid model's count.
  static int hidden_width_for_parameter_count(long long target, int nq, int nv, bool use_controls,
                                              int hidden_layers);

 private:
  void load(const Eigen::VectorXd& x, const char* function);
  template <TrainingMode kMode>
  double window_loss(const TrainingWindow& w, const Eigen::VectorXd& wts, Eigen::VectorXd* grad);

  MlpStateModelOptions options_;
  nn::Mlp net_;   // stored network: initial parameters, normalization
  nn::Mlp work_;  // evaluation copy whose parameters are set to x
  std::vector<nn::Workspace<double>> ws_;  // one per step of the longest window seen
  Eigen::MatrixXd inputs_, pred_, resid_;  // input_dim × K, state_dim × (K+1), state_dim × K
  Eigen::VectorXd out_, lambda_, carry_, dinput_, wts_;
};

// ============================================================ LSTM

struct LstmStateModelOptions {
  int nq = 0;
  int nv = 0;
  bool use_controls = true;
  int hidden = 64;
  double forget_bias = 1.0;  // nn::Lstm::initialize
  std::uint64_t seed = 1;
  StateNames names;
};

class LstmStateModel final : public WindowModel {
 public:
  // LSTM [q; q̇; u] → hidden → nq + nv, seeded initialization
  // (nn::Lstm::initialize with forget_bias), normalization (0, 1) and scaling
  // (1, 0) until fit_normalization / set_normalization.
  explicit LstmStateModel(LstmStateModelOptions options);

  std::string name() const override;  // "lstm-delta"
  int num_parameters() const override;
  Eigen::VectorXd initial_parameters() const override;
  double loss(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
              const WindowLossWeights& weights, Eigen::VectorXd* grad) override;
  void rollout(const Eigen::VectorXd& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
               const Eigen::MatrixXd& controls, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
               const Trajectory* recording = nullptr) override;  // recording: unused (sample controls)
  std::unique_ptr<WindowModel> clone() const override;

  // As MlpStateModel's; output (offset, scale) = (delta_mean, delta_std).
  void fit_normalization(const TrajectorySet& data);
  void set_normalization(const Eigen::VectorXd& input_mean, const Eigen::VectorXd& input_std,
                         const Eigen::VectorXd& output_offset, const Eigen::VectorXd& output_scale);

  int state_dim() const { return options_.nq + options_.nv; }
  int input_dim() const { return state_dim() + (options_.use_controls ? options_.nv : 0); }
  const LstmStateModelOptions& options() const { return options_; }
  // Dimensions, flat parameters (nn/lstm.hpp layout), normalization.
  const nn::Lstm& network() const { return net_; }
  nn::Lstm network(const Eigen::VectorXd& x) const;
  void set_network(const nn::Lstm& net);
  // "lstm.weight_ih.f(3, 1)", … (nn::Lstm::parameter_name with "lstm.").
  std::vector<std::string> parameter_names() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // 4H (n_x + H + 1) + (nq + nv)(H + 1), n_x = nq + nv (+ nv with controls).
  static long long parameter_count(int nq, int nv, bool use_controls, int hidden);
  // The hidden size H ≥ 1 whose parameter count is closest to `target` ≥ 1
  // (the smaller H on a tie).
  static int hidden_width_for_parameter_count(long long target, int nq, int nv, bool use_controls);

 private:
  void load(const Eigen::VectorXd& x, const char* function);
  template <TrainingMode kMode>
  double window_loss(const TrainingWindow& w, const Eigen::VectorXd& wts, Eigen::VectorXd* grad);

  LstmStateModelOptions options_;
  nn::Lstm net_;
  nn::Lstm work_;
  nn::LstmWorkspace ws_;
  Eigen::MatrixXd pred_, resid_;
  Eigen::VectorXd input_, out_, lambda_, carry_, dinput_, h_, c_, wts_;
};

}  // namespace neuralsim
