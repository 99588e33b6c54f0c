// QpSolver against an independent solver: Ipopt (an interior-point method,
// Debian's coinor-libipopt1v5, through its C interface) solves the same
// random QPs; optimal values and minimizers agree to ~1e-6 (Ipopt's
// tolerance). Where the library cannot be loaded the test is skipped (it
// fails under the test command, which installs it).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/control/qp_solver.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace qp_ipopt_oracle_test {

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

// Ipopt's C interface (IpStdCInterface.h of Ipopt 3.11, Debian's
// coinor-libipopt1v5), loaded at run time: the test needs only the runtime
// library, not the -dev package with its MPI and MUMPS headers. These are
// the declarations of the functions it calls, with the same types.
namespace ipopt_c {
using Number = double;
using Index = int;
using Bool = int;
using Problem = void*;
using EvalF = Bool (*)(Index n, Number* x, Bool new_x, Number* obj_value, void* user_data);
using EvalGradF = Bool (*)(Index n, Number* x, Bool new_x, Number* grad_f, void* user_data);
using EvalG = Bool (*)(Index n, Number* x, Bool new_x, Index m, Number* g, void* user_data);
using EvalJacG = Bool (*)(Index n, Number* x, Bool new_x, Index m, Index nele_jac, Index* iRow, Index* jCol,
                          Number* values, void* user_data);
using EvalH = Bool (*)(Index n, Number* x, Bool new_x, Number obj_factor, Index m, Number* lambda, Bool new_lambda,
                       Index nele_hess, Index* iRow, Index* jCol, Number* values, void* user_data);

struct Api {
  Problem (*create)(Index n, Number* x_L, Number* x_U, Index m, Number* g_L, Number* g_U, Index nele_jac,
                    Index nele_hess, Index index_style, EvalF, EvalG, EvalGradF, EvalJacG, EvalH) = nullptr;
  void (*free_problem)(Problem) = nullptr;
  Bool (*str_option)(Problem, char* keyword, char* value) = nullptr;
  Bool (*num_option)(Problem, char* keyword, Number value) = nullptr;
  Bool (*int_option)(Problem, char* keyword, Index value) = nullptr;
  int (*solve)(Problem, Number* x, Number* g, Number* obj_val, Number* mult_g, Number* mult_x_L, Number* mult_x_U,
               void* user_data) = nullptr;  // enum ApplicationReturnStatus
  std::string error;
};
constexpr int kSolveSucceeded = 0, kSolvedToAcceptableLevel = 1;

template <class F>
bool bind(void* lib, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (!f) error = std::string("libipopt.so.1 has no ") + name;
  return f != nullptr;
}

// The library, opened once for the process (never closed).
const Api& api() {
  static const Api a = [] {
    Api r;
    void* lib = ::dlopen("libipopt.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      r.error = std::string("cannot load libipopt.so.1 (coinor-libipopt1v5): ") + ::dlerror();
      return r;
    }
    if (!(bind(lib, "CreateIpoptProblem", r.create, r.error) && bind(lib, "FreeIpoptProblem", r.free_problem, r.error) &&
          bind(lib, "AddIpoptStrOption", r.str_option, r.error) &&
          bind(lib, "AddIpoptNumOption", r.num_option, r.error) &&
          bind(lib, "AddIpoptIntOption", r.int_option, r.error) && bind(lib, "IpoptSolve", r.solve, r.error)))
      r.create = nullptr;
    return r;
  }();
  return a;
}
}  // namespace ipopt_c

// The QP as an Ipopt NLP: dense constraint Jacobian [A; C], constant
// Hessian (lower triangle of H). user_data points to the Qp.
namespace qp_nlp {
using ipopt_c::Bool;
using ipopt_c::Index;
using ipopt_c::Number;
const Qp& of(void* user_data) { return *static_cast<const Qp*>(user_data); }

Bool eval_f(Index n, Number* xp, Bool, Number* f, void* user) {
  const Qp& qp = of(user);
  const Eigen::Map<const VectorXd> x(xp, n);
  *f = 0.5 * x.dot(qp.H * x) + qp.g.dot(x);
  return 1;
}
Bool eval_grad_f(Index n, Number* xp, Bool, Number* grad, void* user) {
  const Qp& qp = of(user);
  Eigen::Map<VectorXd>(grad, n) = qp.H * Eigen::Map<const VectorXd>(xp, n) + qp.g;
  return 1;
}
Bool eval_g(Index n, Number* xp, Bool, Index m, Number* gv, void* user) {
  const Qp& qp = of(user);
  const Eigen::Map<const VectorXd> x(xp, n);
  const Index ne = static_cast<Index>(qp.A.rows());
  Eigen::Map<VectorXd> out(gv, m);
  out.head(ne) = qp.A * x;
  out.tail(m - ne) = qp.C * x;
  return 1;
}
Bool eval_jac_g(Index n, Number*, Bool, Index m, Index, Index* rows, Index* cols, Number* values, void* user) {
  const Qp& qp = of(user);
  const Index ne = static_cast<Index>(qp.A.rows());
  Index k = 0;
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < n; ++j, ++k) {
      if (values == nullptr) {
        rows[k] = i;
        cols[k] = j;
      } else {
        values[k] = i < ne ? qp.A(i, j) : qp.C(i - ne, j);
      }
    }
  return 1;
}
Bool eval_h(Index n, Number*, Bool, Number obj_factor, Index, Number*, Bool, Index, Index* rows, Index* cols,
            Number* values, void* user) {
  const Qp& qp = of(user);
  Index k = 0;
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j <= i; ++j, ++k) {
      if (values == nullptr) {
        rows[k] = i;
        cols[k] = j;
      } else {
        values[k] = obj_factor * qp.H(i, j);  // the constraints are linear
      }
    }
  return 1;
}
double clip(double v) { return std::isinf(v) ? (v > 0 ? 1e20 : -1e20) : v; }
}  // namespace qp_nlp

struct IpoptResult {
  int status = -100;
  VectorXd x;
  double objective = std::numeric_limits<double>::quiet_NaN();
  bool solved() const { return status == ipopt_c::kSolveSucceeded || status == ipopt_c::kSolvedToAcceptableLevel; }
};

IpoptResult solve_with_ipopt(const Qp& qp) {
  const ipopt_c::Api& ip = ipopt_c::api();
  const int n = static_cast<int>(qp.H.rows()), ne = static_cast<int>(qp.A.rows());
  const int m = ne + static_cast<int>(qp.C.rows());
  std::vector<double> xl(n), xu(n), gl(m), gu(m);
  for (int j = 0; j < n; ++j) {
    xl[j] = qp_nlp::clip(qp.xl[j]);
    xu[j] = qp_nlp::clip(qp.xu[j]);
  }
  for (int i = 0; i < m; ++i) {
    gl[i] = i < ne ? qp.b[i] : qp_nlp::clip(qp.lo[i - ne]);
    gu[i] = i < ne ? qp.b[i] : qp_nlp::clip(qp.hi[i - ne]);
  }
  const std::unique_ptr<void, void (*)(void*)> problem(
      ip.create(n, xl.data(), xu.data(), m, gl.data(), gu.data(), n * m, n * (n + 1) / 2, 0, qp_nlp::eval_f,
                qp_nlp::eval_g, qp_nlp::eval_grad_f, qp_nlp::eval_jac_g, qp_nlp::eval_h),
      ip.free_problem);
  IpoptResult r;
  if (!problem) return r;
  auto str = [&](const char* k, const char* v) {
    ip.str_option(problem.get(), const_cast<char*>(k), const_cast<char*>(v));
  };
  ip.int_option(problem.get(), const_cast<char*>("print_level"), 0);
  str("sb", "yes");
  ip.num_option(problem.get(), const_cast<char*>("tol"), 1e-10);
  ip.num_option(problem.get(), const_cast<char*>("bound_relax_factor"), 0.0);
  ip.int_option(problem.get(), const_cast<char*>("max_iter"), 1000);
  str("hessian_constant", "yes");
  str("jac_c_constant", "yes");
  str("jac_d_constant", "yes");
  r.x = VectorXd::Zero(n);
  double objective = 0;
  r.status = ip.solve(problem.get(), r.x.data(), nullptr, &objective, nullptr, nullptr, nullptr,
                      const_cast<Qp*>(&qp));
  r.objective = objective;
  return r;
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
  NEURALSIM_SKIP_WITHOUT_ORACLE(ipopt_c::api().create != nullptr, ipopt_c::api().error);
  const Case c = GetParam();
  const Qp qp = random_qp(c.seed, c.n, c.n_eq, c.n_in, c.bounds);
  QpSolver gi(c.n, c.n_eq, c.n_in);
  gi.update_hessian(qp.H);
  gi.update_gradient(qp.g);
  gi.update_equalities(qp.A, qp.b);
  gi.update_inequalities(qp.C, qp.lo, qp.hi);
  gi.update_bounds(qp.xl, qp.xu);
  ASSERT_EQ(gi.solve(), QpStatus::kOptimal);

  const IpoptResult ip = solve_with_ipopt(qp);
  ASSERT_TRUE(ip.solved()) << "Ipopt failed, status " << ip.status;
  const double f_gi = gi.result().objective, f_ip = ip.objective;
  const double dx = (gi.result().x - ip.x).lpNorm<Eigen::Infinity>();
  std::printf("  [ipopt] n %d, n_eq %d, n_in %d: |f_gi - f_ipopt| = %.2e (f = %.6f), |x_gi - x_ipopt|inf = %.2e, "
              "%d active\n",
              c.n, c.n_eq, c.n_in, std::abs(f_gi - f_ip), f_gi, dx, gi.result().num_active);
  EXPECT_NEAR(f_gi, f_ip, 1e-6 * (1 + std::abs(f_ip)));
  EXPECT_LE(dx, 1e-6 * (1 + ip.x.lpNorm<Eigen::Infinity>()));
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

}  // namespace qp_ipopt_oracle_test
}  // namespace neuralsim
