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
  // The workspace of this call: entries at or after its tape position are dead.
  const auto pos = static_cast<std::int64_t>(tape.size());
  if (&tape != slot_tape_) {
    slot_tape_ = &tape;
    n_slots_ = 0;
    ++generation_;
  }
  while (n_slots_ > 0 && slot_pos_[n_slots_ - 1] >= pos) --n_slots_;
  const std::size_t slot = n_slots_++;
  if (pool_.size() < n_slots_) {  // warm-up only
    pool_.emplace_back(*net_);
    slot_pos_.resize(pool_.size());
  }
  slot_pos_[slot] = pos;
  net_->forward(x_.data(), y_.data(), pool_[slot]);
  const auto t = static_cast<std::int64_t>((static_cast<std::uint64_t>(generation_) << 32) | slot);
  tape.external(*this, x, n_in, y_.data(), y, n_out, t);
}

void NetworkNode::vjp(const ExternalCall& call, const double* out_adj, double* in_adj) {
  if (call.n_in != net_->input_dim() || call.n_out != net_->output_dim())
    throw std::logic_error("NetworkNode::vjp: a recorded call does not match the network's shape");
  const auto t = static_cast<std::uint64_t>(call.tag);
  const std::size_t slot = t & 0xffffffffu;
  nn::Workspace<double>* ws = nullptr;
  if ((t >> 32) == generation_ && slot < n_slots_) ws = &pool_[slot];
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
