#include "neuralsim/estimate/estimation_problem.hpp"

#include <ceres/ceres.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/estimate/inertia_prior.hpp"
#include "neuralsim/model/configuration.hpp"

namespace neuralsim {

const char* formulation_name(Formulation f) {
  switch (f) {
    case Formulation::kSingleShooting: return "single_shooting";
    case Formulation::kMultipleShooting: return "multiple_shooting";
    case Formulation::kInverseDynamics: return "inverse_dynamics";
  }
  return "?";
}

const char* local_solver_name(LocalSolver s) {
  return s == LocalSolver::kLbfgs ? "lbfgs" : "levenberg_marquardt";
}

const char* loss_name(Loss l) {
  switch (l) {
    case Loss::kNone: return "none";
    case Loss::kHuber: return "huber";
    case Loss::kCauchy: return "cauchy";
  }
  return "?";
}

// Named, not anonymous: CeresState (a member of a class with linkage) holds
// these.
namespace estimation_problem_internal {

// A residual block that is evaluated ahead of Ceres, in parallel with the
// other blocks (ParallelBlocks below), and then hands Ceres the stored
// result. It owns the formulation's cost function and its own residual and
// Jacobian storage, so concurrent blocks share no mutable state (the
// formulations' functors build their simulation per call and only read the
// ResidualContext).
// A segment's continuity weights (ProblemOptions::continuity_weight): the
// fixed w for both rows, or (NaN, auto) the weights with which the
// segment's own N samples hold its starting state: w0·√N on q and
// w0·T·√(N/3) on q̇ (w0 the q observation's weight, T the segment's
// duration; Σ (t_k ω)² ≈ N T²/3 for a velocity error ω), so that the
// first solve ties each joint as firmly as the data hold either side of it.
ContinuityWeights continuity_weights(const ResidualContext& ctx, const Trajectory& tr, const Window& w, double fixed) {
  if (!std::isnan(fixed)) return {fixed, fixed, nullptr};
  const double w0 = ctx.observe.q_weight > 0 ? ctx.observe.q_weight : 1.0;
  const double duration = tr.time[w.start + w.length] - tr.time[w.start];
  const double n = static_cast<double>(w.length);
  return {w0 * std::sqrt(n), w0 * duration * std::sqrt(n / 3.0), nullptr};
}

class CachedCost final : public ceres::CostFunction {
 public:
  CachedCost(ceres::CostFunction* inner, std::vector<double*> blocks) : inner_(inner), user_(std::move(blocks)) {
    set_num_residuals(inner_->num_residuals());
    *mutable_parameter_block_sizes() = inner_->parameter_block_sizes();
    const int m = num_residuals();
    int offset = 0;
    for (const int size : parameter_block_sizes()) {
      offset_.push_back(offset);
      offset += size;
      jacobian_.emplace_back(static_cast<size_t>(m) * size);
    }
    point_.resize(offset);
    residuals_.resize(m);
    for (auto& j : jacobian_) jacobian_ptr_.push_back(j.data());
    for (int b = 0; b < static_cast<int>(offset_.size()); ++b) point_ptr_.push_back(point_.data() + offset_[b]);
  }

  // Evaluates the block at the values now in its parameter blocks (the
  // user's memory, which Ceres updates before PrepareForEvaluation), unless
  // it already holds that point with what is asked. One task per block: no
  // two threads ever touch the same CachedCost.
  // The block's function changed (a continuity factor): evaluate again.
  void invalidate() { valid_ = false; }
  // Whether prepare() has nothing to compute.
  bool holds(bool jacobians) const {
    return valid_ && !skipped_ && (has_jacobians_ || !jacobians) && same_point(user_.data());
  }
  void prepare(bool jacobians) {
    ++visits_;
    if (holds(jacobians)) return;
    skipped_ = false;
    for (size_t b = 0; b < user_.size(); ++b)
      std::memcpy(point_ptr_[b], user_[b], sizeof(double) * parameter_block_sizes()[b]);
    ok_ = inner_->Evaluate(point_ptr_.data(), residuals_.data(), jacobians ? jacobian_ptr_.data() : nullptr);
    valid_ = true;
    has_jacobians_ = jacobians;
  }

  // A stop was requested (ParallelBlocks): the block is not evaluated. The
  // next prepare() evaluates it again. Where it already holds its residuals
  // at this point (Levenberg–Marquardt's Jacobian pass at a candidate it has
  // just accepted, whose residuals the candidate pass computed), it hands
  // Ceres those with a zero Jacobian: the accepted point and its cost are
  // exact, the iteration completes (Ceres would report a failure and keep
  // its state otherwise) and the stop ends the solve there; the Jacobian is
  // never used for another step. Otherwise Ceres' call fails at once.
  void skip(bool jacobians) {
    ++visits_;
    if (jacobians && valid_ && ok_ && !skipped_ && same_point(user_.data())) {
      if (!has_jacobians_)
        for (auto& j : jacobian_) std::fill(j.begin(), j.end(), 0.0);
      has_jacobians_ = skipped_ = true;
      return;
    }
    for (size_t b = 0; b < user_.size(); ++b)
      std::memcpy(point_ptr_[b], user_[b], sizeof(double) * parameter_block_sizes()[b]);
    ok_ = false;
    valid_ = skipped_ = true;
    has_jacobians_ = jacobians;
  }

  // For the other processes of a distributed solve: what prepare() computed.
  void pack(ByteWriter& w, bool jacobians) const {
    w.put<std::uint8_t>(ok_);
    w.put_vector(residuals_);
    if (jacobians)
      for (const auto& j : jacobian_) w.put_vector(j);
  }
  // Takes another process's result for this block at the point now in the
  // parameter blocks (every process of a solve holds the same point).
  void unpack(ByteReader& r, bool jacobians) {
    for (size_t b = 0; b < user_.size(); ++b)
      std::memcpy(point_ptr_[b], user_[b], sizeof(double) * parameter_block_sizes()[b]);
    ok_ = r.get<std::uint8_t>() != 0;
    skipped_ = !ok_;  // perhaps skipped there: evaluated again when asked next
    residuals_ = r.get_vector();
    if (jacobians)
      for (auto& j : jacobian_) j = r.get_vector();
    for (size_t b = 0; b < jacobian_.size(); ++b) jacobian_ptr_[b] = jacobian_[b].data();
    valid_ = true;
    has_jacobians_ = jacobians;
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    ++visits_;
    // Anything Ceres asks at a point that was not prepared (or with more than
    // was prepared) is computed directly, so the cache can only save work.
    if (!valid_ || (jacobians && !has_jacobians_) || !same_point(parameters))
      return inner_->Evaluate(parameters, residuals, jacobians);
    if (!ok_) return false;
    std::copy(residuals_.begin(), residuals_.end(), residuals);
    if (jacobians)
      for (size_t b = 0; b < jacobian_.size(); ++b)
        if (jacobians[b]) std::copy(jacobian_[b].begin(), jacobian_[b].end(), jacobians[b]);
    return true;
  }

 private:
  // Bitwise: -0.0 and 0.0 may evaluate differently, NaN never matches.
  bool same_point(double const* const* parameters) const {
    for (size_t b = 0; b < offset_.size(); ++b)
      if (std::memcmp(point_ptr_[b], parameters[b], sizeof(double) * parameter_block_sizes()[b]) != 0) return false;
    return true;
  }

  std::unique_ptr<ceres::CostFunction> inner_;
  std::vector<double*> user_;  // the problem's parameter blocks of this residual block
  std::vector<int> offset_;
  std::vector<double> point_, residuals_;
  std::vector<std::vector<double>> jacobian_;  // row-major, per parameter block
  std::vector<double*> point_ptr_, jacobian_ptr_;
  bool valid_ = false, has_jacobians_ = false, ok_ = false, skipped_ = false;
  // prepare() and Evaluate() calls: one task per block, so no two threads
  // count on the same block at once.
  mutable long long visits_ = 0;

 public:
  long long visits() const { return visits_; }
};

// Evaluates every residual block before Ceres reads them (Ceres calls this
// before each evaluation, with the user's parameter blocks up to date), on
// TBB. Ceres itself then runs single-threaded: it sums cost and gradient in
// block order, so the result does not depend on the number of threads.
// The parallel loop is isolated: a thread waiting for its blocks never picks
// up another basin-hopping start meanwhile, which would delay this solve by
// a whole solve; idle threads still steal blocks from it.
//
// Across processes (SolverOptions::communicator): every process runs the
// same solve, evaluates the blocks it owns (block b on rank b mod size) and
// gathers the others' results, so each holds every block exactly as one
// process would have computed it.
//
// The stop flag (set_stop: Ctrl-C, a time budget) is polled before every
// block, not once per solver iteration: one evaluation of a large problem
// (a 98-parameter fit on 1 kHz data, a long multiple-shooting problem) can
// take a minute, and Ctrl-C must end it within a second. Once it is seen,
// the remaining blocks are skipped (CachedCost::skip), the evaluation fails
// at once, and stopped() says why: EstimationProblem::solve then keeps its
// last accepted iterate instead of reporting a failure.
class ParallelBlocks final : public ceres::EvaluationCallback {
 public:
  void add(CachedCost* c) { blocks_.push_back(c); }
  void invalidate() {
    for (CachedCost* c : blocks_) c->invalidate();
  }
  void set_num_threads(int n) { num_threads_ = n; }
  void set_communicator(const Communicator* c) { communicator_ = c; }
  // Null: never stop. Resets stopped().
  void set_stop(std::function<bool()> stop) {
    stop_ = std::move(stop);
    stopped_ = false;
  }
  // A block was skipped because of the stop flag since set_stop().
  bool stopped() const { return stopped_.load(); }
  // While held, PrepareForEvaluation does nothing: Ceres calls it before
  // every single-block evaluation too (Problem::EvaluateResidualBlock), and
  // checking all n blocks there makes a pass over the blocks cost n².
  void hold(bool h) { held_ = h; }
  long long visits() const {
    long long n = 0;
    for (const CachedCost* c : blocks_) n += c->visits();
    return n;
  }
  void PrepareForEvaluation(bool jacobians, bool /*new_evaluation_point*/) override {
    if (held_) return;
    // new_evaluation_point is not trusted: every block checks its own point.
    const int n = static_cast<int>(blocks_.size());
    std::vector<CachedCost*> mine;
    for (int b = 0; b < n; ++b)
      if (owns(communicator_, b)) mine.push_back(blocks_[static_cast<size_t>(b)]);
    const int m = static_cast<int>(mine.size());
    auto one = [&](CachedCost* c) {
      if (!c->holds(jacobians) && stop_requested()) {
        c->skip(jacobians);
      } else {
        c->prepare(jacobians);
      }
    };
    if (num_threads_ == 1 || m <= 1) {
      for (CachedCost* c : mine) one(c);
    } else {
      tbb::this_task_arena::isolate([&] {
        tbb::parallel_for(tbb::blocked_range<int>(0, m, 1), [&](const tbb::blocked_range<int>& r) {
          for (int b = r.begin(); b != r.end(); ++b) one(mine[static_cast<size_t>(b)]);
        });
      });
    }
    if (!communicator_) return;
    exchange_owned(
        *communicator_, blocks_.size(), [&](std::size_t b, ByteWriter& w) { blocks_[b]->pack(w, jacobians); },
        [&](std::size_t b, ByteReader& r) { blocks_[b]->unpack(r, jacobians); });
  }

 private:
  // Latched: once a block saw the flag, every later block is skipped
  // without calling the predicate again (it may read a clock).
  bool stop_requested() {
    if (stopped_.load(std::memory_order_relaxed)) return true;
    if (!stop_ || !stop_()) return false;
    stopped_ = true;
    return true;
  }

  std::vector<CachedCost*> blocks_;  // owned by the ceres::Problem
  int num_threads_ = 0;
  const Communicator* communicator_ = nullptr;
  bool held_ = false;
  std::function<bool()> stop_;
  std::atomic<bool> stopped_{false};
};

// Holds the callback while a pass reads every block from its cache
// (EvaluateResidualBlockAssumingParametersUnchanged after one Evaluate).
struct HeldBlocks {
  ParallelBlocks& p;
  explicit HeldBlocks(ParallelBlocks& q) : p(q) { p.hold(true); }
  ~HeldBlocks() { p.hold(false); }
  HeldBlocks(const HeldBlocks&) = delete;
  HeldBlocks& operator=(const HeldBlocks&) = delete;
};

// A configuration's residual block in a joint fit: its cost function reads
// the configuration's own parameter vector (first block), which is gathered
// from the joint vector; its Jacobian columns are scattered back, zero for
// the joint variables the configuration does not use. Other blocks (states)
// pass through.
class ColumnMapCost final : public ceres::CostFunction {
 public:
  ColumnMapCost(ceres::CostFunction* inner, const std::vector<int>& columns, int joint_size)
      : inner_(inner), columns_(columns) {
    set_num_residuals(inner_->num_residuals());
    *mutable_parameter_block_sizes() = inner_->parameter_block_sizes();
    (*mutable_parameter_block_sizes())[0] = joint_size;
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const int P = static_cast<int>(columns_.size()), m = num_residuals(), N = parameter_block_sizes()[0];
    std::vector<double> local(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) local[static_cast<size_t>(i)] = parameters[0][columns_[static_cast<size_t>(i)]];
    std::vector<const double*> blocks(parameters, parameters + parameter_block_sizes().size());
    blocks[0] = local.data();
    std::vector<double> local_jacobian;
    std::vector<double*> jac;
    if (jacobians) {
      jac.assign(jacobians, jacobians + parameter_block_sizes().size());
      if (jacobians[0]) {
        local_jacobian.assign(static_cast<size_t>(m) * P, 0.0);
        jac[0] = local_jacobian.data();
      }
    }
    if (!inner_->Evaluate(blocks.data(), residuals, jacobians ? jac.data() : nullptr)) return false;
    if (jacobians && jacobians[0]) {
      std::fill(jacobians[0], jacobians[0] + static_cast<size_t>(m) * N, 0.0);
      for (int r = 0; r < m; ++r)
        for (int i = 0; i < P; ++i)
          jacobians[0][static_cast<size_t>(r) * N + columns_[static_cast<size_t>(i)]] =
              local_jacobian[static_cast<size_t>(r) * P + i];
    }
    return true;
  }

 private:
  std::unique_ptr<ceres::CostFunction> inner_;
  std::vector<int> columns_;
};

}  // namespace estimation_problem_internal
using estimation_problem_internal::CachedCost;
using estimation_problem_internal::ColumnMapCost;
using estimation_problem_internal::continuity_weights;
using estimation_problem_internal::HeldBlocks;
using estimation_problem_internal::ParallelBlocks;

struct EstimationProblem::CeresState {
  ParallelBlocks parallel;  // declared first: outlives the problem that points to it
  std::unique_ptr<ceres::Problem> problem;
  std::vector<ceres::ResidualBlockId> blocks;
};

namespace {

ceres::LossFunction* make_loss(Loss loss, double scale) {
  switch (loss) {
    case Loss::kNone: return nullptr;
    case Loss::kHuber: return new ceres::HuberLoss(scale);
    case Loss::kCauchy: return new ceres::CauchyLoss(scale);
  }
  return nullptr;
}

// Once per iteration: progress (iteration, cost, ETA), then the abort poll.
class IterationMonitor : public ceres::IterationCallback {
 public:
  IterationMonitor(const SolverOptions& options, std::chrono::steady_clock::time_point t0)
      : options_(options), t0_(t0), eta_(options.max_iterations, options.function_tolerance) {}
  // Later solves of the same local solve (the re-solves at active bounds)
  // continue the iteration count instead of starting again at 0.
  void continue_numbering() {
    base_ = last_;
    continued_ = true;
  }
  // Called with the cost of every accepted iterate (the start, each
  // successful step), with the solver's state in the parameter blocks
  // (update_state_every_iteration): the point a stop inside a later
  // evaluation falls back to.
  void on_accepted(std::function<void(double, int)> f) { on_accepted_ = std::move(f); }
  // `cut` says whether a stop skipped residual blocks (ParallelBlocks): an
  // iteration whose step it rejected so is no iteration of the fit (its
  // "cost" is the cut evaluation's); it is not reported, and last_cut() says
  // the solve's last history entry is that one.
  void set_cut(std::function<bool()> cut) { cut_ = std::move(cut); }
  bool last_cut() const { return last_cut_; }
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& it) override {
    last_cut_ = it.iteration > 0 && !it.step_is_successful && cut_ && cut_();
    if (last_cut_) return ceres::SOLVER_TERMINATE_SUCCESSFULLY;
    if (on_accepted_ && (it.iteration == 0 || it.step_is_successful)) on_accepted_(it.cost, it.iteration);
    if (options_.on_iteration && !(continued_ && it.iteration == 0)) {
      SolveProgress p;
      p.iteration = last_ = base_ + it.iteration;
      p.max_iterations = options_.max_iterations;
      p.cost = it.cost;
      p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
      eta_.update(p.iteration, p.elapsed_s, it.cost, p);
      options_.on_iteration(p);
    }
    // Terminate "successfully" so the last iterate stays usable: Ctrl-C must
    // still report the best parameters found so far (LM and L-BFGS only
    // accept steps that lower the cost, so the last iterate is the best).
    // The processes of a distributed solve stop together.
    return any_of(options_.communicator, options_.should_abort && options_.should_abort())
               ? ceres::SOLVER_TERMINATE_SUCCESSFULLY
               : ceres::SOLVER_CONTINUE;
  }
 private:
  const SolverOptions& options_;
  std::chrono::steady_clock::time_point t0_;
  SolveEta eta_;
  int base_ = 0, last_ = 0;
  bool continued_ = false, last_cut_ = false;
  std::function<void(double, int)> on_accepted_;
  std::function<bool()> cut_;
};

// The last accepted iterate of a solve (IterationMonitor::on_accepted).
struct AcceptedIterate {
  bool has = false;
  double cost = 0;
  std::vector<double> x;
  std::vector<std::vector<double>> states;
};

// L-BFGS on the same residuals: cost and gradient from Problem::Evaluate.
// Bounds are enforced by clamping inside the evaluation, with the gradient
// zeroed on active bounds (a projected-gradient treatment).
class ProblemFunction : public ceres::FirstOrderFunction {
 public:
  ProblemFunction(EstimationProblem* p, int n, std::vector<double> lo, std::vector<double> hi)
      : p_(p), n_(n), lo_(std::move(lo)), hi_(std::move(hi)) {}
  bool Evaluate(const double* x, double* cost, double* gradient) const override {
    std::vector<double> xc(x, x + n_);
    for (int i = 0; i < n_; ++i) xc[i] = std::min(std::max(xc[i], lo_[i]), hi_[i]);
    std::vector<double> g;
    if (!p_->evaluate(xc, cost, gradient ? &g : nullptr)) return false;
    if (gradient)
      for (int i = 0; i < n_; ++i) gradient[i] = (x[i] < lo_[i] || x[i] > hi_[i]) ? 0.0 : g[i];
    return true;
  }
  int NumParameters() const override { return n_; }
 private:
  EstimationProblem* p_;
  int n_;
  std::vector<double> lo_, hi_;
};

// The prior's residuals √w_i (x_i − x0_i) over the parameters with w_i > 0
// (ProblemOptions::prior_weight): linear, its Jacobian constant.
class PriorCost final : public ceres::CostFunction {
 public:
  PriorCost(int P, std::vector<int> index, std::vector<double> sqrt_w, std::vector<double> center)
      : index_(std::move(index)), sqrt_w_(std::move(sqrt_w)), center_(std::move(center)) {
    set_num_residuals(static_cast<int>(index_.size()));
    mutable_parameter_block_sizes()->push_back(P);
  }
  bool Evaluate(double const* const* x, double* r, double** jacobians) const override {
    const int m = num_residuals(), P = parameter_block_sizes()[0];
    for (int k = 0; k < m; ++k) r[k] = sqrt_w_[k] * (x[0][index_[k]] - center_[k]);
    if (jacobians && jacobians[0]) {
      std::fill(jacobians[0], jacobians[0] + static_cast<size_t>(m) * P, 0.0);
      for (int k = 0; k < m; ++k) jacobians[0][static_cast<size_t>(k) * P + index_[k]] = sqrt_w_[k];
    }
    return true;
  }
 private:
  std::vector<int> index_;
  std::vector<double> sqrt_w_, center_;
};

// The geometric prior's ten rows of one link (LinkInertiaPrior), its
// Jacobian columns scattered from the part's variables to the problem's.
class GeometricPriorCost final : public ceres::CostFunction {
 public:
  GeometricPriorCost(int P, std::unique_ptr<LinkInertiaPrior> prior, std::vector<int> columns)
      : prior_(std::move(prior)), columns_(std::move(columns)) {
    set_num_residuals(10);
    mutable_parameter_block_sizes()->push_back(P);
  }
  bool Evaluate(double const* const* x, double* r, double** jacobians) const override {
    const int P = parameter_block_sizes()[0], n = static_cast<int>(columns_.size());
    std::vector<double> local(static_cast<size_t>(n)), local_jacobian;
    for (int i = 0; i < n; ++i) local[static_cast<size_t>(i)] = x[0][columns_[static_cast<size_t>(i)]];
    const bool jacobian = jacobians && jacobians[0];
    if (jacobian) local_jacobian.resize(10 * static_cast<size_t>(n));
    if (!prior_->evaluate(local.data(), r, jacobian ? local_jacobian.data() : nullptr)) return false;
    if (!jacobian) return true;
    std::fill(jacobians[0], jacobians[0] + 10 * static_cast<size_t>(P), 0.0);
    for (int k = 0; k < 10; ++k)
      for (int i = 0; i < n; ++i)
        jacobians[0][static_cast<size_t>(k) * P + columns_[static_cast<size_t>(i)]] +=
            local_jacobian[static_cast<size_t>(k) * n + i];
    return true;
  }

 private:
  std::unique_ptr<LinkInertiaPrior> prior_;
  std::vector<int> columns_;  // the part's variable i is the problem's columns_[i]
};

}  // namespace

EstimationProblem::EstimationProblem(const ResidualContext& ctx, const std::vector<const Trajectory*>& train,
                                     const ProblemOptions& options)
    : EstimationProblem(*ctx.parameters, {ProblemPart{ctx, train, {}}}, options) {}

EstimationProblem::EstimationProblem(const ParameterSet& joint, std::vector<ProblemPart> parts,
                                     const ProblemOptions& options)
    : joint_(&joint), parts_(std::move(parts)), options_(options), theta_(joint.initial_variables()) {
  for (size_t c = 0; c < parts_.size(); ++c) {
    ProblemPart& part = parts_[c];
    const int P = part.ctx.parameters->size();
    if (!part.columns.empty() && static_cast<int>(part.columns.size()) != P)
      throw InvalidArgument("EstimationProblem: part " + std::to_string(c) + " maps " +
                            std::to_string(part.columns.size()) + " columns for " + std::to_string(P) + " parameters");
    for (const int col : part.columns)
      if (col < 0 || col >= joint.size())
        throw InvalidArgument("EstimationProblem: part " + std::to_string(c) + " names column " + std::to_string(col) +
                              " of a joint vector of " + std::to_string(joint.size()));
    if (part.columns.empty() && P != joint.size())
      throw InvalidArgument("EstimationProblem: part " + std::to_string(c) + " has " + std::to_string(P) +
                            " parameters and no column map into the joint vector of " + std::to_string(joint.size()));
    // The identity map needs no gather.
    bool identity = P == joint.size();
    for (int i = 0; identity && i < static_cast<int>(part.columns.size()); ++i) identity = part.columns[i] == i;
    if (identity) part.columns.clear();
    for (const Trajectory* t : part.train) {
      train_.push_back(t);
      train_part_.push_back(static_cast<int>(c));
    }
  }
  build();
}

EstimationProblem::~EstimationProblem() = default;

void EstimationProblem::build() {
  ceres_ = std::make_unique<CeresState>();
  ceres::Problem::Options po;
  po.cost_function_ownership = ceres::TAKE_OWNERSHIP;
  po.loss_function_ownership = ceres::TAKE_OWNERSHIP;
  po.evaluation_callback = &ceres_->parallel;
  ceres_->problem = std::make_unique<ceres::Problem>(po);
  ceres::Problem& problem = *ceres_->problem;
  double* theta = theta_.data();
  const int P = joint_->size();
  problem.AddParameterBlock(theta, P);
  for (int i = 0; i < P; ++i) {
    const double lo = joint_->variable_lower(i), hi = joint_->variable_upper(i);
    if (std::isfinite(lo)) problem.SetParameterLowerBound(theta, i, lo);
    if (std::isfinite(hi)) problem.SetParameterUpperBound(theta, i, hi);
  }
  const int window = std::max(1, options_.window);
  const int stride = options_.stride > 0 ? options_.stride : window;

  // Count segments (or fitted window starts) first so states_ never
  // reallocates (Ceres keeps pointers).
  const bool fit_starts =
      options_.formulation == Formulation::kSingleShooting && options_.fit_initial_state.any();
  if (options_.formulation == Formulation::kMultipleShooting || fit_starts) {
    const int step = fit_starts ? stride : window;
    for (size_t t = 0; t < train_.size(); ++t) {
      const int T = static_cast<int>(train_[t]->size());
      for (int s = 0; s + 1 < T; s += step) state_origin_.push_back({train_[t], s, train_part_[t]});
    }
    for (const StateOrigin& o : state_origin_) {
      const Model<double>& m = *parts_[static_cast<size_t>(o.part)].ctx.model;
      states_.emplace_back(fit_starts ? options_.fit_initial_state.size(m.nv) : m.nq + m.nv);
    }
    reset_states();
  }
  size_t seg = 0;
  int next_window = 0;
  std::vector<bool> regressor(parts_.size());
  num_parts_with_regressor_ = 0;
  for (size_t c = 0; c < parts_.size(); ++c) {
    regressor[c] = use_regressor(parts_[c].ctx);
    num_parts_with_regressor_ += regressor[c] ? 1 : 0;
  }
  regressor_route_ = num_parts_with_regressor_ == static_cast<int>(parts_.size());
  for (size_t t = 0; t < train_.size(); ++t) {
    const Trajectory* tr = train_[t];
    const ProblemPart& part = parts_[static_cast<size_t>(train_part_[t])];
    const ResidualContext& ctx = part.ctx;
    const int T = static_cast<int>(tr->size());
    auto add = [&](ceres::CostFunction* cost, std::vector<double*> blocks, int window_index) {
      if (!part.columns.empty()) cost = new ColumnMapCost(cost, part.columns, P);
      auto* cached = new CachedCost(cost, blocks);
      ceres_->parallel.add(cached);
      ceres_->blocks.push_back(
          problem.AddResidualBlock(cached, make_loss(options_.loss, options_.loss_scale), blocks));
      block_trajectory_.push_back(static_cast<int>(t));
      block_window_.push_back(window_index);
    };
    // One block per sample; for the clusters, runs of `window` samples.
    // The combined objective's torque rows (torque_weight) leave the IMUs and
    // the joint-force channels to the shooting residuals: each is compared once.
    auto add_torque_residuals = [&](const Trajectory* trajectory, double weight, bool with_imus) {
      ResidualContext torque_ctx = ctx;
      if (!with_imus) {
        torque_ctx.observe.imus.clear();
        torque_ctx.observe.joint_torques = {};
        torque_ctx.observe.motor_currents = {};
      }
      auto samples = std::make_shared<const InverseDynamicsSamples>(options_.torque_samples(*trajectory));
      const int n = static_cast<int>(samples->q.rows());
      if (regressor[static_cast<size_t>(train_part_[t])]) {  // never with IMU rows (use_regressor)
        // One block per run of `window` samples (the clusters' runs).
        const auto rs = prepare_regressor_samples(*ctx.model, samples);
        for (int r = 0; r < n; r += window)
          add(make_regressor_inverse_dynamics_cost(ctx, rs, r, std::min(window, n - r), weight), {theta},
              next_window + r / window);
      } else {
        for (int r = 0; r < n; ++r)
          add(make_inverse_dynamics_cost(torque_ctx, samples, r, weight), {theta}, next_window + r / window);
      }
      next_window += (n + window - 1) / window;
    };
    switch (options_.formulation) {
      case Formulation::kSingleShooting:
        for (int s = 0; s + 1 < T; s += stride) {
          const Window w{tr, s, std::min(window, T - 1 - s)};
          std::vector<double*> blocks{theta};
          if (fit_starts) blocks.push_back(states_[seg++].data());
          add(make_single_shooting_cost(ctx, w, options_.fit_initial_state), blocks, next_window++);
        }
        break;
      case Formulation::kMultipleShooting: {
        const size_t first = seg;
        while (seg < state_origin_.size() && state_origin_[seg].tr == tr) ++seg;
        for (size_t k = first; k < seg; ++k) {
          const int s = state_origin_[k].sample;
          const bool last = k + 1 == seg;
          const Window w{tr, s, std::min(window, T - 1 - s)};
          std::vector<double*> blocks{theta, states_[k].data()};
          if (!last) blocks.push_back(states_[k + 1].data());
          const ContinuityWeights weights = continuity_weights(ctx, *tr, w, options_.continuity_weight);
          ContinuityWeights scheduled = weights;
          scheduled.factor = &continuity_factor_;
          const double duration = tr->time[w.start + w.length] - tr->time[w.start];
          const double q_weight = ctx.observe.q_weight > 0 ? ctx.observe.q_weight : 1.0;
          // The misfit's rows: q's, or every channel's when q is not observed.
          const int per_sample = ctx.observe.residuals_per_sample(*ctx.model);
          const int q_rows =
              ctx.observe.q_weight > 0 ? static_cast<int>(ctx.observe.coordinates(*ctx.model, 0).size()) : per_sample;
          if (!last)
            joins_.push_back({ceres_->blocks.size(), ctx.model->nv, weights, duration, q_weight, per_sample, q_rows});
          add(make_multiple_shooting_cost(ctx, w, last, scheduled), blocks, next_window++);
        }
        break;
      }
      case Formulation::kInverseDynamics: add_torque_residuals(tr, 1.0, true); break;
    }
    if (options_.torque_weight > 0 && options_.formulation != Formulation::kInverseDynamics && tr->has_tau())
      add_torque_residuals(tr, options_.torque_weight, false);
  }
  add_prior();
  if (ceres_->blocks.empty()) {
    long long longest = 0;
    for (const Trajectory* tr : train_) longest = std::max<long long>(longest, tr->size());
    throw DataError("no residuals: the " + std::to_string(train_.size()) + " training trajectories have at most " +
                    std::to_string(longest) + " samples, too few for residual type " +
                    formulation_name(options_.formulation) + " (window " + std::to_string(window) +
                    ", filter window " + std::to_string(options_.filter_window) + ")");
  }
}

void EstimationProblem::add_prior() {
  const ParameterSet& params = *joint_;
  std::vector<int> index;
  std::vector<double> sqrt_w, center;
  for (int i = 0; i < params.size(); ++i) {
    const double w = std::isnan(params[i].prior_weight) ? options_.prior_weight : params[i].prior_weight;
    if (!(w > 0) || std::isnan(params[i].nominal)) continue;
    index.push_back(i);
    sqrt_w.push_back(std::sqrt(w));
    center.push_back(params.variable(i, params[i].nominal));
  }
  prior_rows_ = static_cast<int>(index.size());
  if (!index.empty())
    ceres_->problem->AddResidualBlock(new PriorCost(params.size(), index, sqrt_w, center), nullptr, theta_.data());
  if (!(options_.geometric_prior_weight > 0)) return;
  // One block per link and set of problem variables: a link shared by
  // several configurations of a joint fit is pulled once.
  std::vector<std::vector<int>> linked;
  for (const ProblemPart& part : parts_) {
    const ParameterSet& local = *part.ctx.parameters;
    for (int body : inertial_bodies(local)) {
      auto prior = std::make_unique<LinkInertiaPrior>(*part.ctx.model, local, body, options_.geometric_prior_weight);
      std::vector<int> columns, key;
      for (int i = 0; i < local.size(); ++i) columns.push_back(part.columns.empty() ? i : part.columns[static_cast<size_t>(i)]);
      for (int v : prior->variables()) key.push_back(columns[static_cast<size_t>(v)]);
      if (std::find(linked.begin(), linked.end(), key) != linked.end()) continue;
      linked.push_back(key);
      ceres_->problem->AddResidualBlock(new GeometricPriorCost(params.size(), std::move(prior), columns), nullptr,
                                        theta_.data());
      prior_rows_ += 10;
    }
  }
}

bool EstimationProblem::use_regressor(const ResidualContext& ctx) {
  const bool torque = options_.formulation == Formulation::kInverseDynamics || options_.torque_weight > 0;
  if (!torque) return false;
  std::string why;
  if (!options_.regressor) why = "residual.regressor is off";
  else if (options_.loss != Loss::kNone) why = std::string("a robust loss (") + loss_name(options_.loss) + ") is set";
  else if (!ctx.observe.commanded_torques.is_default())
    why = "estimate.observe.commanded_torques weighs or selects the torque rows";
  else if (options_.formulation == Formulation::kInverseDynamics && !ctx.observe.imus.empty())
    why = "IMU channels are observed (their rows need RNEA per sample)";
  else if (options_.formulation == Formulation::kInverseDynamics && ctx.observe.joint_force_residuals() > 0)
    why = "joint-torque or motor-current channels are observed (their rows need RNEA per sample)";
  else regressor_route_applies(*ctx.model, *ctx.parameters, &why);
  const std::string route = why.empty() ? "torque residuals: regressor route (Y(q, q̇, q̈) formed once per sample; "
                                         "the rigid-body part is a matrix product)"
                                       : "torque residuals: RNEA on Jets per sample (" + why + ")";
  // A joint fit says it once per configuration whose route differs.
  if (torque_route_.find(route) == std::string::npos)
    torque_route_ += (torque_route_.empty() ? "" : "; ") + route;
  return why.empty();
}

void EstimationProblem::reset_states() {
  const StartStateFit& fit = options_.fit_initial_state;
  const bool segments = options_.formulation == Formulation::kMultipleShooting;
  for (size_t k = 0; k < state_origin_.size(); ++k) {
    const auto& o = state_origin_[k];
    const Model<double>& model = *parts_[static_cast<size_t>(o.part)].ctx.model;
    const int nq = model.nq, nv = model.nv;
    std::vector<double>& state = states_[k];
    if (segments) {
      for (int i = 0; i < nq; ++i) state[i] = o.tr->q(o.sample, i);
      for (int i = 0; i < nv; ++i) state[nq + i] = o.tr->qd(o.sample, i);
      continue;
    }
    // A fitted start begins at the recording: δ = 0 and the recorded q̇
    // (with initial.qd.* fixed at the first sample: not combined, identify.cpp).
    const int offset = fit.q ? nv : 0;
    if (fit.q) std::fill(state.begin(), state.begin() + nv, 0.0);
    if (fit.qd)
      for (int i = 0; i < nv; ++i) state[offset + i] = o.tr->qd(o.sample, i);
  }
}

int EstimationProblem::num_state_variables() const {
  size_t n = 0;
  for (const std::vector<double>& block : states_) n += block.size();
  return static_cast<int>(n);
}

void EstimationProblem::set_states(const std::vector<double>& states) {
  if (static_cast<int>(states.size()) != num_state_variables())
    throw InvalidArgument("EstimationProblem::set_states: " + std::to_string(states.size()) +
                          " values for a problem of " + std::to_string(num_state_variables()) + " state variables");
  auto it = states.begin();
  for (std::vector<double>& block : states_) {
    std::copy(it, it + static_cast<std::ptrdiff_t>(block.size()), block.begin());
    it += static_cast<std::ptrdiff_t>(block.size());
  }
}

std::vector<StartStates> EstimationProblem::start_states() const {
  std::vector<StartStates> out;
  if (states_.empty()) return out;
  const bool segments = options_.formulation == Formulation::kMultipleShooting;
  out.resize(train_.size());
  size_t k = 0;
  for (size_t t = 0; t < train_.size(); ++t) {
    const size_t first = k;
    while (k < state_origin_.size() && state_origin_[k].tr == train_[t]) ++k;
    StartStates& s = out[t];
    const Model<double>& model = *parts_[static_cast<size_t>(train_part_[t])].ctx.model;
    const int nq = model.nq, nv = model.nv;
    const Eigen::Index n = static_cast<Eigen::Index>(k - first);
    s.q.resize(n, nq);
    s.qd.resize(n, nv);
    Eigen::VectorXd q, qd;
    for (size_t j = first; j < k; ++j) {
      const StateOrigin& o = state_origin_[j];
      const double* block = states_[j].data();
      if (segments) {
        q = Eigen::Map<const Eigen::VectorXd>(block, nq);
        normalize_configuration(model, q);  // as the residuals read it
        qd = Eigen::Map<const Eigen::VectorXd>(block + nq, nv);
      } else {
        start_state(model, *o.tr, o.sample, options_.fit_initial_state, block, q, qd);
      }
      s.samples.push_back(o.sample);
      s.q.row(static_cast<Eigen::Index>(j - first)) = q.transpose();
      s.qd.row(static_cast<Eigen::Index>(j - first)) = qd.transpose();
    }
  }
  return out;
}

int EstimationProblem::num_residuals() const { return ceres_->problem->NumResiduals(); }

int EstimationProblem::num_residual_blocks() const { return static_cast<int>(ceres_->blocks.size()); }

long long EstimationProblem::residual_block_visits() const { return ceres_->parallel.visits(); }

std::vector<int> EstimationProblem::residual_clusters(ClusterBy by) const {
  const std::vector<int>& cluster = by == ClusterBy::kTrajectory ? block_trajectory_ : block_window_;
  std::vector<int> rows;
  for (size_t b = 0; b < ceres_->blocks.size(); ++b) {
    const int m = ceres_->problem->GetCostFunctionForResidualBlock(ceres_->blocks[b])->num_residuals();
    rows.insert(rows.end(), static_cast<size_t>(m), cluster[b]);
  }
  // The prior's rows (added last) are a cluster of their own.
  const int prior_cluster = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end()) + 1;
  rows.insert(rows.end(), static_cast<size_t>(prior_rows_), prior_cluster);
  return rows;
}

// What solve_at_bounds needs of the solve that ran first.
struct EstimationProblem::BoundSolve {
  const SolverOptions& options;
  ceres::Solver::Options& so;
  IterationMonitor& abort;
  std::function<bool()> cut_short;      // a stop cut an evaluation short
  std::function<void()> keep_accepted;  // then: back to the last accepted iterate
};

namespace {

// Whether variable i of x lies within 1e-9 (relative) of its finite lower or upper bound.
bool at_lower_bound(const ParameterSet& p, const std::vector<double>& x, int i) {
  const double v = x[static_cast<size_t>(i)], lo = p.variable_lower(i);
  return std::isfinite(lo) && v - lo <= 1e-9 * std::max(1.0, std::abs(v));
}
bool at_upper_bound(const ParameterSet& p, const std::vector<double>& x, int i) {
  const double v = x[static_cast<size_t>(i)], hi = p.variable_upper(i);
  return std::isfinite(hi) && hi - v <= 1e-9 * std::max(1.0, std::abs(v));
}

// The variables of x at a bound, in order.
std::vector<int> variables_at_bounds(const ParameterSet& p, const std::vector<double>& x) {
  std::vector<int> active;
  for (int i = 0; i < p.size(); ++i)
    if (at_lower_bound(p, x, i) || at_upper_bound(p, x, i)) active.push_back(i);
  return active;
}

}  // namespace

// Ceres' trust-region methods keep a bounded variable inside its box by
// projecting each step onto it (Ceres, "Bounds constrained problems"). When
// a variable ends at a bound and is coupled to a free one, the projected
// steps shrink and Levenberg–Marquardt reports convergence short of the free
// ones' optimum: on the DFKI pendulum the control delay stopped at 7.8 or
// 9.8 ms depending on the start, friction at its bound 0. The remedy is an
// active-set method (Nocedal & Wright, Numerical Optimization, 2nd ed.,
// §16.5 and Algorithm 16.3; the bound-constrained case §16.7 and §18.1):
// each round takes the working set W of the variables now at a bound whose
// multiplier has the sign of a binding bound (the gradient points out of the
// box, or is 0), holds W there and solves for the others. A variable at a
// bound whose gradient points inside (a negative multiplier, N&W (16.37)) is
// released, all such at once as in the gradient-projection method's binding
// set (Bertsekas, "Projected Newton methods for optimization problems with
// simple constraints", SIAM J. Control Optim. 20, 1982). A variable that
// reaches its bound during a held solve joins W in the next round (DFKI:
// the armature held, the friction reaching 0 inside that solve: the fit
// stopped 0.1 % above the optimum until 2026-12-07). The rounds end when W
// is the set the last solve held (the KKT conditions hold to the solver's
// tolerances: no variable joins or leaves), when a solve gains nothing and
// brings no new variable to a bound, after kMaxRounds solves, at
// max_iterations or at the stop flag. Each solve starts where the last
// ended and a solve that raises the cost is undone, so the cost never
// increases.
void EstimationProblem::solve_at_bounds(BoundSolve& b, LocalResult& result) {
  constexpr int kMaxRounds = 8;
  const SolverOptions& options = b.options;
  const int P = joint_->size();
  int used = result.iterations > 0 ? result.iterations - 1 : 0;  // iteration 0 is the start
  std::vector<int> held;                                         // what the last solve held (the first: none)
  for (int round = 0; round < kMaxRounds; ++round) {
    // The processes of a distributed solve decide together (the same values
    // everywhere, and one agreed stop flag).
    if (!result.usable || !std::isfinite(result.cost) || used >= options.max_iterations ||
        any_of(options.communicator, options.should_abort && options.should_abort()))
      return;
    const std::vector<int> active = variables_at_bounds(*joint_, theta_);
    if (active.empty() || static_cast<int>(active.size()) == P) return;
    double cost = 0;
    std::vector<double> g;
    ceres::Problem::EvaluateOptions eo;
    eo.parameter_blocks = {theta_.data()};
    if (!ceres_->problem->Evaluate(eo, &cost, nullptr, &g, nullptr)) return;
    std::vector<int> hold;
    int released = 0;
    for (const int i : active) {
      const double inward = at_lower_bound(*joint_, theta_, i) ? -g[static_cast<size_t>(i)] : g[static_cast<size_t>(i)];
      if (inward > options.gradient_tolerance * std::max(1.0, cost))
        ++released;  // the cost decreases moving it inside
      else
        hold.push_back(i);
    }
    if (hold == held) return;  // the last solve held exactly these: nothing joins or leaves
    const double before = result.cost;
    const std::vector<double> theta_before = theta_;
    const std::vector<std::vector<double>> states_before = states_;  // same sizes: assigned back in place
    b.so.max_num_iterations = options.max_iterations - used;
    b.abort.continue_numbering();
    if (!hold.empty()) ceres_->problem->SetManifold(theta_.data(), new ceres::SubsetManifold(P, hold));
    ceres::Solver::Summary again;
    ceres::Solve(b.so, ceres_->problem.get(), &again);
    if (!hold.empty()) ceres_->problem->SetManifold(theta_.data(), nullptr);
    if (b.cut_short()) {
      // This solve's iteration 0 is the point it started from.
      for (size_t k = 1; k < again.iterations.size(); ++k) result.cost_history.push_back(again.iterations[k].cost);
      b.keep_accepted();
      return;
    }
    // A re-solve that fails keeps the usable result it started from.
    if (!again.IsSolutionUsable() || !(again.final_cost <= before)) {
      std::copy(theta_before.begin(), theta_before.end(), theta_.begin());
      for (size_t k = 0; k < states_.size(); ++k)
        std::copy(states_before[k].begin(), states_before[k].end(), states_[k].begin());
      return;
    }
    for (size_t k = 1; k < again.iterations.size(); ++k) result.cost_history.push_back(again.iterations[k].cost);
    used += static_cast<int>(again.iterations.size()) - 1;
    result.iterations = used + 1;
    result.cost = again.final_cost;
    result.stopped = again.termination_type == ceres::USER_SUCCESS;
    const std::string count = std::to_string(round + 1);
    result.report = again.BriefReport() +
                    (hold.empty() ? " (released again, round " + count + ")"
                                  : " (the " + std::to_string(hold.size()) + " variable(s) at a bound held there" +
                                        (released > 0 ? ", " + std::to_string(released) + " released" : "") +
                                        ", round " + count + ")");
    held = hold;
    // Nothing gained and no new variable at a bound: the last solve had converged.
    const bool gained = before - result.cost > options.function_tolerance * before;
    if (!gained && variables_at_bounds(*joint_, theta_).size() <= active.size()) return;
  }
}

void EstimationProblem::set_continuity_factor(double factor) {
  continuity_factor_ = factor;
  ceres_->parallel.invalidate();
}

ContinuityReport EstimationProblem::continuity(const std::vector<double>& x) {
  ContinuityReport r;
  r.tolerance = options_.continuity_tolerance;
  if (joins_.empty()) return r;
  std::copy(x.begin(), x.end(), theta_.begin());
  ceres::Problem::EvaluateOptions eo;
  double total = 0;
  // Every block, in parallel, into its cache; then the joints' rows from it.
  if (!ceres_->problem->Evaluate(eo, &total, nullptr, nullptr, nullptr)) return r;
  const HeldBlocks hold(ceres_->parallel);
  double sum_q = 0, sum_qd = 0, sum_gap = 0, sum_misfit = 0;
  long long coordinates = 0, misfit_rows = 0;
  std::vector<double> res;
  for (const Join& j : joins_) {
    const ceres::ResidualBlockId id = ceres_->blocks[j.block];
    res.resize(static_cast<size_t>(ceres_->problem->GetCostFunctionForResidualBlock(id)->num_residuals()));
    double cost = 0;
    ceres_->problem->EvaluateResidualBlockAssumingParametersUnchanged(id, false, &cost, res.data(), nullptr);
    const size_t data_rows = res.size() - 2 * static_cast<size_t>(j.nv);
    // The data rows are the observed channels times their weights, sample
    // after sample; each sample's first q_rows (the joint positions, or all
    // of them when q is not observed) measure the misfit.
    for (size_t first = 0; j.per_sample > 0 && first + static_cast<size_t>(j.per_sample) <= data_rows;
         first += static_cast<size_t>(j.per_sample))
      for (int i = 0; i < j.q_rows; ++i) {
        const double e = res[first + static_cast<size_t>(i)] / j.q_weight;
        sum_misfit += e * e;
        ++misfit_rows;
      }
    // A weight of 0 leaves the rows 0 whatever the gap: not measured (NaN).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double wq = continuity_factor_ * j.weights.q, wqd = continuity_factor_ * j.weights.qd;
    for (int i = 0; i < j.nv; ++i) {
      const double dq = wq > 0 ? std::abs(res[data_rows + i]) / wq : nan;
      const double dqd = wqd > 0 ? std::abs(res[data_rows + j.nv + i]) / wqd : nan;
      r.gap_q_max = std::isnan(dq) ? nan : std::max(r.gap_q_max, dq);
      r.gap_qd_max = std::isnan(dqd) ? nan : std::max(r.gap_qd_max, dqd);
      sum_q += dq * dq;
      sum_qd += dqd * dqd;
      const double gap = std::isnan(dq) || std::isnan(dqd) ? nan : std::max(dq, j.duration * dqd);
      sum_gap += gap * gap;
      ++coordinates;
    }
  }
  r.joins = static_cast<int>(joins_.size());
  r.factor = continuity_factor_;
  r.weight_q = continuity_factor_ * joins_.front().weights.q;
  r.weight_qd = continuity_factor_ * joins_.front().weights.qd;
  r.gap_q_rms = std::sqrt(sum_q / static_cast<double>(coordinates));
  r.gap_qd_rms = std::sqrt(sum_qd / static_cast<double>(coordinates));
  r.gap_rms = std::sqrt(sum_gap / static_cast<double>(coordinates));
  r.misfit_rms = misfit_rows > 0 ? std::sqrt(sum_misfit / static_cast<double>(misfit_rows)) : 0;
  return r;
}

LocalResult EstimationProblem::solve(const std::vector<double>& x0, const SolverOptions& options) {
  // The quadratic-penalty schedule (auto weight, Levenberg–Marquardt): the
  // rounds before the segments join are only steps toward the joined
  // problem, so they stop at a relative cost decrease of 1e-6 (an inexact
  // penalty subproblem; a parameter that ends at a bound otherwise makes
  // each round crawl toward it); once joined, or out of rounds, a last
  // solve at the same weights polishes at the caller's tolerances. Every
  // solve resumes from the last solution (parameters and segment states)
  // within one iteration budget; a solve that fails keeps the last solution.
  const bool schedule =
      !joins_.empty() && std::isnan(options_.continuity_weight) && options.solver == LocalSolver::kLevenbergMarquardt;
  SolverOptions loose = options;
  if (schedule) loose.function_tolerance = std::max(options.function_tolerance, 1e-6);
  bool polished = !(loose.function_tolerance > options.function_tolerance);
  set_continuity_factor(1);
  LocalResult result = solve_once(x0, loose, true);
  if (joins_.empty()) return result;
  result.continuity = continuity(result.x);
  int round = 0;
  while (schedule && result.usable && !result.stopped && result.iterations < options.max_iterations) {
    const bool tighten = !result.continuity.joined() && round < options_.continuity_rounds;
    if (!tighten && polished) break;
    const double factor = continuity_factor_;
    const std::vector<std::vector<double>> states_before = states_;
    SolverOptions rest = tighten ? loose : options;
    rest.max_iterations = options.max_iterations - result.iterations;
    if (tighten) ++round;
    polished = !tighten || !(loose.function_tolerance > options.function_tolerance);
    set_continuity_factor(tighten ? factor * 10 : factor);
    LocalResult next = solve_once(result.x, rest, false);
    if (!next.usable) {
      set_continuity_factor(factor);
      std::copy(result.x.begin(), result.x.end(), theta_.begin());
      for (size_t k = 0; k < states_.size(); ++k)
        std::copy(states_before[k].begin(), states_before[k].end(), states_[k].begin());
      break;
    }
    next.initial_cost = result.initial_cost;
    next.iterations += result.iterations;
    next.cost_history.insert(next.cost_history.begin(), result.cost_history.begin(), result.cost_history.end());
    next.seconds += result.seconds;
    next.report += " (continuity round " + std::to_string(round) + ", weights ×" +
                   format_printf("%g", continuity_factor_) + (tighten ? ")" : ", polished)");
    result = std::move(next);
    result.continuity = continuity(result.x);
  }
  result.continuity.rounds = round;
  return result;
}

LocalResult EstimationProblem::solve_once(const std::vector<double>& x0, const SolverOptions& options,
                                          bool restart_states) {
  const auto t0 = std::chrono::steady_clock::now();
  LocalResult result;
  std::copy(x0.begin(), x0.end(), theta_.begin());
  if (restart_states) reset_states();
  std::vector<double> x_lbfgs;  // the L-BFGS iterate
  IterationMonitor abort(options, t0);
  ceres_->parallel.set_num_threads(options.num_threads);
  ceres_->parallel.set_communicator(options.communicator);
  ceres_->parallel.set_stop(options.should_abort);
  // A stop inside an evaluation (ParallelBlocks) makes that evaluation fail:
  // at the start, Ceres reports a failure; after a successful step, at the
  // Jacobian of the new point, a failure too, with the solver's state not
  // copied back. Either way the solve keeps its last accepted iterate,
  // which Levenberg–Marquardt and L-BFGS (they accept only steps that lower
  // the cost) make the best point of the solve whose iteration completed.
  // The processes of a distributed solve decide together (they see the
  // same failed blocks, so they stop at the same point).
  AcceptedIterate accepted;
  const auto cut_short = [&] { return any_of(options.communicator, ceres_->parallel.stopped()); };
  abort.set_cut(cut_short);  // agreed by the processes, as every poll
  const auto keep_accepted = [&] {
    if (accepted.has) {
      std::copy(accepted.x.begin(), accepted.x.end(), theta_.begin());
      for (size_t k = 0; k < states_.size(); ++k)
        std::copy(accepted.states[k].begin(), accepted.states[k].end(), states_[k].begin());
    }
    result.usable = accepted.has;
    result.cost = accepted.has ? accepted.cost : std::numeric_limits<double>::quiet_NaN();
    // The iteration the stop cut is none of the fit's.
    if (abort.last_cut() && !result.cost_history.empty()) result.cost_history.pop_back();
    result.iterations = static_cast<int>(result.cost_history.size());
    result.stopped = true;
    // Ceres' own line would say FAILURE for a stop inside the first evaluation.
    result.report = accepted.has ? format_printf(
                                       "Iterations: %d, Initial cost: %e, Final cost: %e, Termination: "
                                       "STOPPED inside an evaluation (the last accepted iterate)",
                                       result.iterations, result.initial_cost, result.cost)
                                 : "Termination: STOPPED inside the first evaluation (no iterate)";
  };
  if (options.solver == LocalSolver::kLevenbergMarquardt) {
    abort.on_accepted([&](double cost, int /*iteration*/) {
      accepted.has = true;
      accepted.cost = cost;
      accepted.x = theta_;
      accepted.states = states_;
    });
    ceres::Solver::Options so;
    // Nuisance states (segments, fitted starts) are eliminated by the Schur
    // complement: each touches one or two residual blocks.
    so.linear_solver_type = states_.empty() ? ceres::DENSE_QR : ceres::SPARSE_SCHUR;
    // The regressor route's residuals are cheap: the dense QR of the tall
    // Jacobian (m·P² flops, twice those of forming JᵀJ) is then the cost of
    // an iteration; LM's damping keeps the normal equations well posed.
    if (states_.empty() && regressor_route_) so.linear_solver_type = ceres::DENSE_NORMAL_CHOLESKY;
    if (!states_.empty() && !ceres::IsSparseLinearAlgebraLibraryTypeAvailable(ceres::SUITE_SPARSE) &&
        !ceres::IsSparseLinearAlgebraLibraryTypeAvailable(ceres::EIGEN_SPARSE))
      so.linear_solver_type = ceres::DENSE_SCHUR;
    so.max_num_iterations = options.max_iterations;
    so.function_tolerance = options.function_tolerance;
    so.gradient_tolerance = options.gradient_tolerance;
    so.parameter_tolerance = options.parameter_tolerance;
    // Ceres' own threads stay off: its evaluator sums cost and gradient per
    // thread and its Schur elimination per chunk, in an order that depends
    // on timing. The blocks are evaluated in parallel by ParallelBlocks.
    so.num_threads = 1;
    so.logging_type = ceres::SILENT;
    so.update_state_every_iteration = true;  // for on_accepted; the evaluations are the same
    so.callbacks.push_back(&abort);
    ceres::Solver::Summary summary;
    ceres::Solve(so, ceres_->problem.get(), &summary);
    result.initial_cost = summary.initial_cost;
    result.cost = summary.final_cost;
    result.iterations = static_cast<int>(summary.iterations.size());
    for (const auto& it : summary.iterations) result.cost_history.push_back(it.cost);
    result.usable = summary.IsSolutionUsable();
    result.report = summary.BriefReport();
    result.stopped = summary.termination_type == ceres::USER_SUCCESS;
    if (cut_short()) {
      keep_accepted();
    } else {
      BoundSolve bounds{options, so, abort, cut_short, keep_accepted};
      solve_at_bounds(bounds, result);  // the variables that end at a bound held there
    }
  } else {
    const int P = joint_->size();
    std::vector<double> lo(P), hi(P);
    for (int i = 0; i < P; ++i) {
      lo[i] = joint_->variable_lower(i);
      hi[i] = joint_->variable_upper(i);
    }
    abort.on_accepted([&](double cost, int /*iteration*/) {
      accepted.has = true;
      accepted.cost = cost;
      accepted.x = x_lbfgs;
      for (int i = 0; i < P; ++i) accepted.x[i] = std::min(std::max(accepted.x[i], lo[i]), hi[i]);
    });
    std::vector<double>& x = x_lbfgs;
    x = x0;
    double c0 = 0;
    evaluate(x, &c0, nullptr);
    ceres::GradientProblem gp(new ProblemFunction(this, P, lo, hi));
    ceres::GradientProblemSolver::Options so;
    so.line_search_direction_type = ceres::LBFGS;
    so.max_num_iterations = options.max_iterations;
    so.function_tolerance = options.function_tolerance;
    so.gradient_tolerance = options.gradient_tolerance;
    so.parameter_tolerance = options.parameter_tolerance;
    so.logging_type = ceres::SILENT;
    so.update_state_every_iteration = true;  // x is the iterate in on_accepted
    so.callbacks.push_back(&abort);
    ceres::GradientProblemSolver::Summary summary;
    ceres::Solve(so, gp, x.data(), &summary);
    const bool stopped = cut_short();
    if (stopped && accepted.has) x = accepted.x;
    for (int i = 0; i < P; ++i) x[i] = std::min(std::max(x[i], lo[i]), hi[i]);
    std::copy(x.begin(), x.end(), theta_.begin());
    result.initial_cost = c0;
    result.cost = summary.final_cost;
    result.iterations = static_cast<int>(summary.iterations.size());
    for (const auto& it : summary.iterations) result.cost_history.push_back(it.cost);
    result.usable = summary.IsSolutionUsable();
    result.report = summary.BriefReport();
    result.stopped = summary.termination_type == ceres::USER_SUCCESS;
    if (stopped) keep_accepted();
  }
  ceres_->parallel.set_num_threads(0);
  ceres_->parallel.set_communicator(nullptr);
  ceres_->parallel.set_stop(stop_);
  result.x = theta_;
  for (const std::vector<double>& block : states_) result.states.insert(result.states.end(), block.begin(), block.end());
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!std::isfinite(result.cost)) result.usable = false;
  return result;
}

void EstimationProblem::set_stop(std::function<bool()> stop) {
  stop_ = std::move(stop);
  ceres_->parallel.set_stop(stop_);
}

bool EstimationProblem::stopped() const { return ceres_->parallel.stopped(); }

bool EstimationProblem::evaluate(const std::vector<double>& x, double* cost, std::vector<double>* gradient) {
  std::copy(x.begin(), x.end(), theta_.begin());
  ceres::Problem::EvaluateOptions eo;
  eo.parameter_blocks = {theta_.data()};
  eo.apply_loss_function = true;
  std::vector<double> g;
  if (!ceres_->problem->Evaluate(eo, cost, nullptr, gradient ? &g : nullptr, nullptr)) return false;
  if (gradient) *gradient = g;
  return std::isfinite(*cost);
}

std::vector<double> EstimationProblem::cost_per_trajectory(const std::vector<double>& x) {
  std::copy(x.begin(), x.end(), theta_.begin());
  std::vector<double> out(train_.size(), 0.0);
  // One evaluation of all blocks (in parallel), then each block's cost from
  // its cache, with the callback held: linear in the blocks.
  double total = 0;
  ceres::Problem::EvaluateOptions eo;
  ceres_->problem->Evaluate(eo, &total, nullptr, nullptr, nullptr);
  const HeldBlocks hold(ceres_->parallel);
  for (size_t b = 0; b < ceres_->blocks.size(); ++b) {
    double c = 0;
    ceres_->problem->EvaluateResidualBlockAssumingParametersUnchanged(ceres_->blocks[b], true, &c, nullptr, nullptr);
    out[block_trajectory_[b]] += c;
  }
  return out;
}

Eigen::MatrixXd EstimationProblem::parameter_jacobian(const std::vector<double>& x, Eigen::VectorXd* residuals) {
  std::copy(x.begin(), x.end(), theta_.begin());
  ceres::Problem::EvaluateOptions eo;
  eo.parameter_blocks = {theta_.data()};
  for (std::vector<double>& block : states_) eo.parameter_blocks.push_back(block.data());
  eo.apply_loss_function = false;
  double cost = 0;
  std::vector<double> r;
  ceres::CRSMatrix J;
  // Cut short by set_stop's flag (the caller asks stopped()): nothing to
  // return, even where the evaluation succeeded with skipped blocks' zero
  // Jacobians (CachedCost::skip).
  const bool evaluated = ceres_->problem->Evaluate(eo, &cost, &r, nullptr, &J);
  if (stopped()) {
    if (residuals) residuals->resize(0);
    return Eigen::MatrixXd(0, joint_->size());
  }
  (void)evaluated;  // a diverged evaluation: the caller sees non-finite residuals
  // Columns [θ | states]: θ dense, the states sparse (each touches one or
  // two residual blocks).
  const int P = joint_->size();
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(J.num_rows, P);
  std::vector<Eigen::Triplet<double>> nuisance;
  for (int row = 0; row < J.num_rows; ++row)
    for (int k = J.rows[row]; k < J.rows[row + 1]; ++k) {
      if (J.cols[k] < P) dense(row, J.cols[k]) = J.values[k];
      else nuisance.emplace_back(row, J.cols[k] - P, J.values[k]);
    }
  if (residuals) *residuals = Eigen::Map<Eigen::VectorXd>(r.data(), static_cast<Eigen::Index>(r.size()));
  if (states_.empty()) return dense;
  Eigen::SparseMatrix<double> Js(J.num_rows, J.num_cols - P);
  Js.setFromTriplets(nuisance.begin(), nuisance.end());
  return profile_nuisance(dense, Js);
}

}  // namespace neuralsim
