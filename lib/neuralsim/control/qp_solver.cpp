// Goldfarb-Idnani dual active-set QP solver; see qp_solver.hpp for the
// problem, the conventions and the citation. "GI" refers to the paper
// (Math. Programming 27, 1983): the step labels of its algorithm (Step 1,
// Step 2(a)-(c)) and its operators N* = (NᵀH⁻¹N)⁻¹NᵀH⁻¹ and
// H⁻¹(I - N N*), represented by J = L⁻ᵀQ and R with L⁻¹N = Q [R; 0]:
//   z = H n⁺  = J₂ J₂ᵀ n⁺   (primal step direction)
//   r = N* n⁺ = R⁻¹ J₁ᵀ n⁺  (negative change of the active multipliers)
#include "neuralsim/control/qp_solver.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string dims(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

[[noreturn]] void fail(const char* function, const std::string& what) {
  throw InvalidArgument(std::string("QpSolver::") + function + ": " + what);
}

void check_matrix(const char* function, const char* name, const Eigen::Ref<const Eigen::MatrixXd>& m,
                  Eigen::Index rows, Eigen::Index cols, const char* expected) {
  if (m.rows() != rows || m.cols() != cols)
    fail(function, std::string(name) + " is " + dims(m.rows(), m.cols()) + ", expected " + dims(rows, cols) + " (" +
                       expected + ")");
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (!std::isfinite(m(i, j)))
        fail(function, std::string(name) + "(" + std::to_string(i) + ", " + std::to_string(j) +
                           ") is not finite (" + std::to_string(m(i, j)) + ")");
}

// side: 0 any finite value, -1 a lower side (-inf allowed), +1 an upper side.
void check_vector(const char* function, const char* name, const Eigen::Ref<const Eigen::VectorXd>& v,
                  Eigen::Index size, const char* expected, int side = 0) {
  if (v.size() != size)
    fail(function, std::string(name) + " has size " + std::to_string(v.size()) + ", expected " +
                       std::to_string(size) + " (" + expected + ")");
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    const double x = v[i];
    const bool ok = std::isfinite(x) || (side < 0 && x == -kInf) || (side > 0 && x == kInf);
    if (!ok)
      fail(function, std::string(name) + "(" + std::to_string(i) + ") = " + std::to_string(x) +
                         (side < 0   ? " (a lower side may be finite or -inf)"
                          : side > 0 ? " (an upper side may be finite or +inf)"
                                     : " is not finite"));
  }
}

}  // namespace

const char* to_string(QpStatus status) {
  switch (status) {
    case QpStatus::kOptimal:
      return "optimal";
    case QpStatus::kInfeasible:
      return "infeasible";
    case QpStatus::kMaxIterations:
      return "maximum number of iterations reached";
    case QpStatus::kNotConvex:
      return "H is not positive definite (the QP is not strictly convex)";
  }
  return "unknown";
}

QpSolver::QpSolver(Index n, Index n_eq, Index n_ineq, const QpSettings& settings)
    : n_(n), n_eq_(n_eq), n_in_(n_ineq), settings_(settings), llt_(std::max<Index>(n, 0)) {
  if (n < 1 || n_eq < 0 || n_ineq < 0)
    fail("QpSolver", "sizes must be n >= 1, n_eq >= 0, n_ineq >= 0 (got n = " + std::to_string(n) +
                         ", n_eq = " + std::to_string(n_eq) + ", n_ineq = " + std::to_string(n_ineq) + ")");
  if (!(settings.primal_tolerance > 0) || !(settings.dependency_tolerance > 0) || !(settings.regularization >= 0) ||
      !std::isfinite(settings.regularization) || settings.max_iterations < 0)
    fail("QpSolver", "settings need primal_tolerance > 0, dependency_tolerance > 0, finite regularization >= 0, "
                     "max_iterations >= 0");
  max_iterations_ = settings.max_iterations > 0 ? settings.max_iterations
                                                : static_cast<int>(5 * (2 * n + n_eq + n_ineq) + 50);
  H_.setZero(n, n);
  J0_.setZero(n, n);
  g_.setZero(n);
  AeqT_.setZero(n, n_eq);
  b_eq_.setZero(n_eq);
  a_norm_.setZero(n_eq);
  CT_.setZero(n, n_ineq);
  c_lo_.setConstant(n_ineq, -kInf);
  c_hi_.setConstant(n_ineq, kInf);
  c_norm_.setZero(n_ineq);
  row_sparse_.assign(n_ineq, 1);  // C = 0: every row is empty
  row_begin_.assign(n_ineq + 1, 0);
  row_idx_.assign(n_ineq * sparse_row_limit(), 0);
  row_val_.assign(n_ineq * sparse_row_limit(), 0.0);
  x_lo_.setConstant(n, -kInf);
  x_hi_.setConstant(n, kInf);
  J_.setZero(n, n);
  R_.setZero(n, n);
  J_eq_.setZero(n, n);
  R_eq_.setZero(n, n);
  active_eq_.setZero(n);
  eq_state_eq_.assign(n_eq, QpActivity::kInactive);
  row_state_eq_.assign(n_ineq, QpActivity::kInactive);
  bound_state_eq_.assign(n, QpActivity::kInactive);
  active_.setZero(n);
  u_.setZero(n + 1);
  eq_state_.assign(n_eq, QpActivity::kInactive);
  row_state_.assign(n_ineq, QpActivity::kInactive);
  bound_state_.assign(n, QpActivity::kInactive);
  row_was_eq_.assign(n_ineq, 0);
  bound_was_eq_.assign(n, 0);
  excluded_.assign(n_eq + 2 * n_ineq + 2 * n, 0);
  x_.setZero(n);
  d_.setZero(n);
  z_.setZero(n);
  r_.setZero(n);
  w_.setZero(n);
  v_.setZero(n);
  cx_.setZero(n_ineq);
  hx_.setZero(n);
  warm_.equalities.assign(n_eq, QpActivity::kEquality);
  warm_.constraints.assign(n_ineq, QpActivity::kInactive);
  warm_.bounds.assign(n, QpActivity::kInactive);
  result_.x.setConstant(n, kNaN);
  result_.lambda_eq.setConstant(n_eq, kNaN);
  result_.lambda_ineq.setConstant(n_ineq, kNaN);
  result_.lambda_bounds.setConstant(n, kNaN);
  result_.active_set = warm_;
}

// ---------------------------------------------------------------------------
// Data

bool QpSolver::update_hessian(const Eigen::Ref<const Eigen::MatrixXd>& H) {
  check_matrix("update_hessian", "H", H, n_, n_, "n x n");
  const double scale = std::max(H.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  for (Index j = 0; j < n_; ++j)
    for (Index i = j + 1; i < n_; ++i)
      if (std::abs(H(i, j) - H(j, i)) > 1e-10 * scale)
        fail("update_hessian", "H is not symmetric: H(" + std::to_string(i) + ", " + std::to_string(j) +
                                   ") = " + std::to_string(H(i, j)) + " but H(" + std::to_string(j) + ", " +
                                   std::to_string(i) + ") = " + std::to_string(H(j, i)));
  H_ = H;
  J0_ = H_;
  J0_.diagonal().array() += settings_.regularization;
  const double max_diag = J0_.diagonal().maxCoeff();
  llt_.compute(J0_);
  factorization_valid_ = false;
  eq_cache_valid_ = false;
  hessian_ok_ = llt_.info() == Eigen::Success && max_diag > 0;
  if (hessian_ok_) {
    // A tiny pivot means H is singular to working precision: J₀ = L⁻ᵀ would
    // be meaningless and the minimizer not unique.
    const double min_pivot = llt_.matrixLLT().diagonal().minCoeff();
    hessian_ok_ = min_pivot * min_pivot > 10.0 * static_cast<double>(n_) *
                                              std::numeric_limits<double>::epsilon() * max_diag;
  }
  if (hessian_ok_) {
    J0_.setIdentity();
    llt_.matrixU().solveInPlace(J0_);  // J₀ = L⁻ᵀ: J for A = ∅
  }
  return hessian_ok_;
}

void QpSolver::update_gradient(const Eigen::Ref<const Eigen::VectorXd>& g) {
  check_vector("update_gradient", "g", g, n_, "n");
  g_ = g;
}

void QpSolver::update_equalities(const Eigen::Ref<const Eigen::MatrixXd>& A_eq,
                                 const Eigen::Ref<const Eigen::VectorXd>& b_eq) {
  check_matrix("update_equalities", "A_eq", A_eq, n_eq_, n_, "n_eq x n");
  check_vector("update_equalities", "b_eq", b_eq, n_eq_, "n_eq");
  AeqT_ = A_eq.transpose();
  b_eq_ = b_eq;
  a_norm_ = AeqT_.colwise().norm().transpose();
  factorization_valid_ = false;
  eq_cache_valid_ = false;
}

void QpSolver::update_inequalities(const Eigen::Ref<const Eigen::MatrixXd>& C,
                                   const Eigen::Ref<const Eigen::VectorXd>& c_lower,
                                   const Eigen::Ref<const Eigen::VectorXd>& c_upper) {
  check_matrix("update_inequalities", "C", C, n_in_, n_, "n_ineq x n");
  check_vector("update_inequalities", "c_lower", c_lower, n_in_, "n_ineq", -1);
  check_vector("update_inequalities", "c_upper", c_upper, n_in_, "n_ineq", +1);
  CT_ = C.transpose();
  c_lo_ = c_lower;
  c_hi_ = c_upper;
  c_norm_ = CT_.colwise().norm().transpose();
  // Rows with at most n/4 nonzeros are also kept in compressed form.
  Index next = 0;
  for (Index i = 0; i < n_in_; ++i) {
    row_begin_[i] = next;
    const Index nnz = (CT_.col(i).array() != 0).count();
    row_sparse_[i] = nnz <= sparse_row_limit();
    if (row_sparse_[i])
      for (Index j = 0; j < n_; ++j)
        if (CT_(j, i) != 0) {
          row_idx_[next] = j;
          row_val_[next] = CT_(j, i);
          ++next;
        }
  }
  row_begin_[n_in_] = next;
  factorization_valid_ = false;
  // The cached equality phase holds rows of C only if some were equalities.
  if (std::any_of(row_was_eq_.begin(), row_was_eq_.end(), [](char e) { return e != 0; })) eq_cache_valid_ = false;
}

void QpSolver::update_bounds(const Eigen::Ref<const Eigen::VectorXd>& x_lower,
                             const Eigen::Ref<const Eigen::VectorXd>& x_upper) {
  check_vector("update_bounds", "x_lower", x_lower, n_, "n", -1);
  check_vector("update_bounds", "x_upper", x_upper, n_, "n", +1);
  x_lo_ = x_lower;
  x_hi_ = x_upper;
}

void QpSolver::update_vectors(const Eigen::Ref<const Eigen::VectorXd>& g,
                              const Eigen::Ref<const Eigen::VectorXd>& b_eq,
                              const Eigen::Ref<const Eigen::VectorXd>& c_lower,
                              const Eigen::Ref<const Eigen::VectorXd>& c_upper) {
  // Check everything before changing anything.
  check_vector("update_vectors", "g", g, n_, "n");
  check_vector("update_vectors", "b_eq", b_eq, n_eq_, "n_eq");
  check_vector("update_vectors", "c_lower", c_lower, n_in_, "n_ineq", -1);
  check_vector("update_vectors", "c_upper", c_upper, n_in_, "n_ineq", +1);
  g_ = g;
  b_eq_ = b_eq;
  c_lo_ = c_lower;
  c_hi_ = c_upper;
}

// ---------------------------------------------------------------------------
// Constraint access. Every side is written as nᵀx ≥ β (or nᵀx = β): the
// upper side of a row c is (-c)ᵀx ≥ -c_upper.

QpSolver::Kind QpSolver::kind(Index id) const {
  if (id < n_eq_) return Kind::kEq;
  if (id < n_eq_ + 2 * n_in_) return Kind::kRow;
  return Kind::kBound;
}

bool QpSolver::is_equality(Index id) const {
  switch (kind(id)) {
    case Kind::kEq:
      return true;
    case Kind::kRow: {
      const Index i = (id - n_eq_) / 2;
      return c_lo_[i] == c_hi_[i];
    }
    case Kind::kBound: {
      const Index j = (id - n_eq_ - 2 * n_in_) / 2;
      return x_lo_[j] == x_hi_[j];
    }
  }
  return false;
}

double QpSolver::rhs(Index id) const {
  switch (kind(id)) {
    case Kind::kEq:
      return b_eq_[id];
    case Kind::kRow: {
      const Index i = (id - n_eq_) / 2;
      return (id - n_eq_) % 2 == 0 ? c_lo_[i] : -c_hi_[i];
    }
    case Kind::kBound: {
      const Index j = (id - n_eq_ - 2 * n_in_) / 2;
      return (id - n_eq_ - 2 * n_in_) % 2 == 0 ? x_lo_[j] : -x_hi_[j];
    }
  }
  return 0;
}

double QpSolver::normal_dot(Index id, const Eigen::VectorXd& v) const {
  switch (kind(id)) {
    case Kind::kEq:
      return AeqT_.col(id).dot(v);
    case Kind::kRow: {
      const double c = row_dot((id - n_eq_) / 2, v);
      return (id - n_eq_) % 2 == 0 ? c : -c;
    }
    case Kind::kBound: {
      const Index j = (id - n_eq_ - 2 * n_in_) / 2;
      return (id - n_eq_ - 2 * n_in_) % 2 == 0 ? v[j] : -v[j];
    }
  }
  return 0;
}

double QpSolver::row_dot(Index i, const Eigen::VectorXd& v) const {
  if (!row_sparse_[i]) return CT_.col(i).dot(v);
  double c = 0;
  for (Index k = row_begin_[i]; k < row_begin_[i + 1]; ++k) c += row_val_[k] * v[row_idx_[k]];
  return c;
}

double QpSolver::normal_norm(Index id) const {
  switch (kind(id)) {
    case Kind::kEq:
      return a_norm_[id];
    case Kind::kRow:
      return c_norm_[(id - n_eq_) / 2];
    case Kind::kBound:
      return 1.0;
  }
  return 1.0;
}

void QpSolver::compute_d(Index id) {
  switch (kind(id)) {
    case Kind::kEq:
      d_.noalias() = J_.transpose() * AeqT_.col(id);
      break;
    case Kind::kRow: {
      const Index i = (id - n_eq_) / 2;
      if (row_sparse_[i]) {
        // A row with few nonzeros (a friction pyramid row has 2): d is a
        // combination of rows of J, O(nnz n) instead of O(n²).
        d_.setZero();
        for (Index k = row_begin_[i]; k < row_begin_[i + 1]; ++k) d_ += row_val_[k] * J_.row(row_idx_[k]).transpose();
      } else {
        d_.noalias() = J_.transpose() * CT_.col(i);
      }
      if ((id - n_eq_) % 2 == 1) d_ = -d_;
      break;
    }
    case Kind::kBound: {
      // n = ±e_j: d is a row of J, O(n) instead of O(n²).
      const Index j = (id - n_eq_ - 2 * n_in_) / 2;
      d_ = J_.row(j).transpose();
      if ((id - n_eq_ - 2 * n_in_) % 2 == 1) d_ = -d_;
      break;
    }
  }
}

// ---------------------------------------------------------------------------
// Working-set factorization (J, R)

void QpSolver::reset_factorization() {
  J_ = J0_;
  q_ = 0;
  std::fill(eq_state_.begin(), eq_state_.end(), QpActivity::kInactive);
  std::fill(row_state_.begin(), row_state_.end(), QpActivity::kInactive);
  std::fill(bound_state_.begin(), bound_state_.end(), QpActivity::kInactive);
}

bool QpSolver::dependent() const {
  // n⁺ is in the span of the active normals iff J₂ᵀn⁺ = 0, i.e. z = 0 in
  // GI step 2(a); the test is relative to ‖Jᵀn⁺‖ = ‖L⁻¹n⁺‖.
  const Index m = n_ - q_;
  if (m == 0) return true;
  const double tol = settings_.dependency_tolerance;
  return d_.tail(m).squaredNorm() <= tol * tol * d_.squaredNorm();
}

void QpSolver::prepare_reflection() {
  // The Householder reflection P = I - β v vᵀ maps d₂ = J₂ᵀn⁺ to α e₁, so
  // that J₂ ← J₂ P and R gains the column [d₁; α] (adding a constraint).
  // w = J₂ v is its one O(n (n-q)) product; it also gives the primal
  // direction z = J₂ d₂ = J₂ (v + α e₁) = w + α J₂ e₁ for free.
  const Index q = q_, m = n_ - q_;
  const double sigma = d_.tail(m).norm();
  const double d0 = d_[q];
  alpha_ = d0 >= 0 ? -sigma : sigma;  // no cancellation in v₀
  auto v = v_.head(m);
  v = d_.tail(m);
  v[0] -= alpha_;
  beta_ = 1.0 / (sigma * (sigma + std::abs(d0)));  // 2 / vᵀv
  w_.noalias() = J_.rightCols(m) * v;
}

void QpSolver::primal_direction() {
  z_ = w_;
  z_ += alpha_ * J_.col(q_);
}

void QpSolver::commit_addition(Index id) {
  const Index q = q_, m = n_ - q_;
  w_ *= beta_;
  J_.rightCols(m).noalias() -= w_ * v_.head(m).transpose();
  R_.col(q).head(q) = d_.head(q);
  R_(q, q) = alpha_;
  active_[q] = id;
  u_[q] = 0;
  ++q_;
  switch (kind(id)) {
    case Kind::kEq:
      eq_state_[id] = QpActivity::kEquality;
      break;
    case Kind::kRow: {
      const Index i = (id - n_eq_) / 2;
      row_state_[i] = is_equality(id)           ? QpActivity::kEquality
                      : (id - n_eq_) % 2 == 0 ? QpActivity::kLower
                                                : QpActivity::kUpper;
      break;
    }
    case Kind::kBound: {
      const Index j = (id - n_eq_ - 2 * n_in_) / 2;
      bound_state_[j] = is_equality(id)                     ? QpActivity::kEquality
                        : (id - n_eq_ - 2 * n_in_) % 2 == 0 ? QpActivity::kLower
                                                            : QpActivity::kUpper;
      break;
    }
  }
}

bool QpSolver::add_to_factorization(Index id) {
  compute_d(id);
  if (dependent()) return false;
  prepare_reflection();
  commit_addition(id);
  return true;
}

void QpSolver::delete_from_factorization(Index k) {
  const Index q = q_;
  const Index id = active_[k];
  switch (kind(id)) {
    case Kind::kEq:
      eq_state_[id] = QpActivity::kInactive;
      break;
    case Kind::kRow:
      row_state_[(id - n_eq_) / 2] = QpActivity::kInactive;
      break;
    case Kind::kBound:
      bound_state_[(id - n_eq_ - 2 * n_in_) / 2] = QpActivity::kInactive;
      break;
  }
  // Remove column k of R (leaving an upper Hessenberg block) and restore the
  // triangle with Givens rotations G on rows j, j+1, applied as J ← J Gᵀ so
  // that L⁻¹N = Q [R; 0] still holds (dropping a constraint).
  // Entries below R's diagonal are never read, so they are not cleared.
  for (Index c = k; c + 1 < q; ++c) {
    R_.col(c).head(c + 2) = R_.col(c + 1).head(c + 2);
    active_[c] = active_[c + 1];
    u_[c] = u_[c + 1];
  }
  for (Index j = k; j + 1 < q; ++j) {
    const double a = R_(j, j), b = R_(j + 1, j);
    if (b == 0) continue;
    const double rho = std::hypot(a, b);
    const double c = a / rho, s = b / rho;
    R_(j, j) = rho;
    for (Index col = j + 1; col + 1 < q; ++col) {
      const double rj = R_(j, col), rj1 = R_(j + 1, col);
      R_(j, col) = c * rj + s * rj1;
      R_(j + 1, col) = -s * rj + c * rj1;
    }
    double* Jj = J_.col(j).data();
    double* Jj1 = J_.col(j + 1).data();
    for (Index i = 0; i < n_; ++i) {
      const double a_i = Jj[i], b_i = Jj1[i];
      Jj[i] = c * a_i + s * b_i;
      Jj1[i] = -s * a_i + c * b_i;
    }
  }
  --q_;
}

void QpSolver::solve_equality_qp() {
  // Minimizer of the QP with the working set as equalities Nᵀx = b (what
  // GI's steps from the unconstrained minimum add up to):
  //   x = J₁ R⁻ᵀ b - J₂ J₂ᵀ g,   u = R⁻¹ (R⁻ᵀ b + J₁ᵀ g),
  // so that H x + g = N u. Recomputing it removes the drift of the
  // incremental updates.
  const Index q = q_, m = n_ - q_;
  w_.noalias() = J_.transpose() * g_;
  for (Index k = 0; k < q; ++k) v_[k] = rhs(active_[k]);
  if (q > 0) {
    const auto Rq = R_.topLeftCorner(q, q).triangularView<Eigen::Upper>();
    Rq.transpose().solveInPlace(v_.head(q));
    u_.head(q) = v_.head(q) + w_.head(q);
    Rq.solveInPlace(u_.head(q));
  }
  v_.tail(m) = -w_.tail(m);
  x_.noalias() = J_ * v_;
}

double QpSolver::dependency_gap(Index id, double* scale) const {
  // For n = N r (r_ from the current d_): rᵀβ_A - β, the value of nᵀx - β
  // on the whole active manifold; *scale bounds its rounding error.
  double gap = -rhs(id);
  *scale = normal_norm(id) + std::abs(rhs(id));
  for (Index j = 0; j < q_; ++j) {
    gap += r_[j] * rhs(active_[j]);
    *scale += std::abs(r_[j] * rhs(active_[j]));
  }
  return gap;
}

bool QpSolver::redundant_consistent(Index id) {
  compute_d(id);
  if (q_ > 0) {
    r_.head(q_) = d_.head(q_);
    R_.topLeftCorner(q_, q_).triangularView<Eigen::Upper>().solveInPlace(r_.head(q_));
  }
  double scale = 0;
  const double gap = dependency_gap(id, &scale);
  return std::abs(gap) <= settings_.primal_tolerance * scale;
}

bool QpSolver::restore_s_pair() {
  // The equality-constrained minimizer on A, with the inequalities of
  // negative multiplier dropped until none is left: an S-pair.
  bool any = false;
  for (;;) {
    solve_equality_qp();
    bool dropped = false;
    for (Index k = q_ - 1; k >= 0; --k)
      if (!is_equality(active_[k]) && u_[k] < 0) {
        delete_from_factorization(k);
        dropped = true;
      }
    if (!dropped) break;
    any = true;
  }
  if (any) clear_exclusions();
  return any;
}

void QpSolver::clear_exclusions() {
  if (std::find(excluded_.begin(), excluded_.end(), 1) != excluded_.end())
    std::fill(excluded_.begin(), excluded_.end(), 0);
}

QpSolver::Index QpSolver::most_violated() {
  // GI step 1: the most violated constraint, violations measured in the
  // distance to the hyperplane so that row scaling does not matter.
  const double tol = settings_.primal_tolerance;
  Index best = -1;
  double worst = 0;
  for (Index i = 0; i < n_in_; ++i) {
    if (row_state_[i] != QpActivity::kInactive || c_lo_[i] == c_hi_[i]) continue;
    cx_[i] = row_dot(i, x_);
    const double inv = c_norm_[i] > 0 ? 1.0 / c_norm_[i] : 1.0;
    if (c_lo_[i] > -kInf && !excluded_[n_eq_ + 2 * i]) {
      const double v = (c_lo_[i] - cx_[i]) * inv;
      if (v > tol * (1 + std::abs(c_lo_[i]) * inv) && v > worst) {
        worst = v;
        best = n_eq_ + 2 * i;
      }
    }
    if (c_hi_[i] < kInf && !excluded_[n_eq_ + 2 * i + 1]) {
      const double v = (cx_[i] - c_hi_[i]) * inv;
      if (v > tol * (1 + std::abs(c_hi_[i]) * inv) && v > worst) {
        worst = v;
        best = n_eq_ + 2 * i + 1;
      }
    }
  }
  const Index b0 = n_eq_ + 2 * n_in_;
  for (Index j = 0; j < n_; ++j) {
    if (bound_state_[j] != QpActivity::kInactive || x_lo_[j] == x_hi_[j]) continue;
    const double vl = x_lo_[j] - x_[j];
    if (vl > tol * (1 + std::abs(x_lo_[j])) && vl > worst && !excluded_[b0 + 2 * j]) {
      worst = vl;
      best = b0 + 2 * j;
    }
    const double vu = x_[j] - x_hi_[j];
    if (vu > tol * (1 + std::abs(x_hi_[j])) && vu > worst && !excluded_[b0 + 2 * j + 1]) {
      worst = vu;
      best = b0 + 2 * j + 1;
    }
  }
  return best;
}

bool QpSolver::equality_structure_unchanged() const {
  for (Index i = 0; i < n_in_; ++i)
    if ((c_lo_[i] == c_hi_[i]) != (row_was_eq_[i] != 0)) return false;
  for (Index j = 0; j < n_; ++j)
    if ((x_lo_[j] == x_hi_[j]) != (bound_was_eq_[j] != 0)) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Solve

QpStatus QpSolver::solve() { return run(nullptr); }

QpStatus QpSolver::solve(const QpActiveSet& warm_start) {
  if (warm_start.constraints.size() != static_cast<size_t>(n_in_) ||
      warm_start.bounds.size() != static_cast<size_t>(n_) ||
      (!warm_start.equalities.empty() && warm_start.equalities.size() != static_cast<size_t>(n_eq_)))
    fail("solve", "warm_start has " + std::to_string(warm_start.equalities.size()) + " equalities, " +
                      std::to_string(warm_start.constraints.size()) + " constraints and " +
                      std::to_string(warm_start.bounds.size()) + " bounds, expected " + std::to_string(n_eq_) +
                      " (or 0), " + std::to_string(n_in_) + " and " + std::to_string(n_));
  // Copy first: warm_start may be result_.active_set, which run() rewrites.
  warm_.constraints = warm_start.constraints;
  warm_.bounds = warm_start.bounds;
  return run(&warm_);
}

QpStatus QpSolver::run(const QpActiveSet* warm) {
  int iterations = 0;
  if (!hessian_ok_) {
    finish(QpStatus::kNotConvex, warm != nullptr, false, 0);
    return result_.status;
  }
  for (Index i = 0; i < n_in_; ++i)
    if (c_lo_[i] > c_hi_[i]) {
      finish(QpStatus::kInfeasible, warm != nullptr, false, 0);
      return result_.status;
    }
  for (Index j = 0; j < n_; ++j)
    if (x_lo_[j] > x_hi_[j]) {
      finish(QpStatus::kInfeasible, warm != nullptr, false, 0);
      return result_.status;
    }

  const Index row0 = n_eq_, bound0 = n_eq_ + 2 * n_in_;
  // The inequalities of the warm start that are not in the working set yet.
  auto add_warm_inequalities = [&]() {
    for (Index i = 0; i < n_in_; ++i) {
      const QpActivity want = warm->constraints[i];
      if (c_lo_[i] == c_hi_[i] || row_state_[i] == want) continue;
      Index id = -1;
      if (want == QpActivity::kLower && c_lo_[i] > -kInf) id = row0 + 2 * i;
      if (want == QpActivity::kUpper && c_hi_[i] < kInf) id = row0 + 2 * i + 1;
      if (id < 0) continue;
      add_to_factorization(id);  // a dependent one is simply left out
    }
    for (Index j = 0; j < n_; ++j) {
      const QpActivity want = warm->bounds[j];
      if (x_lo_[j] == x_hi_[j] || bound_state_[j] == want) continue;
      Index id = -1;
      if (want == QpActivity::kLower && x_lo_[j] > -kInf) id = bound0 + 2 * j;
      if (want == QpActivity::kUpper && x_hi_[j] < kInf) id = bound0 + 2 * j + 1;
      if (id < 0) continue;
      add_to_factorization(id);
    }
  };

  const bool reuse = warm != nullptr && factorization_valid_ && equality_structure_unchanged();
  if (reuse) {
    // J, R of the previous working set are still a factorization for the
    // current H and normals: only the difference to the warm set is applied.
    for (Index k = q_ - 1; k >= 0; --k) {
      const Index id = active_[k];
      if (is_equality(id)) continue;
      bool wanted = false;
      if (kind(id) == Kind::kRow) {
        const Index i = (id - row0) / 2;
        wanted = (id - row0) % 2 == 0 ? warm->constraints[i] == QpActivity::kLower && c_lo_[i] > -kInf
                                      : warm->constraints[i] == QpActivity::kUpper && c_hi_[i] < kInf;
      } else {
        const Index j = (id - bound0) / 2;
        wanted = (id - bound0) % 2 == 0 ? warm->bounds[j] == QpActivity::kLower && x_lo_[j] > -kInf
                                        : warm->bounds[j] == QpActivity::kUpper && x_hi_[j] < kInf;
      }
      if (!wanted) delete_from_factorization(k);
    }
    add_warm_inequalities();
  } else if (eq_cache_valid_ && equality_structure_unchanged()) {
    // The factorization after the equality phase depends only on H and the
    // equality normals, so it is kept from an earlier solve.
    const Index q = q_eq_;
    J_ = J_eq_;
    R_.topLeftCorner(q, q).triangularView<Eigen::Upper>() = R_eq_.topLeftCorner(q, q);
    active_.head(q) = active_eq_.head(q);
    q_ = q;
    std::copy(eq_state_eq_.begin(), eq_state_eq_.end(), eq_state_.begin());
    std::copy(row_state_eq_.begin(), row_state_eq_.end(), row_state_.begin());
    std::copy(bound_state_eq_.begin(), bound_state_eq_.end(), bound_state_.begin());
    factorization_valid_ = true;
    if (warm != nullptr) add_warm_inequalities();
  } else {
    // Equalities first, onto J₀ (GI: they enter A before any inequality and
    // never leave it). A dependent one is redundant or inconsistent; which,
    // is decided below once x is known.
    reset_factorization();
    for (Index i = 0; i < n_eq_; ++i) add_to_factorization(i);
    for (Index i = 0; i < n_in_; ++i) {
      row_was_eq_[i] = c_lo_[i] == c_hi_[i];
      if (row_was_eq_[i]) add_to_factorization(row0 + 2 * i);
    }
    for (Index j = 0; j < n_; ++j) {
      bound_was_eq_[j] = x_lo_[j] == x_hi_[j];
      if (bound_was_eq_[j]) add_to_factorization(bound0 + 2 * j);
    }
    J_eq_ = J_;
    R_eq_.topLeftCorner(q_, q_).triangularView<Eigen::Upper>() = R_.topLeftCorner(q_, q_);
    active_eq_.head(q_) = active_.head(q_);
    q_eq_ = q_;
    std::copy(eq_state_.begin(), eq_state_.end(), eq_state_eq_.begin());
    std::copy(row_state_.begin(), row_state_.end(), row_state_eq_.begin());
    std::copy(bound_state_.begin(), bound_state_.end(), bound_state_eq_.begin());
    eq_cache_valid_ = true;
    factorization_valid_ = true;
    if (warm != nullptr) add_warm_inequalities();
  }

  // Make (x, A) an S-pair (after a cold start A holds only equalities and
  // x = -H⁻¹g on their affine subspace).
  clear_exclusions();
  restore_s_pair();

  // Redundant equalities (dependent on the active equalities, n = N r):
  // consistent iff β = rᵀβ_A, which is checked on the right-hand sides,
  // free of rounding in x.
  {
    bool ok = true;
    for (Index i = 0; i < n_eq_ && ok; ++i)
      if (eq_state_[i] == QpActivity::kInactive) ok = redundant_consistent(i);
    for (Index i = 0; i < n_in_ && ok; ++i)
      if (c_lo_[i] == c_hi_[i] && row_state_[i] == QpActivity::kInactive) ok = redundant_consistent(row0 + 2 * i);
    for (Index j = 0; j < n_ && ok; ++j)
      if (x_lo_[j] == x_hi_[j] && bound_state_[j] == QpActivity::kInactive) ok = redundant_consistent(bound0 + 2 * j);
    if (!ok) {
      finish(QpStatus::kInfeasible, warm != nullptr, reuse, iterations);
      return result_.status;
    }
  }

  // GI main loop.
  for (int round = 0;; ++round) {
    Index p;
    while ((p = most_violated()) >= 0) {  // Step 1
      double u_plus = 0;                  // multiplier of n⁺ (GI's u⁺_{q+1})
      for (;;) {                          // Step 2
        if (iterations >= max_iterations_) {
          finish(QpStatus::kMaxIterations, warm != nullptr, reuse, iterations);
          return result_.status;
        }
        ++iterations;
        // (a) step directions z (only when n⁺ is independent) and r.
        compute_d(p);
        const Index q = q_, m = n_ - q_;
        const bool dep = dependent();
        if (q > 0) {
          r_.head(q) = d_.head(q);
          R_.topLeftCorner(q, q).triangularView<Eigen::Upper>().solveInPlace(r_.head(q));
        }
        // (b) partial step length t1 (largest step keeping the active
        // inequality multipliers ≥ 0; equalities are free) and full step
        // length t2 (that makes n⁺ active).
        double t1 = kInf;
        Index k = -1;
        for (Index j = 0; j < q; ++j) {
          if (r_[j] <= 0 || is_equality(active_[j])) continue;
          const double ratio = std::max(u_[j], 0.0) / r_[j];
          if (ratio < t1) {
            t1 = ratio;
            k = j;
          }
        }
        double t2 = kInf;
        if (!dep) {
          const double s = normal_dot(p, x_) - rhs(p);  // < 0: n⁺ is violated
          t2 = -s / d_.tail(m).squaredNorm();           // zᵀn⁺ = ‖J₂ᵀn⁺‖²
          prepare_reflection();
        }
        const double t = std::min(t1, t2);
        // (c) Case (i), no step in primal or dual space: n⁺ = N r with
        // r ≤ 0 on the active inequalities, so n⁺ᵀx - β⁺ = rᵀβ_A - β⁺ for
        // every x on the active manifold. If this gap is negative the constraints are
        // inconsistent (Farkas: a nonnegative combination reads 0 ≥ gap⁻).
        // If it is not, n⁺ only looks violated through rounding in x (seen
        // at degenerate vertices with ill-conditioned H): re-solve on A,
        // set n⁺ aside until the next addition and go on.
        if (t == kInf) {
          double scale = 0;
          const double gap = dependency_gap(p, &scale);
          if (gap < -settings_.primal_tolerance * scale) {
            finish(QpStatus::kInfeasible, warm != nullptr, reuse, iterations);
            return result_.status;
          }
          if (!restore_s_pair()) excluded_[p] = 1;
          break;
        }
        if (!dep) {
          primal_direction();
          x_.noalias() += t * z_;
        }
        if (q > 0) u_.head(q).noalias() -= t * r_.head(q);
        u_plus += t;
        if (!dep && t2 <= t1) {  // case (iii), t = t2: full step, n⁺ joins A
          commit_addition(p);
          clear_exclusions();
          u_[q_ - 1] = u_plus;
          break;
        }
        // Case (ii), a step in dual space only, or case (iii) with t = t1,
        // a partial step: drop constraint k and retry n⁺ against the
        // smaller working set.
        delete_from_factorization(k);
      }
    }
    // Re-solve on the final working set for accuracy; in rare ill-
    // conditioned cases this uncovers a violation and GI goes on.
    if (round >= 3) break;
    solve_equality_qp();
    clear_exclusions();
    if (most_violated() < 0) break;
  }
  finish(QpStatus::kOptimal, warm != nullptr, reuse, iterations);
  return result_.status;
}

void QpSolver::finish(QpStatus status, bool warm, bool reused, int iterations) {
  QpResult& res = result_;
  res.status = status;
  res.iterations = iterations;
  res.warm_started = warm;
  res.factorization_reused = reused;
  res.num_active = static_cast<int>(q_);
  std::copy(eq_state_.begin(), eq_state_.end(), res.active_set.equalities.begin());
  std::copy(row_state_.begin(), row_state_.end(), res.active_set.constraints.begin());
  std::copy(bound_state_.begin(), bound_state_.end(), res.active_set.bounds.begin());
  if (status != QpStatus::kOptimal && status != QpStatus::kMaxIterations) {
    res.x.setConstant(kNaN);
    res.objective = kNaN;
    res.lambda_eq.setConstant(kNaN);
    res.lambda_ineq.setConstant(kNaN);
    res.lambda_bounds.setConstant(kNaN);
    return;
  }
  res.x = x_;
  hx_.noalias() = H_ * x_;
  res.objective = 0.5 * x_.dot(hx_) + g_.dot(x_);
  res.lambda_eq.setZero();
  res.lambda_ineq.setZero();
  res.lambda_bounds.setZero();
  const Index row0 = n_eq_, bound0 = n_eq_ + 2 * n_in_;
  for (Index k = 0; k < q_; ++k) {
    const Index id = active_[k];
    const double u = u_[k];
    // GI's u multiplies the side written as nᵀx ≥ β; an upper side has
    // n = -c, so its multiplier in (1) is -u.
    switch (kind(id)) {
      case Kind::kEq:
        res.lambda_eq[id] = u;
        break;
      case Kind::kRow:
        res.lambda_ineq[(id - row0) / 2] = (id - row0) % 2 == 0 ? u : -u;
        break;
      case Kind::kBound:
        res.lambda_bounds[(id - bound0) / 2] = (id - bound0) % 2 == 0 ? u : -u;
        break;
    }
  }
}

void QpSolver::active_set_at(const Eigen::Ref<const Eigen::VectorXd>& x, QpActiveSet* out, double tol) const {
  if (out == nullptr) fail("active_set_at", "out is null");
  check_vector("active_set_at", "x", x, n_, "n");
  out->equalities.assign(n_eq_, QpActivity::kEquality);
  out->constraints.resize(n_in_);
  out->bounds.resize(n_);
  auto side = [tol](double value, double lo, double hi) {
    if (lo == hi) return QpActivity::kEquality;
    if (lo > -kInf && std::abs(value - lo) <= tol * (1 + std::abs(lo))) return QpActivity::kLower;
    if (hi < kInf && std::abs(value - hi) <= tol * (1 + std::abs(hi))) return QpActivity::kUpper;
    return QpActivity::kInactive;
  };
  for (Index i = 0; i < n_in_; ++i) out->constraints[i] = side(CT_.col(i).dot(x), c_lo_[i], c_hi_[i]);
  for (Index j = 0; j < n_; ++j) out->bounds[j] = side(x[j], x_lo_[j], x_hi_[j]);
}

}  // namespace neuralsim
