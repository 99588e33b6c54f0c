// The bookkeeping of an external node's forward cache (FORWARD CACHE in
// grad/aba_node.hpp): which recorded calls still own an entry.
//
// Entries form a stack ordered by tape position. A call recorded at or
// before the position of earlier calls (the tape was rewound or cleared,
// e.g. for the next BPTT segment) releases their entries, so a cache holds
// at most the calls of one recording and stops growing after warm-up (no
// allocation per call). Recording on another tape starts a new generation.
// A call's entry index and generation travel as its tape tag; a call whose
// entry is gone is recomputed by the node.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "neuralsim/grad/tape.hpp"

namespace neuralsim {

class CallSlots {
 public:
  static constexpr std::size_t kGone = static_cast<std::size_t>(-1);

  // The entry of a call about to be recorded on `tape` (at tape.size()).
  // Afterwards size() entries are in use: the caller's cache must hold them.
  std::size_t push(const Tape& tape) {
    const auto pos = static_cast<std::int64_t>(tape.size());
    if (&tape != tape_) {
      tape_ = &tape;
      n_ = 0;
      ++generation_;
    }
    while (n_ > 0 && pos_[n_ - 1] >= pos) --n_;
    const std::size_t slot = n_++;
    if (pos_.size() < n_) pos_.resize(std::max<std::size_t>(n_, 2 * pos_.size()));  // warm-up only
    pos_[slot] = pos;
    return slot;
  }
  // The tape tag of the call given entry `slot`.
  std::int64_t tag(std::size_t slot) const {
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(generation_) << 32) | slot);
  }
  // The entry of a recorded call from its tag, kGone once released.
  std::size_t find(std::int64_t tag) const {
    const auto t = static_cast<std::uint64_t>(tag);
    const std::size_t slot = t & 0xffffffffu;
    if ((t >> 32) != generation_ || slot >= n_) return kGone;
    return slot;
  }
  std::size_t size() const { return n_; }  // entries in use
  std::size_t capacity_bytes() const { return pos_.capacity() * sizeof(std::int64_t); }

 private:
  std::vector<std::int64_t> pos_;  // tape position of each entry's call
  std::size_t n_ = 0;
  const Tape* tape_ = nullptr;
  std::uint32_t generation_ = 0;
};

}  // namespace neuralsim
