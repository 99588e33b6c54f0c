#include "neuralsim/estimate/estimation_problem.hpp"

#include <ceres/ceres.h>

#include <chrono>

#include "neuralsim/core/errors.hpp"

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

struct EstimationProblem::CeresState {
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

class AbortCallback : public ceres::IterationCallback {
 public:
  explicit AbortCallback(std::function<bool()> should_abort) : should_abort_(std::move(should_abort)) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    // Terminate "successfully" so the last iterate stays usable: Ctrl-C must
    // still report the best parameters found so far.
    return should_abort_ && should_abort_() ? ceres::SOLVER_TERMINATE_SUCCESSFULLY : ceres::SOLVER_CONTINUE;
  }
 private:
  std::function<bool()> should_abort_;
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

}  // namespace

EstimationProblem::EstimationProblem(const ResidualContext& ctx, const std::vector<const Trajectory*>& train,
                                     const ProblemOptions& options)
    : ctx_(ctx), train_(train), options_(options), theta_(ctx.parameters->initial_variables()) {
  build();
}

EstimationProblem::~EstimationProblem() = default;

void EstimationProblem::build() {
  ceres_ = std::make_unique<CeresState>();
  ceres::Problem::Options po;
  po.cost_function_ownership = ceres::TAKE_OWNERSHIP;
  po.loss_function_ownership = ceres::TAKE_OWNERSHIP;
  ceres_->problem = std::make_unique<ceres::Problem>(po);
  ceres::Problem& problem = *ceres_->problem;
  double* theta = theta_.data();
  const int P = ctx_.parameters->size();
  problem.AddParameterBlock(theta, P);
  for (int i = 0; i < P; ++i) {
    const double lo = ctx_.parameters->variable_lower(i), hi = ctx_.parameters->variable_upper(i);
    if (std::isfinite(lo)) problem.SetParameterLowerBound(theta, i, lo);
    if (std::isfinite(hi)) problem.SetParameterUpperBound(theta, i, hi);
  }
  const int window = std::max(1, options_.window);
  const int stride = options_.stride > 0 ? options_.stride : window;
  const int nq = ctx_.model->nq, nv = ctx_.model->nv;

  // Count segments first so states_ never reallocates (Ceres keeps pointers).
  if (options_.formulation == Formulation::kMultipleShooting) {
    for (const Trajectory* tr : train_) {
      const int T = static_cast<int>(tr->size());
      for (int s = 0; s + 1 < T; s += window) state_origin_.push_back({tr, s});
    }
    states_.assign(state_origin_.size(), std::vector<double>(nq + nv));
    reset_states();
  }
  size_t seg = 0;
  for (size_t t = 0; t < train_.size(); ++t) {
    const Trajectory* tr = train_[t];
    const int T = static_cast<int>(tr->size());
    auto add = [&](ceres::CostFunction* cost, std::vector<double*> blocks) {
      ceres_->blocks.push_back(
          problem.AddResidualBlock(cost, make_loss(options_.loss, options_.loss_scale), blocks));
      block_trajectory_.push_back(static_cast<int>(t));
    };
    switch (options_.formulation) {
      case Formulation::kSingleShooting:
        for (int s = 0; s + 1 < T; s += stride) {
          const Window w{tr, s, std::min(window, T - 1 - s)};
          add(make_single_shooting_cost(ctx_, w), {theta});
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
          add(make_multiple_shooting_cost(ctx_, w, last, options_.continuity_weight), blocks);
        }
        break;
      }
      case Formulation::kInverseDynamics: {
        DerivativeOptions derivatives = options_.derivatives;
        if (derivatives.method == DerivativeMethod::kCentralDifference) derivatives.window = options_.filter_window;
        auto samples = std::make_shared<const InverseDynamicsSamples>(
            prepare_inverse_dynamics(*tr, derivatives, options_.sample_stride));
        for (int r = 0; r < samples->q.rows(); ++r) add(make_inverse_dynamics_cost(ctx_, samples, r, 1.0), {theta});
        break;
      }
    }
  }
  if (ceres_->blocks.empty()) {
    long long longest = 0;
    for (const Trajectory* tr : train_) longest = std::max<long long>(longest, tr->size());
    throw DataError("no residuals: the " + std::to_string(train_.size()) + " training trajectories have at most " +
                    std::to_string(longest) + " samples, too few for residual type " +
                    formulation_name(options_.formulation) + " (window " + std::to_string(window) +
                    ", filter window " + std::to_string(options_.filter_window) + ")");
  }
}

void EstimationProblem::reset_states() {
  const int nq = ctx_.model->nq, nv = ctx_.model->nv;
  for (size_t k = 0; k < state_origin_.size(); ++k) {
    const auto& o = state_origin_[k];
    for (int i = 0; i < nq; ++i) states_[k][i] = o.tr->q(o.sample, i);
    for (int i = 0; i < nv; ++i) states_[k][nq + i] = o.tr->qd(o.sample, i);
  }
}

int EstimationProblem::num_residuals() const { return ceres_->problem->NumResiduals(); }

LocalResult EstimationProblem::solve(const std::vector<double>& x0, const SolverOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  LocalResult result;
  std::copy(x0.begin(), x0.end(), theta_.begin());
  reset_states();
  AbortCallback abort(options.should_abort);
  if (options.solver == LocalSolver::kLevenbergMarquardt) {
    ceres::Solver::Options so;
    so.linear_solver_type = options_.formulation == Formulation::kMultipleShooting ? ceres::SPARSE_SCHUR
                                                                                   : ceres::DENSE_QR;
    if (options_.formulation == Formulation::kMultipleShooting && !ceres::IsSparseLinearAlgebraLibraryTypeAvailable(ceres::SUITE_SPARSE) &&
        !ceres::IsSparseLinearAlgebraLibraryTypeAvailable(ceres::EIGEN_SPARSE))
      so.linear_solver_type = ceres::DENSE_SCHUR;
    so.max_num_iterations = options.max_iterations;
    so.function_tolerance = options.function_tolerance;
    so.gradient_tolerance = options.gradient_tolerance;
    so.parameter_tolerance = options.parameter_tolerance;
    so.num_threads = options.num_threads;
    so.logging_type = ceres::SILENT;
    so.callbacks.push_back(&abort);
    ceres::Solver::Summary summary;
    ceres::Solve(so, ceres_->problem.get(), &summary);
    result.initial_cost = summary.initial_cost;
    result.cost = summary.final_cost;
    result.iterations = static_cast<int>(summary.iterations.size());
    result.usable = summary.IsSolutionUsable();
    result.report = summary.BriefReport();
  } else {
    const int P = ctx_.parameters->size();
    std::vector<double> lo(P), hi(P);
    for (int i = 0; i < P; ++i) {
      lo[i] = ctx_.parameters->variable_lower(i);
      hi[i] = ctx_.parameters->variable_upper(i);
    }
    std::vector<double> x = x0;
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
    so.callbacks.push_back(&abort);
    ceres::GradientProblemSolver::Summary summary;
    ceres::Solve(so, gp, x.data(), &summary);
    for (int i = 0; i < P; ++i) x[i] = std::min(std::max(x[i], lo[i]), hi[i]);
    std::copy(x.begin(), x.end(), theta_.begin());
    result.initial_cost = c0;
    result.cost = summary.final_cost;
    result.iterations = static_cast<int>(summary.iterations.size());
    result.usable = summary.IsSolutionUsable();
    result.report = summary.BriefReport();
  }
  result.x = theta_;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!std::isfinite(result.cost)) result.usable = false;
  return result;
}

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
  for (size_t b = 0; b < ceres_->blocks.size(); ++b) {
    double c = 0;
    ceres_->problem->EvaluateResidualBlock(ceres_->blocks[b], true, &c, nullptr, nullptr);
    out[block_trajectory_[b]] += c;
  }
  return out;
}

Eigen::MatrixXd EstimationProblem::parameter_jacobian(const std::vector<double>& x, Eigen::VectorXd* residuals) {
  std::copy(x.begin(), x.end(), theta_.begin());
  ceres::Problem::EvaluateOptions eo;
  eo.parameter_blocks = {theta_.data()};
  eo.apply_loss_function = false;
  double cost = 0;
  std::vector<double> r;
  ceres::CRSMatrix J;
  ceres_->problem->Evaluate(eo, &cost, &r, nullptr, &J);
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(J.num_rows, J.num_cols);
  for (int row = 0; row < J.num_rows; ++row)
    for (int k = J.rows[row]; k < J.rows[row + 1]; ++k) dense(row, J.cols[k]) = J.values[k];
  if (residuals) *residuals = Eigen::Map<Eigen::VectorXd>(r.data(), static_cast<Eigen::Index>(r.size()));
  return dense;
}

}  // namespace neuralsim
