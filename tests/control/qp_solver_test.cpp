// QpSolver (Goldfarb-Idnani) against mathematics: closed-form optima, the
// KKT conditions of random QPs, Farkas-certified infeasible QPs, degenerate
// active sets, warm starts, argument checking and the no-allocation promise.
// The Ipopt comparison is in qp_ipopt_oracle_test.cpp.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <string>

#include "neuralsim/control/qp_solver.hpp"
#include "support/allocation_counter.hpp"
#include "neuralsim/core/errors.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
constexpr double kInf = std::numeric_limits<double>::infinity();

using QpAllocationCounter = testing::AllocationCounter;
bool counter_is_live() { return QpAllocationCounter::available(); }

// A QP in the solver's form, with its own copy of the data so that the
// KKT conditions are checked against the problem, not the solver's state.
struct Qp {
  MatrixXd H;
  VectorXd g;
  MatrixXd A;
  VectorXd b;
  MatrixXd C;
  VectorXd lo, hi;
  VectorXd xl, xu;
  explicit Qp(int n, int n_eq = 0, int n_in = 0)
      : H(MatrixXd::Identity(n, n)),
        g(VectorXd::Zero(n)),
        A(MatrixXd::Zero(n_eq, n)),
        b(VectorXd::Zero(n_eq)),
        C(MatrixXd::Zero(n_in, n)),
        lo(VectorXd::Constant(n_in, -kInf)),
        hi(VectorXd::Constant(n_in, kInf)),
        xl(VectorXd::Constant(n, -kInf)),
        xu(VectorXd::Constant(n, kInf)) {}
  int n() const { return static_cast<int>(H.rows()); }
};

std::unique_ptr<QpSolver> make_solver(const Qp& qp, const QpSettings& settings = QpSettings()) {
  auto s = std::make_unique<QpSolver>(qp.n(), qp.A.rows(), qp.C.rows(), settings);
  s->update_hessian(qp.H);
  s->update_gradient(qp.g);
  s->update_equalities(qp.A, qp.b);
  s->update_inequalities(qp.C, qp.lo, qp.hi);
  s->update_bounds(qp.xl, qp.xu);
  return s;
}

struct Kkt {
  double stationarity = 0;     // ‖Hx + g - Aᵀλ_eq - Cᵀλ_in - λ_b‖∞
  double primal = 0;           // largest constraint violation
  double dual = 0;             // largest multiplier of the wrong sign for its row
  double complementarity = 0;  // largest |λ_i| · slack of the side its sign selects
  double worst() const { return std::max({stationarity, primal, dual, complementarity}); }
};

// One row lo ≤ a ≤ hi with signed multiplier l (≥ 0 pushes up from lo).
void kkt_row(double a, double lo, double hi, double l, Kkt* k) {
  k->primal = std::max({k->primal, lo - a, a - hi});
  if (l > 0) {
    if (lo == -kInf) k->dual = std::max(k->dual, l);
    else k->complementarity = std::max(k->complementarity, l * std::abs(a - lo));
  } else if (l < 0) {
    if (hi == kInf) k->dual = std::max(k->dual, -l);
    else k->complementarity = std::max(k->complementarity, -l * std::abs(hi - a));
  }
}

Kkt kkt(const Qp& qp, const QpResult& r, double regularization = 0) {
  Kkt k;
  const VectorXd& x = r.x;
  const VectorXd grad = qp.H * x + regularization * x + qp.g;
  const VectorXd res = grad - qp.A.transpose() * r.lambda_eq - qp.C.transpose() * r.lambda_ineq - r.lambda_bounds;
  k.stationarity = res.lpNorm<Eigen::Infinity>();
  if (qp.A.rows() > 0) k.primal = (qp.A * x - qp.b).lpNorm<Eigen::Infinity>();
  const VectorXd cx = qp.C * x;
  for (int i = 0; i < qp.C.rows(); ++i) kkt_row(cx[i], qp.lo[i], qp.hi[i], r.lambda_ineq[i], &k);
  for (int j = 0; j < qp.n(); ++j) kkt_row(x[j], qp.xl[j], qp.xu[j], r.lambda_bounds[j], &k);
  return k;
}

// Largest residuals seen, printed at the end for the record.
Kkt& worst_seen() {
  static Kkt k;
  return k;
}
void record(const Kkt& k) {
  Kkt& w = worst_seen();
  w.stationarity = std::max(w.stationarity, k.stationarity);
  w.primal = std::max(w.primal, k.primal);
  w.dual = std::max(w.dual, k.dual);
  w.complementarity = std::max(w.complementarity, k.complementarity);
}

void expect_kkt(const Qp& qp, const QpResult& r, double tol = 1e-8, double regularization = 0) {
  ASSERT_EQ(r.status, QpStatus::kOptimal) << to_string(r.status);
  const Kkt k = kkt(qp, r, regularization);
  record(k);
  EXPECT_LE(k.stationarity, tol);
  EXPECT_LE(k.primal, tol);
  EXPECT_LE(k.dual, tol);
  EXPECT_LE(k.complementarity, tol);
  // The reported objective is ½xᵀHx + gᵀx.
  EXPECT_NEAR(r.objective, 0.5 * r.x.dot(qp.H * r.x) + qp.g.dot(r.x), 1e-9 * (1 + std::abs(r.objective)));
}

VectorXd randn(std::mt19937& rng, int n) {
  std::normal_distribution<double> N(0, 1);
  VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = N(rng);
  return v;
}
MatrixXd randn(std::mt19937& rng, int r, int c) {
  std::normal_distribution<double> N(0, 1);
  MatrixXd m(r, c);
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) m(i, j) = N(rng);
  return m;
}

// Random strictly convex QP with a known feasible point x_f: SPD H with
// eigenvalues in about [0.1, 4], constraints through x_f with random slack
// (one-sided, two-sided, a few equality rows), some variable bounds, and a
// large g so that many constraints are active at the optimum.
Qp random_qp(unsigned seed, int n, int n_eq, int n_in, bool bounds) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(0, 1);
  Qp qp(n, n_eq, n_in);
  const MatrixXd M = randn(rng, n, n);
  qp.H = M.transpose() * M / n + 0.1 * MatrixXd::Identity(n, n);
  qp.H = 0.5 * (qp.H + qp.H.transpose()).eval();
  const VectorXd xf = randn(rng, n);
  qp.g = 5 * randn(rng, n);
  qp.A = randn(rng, n_eq, n);
  qp.b = qp.A * xf;
  qp.C = randn(rng, n_in, n);
  const VectorXd cx = qp.C * xf;
  for (int i = 0; i < n_in; ++i) {
    const double u = U(rng);
    if (u < 0.4) qp.lo[i] = cx[i] - U(rng);
    else if (u < 0.8) qp.hi[i] = cx[i] + U(rng);
    else if (u < 0.97) {
      qp.lo[i] = cx[i] - U(rng);
      qp.hi[i] = cx[i] + U(rng);
    } else {
      qp.lo[i] = qp.hi[i] = cx[i];
    }
  }
  if (bounds)
    for (int j = 0; j < n; ++j) {
      if (U(rng) < 0.5) qp.xl[j] = xf[j] - 2 * U(rng);
      if (U(rng) < 0.5) qp.xu[j] = xf[j] + 2 * U(rng);
    }
  return qp;
}

// ---------------------------------------------------------------------------
// Closed-form optima

TEST(QpSolverClosedForm, Unconstrained) {
  Qp qp = random_qp(1, 8, 0, 0, false);
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  const VectorXd x = -testing::spd_solve(qp.H, qp.g);  // ∇f = Hx + g = 0
  EXPECT_LE((s->result().x - x).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_NEAR(s->result().objective, -0.5 * qp.g.dot(testing::spd_solve(qp.H, qp.g).col(0)), 1e-12);
  EXPECT_EQ(s->result().num_active, 0);
  EXPECT_EQ(s->result().iterations, 0);
}

TEST(QpSolverClosedForm, EqualityOnlyMatchesKktSystem) {
  const int n = 12, m = 5;
  Qp qp = random_qp(2, n, m, 0, false);
  // [H  -Aᵀ] [x]   [-g]
  // [A   0 ] [λ] = [ b]   (stationarity (1): Hx + g = Aᵀλ)
  MatrixXd K = MatrixXd::Zero(n + m, n + m);
  K.topLeftCorner(n, n) = qp.H;
  K.topRightCorner(n, m) = -qp.A.transpose();
  K.bottomLeftCorner(m, n) = qp.A;
  VectorXd rhs(n + m);
  rhs << -qp.g, qp.b;
  const VectorXd sol = testing::lu_solve(K, rhs);
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  EXPECT_LE((s->result().x - sol.head(n)).lpNorm<Eigen::Infinity>(), 1e-11);
  EXPECT_LE((s->result().lambda_eq - sol.tail(m)).lpNorm<Eigen::Infinity>(), 1e-10);
  expect_kkt(qp, s->result(), 1e-10);
}

TEST(QpSolverClosedForm, ProjectionOntoHalfPlaneUpperSide) {
  // min ½‖x - p‖², p = (2, 2), s.t. x₁ + x₂ ≤ 2: x = (1, 1). Stationarity
  // x - p = λ (1, 1) gives λ = -1 ≤ 0 on the active upper side.
  Qp qp(2, 0, 1);
  qp.g << -2, -2;
  qp.C << 1, 1;
  qp.hi << 2;
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  EXPECT_NEAR(s->result().x[0], 1, 1e-14);
  EXPECT_NEAR(s->result().x[1], 1, 1e-14);
  EXPECT_NEAR(s->result().lambda_ineq[0], -1, 1e-14);
  EXPECT_NEAR(s->result().objective, 1.0 - 4.0, 1e-14);
  EXPECT_EQ(s->result().active_set.constraints[0], QpActivity::kUpper);
}

TEST(QpSolverClosedForm, ProjectionOntoHalfPlaneLowerSide) {
  // Same with x₁ + x₂ ≥ 6: x = (3, 3), λ = +1 (raising the bound raises f*).
  Qp qp(2, 0, 1);
  qp.g << -2, -2;
  qp.C << 1, 1;
  qp.lo << 6;
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  EXPECT_NEAR(s->result().x[0], 3, 1e-14);
  EXPECT_NEAR(s->result().x[1], 3, 1e-14);
  EXPECT_NEAR(s->result().lambda_ineq[0], 1, 1e-14);
  EXPECT_EQ(s->result().active_set.constraints[0], QpActivity::kLower);
  // λ is ∂f*/∂lo: a finite difference of the optimal value agrees.
  const double f0 = s->result().objective;
  qp.lo << 6 + 1e-6;
  s->update_inequalities(qp.C, qp.lo, qp.hi);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  EXPECT_NEAR((s->result().objective - f0) / 1e-6, 1.0, 1e-5);
}

TEST(QpSolverClosedForm, BoxConstraintsAsBoundsAndAsRows) {
  // Diagonal H: the box-constrained minimizer is the clipped unconstrained
  // one, x_i = clamp(-g_i / h_i, l_i, u_i), with λ_i = h_i x_i + g_i.
  const int n = 20;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> U(0.5, 3);
  Qp bounds(n);
  Qp rows(n, 0, n);
  VectorXd h(n), x(n);
  for (int i = 0; i < n; ++i) h[i] = U(rng);
  bounds.H = h.asDiagonal();
  bounds.g = 4 * randn(rng, n);
  bounds.xl = VectorXd::Constant(n, -1);
  bounds.xu = VectorXd::Constant(n, 1.5);
  bounds.xl[0] = -kInf;  // one-sided
  bounds.xu[1] = kInf;
  for (int i = 0; i < n; ++i) x[i] = std::min(std::max(-bounds.g[i] / h[i], bounds.xl[i]), bounds.xu[i]);
  const VectorXd lambda = h.cwiseProduct(x) + bounds.g;
  rows.H = bounds.H;
  rows.g = bounds.g;
  rows.C = MatrixXd::Identity(n, n);
  rows.lo = bounds.xl;
  rows.hi = bounds.xu;
  auto sb = make_solver(bounds);
  auto sr = make_solver(rows);
  ASSERT_EQ(sb->solve(), QpStatus::kOptimal);
  ASSERT_EQ(sr->solve(), QpStatus::kOptimal);
  EXPECT_LE((sb->result().x - x).lpNorm<Eigen::Infinity>(), 1e-13);
  EXPECT_LE((sr->result().x - x).lpNorm<Eigen::Infinity>(), 1e-13);
  EXPECT_LE((sb->result().lambda_bounds - lambda).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_LE((sr->result().lambda_ineq - lambda).lpNorm<Eigen::Infinity>(), 1e-12);
  expect_kkt(bounds, sb->result());
  expect_kkt(rows, sr->result());
}

// ---------------------------------------------------------------------------
// Random QPs: the KKT conditions

struct Size {
  int n, n_eq, n_in;
  bool bounds;
};
void PrintTo(const Size& c, std::ostream* os) {
  *os << "n " << c.n << " eq " << c.n_eq << " in " << c.n_in << (c.bounds ? " bounds" : "");
}

class QpSolverRandom : public ::testing::TestWithParam<Size> {};

TEST_P(QpSolverRandom, KktConditionsHold) {
  const Size sz = GetParam();
  for (unsigned seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Qp qp = random_qp(100 * seed + sz.n, sz.n, sz.n_eq, sz.n_in, sz.bounds);
    auto s = make_solver(qp);
    ASSERT_EQ(s->solve(), QpStatus::kOptimal) << to_string(s->result().status);
    expect_kkt(qp, s->result());
    EXPECT_GT(s->result().num_active, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, QpSolverRandom,
                         ::testing::Values(Size{5, 0, 10, false}, Size{10, 2, 20, true}, Size{40, 5, 80, true},
                                           Size{100, 10, 200, false}, Size{200, 0, 400, true},
                                           Size{200, 20, 400, true}),
                         [](const ::testing::TestParamInfo<Size>& info) {
                           const Size& s = info.param;
                           return "n" + std::to_string(s.n) + "_eq" + std::to_string(s.n_eq) + "_in" +
                                  std::to_string(s.n_in) + (s.bounds ? "_bounds" : "");
                         });

TEST(QpSolverRandom, FrictionPyramidShape) {
  // The MPC shape: 3-D forces of 4 feet over 6 steps, pyramid rows
  // ±f_t - μ f_z ≤ 0 (sparse, stored compressed), 0 ≤ f_z ≤ f_max, two swing
  // feet fixed at 0 (equality bounds), plus a few dense rows; a random SPD
  // H and a g that pushes the forces outside the cone.
  const int feet = 4, steps = 6, n = 3 * feet * steps, n_dense = 5;
  const double mu = 0.6;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed + 300);
    Qp qp = random_qp(seed + 300, n, 0, 4 * feet * steps + n_dense, false);
    qp.g = 20 * randn(rng, n);
    qp.C.topRows(4 * feet * steps).setZero();
    for (int k = 0; k < steps; ++k)
      for (int f = 0; f < feet; ++f) {
        const int o = 3 * (feet * k + f), r = 4 * (feet * k + f);
        for (int t = 0; t < 2; ++t)
          for (int sgn = 0; sgn < 2; ++sgn) {
            qp.C(r + 2 * t + sgn, o + t) = sgn ? -1 : 1;
            qp.C(r + 2 * t + sgn, o + 2) = -mu;
          }
        qp.lo.segment(r, 4).setConstant(-kInf);
        qp.hi.segment(r, 4).setZero();
        const bool swing = (f + k / 3) % 2 == 1 && f >= 2;
        qp.xl[o + 2] = 0;
        qp.xu[o + 2] = swing ? 0 : 100;
        if (swing) {
          qp.xl.segment(o, 2).setZero();
          qp.xu.segment(o, 2).setZero();
        }
      }
    // Dense rows through 0 (feasible: f = 0).
    qp.lo.tail(n_dense).setConstant(-1);
    qp.hi.tail(n_dense).setConstant(kInf);
    auto s = make_solver(qp);
    ASSERT_EQ(s->solve(), QpStatus::kOptimal);
    expect_kkt(qp, s->result());
    int friction_active = 0;
    for (int i = 0; i < 4 * feet * steps; ++i)
      friction_active += s->result().active_set.constraints[i] != QpActivity::kInactive;
    EXPECT_GT(friction_active, 0);
  }
}

TEST(QpSolverRandom, IllConditionedHessian) {
  // cond(H) = 1e8: KKT still holds, with residuals relative to ‖H‖.
  const int n = 60;
  std::mt19937 rng(7);
  Qp qp = random_qp(7, n, 3, 120, true);
  const MatrixXd Q = testing::orthogonal_factor(randn(rng, n, n));
  VectorXd ev(n);
  for (int i = 0; i < n; ++i) ev[i] = std::pow(10.0, 8.0 * i / (n - 1) - 4);  // 1e-4 .. 1e4
  qp.H = Q * ev.asDiagonal() * Q.transpose();
  qp.H = 0.5 * (qp.H + qp.H.transpose()).eval();
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  const Kkt k = kkt(qp, s->result());
  std::printf("  [ill-conditioned] cond(H) = 1e8: stationarity %.2e, primal %.2e, dual %.2e, complementarity %.2e\n",
              k.stationarity, k.primal, k.dual, k.complementarity);
  EXPECT_LE(k.stationarity, 1e-8 * 1e4);
  EXPECT_LE(k.primal, 1e-8);
  EXPECT_LE(k.dual, 1e-8);
  EXPECT_LE(k.complementarity, 1e-8 * 1e4);
}

TEST(QpSolverRandom, MaxIterationsIsReported) {
  const Qp qp = random_qp(11, 40, 0, 80, true);
  QpSettings settings;
  settings.max_iterations = 2;
  auto s = make_solver(qp, settings);
  EXPECT_EQ(s->solve(), QpStatus::kMaxIterations);
  EXPECT_EQ(s->result().iterations, 2);
}

// ---------------------------------------------------------------------------
// Infeasible QPs

TEST(QpSolverInfeasible, OneVariableTwoRows) {
  Qp qp(1, 0, 2);  // x ≥ 1 and x ≤ 0
  qp.C << 1, 1;
  qp.lo << 1, -kInf;
  qp.hi << kInf, 0;
  auto s = make_solver(qp);
  EXPECT_EQ(s->solve(), QpStatus::kInfeasible);
  EXPECT_TRUE(std::isnan(s->result().x[0]));
  EXPECT_TRUE(std::isnan(s->result().objective));
}

TEST(QpSolverInfeasible, RowAgainstBoundAndCrossedSides) {
  Qp qp(2, 0, 1);  // x₀ ≥ 1 (bound) and x₀ + 0 x₁ ≤ 0 (row)
  qp.xl << 1, -kInf;
  qp.C << 1, 0;
  qp.hi << 0;
  auto s = make_solver(qp);
  EXPECT_EQ(s->solve(), QpStatus::kInfeasible);
  Qp crossed(2);  // x_lower > x_upper
  crossed.xl << 0, 2;
  crossed.xu << 1, 1;
  EXPECT_EQ(make_solver(crossed)->solve(), QpStatus::kInfeasible);
  Qp crossed_row(2, 0, 1);
  crossed_row.C << 1, 1;
  crossed_row.lo << 1;
  crossed_row.hi << 0;
  EXPECT_EQ(make_solver(crossed_row)->solve(), QpStatus::kInfeasible);
}

TEST(QpSolverInfeasible, InconsistentEqualities) {
  Qp qp(3, 2);  // x₀ + x₁ = 1 and 2x₀ + 2x₁ = 3
  qp.A << 1, 1, 0, 2, 2, 0;
  qp.b << 1, 3;
  EXPECT_EQ(make_solver(qp)->solve(), QpStatus::kInfeasible);
  Qp mixed(3, 1, 1);  // x₀ + x₁ = 1 and x₀ + x₁ ≥ 2
  mixed.A << 1, 1, 0;
  mixed.b << 1;
  mixed.C << 1, 1, 0;
  mixed.lo << 2;
  EXPECT_EQ(make_solver(mixed)->solve(), QpStatus::kInfeasible);
}

TEST(QpSolverInfeasible, RandomFarkasCertifiedSystems) {
  // Rows c_i x ≥ l_i (i < m) through a point, plus the row
  //   -(Σ y_i c_i) x ≥ -(Σ y_i l_i) + 1,   y > 0,
  // whose sum with the others weighted by y reads 0 ≥ 1: infeasible by
  // construction (Farkas), though every proper subset is feasible.
  for (unsigned seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> U(0.1, 1);
    const int n = 30, m = 25 + 5 * static_cast<int>(seed), n_eq = seed % 2 ? 5 : 0;
    Qp qp = random_qp(seed, n, n_eq, m + 1, seed % 3 == 0);
    const VectorXd xf = randn(rng, n);
    qp.b = qp.A * xf;
    qp.xl.setConstant(-kInf);
    qp.xu.setConstant(kInf);
    qp.hi.setConstant(kInf);
    VectorXd y(m), sum_c = VectorXd::Zero(n);
    double sum_l = 0;
    for (int i = 0; i < m; ++i) {
      qp.lo[i] = qp.C.row(i).dot(xf) - U(rng);
      y[i] = U(rng);
      sum_c += y[i] * qp.C.row(i).transpose();
      sum_l += y[i] * qp.lo[i];
    }
    qp.C.row(m) = -sum_c.transpose();
    qp.lo[m] = -sum_l + 1;
    auto s = make_solver(qp);
    EXPECT_EQ(s->solve(), QpStatus::kInfeasible);
    EXPECT_TRUE(s->result().x.array().isNaN().all());
    // Dropping the certificate row makes it feasible again.
    qp.lo[m] = -kInf;
    s->update_inequalities(qp.C, qp.lo, qp.hi);
    EXPECT_EQ(s->solve(), QpStatus::kOptimal);
    expect_kkt(qp, s->result());
  }
}

// ---------------------------------------------------------------------------
// Degenerate active sets

TEST(QpSolverDegenerate, DuplicateAndScaledRows) {
  // Each row appears three times (once scaled by 2, with scaled sides):
  // the optimum is that of the plain problem.
  const Qp plain = random_qp(21, 30, 3, 60, true);
  Qp dup(30, 3, 180);
  dup.H = plain.H;
  dup.g = plain.g;
  dup.A = plain.A;
  dup.b = plain.b;
  dup.xl = plain.xl;
  dup.xu = plain.xu;
  dup.C << plain.C, plain.C, 2 * plain.C;
  dup.lo << plain.lo, plain.lo, 2 * plain.lo;
  dup.hi << plain.hi, plain.hi, 2 * plain.hi;
  auto sp = make_solver(plain);
  auto sd = make_solver(dup);
  ASSERT_EQ(sp->solve(), QpStatus::kOptimal);
  ASSERT_EQ(sd->solve(), QpStatus::kOptimal);
  expect_kkt(dup, sd->result());
  EXPECT_LE((sp->result().x - sd->result().x).lpNorm<Eigen::Infinity>(), 1e-10);
  EXPECT_NEAR(sp->result().objective, sd->result().objective, 1e-10 * std::abs(sp->result().objective));
}

TEST(QpSolverDegenerate, FourConstraintsThroughAVertexIn2D) {
  // x₀ ≥ 1, x₁ ≥ 1, x₀ + x₁ ≥ 2, 2x₀ + x₁ ≥ 3, min ½‖x‖²: all four are
  // active at x = (1, 1) and their normals are linearly dependent.
  Qp qp(2, 0, 4);
  qp.C << 1, 0, 0, 1, 1, 1, 2, 1;
  qp.lo << 1, 1, 2, 3;
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  EXPECT_NEAR(s->result().x[0], 1, 1e-14);
  EXPECT_NEAR(s->result().x[1], 1, 1e-14);
  EXPECT_LE(s->result().num_active, 2);
  expect_kkt(qp, s->result(), 1e-13);
}

TEST(QpSolverDegenerate, RandomVertexWithTwiceAsManyActiveRowsAsVariables) {
  // 2n rows through x*, and g = Cᵀλ* - Hx* with λ* > 0: x* satisfies KKT
  // with every row active, so it is the (unique) optimum; the multipliers
  // are not unique.
  for (unsigned seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed + 50);
    std::uniform_real_distribution<double> U(0.1, 1);
    const int n = 25, m = 2 * n;
    Qp qp = random_qp(seed + 50, n, 0, m, false);
    const VectorXd xs = randn(rng, n);
    qp.lo = qp.C * xs;
    qp.hi.setConstant(kInf);
    VectorXd lam(m);
    for (int i = 0; i < m; ++i) lam[i] = U(rng);
    qp.g = qp.C.transpose() * lam - qp.H * xs;
    auto s = make_solver(qp);
    ASSERT_EQ(s->solve(), QpStatus::kOptimal);
    EXPECT_LE((s->result().x - xs).lpNorm<Eigen::Infinity>(), 1e-9);
    expect_kkt(qp, s->result());
  }
}

TEST(QpSolverDegenerate, IllConditionedVertexIsNotReportedInfeasible) {
  // Every row, and some bounds, pass through x_f, rows are repeated and H
  // has cond 1e7: at the degenerate vertex a dependent row can look
  // violated by rounding in x (1e-7) although it holds on the whole active
  // manifold. The QP is feasible (x_f), so the answer must be kOptimal.
  int optimal = 0;
  const int trials = 40;
  for (unsigned seed = 1; seed <= trials; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed + 400);
    std::uniform_real_distribution<double> U(0, 1);
    const int n = 12 + static_cast<int>(seed % 20), m = 2 * n;
    Qp qp = random_qp(seed + 400, n, static_cast<int>(seed % 3), m, false);
    const MatrixXd Q = testing::orthogonal_factor(randn(rng, n, n));
    VectorXd ev(n);
    for (int i = 0; i < n; ++i) ev[i] = std::pow(10.0, -7 * U(rng));
    qp.H = Q * ev.asDiagonal() * Q.transpose();
    qp.H = 0.5 * (qp.H + qp.H.transpose()).eval();
    const VectorXd xf = randn(rng, n);
    qp.b = qp.A * xf;
    for (int i = 1; i < m; ++i)
      if (U(rng) < 0.3) qp.C.row(i) = qp.C.row(rng() % i) * (U(rng) < 0.5 ? 1.0 : 3.0);
    const VectorXd cx = qp.C * xf;
    for (int i = 0; i < m; ++i) {
      const double u = U(rng);
      qp.lo[i] = u < 0.5 ? cx[i] : -kInf;
      qp.hi[i] = u >= 0.4 ? cx[i] : kInf;
    }
    for (int j = 0; j < n; ++j) {
      qp.xl[j] = U(rng) < 0.3 ? xf[j] : -kInf;
      qp.xu[j] = U(rng) < 0.3 ? xf[j] : kInf;
    }
    auto s = make_solver(qp);
    const QpStatus st = s->solve();
    EXPECT_EQ(st, QpStatus::kOptimal) << to_string(st);
    if (st != QpStatus::kOptimal) continue;
    ++optimal;
    const Kkt k = kkt(qp, s->result());
    const double scale = 1 + s->result().lambda_ineq.lpNorm<Eigen::Infinity>() +
                         s->result().lambda_bounds.lpNorm<Eigen::Infinity>() +
                         s->result().lambda_eq.lpNorm<Eigen::Infinity>();
    EXPECT_LE(k.stationarity, 1e-8 * scale);
    EXPECT_LE(k.primal, 1e-8);
    EXPECT_LE(k.dual, 1e-8 * scale);
  }
  EXPECT_EQ(optimal, trials);
}

TEST(QpSolverDegenerate, RedundantEqualitiesAndInequalities) {
  // Equalities a₀, a₁, a₀ + a₁, a₀ (rank 2, consistent), a row of C equal
  // to a₀ with c_lower = b₀ (an inequality implied by an equality), a row
  // of C equal to a₁ with both sides b₁ (the same equality again), and a
  // bound fixed to the value an equality already implies.
  const int n = 6;
  std::mt19937 rng(31);
  Qp base = random_qp(31, n, 2, 3, false);
  base.A.row(1).setZero();
  base.A(1, 0) = 1;  // a₁ = e₀, so the bound below is implied
  const VectorXd xf = randn(rng, n);
  base.b = base.A * xf;
  base.C = randn(rng, 3, n);
  base.lo = base.C * xf - VectorXd::Constant(3, 0.5);
  base.hi.setConstant(kInf);
  Qp red(n, 4, 5);
  red.H = base.H;
  red.g = base.g;
  red.A << base.A.row(0), base.A.row(1), base.A.row(0) + base.A.row(1), base.A.row(0);
  red.b << base.b[0], base.b[1], base.b[0] + base.b[1], base.b[0];
  red.C << base.C, base.A.row(0), base.A.row(1);
  red.lo << base.lo, base.b[0], base.b[1];
  red.hi << base.hi, kInf, base.b[1];
  red.xl[0] = red.xu[0] = xf[0];
  auto sb = make_solver(base);
  auto sr = make_solver(red);
  ASSERT_EQ(sb->solve(), QpStatus::kOptimal);
  ASSERT_EQ(sr->solve(), QpStatus::kOptimal);
  expect_kkt(red, sr->result(), 1e-10);
  EXPECT_LE((sb->result().x - sr->result().x).lpNorm<Eigen::Infinity>(), 1e-12);
  // Two of the four equalities are independent.
  int kept = 0;
  for (QpActivity a : sr->result().active_set.equalities) kept += a == QpActivity::kEquality;
  EXPECT_EQ(kept, 2);
  // A redundant equality made inconsistent is an infeasible QP.
  red.b[3] += 1e-3;
  sr->update_equalities(red.A, red.b);
  EXPECT_EQ(sr->solve(), QpStatus::kInfeasible);
}

// ---------------------------------------------------------------------------
// Warm start

TEST(QpSolverWarmStart, SameSolutionFewerIterationsOnPerturbedProblem) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed + 70);
    Qp qp = random_qp(seed + 70, 120, 6, 240, true);
    auto s = make_solver(qp);
    ASSERT_EQ(s->solve(), QpStatus::kOptimal);
    const QpActiveSet previous = s->result().active_set;
    // The next problem: g and the row sides move a little.
    qp.g += 0.01 * randn(rng, qp.n());
    for (int i = 0; i < qp.C.rows(); ++i)
      if (qp.lo[i] != qp.hi[i]) qp.lo[i] -= 1e-3;
    s->update_vectors(qp.g, qp.b, qp.lo, qp.hi);
    ASSERT_EQ(s->solve(), QpStatus::kOptimal);
    const QpResult cold = s->result();
    ASSERT_EQ(s->solve(previous), QpStatus::kOptimal);
    const QpResult warm = s->result();
    EXPECT_TRUE(warm.warm_started);
    expect_kkt(qp, warm);
    EXPECT_LE((warm.x - cold.x).lpNorm<Eigen::Infinity>(), 1e-12 * (1 + cold.x.lpNorm<Eigen::Infinity>()));
    EXPECT_NEAR(warm.objective, cold.objective, 1e-12 * std::abs(cold.objective));
    EXPECT_LT(warm.iterations, cold.iterations);
    std::printf("  [warm start] seed %u: cold %d iterations, warm %d iterations (%d active)\n", seed,
                cold.iterations, warm.iterations, warm.num_active);
  }
}

TEST(QpSolverWarmStart, ReusesFactorizationOnlyWhenMatricesAreUnchanged) {
  Qp qp = random_qp(81, 50, 4, 100, true);
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  const QpResult first = s->result();
  // Same data, warm from its own active set: factorization reused, no steps.
  ASSERT_EQ(s->solve(s->result().active_set), QpStatus::kOptimal);
  EXPECT_TRUE(s->result().factorization_reused);
  EXPECT_EQ(s->result().iterations, 0);
  EXPECT_LE((s->result().x - first.x).lpNorm<Eigen::Infinity>(), 1e-12);
  // New C (the same values): J, R are rebuilt from the active set.
  s->update_inequalities(qp.C, qp.lo, qp.hi);
  ASSERT_EQ(s->solve(first.active_set), QpStatus::kOptimal);
  EXPECT_FALSE(s->result().factorization_reused);
  EXPECT_EQ(s->result().iterations, 0);
  EXPECT_LE((s->result().x - first.x).lpNorm<Eigen::Infinity>(), 1e-12);
  // A new H: rebuilt as well, and still the optimum of the new problem.
  qp.H += 0.3 * MatrixXd::Identity(qp.n(), qp.n());
  s->update_hessian(qp.H);
  ASSERT_EQ(s->solve(first.active_set), QpStatus::kOptimal);
  EXPECT_FALSE(s->result().factorization_reused);
  expect_kkt(qp, s->result());
}

TEST(QpSolverWarmStart, WrongGuessesStillGiveTheOptimum) {
  Qp qp = random_qp(91, 40, 2, 80, true);
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  const VectorXd x = s->result().x;
  QpActiveSet guess = s->result().active_set;
  // Every side of every row and bound claimed active (most are wrong,
  // many are dependent).
  for (auto& a : guess.constraints) a = QpActivity::kLower;
  for (auto& a : guess.bounds) a = QpActivity::kUpper;
  ASSERT_EQ(s->solve(guess), QpStatus::kOptimal);
  expect_kkt(qp, s->result());
  EXPECT_LE((s->result().x - x).lpNorm<Eigen::Infinity>(), 1e-11);
  // Nothing active: the warm start is then a cold start (the previous
  // working set is taken apart, not kept), with the same steps.
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  const int cold = s->result().iterations;
  for (auto& a : guess.constraints) a = QpActivity::kInactive;
  for (auto& a : guess.bounds) a = QpActivity::kInactive;
  ASSERT_EQ(s->solve(guess), QpStatus::kOptimal);
  EXPECT_TRUE(s->result().factorization_reused);
  EXPECT_EQ(s->result().iterations, cold);
  EXPECT_LE((s->result().x - x).lpNorm<Eigen::Infinity>(), 1e-11);
}

TEST(QpSolverWarmStart, FromAPreviousPoint) {
  Qp qp = random_qp(93, 60, 0, 120, true);
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);
  const VectorXd x_prev = s->result().x;
  const int cold_iterations = s->result().iterations;
  QpActiveSet guess;
  s->active_set_at(x_prev, &guess);
  auto fresh = make_solver(qp);  // no factorization to reuse
  ASSERT_EQ(fresh->solve(guess), QpStatus::kOptimal);
  EXPECT_FALSE(fresh->result().factorization_reused);
  EXPECT_LT(fresh->result().iterations, cold_iterations);
  EXPECT_LE((fresh->result().x - x_prev).lpNorm<Eigen::Infinity>(), 1e-12 * (1 + x_prev.lpNorm<Eigen::Infinity>()));
}

// ---------------------------------------------------------------------------
// Convexity and arguments

TEST(QpSolverArguments, IndefiniteAndSingularHessiansAreNotConvex) {
  Qp qp(2, 0, 1);
  qp.C << 1, 1;
  qp.lo << 1;
  qp.H << 1, 0, 0, -1;
  auto s = make_solver(qp);
  EXPECT_FALSE(s->update_hessian(qp.H));
  EXPECT_EQ(s->solve(), QpStatus::kNotConvex);
  EXPECT_TRUE(std::isnan(s->result().x[0]));
  qp.H << 1, 1, 1, 1;  // PSD, singular
  EXPECT_FALSE(s->update_hessian(qp.H));
  EXPECT_EQ(s->solve(), QpStatus::kNotConvex);
  // A regularized solver takes it: stationarity then holds with H + εI.
  QpSettings settings;
  settings.regularization = 1e-6;
  qp.g << 1, 1;
  auto reg = make_solver(qp, settings);
  ASSERT_EQ(reg->solve(), QpStatus::kOptimal);
  expect_kkt(qp, reg->result(), 1e-10, settings.regularization);
  EXPECT_NEAR(reg->result().x.sum(), 1, 1e-10);
  // A positive definite H again: solvable.
  qp.H << 2, 0, 0, 2;
  EXPECT_TRUE(s->update_hessian(qp.H));
  EXPECT_EQ(s->solve(), QpStatus::kOptimal);
}

template <class F>
void expect_invalid(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no InvalidArgument thrown (expected one naming " << needle << ")";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(QpSolverArguments, SizesAndNonFiniteValuesAreRejected) {
  QpSolver s(3, 1, 2);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  MatrixXd H = MatrixXd::Identity(3, 3);
  expect_invalid([&] { QpSolver bad(0, 0, 0); }, "n >= 1");
  expect_invalid([&] { s.update_hessian(MatrixXd::Identity(2, 2)); }, "H is 2x2, expected 3x3");
  H(1, 2) = nan;
  expect_invalid([&] { s.update_hessian(H); }, "H(1, 2)");
  H = MatrixXd::Identity(3, 3);
  H(0, 1) = 0.5;
  expect_invalid([&] { s.update_hessian(H); }, "not symmetric");
  expect_invalid([&] { s.update_gradient(VectorXd::Constant(3, kInf)); }, "g(0)");
  expect_invalid([&] { s.update_gradient(VectorXd::Zero(4)); }, "g has size 4, expected 3");
  expect_invalid([&] { s.update_equalities(MatrixXd::Zero(2, 3), VectorXd::Zero(2)); }, "A_eq is 2x3, expected 1x3");
  expect_invalid([&] { s.update_equalities(MatrixXd::Zero(1, 3), VectorXd::Constant(1, nan)); }, "b_eq(0)");
  expect_invalid([&] { s.update_inequalities(MatrixXd::Zero(2, 4), VectorXd::Zero(2), VectorXd::Zero(2)); },
                 "C is 2x4, expected 2x3");
  expect_invalid(
      [&] { s.update_inequalities(MatrixXd::Zero(2, 3), VectorXd::Constant(2, kInf), VectorXd::Zero(2)); },
      "c_lower(0)");
  expect_invalid(
      [&] { s.update_inequalities(MatrixXd::Zero(2, 3), VectorXd::Zero(2), VectorXd::Constant(2, -kInf)); },
      "c_upper(0)");
  expect_invalid([&] { s.update_bounds(VectorXd::Zero(3), VectorXd::Constant(3, nan)); }, "x_upper(0)");
  expect_invalid([&] { s.update_vectors(VectorXd::Zero(3), VectorXd::Zero(0), VectorXd::Zero(2), VectorXd::Zero(2)); },
                 "b_eq has size 0, expected 1");
  QpActiveSet wrong;
  wrong.constraints.resize(1);
  wrong.bounds.resize(3);
  expect_invalid([&] { s.solve(wrong); }, "warm_start");
  // Infinite sides where they are allowed are fine.
  s.update_inequalities(MatrixXd::Zero(2, 3), VectorXd::Constant(2, -kInf), VectorXd::Constant(2, kInf));
  s.update_bounds(VectorXd::Constant(3, -kInf), VectorXd::Constant(3, kInf));
}

// ---------------------------------------------------------------------------
// No heap allocation per solve

TEST(QpAllocation, CounterSeesEigenAllocations) {
  if (!counter_is_live())
    GTEST_SKIP() << "malloc is interposed by another test file in this executable (or unsupported)";
  SUCCEED();
}

TEST(QpAllocation, SolvesAndVectorUpdatesDoNotAllocate) {
  if (!counter_is_live())
    GTEST_SKIP() << "malloc is interposed by another test file in this executable (or unsupported)";
  std::mt19937 rng(5);
  Qp qp = random_qp(5, 120, 4, 240, true);
  auto s = make_solver(qp);
  ASSERT_EQ(s->solve(), QpStatus::kOptimal);  // first solve of this size, outside the counter
  QpActiveSet warm = s->result().active_set;  // the caller's copy, sized once
  std::vector<VectorXd> gs;
  for (int k = 0; k < 4; ++k) gs.push_back(qp.g + 0.05 * randn(rng, qp.n()));
  long allocations = 0;
  int solves = 0;
  {
    QpAllocationCounter counter;
    for (const VectorXd& g : gs) {
      s->update_vectors(g, qp.b, qp.lo, qp.hi);
      solves += s->solve() == QpStatus::kOptimal;
      warm = s->result().active_set;
      s->update_gradient(g);
      solves += s->solve(warm) == QpStatus::kOptimal;
      s->update_bounds(qp.xl, qp.xu);
      solves += s->solve(s->result().active_set) == QpStatus::kOptimal;
      s->update_inequalities(qp.C, qp.lo, qp.hi);  // matrices again: rebuild path
      solves += s->solve(warm) == QpStatus::kOptimal;
    }
    allocations = counter.count();
  }
  EXPECT_EQ(solves, 16);
  EXPECT_EQ(allocations, 0);
  // Infeasible and non-convex exits do not allocate either.
  Qp bad = qp;
  bad.lo[0] = 1e3;
  bad.hi[0] = kInf;
  bad.C.row(1) = bad.C.row(0);
  bad.lo[1] = -kInf;
  bad.hi[1] = 0;
  s->update_inequalities(bad.C, bad.lo, bad.hi);
  {
    QpAllocationCounter counter;
    EXPECT_EQ(s->solve(), QpStatus::kInfeasible);
    EXPECT_EQ(counter.count(), 0);
  }
}

// Prints the largest KKT residuals of all optimal solves, for the record.
class ResidualReport : public ::testing::Environment {
 public:
  void TearDown() override {
    const Kkt& k = worst_seen();
    std::printf("[qp kkt] worst residuals over the optimal solves: stationarity %.2e, primal %.2e, "
                "dual sign %.2e, complementarity %.2e\n",
                k.stationarity, k.primal, k.dual, k.complementarity);
  }
};
[[maybe_unused]] ::testing::Environment* const g_residual_report =
    ::testing::AddGlobalTestEnvironment(new ResidualReport);

}  // namespace
}  // namespace neuralsim
