// QpSolver against an independent solver: Ipopt (an interior-point method,
// Debian's coinor-libipopt-dev, through its C++ TNLP interface) solves the
// same random QPs; optimal values and minimizers agree to ~1e-6 (Ipopt's
// tolerance). The whole file needs NEURALSIM_HAVE_IPOPT, which the build
// defines only on a target that links Ipopt (pkg-config `ipopt`); without
// it the test is skipped, so the file also compiles where Ipopt is absent.
#include <gtest/gtest.h>

#include "neuralsim/control/qp_solver.hpp"

#ifdef NEURALSIM_HAVE_IPOPT

#include <IpIpoptApplication.hpp>
#include <IpTNLP.hpp>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <random>

namespace neuralsim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Qp {
  MatrixXd H, A, C;
  VectorXd g, b, lo, hi, xl, xu;
};

VectorXd randn(std::mt19937& rng, int n) {
  std::normal_distribution<double> N(0, 1);
  VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = N(rng);
  return v;
}

// Random strictly convex QP with a feasible point x_f (as in
// qp_solver_test.cpp): one- and two-sided rows and bounds around x_f.
Qp random_qp(unsigned seed, int n, int n_eq, int n_in, bool bounds) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(0, 1);
  Qp qp;
  MatrixXd M(n, n);
  for (int j = 0; j < n; ++j) M.col(j) = randn(rng, n);
  qp.H = M.transpose() * M / n + 0.1 * MatrixXd::Identity(n, n);
  qp.H = 0.5 * (qp.H + qp.H.transpose()).eval();
  const VectorXd xf = randn(rng, n);
  qp.g = 5 * randn(rng, n);
  qp.A.resize(n_eq, n);
  for (int i = 0; i < n_eq; ++i) qp.A.row(i) = randn(rng, n).transpose();
  qp.b = qp.A * xf;
  qp.C.resize(n_in, n);
  for (int i = 0; i < n_in; ++i) qp.C.row(i) = randn(rng, n).transpose();
  const VectorXd cx = qp.C * xf;
  qp.lo = VectorXd::Constant(n_in, -kInf);
  qp.hi = VectorXd::Constant(n_in, kInf);
  for (int i = 0; i < n_in; ++i) {
    const double u = U(rng);
    if (u < 0.45) qp.lo[i] = cx[i] - U(rng);
    else if (u < 0.9) qp.hi[i] = cx[i] + U(rng);
    else {
      qp.lo[i] = cx[i] - U(rng);
      qp.hi[i] = cx[i] + U(rng);
    }
  }
  qp.xl = VectorXd::Constant(n, -kInf);
  qp.xu = VectorXd::Constant(n, kInf);
  if (bounds)
    for (int j = 0; j < n; ++j) {
      if (U(rng) < 0.5) qp.xl[j] = xf[j] - 2 * U(rng);
      if (U(rng) < 0.5) qp.xu[j] = xf[j] + 2 * U(rng);
    }
  return qp;
}

// The QP as an Ipopt NLP: dense constraint Jacobian [A; C], constant
// Hessian (lower triangle of H).
class QpNlp : public Ipopt::TNLP {
 public:
  explicit QpNlp(const Qp& qp) : qp_(qp) {}
  VectorXd x;
  double objective = std::numeric_limits<double>::quiet_NaN();
  Ipopt::SolverReturn status = Ipopt::INTERNAL_ERROR;

  bool get_nlp_info(Ipopt::Index& n, Ipopt::Index& m, Ipopt::Index& nnz_jac, Ipopt::Index& nnz_h,
                    IndexStyleEnum& style) override {
    n = nv();
    m = nc();
    nnz_jac = n * m;
    nnz_h = n * (n + 1) / 2;
    style = C_STYLE;
    return true;
  }
  bool get_bounds_info(Ipopt::Index n, Ipopt::Number* x_l, Ipopt::Number* x_u, Ipopt::Index m, Ipopt::Number* g_l,
                       Ipopt::Number* g_u) override {
    for (Ipopt::Index j = 0; j < n; ++j) {
      x_l[j] = clip(qp_.xl[j]);
      x_u[j] = clip(qp_.xu[j]);
    }
    const int ne = static_cast<int>(qp_.A.rows());
    for (Ipopt::Index i = 0; i < m; ++i) {
      g_l[i] = i < ne ? qp_.b[i] : clip(qp_.lo[i - ne]);
      g_u[i] = i < ne ? qp_.b[i] : clip(qp_.hi[i - ne]);
    }
    return true;
  }
  bool get_starting_point(Ipopt::Index n, bool init_x, Ipopt::Number* x0, bool, Ipopt::Number*, Ipopt::Number*,
                          Ipopt::Index, bool, Ipopt::Number*) override {
    if (init_x)
      for (Ipopt::Index j = 0; j < n; ++j) x0[j] = 0;
    return true;
  }
  bool eval_f(Ipopt::Index n, const Ipopt::Number* xp, bool, Ipopt::Number& f) override {
    const Eigen::Map<const VectorXd> xv(xp, n);
    f = 0.5 * xv.dot(qp_.H * xv) + qp_.g.dot(xv);
    return true;
  }
  bool eval_grad_f(Ipopt::Index n, const Ipopt::Number* xp, bool, Ipopt::Number* grad) override {
    const Eigen::Map<const VectorXd> xv(xp, n);
    Eigen::Map<VectorXd>(grad, n) = qp_.H * xv + qp_.g;
    return true;
  }
  bool eval_g(Ipopt::Index n, const Ipopt::Number* xp, bool, Ipopt::Index m, Ipopt::Number* gv) override {
    const Eigen::Map<const VectorXd> xv(xp, n);
    const int ne = static_cast<int>(qp_.A.rows());
    Eigen::Map<VectorXd> out(gv, m);
    out.head(ne) = qp_.A * xv;
    out.tail(m - ne) = qp_.C * xv;
    return true;
  }
  bool eval_jac_g(Ipopt::Index n, const Ipopt::Number*, bool, Ipopt::Index m, Ipopt::Index, Ipopt::Index* rows,
                  Ipopt::Index* cols, Ipopt::Number* values) override {
    const int ne = static_cast<int>(qp_.A.rows());
    Ipopt::Index k = 0;
    for (Ipopt::Index i = 0; i < m; ++i)
      for (Ipopt::Index j = 0; j < n; ++j, ++k) {
        if (values == nullptr) {
          rows[k] = i;
          cols[k] = j;
        } else {
          values[k] = i < ne ? qp_.A(i, j) : qp_.C(i - ne, j);
        }
      }
    return true;
  }
  bool eval_h(Ipopt::Index n, const Ipopt::Number*, bool, Ipopt::Number obj_factor, Ipopt::Index, const Ipopt::Number*,
              bool, Ipopt::Index, Ipopt::Index* rows, Ipopt::Index* cols, Ipopt::Number* values) override {
    Ipopt::Index k = 0;
    for (Ipopt::Index i = 0; i < n; ++i)
      for (Ipopt::Index j = 0; j <= i; ++j, ++k) {
        if (values == nullptr) {
          rows[k] = i;
          cols[k] = j;
        } else {
          values[k] = obj_factor * qp_.H(i, j);  // the constraints are linear
        }
      }
    return true;
  }
  void finalize_solution(Ipopt::SolverReturn st, Ipopt::Index n, const Ipopt::Number* xp, const Ipopt::Number*,
                         const Ipopt::Number*, Ipopt::Index, const Ipopt::Number*, const Ipopt::Number*,
                         Ipopt::Number obj, const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    status = st;
    x = Eigen::Map<const VectorXd>(xp, n);
    objective = obj;
  }

 private:
  static double clip(double v) { return std::isinf(v) ? (v > 0 ? 1e20 : -1e20) : v; }
  int nv() const { return static_cast<int>(qp_.H.rows()); }
  int nc() const { return static_cast<int>(qp_.A.rows() + qp_.C.rows()); }
  const Qp& qp_;
};

bool solve_with_ipopt(const Ipopt::SmartPtr<Ipopt::TNLP>& nlp) {
  Ipopt::SmartPtr<Ipopt::IpoptApplication> app = IpoptApplicationFactory();
  app->Options()->SetIntegerValue("print_level", 0);
  app->Options()->SetStringValue("sb", "yes");
  app->Options()->SetNumericValue("tol", 1e-10);
  app->Options()->SetNumericValue("bound_relax_factor", 0.0);
  app->Options()->SetIntegerValue("max_iter", 1000);
  app->Options()->SetStringValue("hessian_constant", "yes");
  app->Options()->SetStringValue("jac_c_constant", "yes");
  app->Options()->SetStringValue("jac_d_constant", "yes");
  if (app->Initialize() != Ipopt::Solve_Succeeded) return false;
  const Ipopt::ApplicationReturnStatus st = app->OptimizeTNLP(nlp);
  return st == Ipopt::Solve_Succeeded || st == Ipopt::Solved_To_Acceptable_Level;
}

struct Case {
  unsigned seed;
  int n, n_eq, n_in;
  bool bounds;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << "seed " << c.seed << " n " << c.n << " eq " << c.n_eq << " in " << c.n_in << (c.bounds ? " bounds" : "");
}

class QpIpoptOracle : public ::testing::TestWithParam<Case> {};

TEST_P(QpIpoptOracle, ObjectiveAndMinimizerAgree) {
  const Case c = GetParam();
  const Qp qp = random_qp(c.seed, c.n, c.n_eq, c.n_in, c.bounds);
  QpSolver gi(c.n, c.n_eq, c.n_in);
  gi.update_hessian(qp.H);
  gi.update_gradient(qp.g);
  gi.update_equalities(qp.A, qp.b);
  gi.update_inequalities(qp.C, qp.lo, qp.hi);
  gi.update_bounds(qp.xl, qp.xu);
  ASSERT_EQ(gi.solve(), QpStatus::kOptimal);

  auto* nlp = new QpNlp(qp);
  const Ipopt::SmartPtr<Ipopt::TNLP> owner(nlp);  // Ipopt's reference counting owns it
  ASSERT_TRUE(solve_with_ipopt(owner)) << "Ipopt failed, status " << nlp->status;
  const double f_gi = gi.result().objective, f_ip = nlp->objective;
  const double dx = (gi.result().x - nlp->x).lpNorm<Eigen::Infinity>();
  std::printf("  [ipopt] n %d, n_eq %d, n_in %d: |f_gi - f_ipopt| = %.2e (f = %.6f), |x_gi - x_ipopt|inf = %.2e, "
              "%d active\n",
              c.n, c.n_eq, c.n_in, std::abs(f_gi - f_ip), f_gi, dx, gi.result().num_active);
  EXPECT_NEAR(f_gi, f_ip, 1e-6 * (1 + std::abs(f_ip)));
  EXPECT_LE(dx, 1e-6 * (1 + nlp->x.lpNorm<Eigen::Infinity>()));
  // GI is exact: its objective is never above Ipopt's by more than Ipopt's
  // own feasibility slack could explain.
  EXPECT_LE(f_gi, f_ip + 1e-7 * (1 + std::abs(f_ip)));
}

INSTANTIATE_TEST_SUITE_P(RandomQps, QpIpoptOracle,
                         ::testing::Values(Case{1, 10, 2, 20, false}, Case{2, 10, 0, 30, true},
                                           Case{3, 40, 4, 80, true}, Case{4, 60, 0, 150, false},
                                           Case{5, 100, 5, 200, true}, Case{6, 150, 10, 300, true},
                                           Case{7, 200, 0, 400, true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "seed" + std::to_string(info.param.seed) + "_n" + std::to_string(info.param.n);
                         });

}  // namespace
}  // namespace neuralsim

#else  // !NEURALSIM_HAVE_IPOPT

TEST(QpIpoptOracle, SkippedWithoutIpopt) {
  GTEST_SKIP() << "built without Ipopt (coinor-libipopt-dev, pkg-config ipopt): oracle comparison not run";
}

#endif
