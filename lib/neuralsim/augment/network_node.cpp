#include "neuralsim/augment/network_node.hpp"

#include <cstring>
#include <stdexcept>

namespace neuralsim {

NetworkNode::NetworkNode(const nn::Mlp& net, double* grad)
    : net_(&net),
      grad_(grad),
      ws_(net),
      x_(static_cast<std::size_t>(net.input_dim())),
      y_(static_cast<std::size_t>(net.output_dim())),
      y_check_(static_cast<std::size_t>(net.output_dim())) {}

void NetworkNode::record(Tape& tape, const Rev* x, Rev* y, std::int64_t tag) {
  const int n_in = static_cast<int>(net_->input_dim()), n_out = static_cast<int>(net_->output_dim());
  for (int i = 0; i < n_in; ++i) x_[i] = x[i].value();
  net_->forward(x_.data(), y_.data(), ws_);
  tape.external(*this, x, n_in, y_.data(), y, n_out, tag);
}

void NetworkNode::vjp(const ExternalCall& call, const double* out_adj, double* in_adj) {
  if (call.n_in != net_->input_dim() || call.n_out != net_->output_dim())
    throw std::logic_error("NetworkNode::vjp: a recorded call does not match the network's shape");
  net_->forward(call.x, y_check_.data(), ws_);
  if (std::memcmp(y_check_.data(), call.y, sizeof(double) * static_cast<std::size_t>(call.n_out)) != 0)
    throw std::logic_error(
        "NetworkNode::vjp: the network does not reproduce its recorded outputs (its weights, normalization or "
        "scaling changed between recording and Tape::reverse())");
  net_->backward(out_adj, in_adj, grad_, ws_);
}

}  // namespace neuralsim
