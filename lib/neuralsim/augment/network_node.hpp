// A network on the reverse-mode tape as ONE external node (grad/tape.hpp):
// the forward pass runs in double (nn::Mlp::forward<double>), the tape
// records only its inputs and outputs, and the reverse sweep calls the MLP's
// exact backward pass (nn::Mlp::backward), which gives ∂L/∂x to the tape
// and accumulates ∂L/∂θ into a gradient buffer owned by the caller. The
// weights never appear on the tape.
//
// Forward cache. The reverse sweep visits the calls last to first, so the
// activations of a call are long overwritten in one shared workspace by the
// time its VJP runs. Each recorded call therefore runs its forward pass in
// a workspace of its own (nn::Workspace<double>: the normalized input, every
// layer's pre-activation and activation, the two gradient buffers), which
// backward() then reads directly: no second forward pass per call. The
// workspaces form a stack ordered by tape position (grad/call_slots.hpp) and
// are reused with the tape: a call recorded at a position at or before that of earlier calls
// (the tape was rewound or cleared, e.g. the next BPTT segment) releases
// theirs, so the node holds at most the calls of one recording (n_0 +
// 2 Σ n_l + 2 max n_l doubles each, 0.5 kB for 4 → 10 → 10 → 3) and stops
// allocating after the first segment. The workspace's index and a
// generation number travel as the tape's tag of the call. A call whose
// workspace is gone (recorded on another tape since) is recomputed from its
// recorded inputs, as before the cache, with a check that the outputs are
// reproduced bit for bit. Either way a change of the weights, the
// normalization or the scaling between recording and Tape::reverse() is a
// std::logic_error (backward() refuses a workspace whose stamp is not the
// network's current one; the recomputation would not reproduce the outputs).
//
// Nothing is allocated per call once the stack has grown (the tape's arenas
// aside: Tape::reserve).
#pragma once

#include <cstdint>
#include <vector>

#include "neuralsim/grad/call_slots.hpp"
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
  // receive their gradient even if every input is a constant. The node uses
  // the call's tape tag itself (forward cache above); `tag` is ignored.
  void record(Tape& tape, const Rev* x, Rev* y, std::int64_t tag = 0);

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override;

  const nn::Mlp& network() const { return *net_; }
  // The gradient buffer (may be changed, e.g. when the owner moves it).
  void set_gradient_buffer(double* grad) { grad_ = grad; }

  // Calls whose activations are cached, and the workspaces held (capacity).
  std::size_t cached_calls() const { return slots_.size(); }
  std::size_t cached_workspaces() const { return pool_.size(); }

 private:
  const nn::Mlp* net_;
  double* grad_;
  nn::Workspace<double> ws_;             // recomputation of a call whose workspace is gone
  std::vector<nn::Workspace<double>> pool_;  // one per cached call
  CallSlots slots_;
  std::vector<double> x_, y_, y_check_;
};

}  // namespace neuralsim
