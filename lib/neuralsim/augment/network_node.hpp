// A network on the reverse-mode tape as ONE external node (grad/tape.hpp):
// the forward pass runs in double (nn::Mlp::forward<double>), the tape
// records only its inputs and outputs, and the reverse sweep calls the MLP's
// exact backward pass (nn::Mlp::backward), which gives ∂L/∂x to the tape
// and accumulates ∂L/∂θ into a gradient buffer owned by the caller. The
// weights never appear on the tape.
//
// Memory: the tape keeps each call's input and output values; the node
// keeps one workspace. The reverse sweep visits the calls last to first,
// so backward() cannot reuse the activations of the recording pass: vjp()
// recomputes the forward pass of that call from its recorded inputs (one
// extra forward per call, no per-call storage of activations) and checks
// that it reproduces the recorded outputs bit for bit, which fails (a
// std::logic_error) if the weights changed between recording and reverse().
//
// Nothing is allocated per call once constructed (the tape's arenas aside:
// Tape::reserve).
#pragma once

#include <vector>

#include "neuralsim/grad/tape.hpp"
#include "neuralsim/nn/mlp.hpp"

namespace neuralsim {

class NetworkNode final : public ExternalFunction {
 public:
  // `net` must outlive the node and every reverse() of a tape that recorded
  // it; `grad` (net.num_parameters() values) receives ∂L/∂θ, accumulated.
  NetworkNode(const nn::Mlp& net, double* grad);

  // y = net(x) recorded on `tape`: x[0..input_dim) variables of `tape` or
  // constants, y[0..output_dim) become new variables of `tape`. The weights
  // receive their gradient even if every input is a constant.
  void record(Tape& tape, const Rev* x, Rev* y, std::int64_t tag = 0);

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override;

  const nn::Mlp& network() const { return *net_; }
  // The gradient buffer (may be changed, e.g. when the owner moves it).
  void set_gradient_buffer(double* grad) { grad_ = grad; }

 private:
  const nn::Mlp* net_;
  double* grad_;
  nn::Workspace<double> ws_;
  std::vector<double> x_, y_, y_check_;
};

}  // namespace neuralsim
