// Tape storage, the reverse sweep and external calls (see tape.hpp).
#include "neuralsim/grad/tape.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>

namespace neuralsim {

namespace detail {
void throw_mixed_tapes() {
  throw std::logic_error("neuralsim::Rev: an operation mixes variables of two different tapes");
}
}  // namespace detail

std::ostream& operator<<(std::ostream& os, const Rev& x) { return os << x.value(); }

using detail::BlockHeader;
using detail::block_adjoints;
using detail::block_nodes;
using detail::kBlockBytes;
using detail::kNodesPerBlock;

namespace {

BlockHeader* allocate_block(Tape* tape) {
  void* p = ::operator new(kBlockBytes, std::align_val_t(kBlockBytes));
  return new (p) BlockHeader{tape, 0};
}

void free_block(BlockHeader* b) { ::operator delete(static_cast<void*>(b), std::align_val_t(kBlockBytes)); }

// Nodes [lo, hi] of one block (local indices), last to first: one
// branch-free linear pass.
inline void sweep_block(const TapeNode* nodes, const double* adj, std::int64_t hi, std::int64_t lo) {
  for (std::int64_t k = hi; k >= lo; --k) {
    const TapeNode& n = nodes[k];
    const double g = adj[k];
    *n.a += n.da * g;
    *n.b += n.db * g;
  }
}

}  // namespace

Tape::Tape(std::size_t node_capacity) {
  blocks_.push_back(allocate_block(this));
  reserve(node_capacity);
  growths_ = 0;
  start_block(0);
}

Tape::~Tape() {
  for (BlockHeader* b : blocks_) free_block(b);
}

void Tape::start_block(std::size_t k) {
  BlockHeader* b = blocks_[k];
  b->base = k == 0 ? 0 : static_cast<std::int64_t>(size());  // size() of the block being left
  cur_ = b;
  cur_index_ = k;
  node_ = block_nodes(b);
  node_end_ = node_ + kNodesPerBlock;
  adj_ = block_adjoints(b);
}

void Tape::next_block() {
  if (cur_index_ + 1 == blocks_.size()) {
    ++growths_;
    blocks_.push_back(allocate_block(this));
  }
  start_block(cur_index_ + 1);
}

void Tape::reserve(std::size_t nodes, std::size_t externals, std::size_t external_values) {
  const std::size_t want = (nodes + kNodesPerBlock - 1) / kNodesPerBlock;
  blocks_.reserve(std::max(want, std::size_t(8)));
  while (blocks_.size() < want) blocks_.push_back(allocate_block(this));
  if (externals > ext_.size()) ext_.resize(externals);
  if (external_values > ext_in_.size()) ext_in_.resize(external_values);
  if (external_values > ext_val_.size()) ext_val_.resize(external_values);
  if (external_values > scratch_.size()) scratch_.resize(external_values);
}

std::size_t Tape::memory_bytes() const {
  return blocks_.size() * kBlockBytes + blocks_.capacity() * sizeof(BlockHeader*) +
         ext_.capacity() * sizeof(ExternalRecord) + ext_in_.capacity() * sizeof(double*) +
         (ext_val_.capacity() + scratch_.capacity()) * sizeof(double);
}

// Nodes used in block k (a block may be left early for an external call:
// its end is then the next block's base).
std::size_t Tape::block_count(std::size_t k) const {
  if (k == cur_index_) return static_cast<std::size_t>(node_ - block_nodes(cur_));
  return static_cast<std::size_t>(blocks_[k + 1]->base - blocks_[k]->base);
}

// Zeroes the adjoints of nodes [0, n).
void Tape::zero_adjoints(std::size_t n) {
  for (std::size_t k = 0; k <= cur_index_; ++k) {
    const std::size_t base = static_cast<std::size_t>(blocks_[k]->base);
    if (base >= n) break;
    std::memset(block_adjoints(blocks_[k]), 0, std::min(block_count(k), n - base) * sizeof(double));
  }
}

void Tape::rewind(std::size_t size) {
  if (size > this->size()) throw std::out_of_range("neuralsim::Tape::rewind: beyond the recorded size");
  std::size_t k = cur_index_;
  while (k > 0 && static_cast<std::size_t>(blocks_[k]->base) > size) --k;
  const std::int64_t offset = static_cast<std::int64_t>(size) - blocks_[k]->base;
  cur_ = blocks_[k];
  cur_index_ = k;
  node_ = block_nodes(cur_) + offset;
  node_end_ = block_nodes(cur_) + kNodesPerBlock;
  adj_ = block_adjoints(cur_) + offset;
  while (n_ext_ > 0 && ext_[n_ext_ - 1].first_out >= static_cast<std::int64_t>(size)) {
    --n_ext_;
    n_in_ = ext_[n_ext_].in_offset;
    n_val_ = ext_[n_ext_].val_offset;
  }
  if (dirty_) zero_adjoints(size);
  dirty_ = false;
  swept_ = false;
}

void Tape::external(ExternalFunction& f, const Rev* x, int n_in, const double* y_values, Rev* y, int n_out,
                    std::int64_t tag) {
  if (n_in < 0 || n_out < 0) throw std::invalid_argument("neuralsim::Tape::external: negative size");
  if (static_cast<std::size_t>(n_out) > kNodesPerBlock)
    throw std::length_error("neuralsim::Tape::external: more outputs than a tape block holds");
  const std::size_t nin = static_cast<std::size_t>(n_in), nout = static_cast<std::size_t>(n_out);
  auto grow = [this](auto& v, std::size_t need) {
    if (need > v.size()) {
      ++growths_;
      v.resize(std::max(need, 2 * v.size()));
    }
  };
  grow(ext_, n_ext_ + 1);
  grow(ext_in_, n_in_ + nin);
  grow(ext_val_, n_val_ + nin + nout);
  grow(scratch_, nin);
  // Inputs: adjoint slots and values, through local pointers (stores through
  // a Rev* or double* could otherwise alias the tape's own members and force
  // reloads). Nothing is committed before every input is checked.
  double** in = ext_in_.data() + n_in_;
  double* val = ext_val_.data() + n_val_;
  for (std::size_t k = 0; k < nin; ++k) {
    double* g = detail::RevAccess::g(x[k]);
    if (g != nullptr && detail::block_of(g)->tape != this) detail::throw_mixed_tapes();
    in[k] = g;
    val[k] = x[k].value();
  }
  std::memcpy(val + nin, y_values, nout * sizeof(double));
  // The outputs' adjoints must be contiguous: one block.
  if (static_cast<std::size_t>(node_end_ - node_) < nout) next_block();
  ExternalRecord& r = ext_[n_ext_++];
  r.fn = &f;
  r.tag = tag;
  r.n_in = n_in;
  r.n_out = n_out;
  r.in_offset = n_in_;
  r.val_offset = n_val_;
  n_in_ += nin;
  n_val_ += nin + nout;
  r.first_out = static_cast<std::int64_t>(size());
  r.out_adj = adj_;
  // The outputs: contiguous slots with zero adjoints. Their TapeNodes are
  // left unwritten: the sweep stops above every external call's outputs and
  // resumes below them (reverse()), so it never reads them.
  double* adj = adj_;
  std::memset(adj, 0, nout * sizeof(double));
  for (std::size_t k = 0; k < nout; ++k) y[k] = detail::RevAccess::make(y_values[k], adj + k);
  node_ += nout;
  adj_ += nout;
}

void Tape::check_own(const Rev& x, const char* what) const {
  if (x.tape() != this)
    throw std::invalid_argument(std::string("neuralsim::Tape::") + what + ": a variable of another tape");
  if (static_cast<std::size_t>(x.index()) >= size())
    throw std::out_of_range(std::string("neuralsim::Tape::") + what + ": a Rev forgotten by rewind()/clear()");
}

void Tape::seed(const Rev& output, double adjoint) {
  if (output.is_constant()) return;
  check_own(output, "seed");
  if (swept_) {
    zero_adjoints(size());
    swept_ = false;
  }
  dirty_ = true;
  *detail::RevAccess::g(output) += adjoint;
}

double Tape::adjoint(const Rev& x) const {
  if (x.is_constant()) return 0.0;
  check_own(x, "adjoint");
  return *detail::RevAccess::g(x);
}

// Nodes with global indices hi down to lo.
void Tape::sweep(std::int64_t hi, std::int64_t lo) {
  if (hi < lo) return;
  std::size_t k = cur_index_;
  while (blocks_[k]->base > hi) --k;
  for (;;) {
    BlockHeader* b = blocks_[k];
    const std::int64_t from = std::max(lo, b->base);
    sweep_block(block_nodes(b), block_adjoints(b), hi - b->base, from - b->base);
    if (from == lo || k == 0) break;
    hi = from - 1;  // the last node of block k - 1
    --k;
  }
}

void Tape::reverse() {
  if (swept_) zero_adjoints(size());  // no new seeds since the last sweep
  std::int64_t hi = static_cast<std::int64_t>(size()) - 1;
  for (std::size_t e = n_ext_; e-- > 0;) {
    const ExternalRecord& r = ext_[e];
    sweep(hi, r.first_out + r.n_out);
    // The outputs' adjoints are complete: every use of them comes later.
    double* in_adj = scratch_.data();
    std::memset(in_adj, 0, static_cast<std::size_t>(r.n_in) * sizeof(double));
    const double* vals = ext_val_.data() + r.val_offset;
    const ExternalCall call{vals, vals + r.n_in, r.n_in, r.n_out, r.tag};
    r.fn->vjp(call, r.out_adj, in_adj);
    double* const* in = ext_in_.data() + r.in_offset;
    for (int k = 0; k < r.n_in; ++k)
      if (in[k]) *in[k] += in_adj[k];
    hi = r.first_out - 1;  // the outputs are leaves: nothing to propagate
  }
  sweep(hi, 0);
  dirty_ = true;
  swept_ = true;
}

}  // namespace neuralsim
