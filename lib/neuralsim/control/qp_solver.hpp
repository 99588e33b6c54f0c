// Dense strictly convex quadratic programming by the dual active-set method
// of Goldfarb and Idnani (D. Goldfarb, A. Idnani, "A numerically stable dual
// method for solving strictly convex quadratic programs", Mathematical
// Programming 27:1-33, 1983; "GI" below; step labels such as "Step 2(c)"
// are those of the paper's algorithm). Written for the small dense QPs of convex model-predictive
// control (ground reaction forces of a quadruped: 100-200 variables, a few
// hundred friction-pyramid rows), solved at every control step.
//
// The problem
//
//   minimize    ½ xᵀ H x + gᵀ x
//   subject to  A_eq x  = b_eq                 (n_eq rows)
//               c_lower ≤ C x ≤ c_upper        (n_ineq rows)
//               x_lower ≤  x  ≤ x_upper        (n simple bounds)
//
// with H (n x n) symmetric positive definite. Either side of a row or bound
// may be infinite (-inf below, +inf above; the default bounds are ±inf, i.e.
// absent). A row or bound whose two sides are equal is an equality.
//
// Sign convention of the multipliers. The solution satisfies the KKT
// conditions
//
//   H x + g = A_eqᵀ λ_eq + Cᵀ λ_ineq + λ_bounds                          (1)
//
// with one signed multiplier per row and per bound: λ_i ≥ 0 when the lower
// side is active, λ_i ≤ 0 when the upper side is active, λ_i = 0 when the row
// is inactive; λ of an equality has either sign. Equivalently λ_i is the
// sensitivity ∂f*/∂β of the optimal value to the active right-hand side β
// (b_eq, c_lower, c_upper, x_lower or x_upper), so a positive λ on a lower
// bound says the optimum would rise if the bound were raised.
//
// The method. GI starts from the unconstrained minimum x = -H⁻¹g and keeps an
// "S-pair": a set A of linearly independent active constraints and the
// minimizer x of the QP restricted to A, whose inequality multipliers are
// all ≥ 0 (dual feasible). Each iteration picks the most violated constraint
// (normalized by its row norm) and moves primal and dual variables along
// the directions of GI Step 2(a), z = H⁻¹(I - N N*) n⁺ and r = N* n⁺ with
// N* = (NᵀH⁻¹N)⁻¹NᵀH⁻¹ (N the active normals, n⁺ the new one), taking
// the largest step that keeps the dual feasible; a constraint whose
// multiplier reaches zero is dropped (a "partial step"), otherwise the
// violated constraint is added (a "full step"). The dual objective rises at
// every step, so the method ends in finitely many steps, either at the
// optimum or with an unbounded dual step: the proof (Farkas) that the
// constraints are inconsistent. The operators are represented as in GI's
// numerically stable implementation by J = L⁻ᵀ Q and the triangular R of
// the QR factorization
// L⁻¹ N = Q [R; 0], where H = L Lᵀ; each addition costs one Householder
// reflection and each removal a sweep of Givens rotations, O(n²) each.
//
// Degeneracy. A violated constraint whose normal is linearly dependent on
// the active normals (in the H⁻¹ metric: ‖J₂ᵀ n‖ ≤ dependency_tolerance ‖Jᵀ n‖)
// gets a pure dual step that drops a constraint (GI Step 2(c), case (ii)), never a
// singular R; if no active inequality can be dropped, the QP is infeasible
// when n⁺ is inconsistent with the active constraints (checked on the
// right-hand sides, independently of rounding in x), and otherwise n⁺ is
// satisfied on the whole active manifold and only set aside.
// Redundant equalities (dependent on the other equalities) are checked for
// consistency and then left out of A with multiplier 0; inconsistent ones
// make the QP infeasible. Duplicate rows and vertices with more active
// constraints than variables are therefore fine.
//
// Complexity. O(n³/3) for the Cholesky factorization and O(n³/6) for
// J₀ = L⁻ᵀ, only in update_hessian(). The equality phase (all equalities
// added to J₀) costs O(n² m_eq) and is cached: it is redone only after
// update_hessian(), update_equalities(), update_inequalities() when C has
// equality rows, or a change of which rows or bounds are equalities. Each
// GI step costs O(n²) (O(n (n - q)) for the reflection, q = |A|) plus
// O(nnz(C) + n) for the violation search (rows of C with at most n/4
// nonzeros, such as friction-pyramid rows, are also stored sparse and cost
// O(nnz) in the search and O(nnz n) to add); a cold solve takes about
// 1-3 steps per active inequality. Memory is O(n² + n (n_eq + n_ineq)), all
// allocated at construction: solve() and the update_* functions other than
// update_hessian() do not touch the heap. update_hessian() may (Eigen's
// blocked Cholesky takes heap workspace from about n = 150 on).
//
// Warm start. solve(warm_start) takes the active set of a previous solve
// (QpResult::active_set, or active_set_at(x) for a previous x). What is
// reused:
//  * always (cold solves too): the Cholesky factor of H and J₀ = L⁻ᵀ, and
//    the factorization after the equality phase, while still valid (see
//    Complexity);
//  * the active set: its inequalities (at the sides given) are put into A
//    directly, x and the multipliers are taken from the equality-constrained
//    QP on A (closed form from J and R, with the current g and sides),
//    inequalities with a negative multiplier are dropped until the pair is
//    an S-pair, and GI continues from there;
//  * the factorization J, R of the previous solve's final active set, when
//    neither H nor the matrices A_eq, C changed and the set of equality rows
//    is the same (only g, b_eq, the row bounds or the variable bounds were
//    updated): the solver then only removes and adds the constraints in
//    which the two active sets differ. Otherwise J, R are rebuilt from J₀.
// When the active set is unchanged (the common case of MPC from one control
// step to the next) a warm solve costs one equality-constrained solve,
// O(n²), plus one violation search. A warm start never changes the answer:
// the QP is strictly convex, so the optimum is unique, and GI from any
// S-pair reaches it.
//
// Not thread-safe: one QpSolver per thread.
#pragma once

#include <Eigen/Dense>

#include <algorithm>
#include <limits>
#include <vector>

namespace neuralsim {

enum class QpStatus {
  kOptimal,        // KKT conditions hold to the tolerances
  kInfeasible,     // no feasible point: an unbounded dual step (Farkas), an inconsistent
                   // redundant equality, or a lower side above its upper side
  kMaxIterations,  // stopped at QpSettings::max_iterations; x is the last dual-feasible iterate
  kNotConvex,      // H is not (numerically) positive definite
};

const char* to_string(QpStatus status);

// Which side of a row or bound is in the active set.
enum class QpActivity : signed char {
  kInactive = 0,
  kLower = 1,     // c_lower (or x_lower) active, λ ≥ 0
  kUpper = -1,    // c_upper (or x_upper) active, λ ≤ 0
  kEquality = 2,  // an equality (always active), λ of either sign
};

// The active set of a solution, one entry per row: what warm starts reuse.
struct QpActiveSet {
  // A_eq rows: kEquality, or kInactive for a redundant (linearly dependent,
  // consistent) equality that was left out of the working set.
  std::vector<QpActivity> equalities;
  std::vector<QpActivity> constraints;  // rows of C
  std::vector<QpActivity> bounds;       // variables
};

struct QpSettings {
  // Largest number of GI steps (additions plus removals) in one solve;
  // 0 means 5 (n + n_eq + n_ineq + n) + 50.
  int max_iterations = 0;
  // A constraint counts as violated when its residual, divided by the norm
  // of its row, exceeds primal_tolerance (1 + |β| / ‖row‖), β its bound.
  double primal_tolerance = 1e-10;
  // A new normal n is linearly dependent on the active ones when the part
  // of Jᵀn outside the active subspace is at most this fraction of ‖Jᵀn‖.
  double dependency_tolerance = 1e-10;
  // ε ≥ 0: the solver minimizes with H + ε I (stationarity (1) holds with
  // H + ε I; the reported objective uses H). Lets PSD H be solved.
  double regularization = 0.0;
};

struct QpResult {
  QpStatus status = QpStatus::kNotConvex;
  // The minimizer. NaN when the status is kInfeasible or kNotConvex.
  Eigen::VectorXd x;
  double objective = std::numeric_limits<double>::quiet_NaN();  // ½ xᵀHx + gᵀx
  // Multipliers with the sign convention of (1); NaN unless kOptimal or
  // kMaxIterations.
  Eigen::VectorXd lambda_eq;      // n_eq
  Eigen::VectorXd lambda_ineq;    // n_ineq
  Eigen::VectorXd lambda_bounds;  // n
  QpActiveSet active_set;
  int num_active = 0;    // size of the working set (independent active constraints)
  int iterations = 0;    // GI steps: constraint additions and removals after the start
  bool warm_started = false;
  bool factorization_reused = false;  // the previous J, R were updated, not rebuilt
};

// Dense Goldfarb-Idnani solver for a fixed problem size. Typical use:
//
//   QpSolver qp(n, n_eq, n_ineq);
//   qp.update_hessian(H);               // O(n³), when H changes
//   qp.update_equalities(A_eq, b_eq);   // when the matrices change
//   qp.update_inequalities(C, lo, hi);
//   qp.update_gradient(g);
//   qp.solve();                         // cold
//   ... next control step ...
//   qp.update_vectors(g, b_eq, lo, hi); // O(size), keeps every factorization
//   qp.solve(qp.result().active_set);   // warm
//
// Every update_* checks sizes and values and throws InvalidArgument (from
// neuralsim/core/errors.hpp) naming the argument: mismatched dimensions,
// NaN or ±inf in H, g, A_eq, b_eq, C; NaN or +inf in a lower side, NaN or
// -inf in an upper side; an unsymmetric H. A lower side above its upper
// side is not an error: solve() reports kInfeasible.
class QpSolver {
 public:
  using Index = Eigen::Index;

  // Allocates everything a solve needs. The matrices start at zero, the
  // bounds at ±inf; update_hessian() must be called before solve().
  QpSolver(Index n, Index n_eq, Index n_ineq, const QpSettings& settings = QpSettings());

  // Copies H (n x n, symmetric) and factorizes H + εI = L Lᵀ. Returns false
  // when H is not numerically positive definite: solve() then returns
  // kNotConvex until a positive definite H is given.
  bool update_hessian(const Eigen::Ref<const Eigen::MatrixXd>& H);
  void update_gradient(const Eigen::Ref<const Eigen::VectorXd>& g);
  void update_equalities(const Eigen::Ref<const Eigen::MatrixXd>& A_eq,
                         const Eigen::Ref<const Eigen::VectorXd>& b_eq);
  void update_inequalities(const Eigen::Ref<const Eigen::MatrixXd>& C,
                           const Eigen::Ref<const Eigen::VectorXd>& c_lower,
                           const Eigen::Ref<const Eigen::VectorXd>& c_upper);
  void update_bounds(const Eigen::Ref<const Eigen::VectorXd>& x_lower,
                     const Eigen::Ref<const Eigen::VectorXd>& x_upper);
  // g and all constraint right-hand sides at once, matrices unchanged: the
  // MPC update between control steps. Pass empty vectors for absent parts.
  void update_vectors(const Eigen::Ref<const Eigen::VectorXd>& g,
                      const Eigen::Ref<const Eigen::VectorXd>& b_eq,
                      const Eigen::Ref<const Eigen::VectorXd>& c_lower,
                      const Eigen::Ref<const Eigen::VectorXd>& c_upper);

  // Cold start: GI from the unconstrained minimum (after the equalities).
  QpStatus solve();
  // Warm start from an active set of this problem's sizes (see the file
  // comment for what is reused). Sides whose bound is now infinite, and
  // rows that are now equalities, are ignored. `warm_start` may alias
  // result().active_set.
  QpStatus solve(const QpActiveSet& warm_start);

  const QpResult& result() const { return result_; }

  // The active set at a point x (e.g. a previous solution), for warm
  // starts: the sides whose residual is at most tol (1 + |β|).
  void active_set_at(const Eigen::Ref<const Eigen::VectorXd>& x, QpActiveSet* out, double tol = 1e-9) const;

  Index num_variables() const { return n_; }
  Index num_equalities() const { return n_eq_; }
  Index num_inequalities() const { return n_in_; }
  const QpSettings& settings() const { return settings_; }

 private:
  // Constraint ids (one per side): [0, n_eq) equality rows; then 2 per row
  // of C (lower, upper); then 2 per variable bound (lower, upper).
  enum class Kind { kEq, kRow, kBound };
  Kind kind(Index id) const;
  bool is_equality(Index id) const;
  double rhs(Index id) const;             // β of the constraint nᵀx ≥ β (or = β)
  double normal_dot(Index id, const Eigen::VectorXd& v) const;
  double normal_norm(Index id) const;
  void compute_d(Index id);               // d = Jᵀ n (GI Step 2(a))

  QpStatus run(const QpActiveSet* warm);
  void reset_factorization();
  double row_dot(Index i, const Eigen::VectorXd& v) const;  // (C v)_i
  Index sparse_row_limit() const { return std::max<Index>(1, n_ / 4); }
  bool add_to_factorization(Index id);    // computes d_; false when dependent
  void prepare_reflection();              // from d_: v_, w_ = J₂v, alpha_, beta_
  void primal_direction();                // z_ = J₂ d₂, after prepare_reflection()
  void commit_addition(Index id);         // J₂ ← J₂P, new column of R
  void delete_from_factorization(Index k);
  bool dependent() const;                 // on d_ and q_
  void solve_equality_qp();               // x, u on the working set
  double dependency_gap(Index id, double* scale) const;  // rᵀβ_A - β for a dependent n
  bool redundant_consistent(Index id);
  bool restore_s_pair();                  // true when inequalities were dropped
  void clear_exclusions();
  Index most_violated();                  // -1 when primal feasible
  bool equality_structure_unchanged() const;
  void finish(QpStatus status, bool warm, bool reused, int iterations);

  Index n_, n_eq_, n_in_;
  QpSettings settings_;
  int max_iterations_;

  // Problem data (copies).
  Eigen::MatrixXd H_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::MatrixXd J0_;  // L⁻ᵀ
  bool hessian_ok_ = false;
  Eigen::VectorXd g_;
  Eigen::MatrixXd AeqT_;  // A_eqᵀ: normals as contiguous columns
  Eigen::VectorXd b_eq_;
  Eigen::MatrixXd CT_;    // Cᵀ
  Eigen::VectorXd c_lo_, c_hi_, c_norm_;
  Eigen::VectorXd x_lo_, x_hi_;
  Eigen::VectorXd a_norm_;
  // Sparse copy of the rows of C with at most n/4 nonzeros (CSR).
  std::vector<char> row_sparse_;
  std::vector<Index> row_begin_, row_idx_;
  std::vector<double> row_val_;

  // Working set: J, R (top-left q x q upper triangular), ids and GI
  // multipliers u (≥ 0 for inequalities, the sign of (1) differs on upper
  // sides).
  Eigen::MatrixXd J_, R_;
  Index q_ = 0;
  Eigen::Matrix<Index, Eigen::Dynamic, 1> active_;
  Eigen::VectorXd u_;
  bool factorization_valid_ = false;
  // Membership (per row and per bound, which side is in A), redundant
  // equalities, and which rows were equalities when J, R were built.
  std::vector<QpActivity> eq_state_, row_state_, bound_state_;
  std::vector<char> row_was_eq_, bound_was_eq_;
  // Constraints set aside as satisfied up to rounding (see run()).
  std::vector<char> excluded_;

  // The working set right after the equality phase (it depends only on H
  // and the equality normals), restored by solves that rebuild J, R.
  Eigen::MatrixXd J_eq_, R_eq_;
  Index q_eq_ = 0;
  Eigen::Matrix<Index, Eigen::Dynamic, 1> active_eq_;
  std::vector<QpActivity> eq_state_eq_, row_state_eq_, bound_state_eq_;
  bool eq_cache_valid_ = false;

  // Work vectors.
  Eigen::VectorXd x_, d_, z_, r_, w_, v_, cx_, hx_;
  double alpha_ = 0, beta_ = 0;  // of the pending reflection
  QpActiveSet warm_;
  QpResult result_;
};

}  // namespace neuralsim
