// Reverse-mode automatic differentiation: the scalar type Rev and its Tape.
//
// WHAT. Rev is an operator-overloading scalar for the engine's templates
// (Model<Rev>, Data<Rev>, aba, rnea, Stepper<Rev>, contact): every
// arithmetic operation on a Rev that depends on a variable appends one node
// to a Tape; Tape::reverse() then sweeps the nodes once, last to first, and
// leaves ∂L/∂x (for the seeded outputs) in the adjoint of every variable x.
// This is the reverse mode with a sequential tape of Griewank & Walther,
// "Evaluating Derivatives", 2nd ed., SIAM 2008 (ch. 3-4; reversal schedules
// and checkpointing for long rollouts, ch. 12). By their cheap gradient
// principle the operation count of a whole gradient is a small constant
// times that of the function, independent of the number of inputs: that is
// why gradients w.r.t. many network weights and physical parameters are
// taken in reverse and not with ceres::Jet (forward mode, cost ∝ inputs).
//
// DESIGN (no global state, partials computed at record time, one linear
// reverse pass).
//  * A Rev is {double value; double* adjoint} (16 bytes, passed and returned
//    in registers). A constant has adjoint == nullptr. An operation on
//    constants only records nothing and returns a constant, so the model's
//    constants and everything computed from them alone cost nothing on the
//    tape. There is no "active tape": the result of an operation goes on the
//    tape of its variable operand(s), found from the operand itself (below);
//    mixing variables of two tapes is a std::logic_error. Tapes in different
//    threads share nothing.
//  * The arena is a list of 1 MiB blocks aligned to 1 MiB, each laid out as
//    [64-byte header {Tape*, first index} | 26 212 nodes | their adjoints].
//    A variable's adjoint slot lies in its block, so masking the slot's
//    address yields the header and the tape; nodes never move (growth adds
//    a block, no copy), so Revs stay valid while their tape grows.
//  * A node is {double* a, *b; double da, db} (32 bytes): its (at most two)
//    arguments' adjoint slots and the local partials ∂node/∂a, ∂node/∂b.
//    One-argument nodes (Rev⊗double, sin, ...) point b at a per-tape sink
//    slot, leaves point a and b there, so the sweep has no branch:
//        for each node i, last to first:  *a_i += da_i·ā_i;  *b_i += db_i·ā_i
//    Adjoints are zeroed when a node is recorded. Exact simplifications
//    avoid nodes: x + 0, x - 0, x·1, x/1 reuse x's adjoint slot; x·0 is the
//    constant 0; min/max/fmin/fmax select an operand; floor/ceil give
//    constants; comparisons read values.
//  * Layouts (measured on the Laikago ABA tape, see the report in the
//    commit): for the sweep, array-of-structures nodes with a separate
//    adjoint array, structure-of-arrays, adjoint inside the node and an
//    Adept-style operand stack cost 1.95, 1.95, 2.3 and 2.6 ns per node; the
//    sweep is bound by the latency of the accumulation chains, not by the
//    layout. For recording, a 16-byte Rev halved the cost of the constant
//    path and cut recording by ~15% against a 24-byte {value, index, tape*}
//    Rev (that one was assembled on the stack and copied with mismatched
//    store/load widths, stalling store-to-load forwarding).
//  * Operators: the inline part handles constants; the recording part is a
//    separate non-inlined function (see "arithmetic" below).
//  * External functions: y = F(x) whose values the caller computes (e.g. a
//    neural network evaluated in double, with its own weights). Tape::external
//    records the outputs as new leaves (contiguous, in one block) and, in side
//    arenas, the inputs' adjoint slots and the input/output values; the sweep
//    stops at that position and calls the caller's ExternalFunction::vjp
//    (ȳ → x̄; it may also accumulate gradients of parameters the tape does not
//    know, such as the network's weights, into the caller's own buffers).
//    A record is a pointer to the caller's object plus offsets: no
//    std::function and no allocation per call once the arenas have capacity.
//  * Lifetime: clear() / rewind(n) forget nodes but keep all capacity; once
//    capacity is reached (reserve(), or after the first segment) recording,
//    sweeping and clearing allocate nothing. rewind(n) keeps the first n
//    nodes: record the model's parameters first (set_parameter with
//    tape.variable), note size(), and rewind to it between BPTT segments; the
//    model's Revs stay valid and each sweep adds that segment's ∂L/∂θ.
//
// MEMORY per recorded operation: 32 bytes (node) + 8 bytes (adjoint) = 40
// bytes (a 200-step Laikago segment: 1.6 M nodes, 62 MB). An external call
// adds 56 bytes + 16 bytes per input + 8 bytes per output.
//
// COST MODEL (bench/tape_bench.cpp; AMD EPYC, GCC 12 -O3): an operation with
// a variable operand costs a call, a header load, a 40-byte store and its
// value and partials; constant operations cost a branch more than in
// double. Recording ABA on Laikago takes 7 ns per recorded node, constant
// operations included (7550 nodes); reversing ~2 ns per node (dependent
// multiply-adds through memory). Neither vectorizes, whereas the double
// engine does, so a taped ABA costs ~35x a double ABA and a taped
// semi-implicit Euler step ~32x a double step, ~80% recording and ~20%
// reversing; the sweep alone is ~7x a double ABA. Fine-grained taping therefore cannot reach a
// small multiple of the tuned double code. What can: entering whole
// algorithms through external nodes with hand-written adjoints (Carpentier &
// Mansard, "Analytical derivatives of rigid body dynamics algorithms", RSS
// 2018), keeping the tape for the glue (integrator, passive forces, losses).
//
// USAGE (one step on the tape, state as inputs):
//   Tape tape;  tape.reserve(1 << 16);
//   const Model<Rev> model = model_d.cast<Rev>();   // constants: no nodes
//   Stepper<Rev> stepper(model, options);
//   tape.clear();
//   for (int i = 0; i < nq; ++i) q[i] = tape.variable(q0[i]);
//   for (int i = 0; i < nv; ++i) qd[i] = tape.variable(qd0[i]);
//   VecX<Rev> q_in = q, qd_in = qd;
//   stepper.step(q, qd, u, t);
//   for (int i = 0; i < nq; ++i) tape.seed(q[i], qbar[i]);   // ∂L/∂q⁺
//   for (int i = 0; i < nv; ++i) tape.seed(qd[i], qdbar[i]);
//   tape.reverse();
//   for (int i = 0; i < nq; ++i) qbar0[i] = tape.adjoint(q_in[i]);  // ∂L/∂q
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <memory>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define NEURALSIM_REV_INLINE inline __attribute__((always_inline))
#define NEURALSIM_REV_NOINLINE __attribute__((noinline))
#define NEURALSIM_REV_COLD __attribute__((cold, noinline))
#define NEURALSIM_REV_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define NEURALSIM_REV_INLINE inline
#define NEURALSIM_REV_NOINLINE
#define NEURALSIM_REV_COLD
#define NEURALSIM_REV_UNLIKELY(x) (x)
#endif

namespace neuralsim {

class Tape;
class Rev;

namespace detail {
struct RevAccess;
[[noreturn]] NEURALSIM_REV_COLD void throw_mixed_tapes();

// The arena is a list of blocks of kBlockBytes, each aligned to its size:
// [header | nodes (32 bytes each) | adjoints (8 bytes each)]. A variable's
// adjoint slot lies inside its block, so masking the slot's address gives
// the block header and with it the tape: no global "active tape", and a Rev
// needs only {value, adjoint pointer}.
constexpr std::size_t kBlockBytes = std::size_t(1) << 20;
constexpr std::size_t kBlockHeaderBytes = 64;
struct BlockHeader {
  Tape* tape;
  std::int64_t base;  // global index of the block's first node
};
}  // namespace detail

// The reverse-mode scalar: 16 bytes, so that it travels in registers (a
// 24-byte {value, index, tape*} went through the stack at every operation;
// this one halved the cost of operations on constants). Trivially copyable.
// Implicitly constructible from double (a constant). A variable refers to
// its adjoint slot on its tape.
class Rev {
 public:
  constexpr Rev() noexcept = default;
  constexpr Rev(double value) noexcept : v_(value) {}  // NOLINT: constants convert implicitly

  constexpr double value() const noexcept { return v_; }
  constexpr bool is_constant() const noexcept { return g_ == nullptr; }
  // The tape of a variable, nullptr for a constant.
  Tape* tape() const noexcept {
    return g_ ? reinterpret_cast<const detail::BlockHeader*>(reinterpret_cast<std::uintptr_t>(g_) &
                                                             ~(detail::kBlockBytes - 1))
                    ->tape
              : nullptr;
  }
  // Position on the tape (0, 1, ... in recording order), -1 for a constant.
  inline std::int64_t index() const noexcept;

  inline Rev& operator+=(const Rev& y);
  inline Rev& operator-=(const Rev& y);
  inline Rev& operator*=(const Rev& y);
  inline Rev& operator/=(const Rev& y);
  inline Rev& operator+=(double y);
  inline Rev& operator-=(double y);
  inline Rev& operator*=(double y);
  inline Rev& operator/=(double y);

 private:
  friend class Tape;
  friend struct detail::RevAccess;
  constexpr Rev(double value, double* adjoint) noexcept : v_(value), g_(adjoint) {}

  double v_ = 0.0;
  double* g_ = nullptr;  // adjoint slot on the tape; nullptr: a constant
};

// One recorded elementary operation: where its (at most two) arguments' adjoints
// live and the local partials ∂node/∂a, ∂node/∂b (one-argument nodes and
// leaves point b, or both, at the tape's sink). Its own adjoint is the
// matching slot of the block's adjoint array.
struct TapeNode {
  double* a;
  double* b;
  double da, db;
};

namespace detail {
constexpr std::size_t kNodesPerBlock = (kBlockBytes - kBlockHeaderBytes) / (sizeof(TapeNode) + sizeof(double));
inline BlockHeader* block_of(const double* adjoint) {
  return reinterpret_cast<BlockHeader*>(reinterpret_cast<std::uintptr_t>(adjoint) & ~(kBlockBytes - 1));
}
inline TapeNode* block_nodes(BlockHeader* b) {
  return reinterpret_cast<TapeNode*>(reinterpret_cast<char*>(b) + kBlockHeaderBytes);
}
inline double* block_adjoints(BlockHeader* b) {
  return reinterpret_cast<double*>(reinterpret_cast<char*>(b) + kBlockHeaderBytes + kNodesPerBlock * sizeof(TapeNode));
}
}  // namespace detail

inline std::int64_t Rev::index() const noexcept {
  if (!g_) return -1;
  detail::BlockHeader* b = detail::block_of(g_);
  return b->base + (g_ - detail::block_adjoints(b));
}

// What the reverse sweep tells an external function about one recorded call.
struct ExternalCall {
  const double* x;   // input values at record time (n_in)
  const double* y;   // output values given at record time (n_out)
  int n_in, n_out;
  std::int64_t tag;  // the caller's tag passed to Tape::external()
};

// A block y = F(x) recorded as one unit (Tape::external). The caller owns the
// object; it must outlive every reverse() of a tape that recorded it.
class ExternalFunction {
 public:
  virtual ~ExternalFunction() = default;
  // The vector-Jacobian product x̄ = (∂F/∂x)ᵀ ȳ of the recorded call.
  // out_adj: ȳ (n_out values); in_adj: n_in values, zero on entry, to be
  // written (or accumulated). Called once per recorded call per reverse(),
  // in reverse order of recording. May also accumulate gradients of the
  // caller's own parameters (e.g. ∂L/∂W += ...) into the caller's buffers.
  virtual void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) = 0;
};

class Tape {
 public:
  explicit Tape(std::size_t node_capacity = 0);
  ~Tape();
  // Revs point into the tape's blocks: a tape is neither copied nor moved.
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // ---- recording ----
  // A new independent variable (leaf) with this value.
  NEURALSIM_REV_INLINE Rev variable(double value) { return Rev(value, push(&sink_, 0.0, &sink_, 0.0)); }
  void variables(const double* values, std::size_t n, Rev* out) {
    for (std::size_t k = 0; k < n; ++k) out[k] = variable(values[k]);
  }
  // Records y = F(x): x[0..n_in) are inputs (variables of this tape or
  // constants), y_values[0..n_out) the outputs the caller computed; y[] gets
  // the outputs as new variables of this tape. f.vjp is called by reverse().
  void external(ExternalFunction& f, const Rev* x, int n_in, const double* y_values, Rev* y, int n_out,
                std::int64_t tag = 0);

  // Low-level: a node with value v and local partials (custom operations).
  // x, y must be variables of this tape.
  NEURALSIM_REV_INLINE Rev unary(double v, const Rev& x, double dx) { return Rev(v, push(x.g_, dx, &sink_, 0.0)); }
  NEURALSIM_REV_INLINE Rev binary(double v, const Rev& x, double dx, const Rev& y, double dy) {
    return Rev(v, push(x.g_, dx, y.g_, dy));
  }

  // ---- reverse sweep ----
  // Adds `adjoint` to ∂L/∂output. Seeds accumulate until reverse(); the first
  // seed after a reverse() starts a new set (all adjoints zeroed). Seeding a
  // constant does nothing (nothing on the tape depends on it).
  void seed(const Rev& output, double adjoint);
  // One sweep, last node to first, calling external functions in place.
  void reverse();
  void reverse(const Rev& output) {
    seed(output, 1.0);
    reverse();
  }
  // ∂L/∂x after reverse(); 0 for a constant.
  double adjoint(const Rev& x) const;
  void adjoints(const Rev* x, std::size_t n, double* out) const {
    for (std::size_t k = 0; k < n; ++k) out[k] = adjoint(x[k]);
  }

  // ---- size and capacity ----
  std::size_t size() const {  // recorded nodes
    return static_cast<std::size_t>(cur_->base + (node_ - detail::block_nodes(cur_)));
  }
  std::size_t num_externals() const { return n_ext_; }
  // Forgets everything after the first `size` nodes (and the external calls
  // among them); capacity is kept. Revs of forgotten nodes must not be used.
  void rewind(std::size_t size);
  void clear() { rewind(0); }
  // Capacity for `nodes` nodes, `externals` external calls and
  // `external_values` external inputs+outputs, so recording allocates nothing.
  void reserve(std::size_t nodes, std::size_t externals = 0, std::size_t external_values = 0);
  std::size_t capacity() const { return blocks_.size() * detail::kNodesPerBlock; }
  // Number of times an arena had to grow after construction / reserve().
  std::size_t growth_count() const { return growths_; }
  // Heap memory held (blocks, side arenas), in bytes.
  std::size_t memory_bytes() const;
  static constexpr std::size_t bytes_per_node() { return sizeof(TapeNode) + sizeof(double); }

 private:
  friend struct detail::RevAccess;
  struct ExternalRecord {
    ExternalFunction* fn;
    std::int64_t tag;
    std::int64_t first_out;  // outputs: nodes [first_out, first_out + n_out), one block
    double* out_adj;         // their adjoints (contiguous)
    int n_in, n_out;
    std::size_t in_offset;   // inputs' adjoint slots in ext_in_ (nullptr: constant)
    std::size_t val_offset;  // x then y values in ext_val_
  };

  NEURALSIM_REV_INLINE double* push(double* a, double da, double* b, double db) {
    if (NEURALSIM_REV_UNLIKELY(node_ == node_end_)) next_block();
    TapeNode* n = node_++;
    n->a = a;
    n->b = b;
    n->da = da;
    n->db = db;
    double* g = adj_++;
    *g = 0.0;
    return g;
  }
  NEURALSIM_REV_COLD void next_block();
  void start_block(std::size_t k);
  void zero_adjoints(std::size_t n);
  std::size_t block_count(std::size_t k) const;
  void check_own(const Rev& x, const char* what) const;
  void sweep(std::int64_t hi, std::int64_t lo);  // nodes hi..lo (global), descending

  // Hot state first.
  TapeNode* node_ = nullptr;      // next node slot in the current block
  TapeNode* node_end_ = nullptr;  // end of the current block's nodes
  double* adj_ = nullptr;         // next adjoint slot in the current block
  detail::BlockHeader* cur_ = nullptr;
  std::size_t cur_index_ = 0;     // cur_ == blocks_[cur_index_]
  double sink_ = 0.0;             // adjoint of "no argument"; never read
  std::vector<detail::BlockHeader*> blocks_;
  bool dirty_ = false;            // adjoints of kept nodes may be non-zero
  bool swept_ = false;            // adjoints hold a finished sweep's result
  std::vector<ExternalRecord> ext_;
  std::size_t n_ext_ = 0;
  std::vector<double*> ext_in_;
  std::size_t n_in_ = 0;
  std::vector<double> ext_val_;
  std::size_t n_val_ = 0;
  std::vector<double> scratch_;  // x̄ of one external call
  std::size_t growths_ = 0;
};

namespace detail {

struct RevAccess {
  static constexpr Rev make(double v, double* g) { return Rev(v, g); }
  static constexpr double* g(const Rev& x) { return x.g_; }
};

inline Tape* tape_of(const Rev& x) { return block_of(RevAccess::g(x))->tape; }

// x's node with a new value (x + 0, x·1: the derivative is unchanged).
NEURALSIM_REV_INLINE Rev same_node(const Rev& x, double v) { return RevAccess::make(v, RevAccess::g(x)); }

// f(x) with value v and derivative d (d evaluated only for a variable x).
template <class D>
inline Rev unary_op(const Rev& x, double v, D&& d) {
  if (x.is_constant()) return Rev(v);
  return tape_of(x)->unary(v, x, d());
}

}  // namespace detail

// ---- arithmetic ----
// Each operator is split in two: the inline part handles constant operands
// (most of the engine's operations: model constants with model constants);
// the part that records (at least one variable operand) is a separate,
// non-inlined function taking and returning Revs in registers. Inlining the
// recording part as well made the callers (Eigen's functors, the engine's
// loops) too big for GCC to inline and was slower.

namespace detail {

NEURALSIM_REV_NOINLINE inline Rev neg_v(Rev x) { return tape_of(x)->unary(-x.value(), x, -1.0); }

// x variable, c a double.
NEURALSIM_REV_NOINLINE inline Rev add_vc(Rev x, double c) {
  const double v = x.value() + c;
  if (c == 0.0) return same_node(x, v);
  return tape_of(x)->unary(v, x, 1.0);
}
NEURALSIM_REV_NOINLINE inline Rev sub_cv(double c, Rev x) { return tape_of(x)->unary(c - x.value(), x, -1.0); }
NEURALSIM_REV_NOINLINE inline Rev mul_vc(Rev x, double c) {
  const double v = x.value() * c;
  if (c == 0.0) return Rev(v);  // x·0: no dependence on x
  if (c == 1.0) return same_node(x, v);
  return tape_of(x)->unary(v, x, c);
}
NEURALSIM_REV_NOINLINE inline Rev div_vc(Rev x, double c) {
  const double v = x.value() / c;
  if (c == 1.0) return same_node(x, v);
  return tape_of(x)->unary(v, x, 1.0 / c);
}
NEURALSIM_REV_NOINLINE inline Rev div_cv(double c, Rev x) {
  const double v = c / x.value();
  return tape_of(x)->unary(v, x, -v / x.value());
}

// At least one of x, y is a variable.
NEURALSIM_REV_NOINLINE inline Rev add_any(Rev x, Rev y) {
  if (x.is_constant()) return add_vc(y, x.value());
  if (y.is_constant()) return add_vc(x, y.value());
  Tape* t = tape_of(x);
  if (NEURALSIM_REV_UNLIKELY(t != tape_of(y))) throw_mixed_tapes();
  return t->binary(x.value() + y.value(), x, 1.0, y, 1.0);
}
NEURALSIM_REV_NOINLINE inline Rev sub_any(Rev x, Rev y) {
  if (x.is_constant()) return sub_cv(x.value(), y);
  if (y.is_constant()) return add_vc(x, -y.value());
  Tape* t = tape_of(x);
  if (NEURALSIM_REV_UNLIKELY(t != tape_of(y))) throw_mixed_tapes();
  return t->binary(x.value() - y.value(), x, 1.0, y, -1.0);
}
NEURALSIM_REV_NOINLINE inline Rev mul_any(Rev x, Rev y) {
  if (x.is_constant()) return mul_vc(y, x.value());
  if (y.is_constant()) return mul_vc(x, y.value());
  Tape* t = tape_of(x);
  if (NEURALSIM_REV_UNLIKELY(t != tape_of(y))) throw_mixed_tapes();
  return t->binary(x.value() * y.value(), x, y.value(), y, x.value());
}
NEURALSIM_REV_NOINLINE inline Rev div_any(Rev x, Rev y) {
  if (x.is_constant()) return div_cv(x.value(), y);
  if (y.is_constant()) return div_vc(x, y.value());
  Tape* t = tape_of(x);
  if (NEURALSIM_REV_UNLIKELY(t != tape_of(y))) throw_mixed_tapes();
  const double inv = 1.0 / y.value();
  const double v = x.value() / y.value();
  return t->binary(v, x, inv, y, -v * inv);
}

}  // namespace detail

NEURALSIM_REV_INLINE Rev operator+(const Rev& x) { return x; }
NEURALSIM_REV_INLINE Rev operator-(const Rev& x) {
  return x.is_constant() ? Rev(-x.value()) : detail::neg_v(x);
}

NEURALSIM_REV_INLINE Rev operator+(const Rev& x, double c) {
  return x.is_constant() ? Rev(x.value() + c) : detail::add_vc(x, c);
}
NEURALSIM_REV_INLINE Rev operator+(double c, const Rev& x) {
  return x.is_constant() ? Rev(c + x.value()) : detail::add_vc(x, c);
}
NEURALSIM_REV_INLINE Rev operator+(const Rev& x, const Rev& y) {
  if (x.is_constant() && y.is_constant()) return Rev(x.value() + y.value());
  return detail::add_any(x, y);
}

// x - c = x + (-c) exactly in IEEE arithmetic (also for signed zeros).
NEURALSIM_REV_INLINE Rev operator-(const Rev& x, double c) {
  return x.is_constant() ? Rev(x.value() - c) : detail::add_vc(x, -c);
}
NEURALSIM_REV_INLINE Rev operator-(double c, const Rev& x) {
  return x.is_constant() ? Rev(c - x.value()) : detail::sub_cv(c, x);
}
NEURALSIM_REV_INLINE Rev operator-(const Rev& x, const Rev& y) {
  if (x.is_constant() && y.is_constant()) return Rev(x.value() - y.value());
  return detail::sub_any(x, y);
}

NEURALSIM_REV_INLINE Rev operator*(const Rev& x, double c) {
  return x.is_constant() ? Rev(x.value() * c) : detail::mul_vc(x, c);
}
NEURALSIM_REV_INLINE Rev operator*(double c, const Rev& x) {
  return x.is_constant() ? Rev(c * x.value()) : detail::mul_vc(x, c);
}
NEURALSIM_REV_INLINE Rev operator*(const Rev& x, const Rev& y) {
  if (x.is_constant() && y.is_constant()) return Rev(x.value() * y.value());
  return detail::mul_any(x, y);
}

NEURALSIM_REV_INLINE Rev operator/(const Rev& x, double c) {
  return x.is_constant() ? Rev(x.value() / c) : detail::div_vc(x, c);
}
NEURALSIM_REV_INLINE Rev operator/(double c, const Rev& x) {
  return x.is_constant() ? Rev(c / x.value()) : detail::div_cv(c, x);
}
NEURALSIM_REV_INLINE Rev operator/(const Rev& x, const Rev& y) {
  if (x.is_constant() && y.is_constant()) return Rev(x.value() / y.value());
  return detail::div_any(x, y);
}

NEURALSIM_REV_INLINE Rev& Rev::operator+=(const Rev& y) { return *this = *this + y; }
NEURALSIM_REV_INLINE Rev& Rev::operator-=(const Rev& y) { return *this = *this - y; }
NEURALSIM_REV_INLINE Rev& Rev::operator*=(const Rev& y) { return *this = *this * y; }
NEURALSIM_REV_INLINE Rev& Rev::operator/=(const Rev& y) { return *this = *this / y; }
NEURALSIM_REV_INLINE Rev& Rev::operator+=(double y) { return *this = *this + y; }
NEURALSIM_REV_INLINE Rev& Rev::operator-=(double y) { return *this = *this - y; }
NEURALSIM_REV_INLINE Rev& Rev::operator*=(double y) { return *this = *this * y; }
NEURALSIM_REV_INLINE Rev& Rev::operator/=(double y) { return *this = *this / y; }

// ---- comparisons (on values; record nothing) ----
#define NEURALSIM_REV_COMPARISON(OP)                                                             \
  NEURALSIM_REV_INLINE bool operator OP(const Rev& x, const Rev& y) { return x.value() OP y.value(); }        \
  NEURALSIM_REV_INLINE bool operator OP(const Rev& x, double y) { return x.value() OP y; }                    \
  NEURALSIM_REV_INLINE bool operator OP(double x, const Rev& y) { return x OP y.value(); }
NEURALSIM_REV_COMPARISON(==)
NEURALSIM_REV_COMPARISON(!=)
NEURALSIM_REV_COMPARISON(<)
NEURALSIM_REV_COMPARISON(<=)
NEURALSIM_REV_COMPARISON(>)
NEURALSIM_REV_COMPARISON(>=)
#undef NEURALSIM_REV_COMPARISON

std::ostream& operator<<(std::ostream& os, const Rev& x);

// ---- elementary functions ----
// In namespace neuralsim, next to Rev, so that `using std::sin; sin(x)` finds
// them by argument-dependent lookup. The std overloads are brought in too, so
// an unqualified call on a double inside namespace neuralsim still finds
// std's (a Rev overload would otherwise hide ::sin there).
using std::abs;
using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::cbrt;
using std::ceil;
using std::cos;
using std::cosh;
using std::exp;
using std::expm1;
using std::fabs;
using std::floor;
using std::fmax;
using std::fmin;
using std::hypot;
using std::isfinite;
using std::isinf;
using std::isnan;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::max;
using std::min;
using std::pow;
using std::round;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::trunc;

inline Rev sin(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::sin(a), [&] { return std::cos(a); });
}
inline Rev cos(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::cos(a), [&] { return -std::sin(a); });
}
inline Rev tan(const Rev& x) {
  const double v = std::tan(x.value());
  return detail::unary_op(x, v, [&] { return 1.0 + v * v; });
}
inline Rev asin(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::asin(a), [&] { return 1.0 / std::sqrt(1.0 - a * a); });
}
inline Rev acos(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::acos(a), [&] { return -1.0 / std::sqrt(1.0 - a * a); });
}
inline Rev atan(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::atan(a), [&] { return 1.0 / (1.0 + a * a); });
}
inline Rev sinh(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::sinh(a), [&] { return std::cosh(a); });
}
inline Rev cosh(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::cosh(a), [&] { return std::sinh(a); });
}
inline Rev tanh(const Rev& x) {
  const double v = std::tanh(x.value());
  return detail::unary_op(x, v, [&] { return 1.0 - v * v; });
}
inline Rev exp(const Rev& x) {
  const double v = std::exp(x.value());
  return detail::unary_op(x, v, [&] { return v; });
}
inline Rev expm1(const Rev& x) {
  const double v = std::expm1(x.value());
  return detail::unary_op(x, v, [&] { return v + 1.0; });
}
inline Rev log(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::log(a), [&] { return 1.0 / a; });
}
inline Rev log1p(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::log1p(a), [&] { return 1.0 / (1.0 + a); });
}
inline Rev log10(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::log10(a), [&] { return 1.0 / (a * 2.302585092994045684); });
}
inline Rev log2(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::log2(a), [&] { return 1.0 / (a * 0.693147180559945309); });
}
inline Rev sqrt(const Rev& x) {
  const double v = std::sqrt(x.value());
  return detail::unary_op(x, v, [&] { return 0.5 / v; });
}
inline Rev cbrt(const Rev& x) {
  const double v = std::cbrt(x.value());
  return detail::unary_op(x, v, [&] { return 1.0 / (3.0 * v * v); });
}
// |x|' = sgn(x), with sgn(±0) = ±1 (as ceres::Jet's abs).
inline Rev abs(const Rev& x) {
  const double a = x.value();
  return detail::unary_op(x, std::fabs(a), [&] { return std::copysign(1.0, a); });
}
NEURALSIM_REV_INLINE Rev fabs(const Rev& x) { return abs(x); }
// Piecewise constant: zero derivative, a constant result.
NEURALSIM_REV_INLINE Rev floor(const Rev& x) { return Rev(std::floor(x.value())); }
NEURALSIM_REV_INLINE Rev ceil(const Rev& x) { return Rev(std::ceil(x.value())); }
NEURALSIM_REV_INLINE Rev round(const Rev& x) { return Rev(std::round(x.value())); }
NEURALSIM_REV_INLINE Rev trunc(const Rev& x) { return Rev(std::trunc(x.value())); }

// x^c, c constant: c·x^(c-1) (also for a negative base and integer c).
inline Rev pow(const Rev& x, double c) {
  const double a = x.value();
  return detail::unary_op(x, std::pow(a, c), [&] { return c * std::pow(a, c - 1.0); });
}
// c^y, c constant. As ceres::Jet: c = 0, y > 0 gives the constant 0; c < 0
// with integer y a NaN derivative (y cannot move without leaving the reals).
inline Rev pow(double c, const Rev& y) {
  const double b = y.value();
  if (y.is_constant()) return Rev(std::pow(c, b));
  if (c == 0.0 && b > 0.0) return Rev(0.0);
  const double v = std::pow(c, b);
  if (c < 0.0 && b == std::floor(b)) return y.tape()->unary(v, y, std::numeric_limits<double>::quiet_NaN());
  return y.tape()->unary(v, y, v * std::log(c));
}
// x^y, both variable: the cases of ceres::Jet's pow(Jet, Jet).
inline Rev pow(const Rev& x, const Rev& y) {
  if (y.is_constant()) return pow(x, y.value());
  if (x.is_constant()) return pow(x.value(), y);
  if (x.tape() != y.tape()) detail::throw_mixed_tapes();
  const double a = x.value(), b = y.value();
  Tape* t = x.tape();
  if (a == 0.0 && b >= 1.0) return b > 1.0 ? Rev(0.0) : t->unary(0.0, x, 1.0);
  const double v = std::pow(a, b);
  const double dx = b * std::pow(a, b - 1.0);
  if (a < 0.0 && b == std::floor(b)) return t->binary(v, x, dx, y, std::numeric_limits<double>::quiet_NaN());
  return t->binary(v, x, dx, y, v * std::log(a));
}

// atan2(y, x): ∂/∂y = x/(x²+y²), ∂/∂x = -y/(x²+y²).
inline Rev atan2(const Rev& y, const Rev& x) {
  const double b = y.value(), a = x.value();
  const double v = std::atan2(b, a);
  if (y.is_constant() && x.is_constant()) return Rev(v);
  const double r = 1.0 / (a * a + b * b);
  if (x.is_constant()) return y.tape()->unary(v, y, a * r);
  if (y.is_constant()) return x.tape()->unary(v, x, -b * r);
  if (x.tape() != y.tape()) detail::throw_mixed_tapes();
  return y.tape()->binary(v, y, a * r, x, -b * r);
}
inline Rev atan2(const Rev& y, double x) { return atan2(y, Rev(x)); }
inline Rev atan2(double y, const Rev& x) { return atan2(Rev(y), x); }

// hypot(x, y) = sqrt(x² + y²): ∂/∂x = x/h, ∂/∂y = y/h (NaN at 0, as Jet).
inline Rev hypot(const Rev& x, const Rev& y) {
  const double a = x.value(), b = y.value();
  const double h = std::hypot(a, b);
  if (x.is_constant() && y.is_constant()) return Rev(h);
  if (y.is_constant()) return x.tape()->unary(h, x, a / h);
  if (x.is_constant()) return y.tape()->unary(h, y, b / h);
  if (x.tape() != y.tape()) detail::throw_mixed_tapes();
  return x.tape()->binary(h, x, a / h, y, b / h);
}
inline Rev hypot(const Rev& x, double y) { return hypot(x, Rev(y)); }
inline Rev hypot(double x, const Rev& y) { return hypot(Rev(x), y); }

// Selections: the chosen argument itself (its node), nothing recorded.
// max/min as std::max/std::min (the first argument on ties); fmax/fmin treat
// NaN as missing data (as std::fmax and ceres::Jet's fmax).
NEURALSIM_REV_INLINE Rev max(const Rev& x, const Rev& y) { return x.value() < y.value() ? y : x; }
NEURALSIM_REV_INLINE Rev min(const Rev& x, const Rev& y) { return y.value() < x.value() ? y : x; }
NEURALSIM_REV_INLINE Rev max(const Rev& x, double y) { return max(x, Rev(y)); }
NEURALSIM_REV_INLINE Rev max(double x, const Rev& y) { return max(Rev(x), y); }
NEURALSIM_REV_INLINE Rev min(const Rev& x, double y) { return min(x, Rev(y)); }
NEURALSIM_REV_INLINE Rev min(double x, const Rev& y) { return min(Rev(x), y); }
NEURALSIM_REV_INLINE Rev fmax(const Rev& x, const Rev& y) {
  return (std::isnan(y.value()) || x.value() > y.value()) ? x : y;
}
NEURALSIM_REV_INLINE Rev fmin(const Rev& x, const Rev& y) {
  return (std::isnan(x.value()) || y.value() < x.value()) ? y : x;
}
NEURALSIM_REV_INLINE Rev fmax(const Rev& x, double y) { return fmax(x, Rev(y)); }
NEURALSIM_REV_INLINE Rev fmax(double x, const Rev& y) { return fmax(Rev(x), y); }
NEURALSIM_REV_INLINE Rev fmin(const Rev& x, double y) { return fmin(x, Rev(y)); }
NEURALSIM_REV_INLINE Rev fmin(double x, const Rev& y) { return fmin(Rev(x), y); }

inline bool isfinite(const Rev& x) { return std::isfinite(x.value()); }
inline bool isnan(const Rev& x) { return std::isnan(x.value()); }
inline bool isinf(const Rev& x) { return std::isinf(x.value()); }

// ---- the engine's scalar interface (core/scalar.hpp) ----
// Declared here without its default argument so that this header works
// whether or not core/scalar.hpp (which gives `Enable = void`) is included,
// and in either order.
template <class S, class Enable>
struct ScalarTraits;

template <>
struct ScalarTraits<Rev, void> {
  static constexpr bool kHasDerivatives = true;
  static double value(const Rev& x) { return x.value(); }
  // A variable is never exactly zero, whatever its value: terms multiplied
  // by it carry its derivative.
  static bool exactly_zero(const Rev& x) { return x.is_constant() && x.value() == 0.0; }
};

// Non-template overloads: preferred over the engine's generic to_double /
// exactly_zero / is_finite templates (which read a Jet's members).
inline double to_double(const Rev& x) { return x.value(); }
inline bool exactly_zero(const Rev& x) { return ScalarTraits<Rev, void>::exactly_zero(x); }
inline bool is_finite(const Rev& x) { return std::isfinite(x.value()); }

}  // namespace neuralsim

// ---- Eigen ----
namespace Eigen {

template <>
struct NumTraits<neuralsim::Rev> {
  using Real = neuralsim::Rev;
  using NonInteger = neuralsim::Rev;
  using Nested = neuralsim::Rev;
  using Literal = neuralsim::Rev;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 3,
    MulCost = 3
  };
  template <bool Vectorized>
  struct Div {
    enum { AVX = false, Cost = 3 };
  };
  static inline Real epsilon() { return Real(std::numeric_limits<double>::epsilon()); }
  static inline Real dummy_precision() { return Real(1e-12); }
  static inline Real highest() { return Real((std::numeric_limits<double>::max)()); }
  static inline Real lowest() { return Real(-(std::numeric_limits<double>::max)()); }
  static inline Real infinity() { return Real(std::numeric_limits<double>::infinity()); }
  static inline Real quiet_NaN() { return Real(std::numeric_limits<double>::quiet_NaN()); }
  static inline int digits10() { return NumTraits<double>::digits10(); }
  static inline int digits() { return NumTraits<double>::digits(); }
  static inline int min_exponent() { return NumTraits<double>::min_exponent(); }
  static inline int max_exponent() { return NumTraits<double>::max_exponent(); }
};

template <typename BinaryOp>
struct ScalarBinaryOpTraits<neuralsim::Rev, double, BinaryOp> {
  using ReturnType = neuralsim::Rev;
};
template <typename BinaryOp>
struct ScalarBinaryOpTraits<double, neuralsim::Rev, BinaryOp> {
  using ReturnType = neuralsim::Rev;
};

}  // namespace Eigen
