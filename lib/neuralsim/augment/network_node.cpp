#include "neuralsim/augment/network_node.hpp"

#include <cstring>
#include <stdexcept>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

NetworkNode::NetworkNode(const nn::Mlp& net, double* grad)
    : net_(&net),
      grad_(grad),
      ws_(net),
      x_(static_cast<std::size_t>(net.input_dim())),
      y_(static_cast<std::size_t>(net.output_dim())),
      y_check_(static_cast<std::size_t>(net.output_dim())) {}

void NetworkNode::record(Tape& tape, const Rev* x, Rev* y, std::int64_t tag) {
  (void)tag;
  const int n_in = static_cast<int>(net_->input_dim()), n_out = static_cast<int>(net_->output_dim());
  for (int i = 0; i < n_in; ++i) x_[i] = x[i].value();
  // The workspace of this call (grad/call_slots.hpp).
  const std::size_t slot = slots_.push(tape);
  while (pool_.size() < slots_.size()) pool_.emplace_back(*net_);  // warm-up only
  net_->forward(x_.data(), y_.data(), pool_[slot]);
  tape.external(*this, x, n_in, y_.data(), y, n_out, slots_.tag(slot));
}

void NetworkNode::vjp(const ExternalCall& call, const double* out_adj, double* in_adj) {
  if (call.n_in != net_->input_dim() || call.n_out != net_->output_dim())
    throw std::logic_error("NetworkNode::vjp: a recorded call does not match the network's shape");
  const std::size_t slot = slots_.find(call.tag);
  nn::Workspace<double>* ws = slot == CallSlots::kGone ? nullptr : &pool_[slot];
  if (ws == nullptr) {  // recompute the forward pass of this call
    net_->forward(call.x, y_check_.data(), ws_);
    if (std::memcmp(y_check_.data(), call.y, sizeof(double) * static_cast<std::size_t>(call.n_out)) != 0)
      throw std::logic_error(
          "NetworkNode::vjp: the network does not reproduce its recorded outputs (its weights, normalization or "
          "scaling changed between recording and Tape::reverse())");
    ws = &ws_;
  }
  try {
    net_->backward(out_adj, in_adj, grad_, *ws);
  } catch (const InvalidArgument&) {  // the workspace's stamp is not the network's
    throw std::logic_error(
        "NetworkNode::vjp: the network's weights, normalization or scaling changed between recording and "
        "Tape::reverse()");
  }
}

}  // namespace neuralsim
