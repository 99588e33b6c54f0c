// Reverse-mode tape (grad/tape.hpp): every derivative is checked against
// independent mathematics, never against the tape itself:
//   * forward mode (ceres::Jet), which shares no code with the tape, to
//     1e-13 relative for single operations and 1e-10 for 200-step rollouts;
//   * central finite differences of the same function in double.
// Plus the tape's contract: constants record nothing, exactly_zero(), the
// engine's scalar hooks, Eigen (LLT, quaternions, cross products), external
// function nodes, two threads, and no heap allocation in steady state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Cholesky>
#include <ceres/jet.h>

#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_models.hpp"


namespace neuralsim {
namespace {

template <int N>
using JetN = ceres::Jet<double, N>;
using Jet1 = JetN<1>;
using Jet2 = JetN<2>;

// |a - b| <= rel · max(|a|, |b|); exact zeros must match exactly; NaNs
// must be NaN on both sides.
::testing::AssertionResult close_rel(double a, double b, double rel) {
  if (std::isnan(a) && std::isnan(b)) return ::testing::AssertionSuccess();
  const double scale = std::max(std::abs(a), std::abs(b));
  if (std::abs(a - b) <= rel * scale || a == b) return ::testing::AssertionSuccess();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.17g vs %.17g (rel. diff %.3e > %.1e)", a, b, std::abs(a - b) / scale, rel);
  return ::testing::AssertionFailure() << buf;
}
// |a - b| <= tol · max(1, |b|) (finite differences).
::testing::AssertionResult close_fd(double a, double b, double tol) {
  if (std::abs(a - b) <= tol * std::max(1.0, std::abs(b))) return ::testing::AssertionSuccess();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.17g vs FD %.17g (diff %.3e > %.1e·max(1,|fd|))", a, b, std::abs(a - b), tol);
  return ::testing::AssertionFailure() << buf;
}

// Gradient of a scalar function of n inputs by the tape.
template <class F>
std::vector<double> rev_gradient(F&& f, const std::vector<double>& x0, double* value = nullptr) {
  Tape tape;
  std::vector<Rev> x(x0.size());
  tape.variables(x0.data(), x0.size(), x.data());
  const Rev y = f(x);
  if (value) *value = y.value();
  tape.reverse(y);
  std::vector<double> g(x0.size());
  tape.adjoints(x.data(), x.size(), g.data());
  return g;
}
// ... by forward mode, 8 directions per pass (one width and one routine for
// every check, the rollouts included).
template <class F>
std::vector<double> jet_gradient(F&& f, const std::vector<double>& x0, double* value = nullptr) {
  using J = JetN<8>;
  const size_t n = x0.size();
  std::vector<double> g(n);
  for (size_t first = 0; first < n; first += 8) {
    std::vector<J> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = J(x0[i]);
    for (size_t i = first; i < std::min(n, first + 8); ++i) x[i].v[i - first] = 1.0;
    const J y = f(x);
    if (value) *value = y.a;
    for (size_t i = first; i < std::min(n, first + 8); ++i) g[i] = y.v[i - first];
  }
  return g;
}
// ... by central differences, h_i = rel_h · max(|x_i|, 1e-2).
template <class F>
std::vector<double> fd_gradient(F&& f, const std::vector<double>& x0, double rel_h = 1e-5) {
  std::vector<double> g(x0.size());
  for (size_t i = 0; i < x0.size(); ++i) {
    const double h = rel_h * std::max(std::abs(x0[i]), 1e-2);
    std::vector<double> xp = x0, xm = x0;
    xp[i] += h;
    xm[i] -= h;
    g[i] = (f(xp) - f(xm)) / (2 * h);
  }
  return g;
}

// ---------------------------------------------------------------------------
// Elementary functions: derivative vs Jet (1e-13) and central FD (1e-7).

struct Unary {
  const char* name;
  // Plain function pointers (the lambdas capture nothing): a std::function
  // per lambda would instantiate its handler ~240 times.
  Rev (*rev)(const Rev&);
  Jet1 (*jet)(const Jet1&);
  double (*dbl)(double);
  std::vector<double> points;
  bool fd = true;  // false where f is not differentiable in a neighbourhood
};

#define NEURALSIM_UNARY(NAME, EXPR, ...)                               \
  Unary {                                                              \
    #NAME, [](const Rev& x) -> Rev { using std::NAME; return EXPR; },  \
        [](const Jet1& x) -> Jet1 { using std::NAME; return EXPR; },   \
        [](double x) -> double { using std::NAME; return EXPR; }, __VA_ARGS__ \
  }

std::vector<Unary> unary_functions() {
  return {
      NEURALSIM_UNARY(sin, sin(x), {-2.1, -0.3, 0.0, 0.7, 1.4}),
      NEURALSIM_UNARY(cos, cos(x), {-2.1, -0.3, 0.0, 0.7, 1.4}),
      NEURALSIM_UNARY(tan, tan(x), {-1.2, -0.3, 0.0, 0.7, 1.4}),
      NEURALSIM_UNARY(asin, asin(x), {-0.9, -0.2, 0.0, 0.5, 0.95}),
      NEURALSIM_UNARY(acos, acos(x), {-0.9, -0.2, 0.0, 0.5, 0.95}),
      NEURALSIM_UNARY(atan, atan(x), {-3.0, -0.5, 0.0, 0.8, 10.0}),
      NEURALSIM_UNARY(sinh, sinh(x), {-2.0, -0.1, 0.0, 0.6, 3.0}),
      NEURALSIM_UNARY(cosh, cosh(x), {-2.0, -0.1, 0.0, 0.6, 3.0}),
      NEURALSIM_UNARY(tanh, tanh(x), {-2.0, -0.1, 0.0, 0.6, 3.0}),
      NEURALSIM_UNARY(exp, exp(x), {-3.0, -1e-3, 0.0, 0.5, 2.0}),
      NEURALSIM_UNARY(expm1, expm1(x), {-3.0, -1e-3, 0.0, 0.5, 2.0}),
      NEURALSIM_UNARY(log, log(x), {1e-3, 0.4, 1.0, 2.5, 100.0}),
      NEURALSIM_UNARY(log10, log10(x), {1e-3, 0.4, 1.0, 2.5, 100.0}),
      NEURALSIM_UNARY(log2, log2(x), {1e-3, 0.4, 1.0, 2.5, 100.0}),
      NEURALSIM_UNARY(log1p, log1p(x), {-0.9, -1e-3, 0.0, 0.5, 10.0}),
      NEURALSIM_UNARY(sqrt, sqrt(x), {1e-4, 0.3, 1.0, 4.0, 1e3}),
      NEURALSIM_UNARY(cbrt, cbrt(x), {-8.0, -0.5, 0.2, 1.0, 27.0}),
      NEURALSIM_UNARY(abs, abs(x), {-2.5, -1e-3, 0.4, 3.0}),
      // ceres::Jet has no fabs: compared with its abs.
      Unary{"fabs", [](const Rev& x) { return fabs(x); }, [](const Jet1& x) { return abs(x); },
            [](double x) { return std::fabs(x); }, {-2.5, -1e-3, 0.4, 3.0}},
      NEURALSIM_UNARY(floor, floor(x), {-2.5, -0.3, 0.2, 1.7}),
      NEURALSIM_UNARY(ceil, ceil(x), {-2.5, -0.3, 0.2, 1.7}),
      // abs at ±0: sgn(±0) = ±1 (Jet's convention); no FD (kink).
      NEURALSIM_UNARY(abs, abs(x), {0.0, -0.0}, false),
      // Arithmetic with a double on either side, and compound assignment.
      Unary{"x+c", [](const Rev& x) { return x + 1.5; }, [](const Jet1& x) { return x + 1.5; },
            [](double x) { return x + 1.5; }, {-1.0, 0.0, 2.0}},
      Unary{"c+x", [](const Rev& x) { return 1.5 + x; }, [](const Jet1& x) { return 1.5 + x; },
            [](double x) { return 1.5 + x; }, {-1.0, 0.0, 2.0}},
      Unary{"x-c", [](const Rev& x) { return x - 1.5; }, [](const Jet1& x) { return x - 1.5; },
            [](double x) { return x - 1.5; }, {-1.0, 0.0, 2.0}},
      Unary{"c-x", [](const Rev& x) { return 1.5 - x; }, [](const Jet1& x) { return 1.5 - x; },
            [](double x) { return 1.5 - x; }, {-1.0, 0.0, 2.0}},
      Unary{"x*c", [](const Rev& x) { return x * -2.5; }, [](const Jet1& x) { return x * -2.5; },
            [](double x) { return x * -2.5; }, {-1.0, 0.0, 2.0}},
      Unary{"c*x", [](const Rev& x) { return -2.5 * x; }, [](const Jet1& x) { return -2.5 * x; },
            [](double x) { return -2.5 * x; }, {-1.0, 0.0, 2.0}},
      Unary{"x/c", [](const Rev& x) { return x / 3.0; }, [](const Jet1& x) { return x / 3.0; },
            [](double x) { return x / 3.0; }, {-1.0, 0.0, 2.0}},
      Unary{"c/x", [](const Rev& x) { return 3.0 / x; }, [](const Jet1& x) { return 3.0 / x; },
            [](double x) { return 3.0 / x; }, {-1.0, 0.5, 2.0}},
      Unary{"-x", [](const Rev& x) { return -x; }, [](const Jet1& x) { return -x; }, [](double x) { return -x; },
            {-1.0, 0.0, 2.0}},
      Unary{"+x", [](const Rev& x) { return +x; }, [](const Jet1& x) { return +x; }, [](double x) { return +x; },
            {-1.0, 2.0}},
      Unary{"x*x", [](const Rev& x) { return x * x; }, [](const Jet1& x) { return x * x; },
            [](double x) { return x * x; }, {-1.0, 0.0, 2.0}},
      Unary{"x/x", [](const Rev& x) { return x / x; }, [](const Jet1& x) { return x / x; },
            [](double x) { return x / x; }, {-1.0, 2.0}},
      Unary{"x-x", [](const Rev& x) { return x - x; }, [](const Jet1& x) { return x - x; },
            [](double x) { return x - x; }, {-1.0, 2.0}},
      Unary{"x*1+0", [](const Rev& x) { return x * 1.0 + 0.0 - 0.0; },
            [](const Jet1& x) { return x * 1.0 + 0.0 - 0.0; }, [](double x) { return x * 1.0 + 0.0 - 0.0; },
            {-1.0, 2.0}},
      Unary{"x*0", [](const Rev& x) { return x * 0.0 + x; }, [](const Jet1& x) { return x * 0.0 + x; },
            [](double x) { return x * 0.0 + x; }, {-1.0, 2.0}},
      Unary{"compound",
            [](const Rev& x) {
              Rev y = x;
              y += 2.0;
              y *= x;
              y -= 0.5;
              y /= 1.5;
              y += x;
              y *= 3.0;
              y -= x;
              y /= x;
              return y;
            },
            [](const Jet1& x) {
              Jet1 y = x;
              y += 2.0;
              y *= x;
              y -= 0.5;
              y /= 1.5;
              y += x;
              y *= 3.0;
              y -= x;
              y /= x;
              return y;
            },
            [](double x) {
              double y = x;
              y += 2.0;
              y *= x;
              y -= 0.5;
              y /= 1.5;
              y += x;
              y *= 3.0;
              y -= x;
              y /= x;
              return y;
            },
            {-1.3, 0.7, 2.0}},
      // x^c, constant c, including a negative base with integer c.
      Unary{"pow(x,2)", [](const Rev& x) { return pow(x, 2.0); }, [](const Jet1& x) { return pow(x, 2.0); },
            [](double x) { return std::pow(x, 2.0); }, {-1.3, 0.3, 1.7}},
      Unary{"pow(x,3)", [](const Rev& x) { return pow(x, 3.0); }, [](const Jet1& x) { return pow(x, 3.0); },
            [](double x) { return std::pow(x, 3.0); }, {-1.3, 0.3, 1.7}},
      Unary{"pow(x,-1)", [](const Rev& x) { return pow(x, -1.0); }, [](const Jet1& x) { return pow(x, -1.0); },
            [](double x) { return std::pow(x, -1.0); }, {-1.3, 0.3, 1.7}},
      Unary{"pow(x,0.5)", [](const Rev& x) { return pow(x, 0.5); }, [](const Jet1& x) { return pow(x, 0.5); },
            [](double x) { return std::pow(x, 0.5); }, {0.3, 1.7}},
      Unary{"pow(x,-1.5)", [](const Rev& x) { return pow(x, -1.5); }, [](const Jet1& x) { return pow(x, -1.5); },
            [](double x) { return std::pow(x, -1.5); }, {0.3, 1.7}},
      // c^y, constant c.
      Unary{"pow(2.5,y)", [](const Rev& y) { return pow(2.5, y); }, [](const Jet1& y) { return pow(2.5, y); },
            [](double y) { return std::pow(2.5, y); }, {-1.0, 0.3, 2.0}},
      Unary{"pow(0.5,y)", [](const Rev& y) { return pow(0.5, y); }, [](const Jet1& y) { return pow(0.5, y); },
            [](double y) { return std::pow(0.5, y); }, {-1.0, 0.3, 2.0}},
      Unary{"pow(0,y)", [](const Rev& y) { return pow(0.0, y); }, [](const Jet1& y) { return pow(0.0, y); },
            [](double y) { return std::pow(0.0, y); }, {0.5, 2.0}},
      // The Eigen-facing helpers: isfinite etc. are tested separately.
  };
}

TEST(RevFunctions, UnaryDerivativesMatchJetAndFiniteDifferences) {
  double worst_jet = 0, worst_fd = 0;
  int checked = 0;
  for (const Unary& u : unary_functions()) {
    for (double x0 : u.points) {
      SCOPED_TRACE(std::string(u.name) + " at " + std::to_string(x0) + (std::signbit(x0) ? " (neg)" : ""));
      Tape tape;
      const Rev x = tape.variable(x0);
      const Rev y = u.rev(x);
      const Jet1 yj = u.jet(Jet1(x0, 0));
      EXPECT_TRUE(close_rel(y.value(), yj.a, 1e-15)) << "value";
      EXPECT_TRUE(close_rel(y.value(), u.dbl(x0), 0)) << "value vs double";
      tape.reverse(y);
      const double d = tape.adjoint(x);
      EXPECT_TRUE(close_rel(d, yj.v[0], 1e-13)) << "vs Jet";
      if (yj.v[0] != 0) worst_jet = std::max(worst_jet, std::abs(d - yj.v[0]) / std::abs(yj.v[0]));
      if (u.fd) {
        const double h = x0 != 0 ? 1e-5 * std::abs(x0) : 1e-6;
        const double fd = (u.dbl(x0 + h) - u.dbl(x0 - h)) / (2 * h);
        EXPECT_TRUE(close_fd(d, fd, 1e-7)) << "vs FD";
        worst_fd = std::max(worst_fd, std::abs(d - fd) / std::max(1.0, std::abs(fd)));
      }
      ++checked;
    }
  }
  RecordProperty("cases", checked);
  RecordProperty("max_rel_err_vs_jet", std::to_string(worst_jet));
  RecordProperty("max_err_vs_fd", std::to_string(worst_fd));
  std::printf("[ unary ] %d cases, max rel. diff vs Jet %.2e, vs FD %.2e\n", checked, worst_jet, worst_fd);
}

// Two-argument operations: ∂/∂x and ∂/∂y vs Jet2 and FD, with both
// arguments variables, and with either one a constant (Rev or double).
struct Binary {
  const char* name;
  Rev (*rev)(const Rev&, const Rev&);
  Jet2 (*jet)(const Jet2&, const Jet2&);
  double (*dbl)(double, double);
  std::vector<std::pair<double, double>> points;
  bool fd = true;
};

#define NEURALSIM_BINARY(NAME, EXPR, ...)                                                                        \
  Binary {                                                                                                       \
    NAME, [](const Rev& x, const Rev& y) -> Rev { using std::atan2; using std::hypot; using std::pow;          \
                                                  using std::fmax; using std::fmin; using std::max;            \
                                                  using std::min; return EXPR; },                                \
        [](const Jet2& x, const Jet2& y) -> Jet2 { using std::atan2; using std::hypot; using std::pow;         \
                                                   using std::fmax; using std::fmin; using std::max;           \
                                                   using std::min; return EXPR; },                               \
        [](double x, double y) -> double { using std::atan2; using std::hypot; using std::pow;                 \
                                           using std::fmax; using std::fmin; using std::max;                   \
                                           using std::min; return EXPR; },                                       \
        __VA_ARGS__                                                                                              \
  }

std::vector<Binary> binary_functions() {
  const std::vector<std::pair<double, double>> generic = {{1.3, -0.7}, {-2.0, 0.4}, {0.5, 3.0}};
  return {
      NEURALSIM_BINARY("x+y", x + y, generic),
      NEURALSIM_BINARY("x-y", x - y, generic),
      NEURALSIM_BINARY("x*y", x * y, generic),
      NEURALSIM_BINARY("x/y", x / y, generic),
      // atan2 in all four quadrants and on the axes.
      NEURALSIM_BINARY("atan2", atan2(y, x),
                       {{2.0, 1.0}, {-2.0, 1.0}, {-2.0, -1.0}, {2.0, -1.0}, {0.0, 0.5}, {0.0, -0.5}, {1.0, 0.0}}),
      // On the branch cut (x < 0, y = ±0) the value jumps: Jet only.
      NEURALSIM_BINARY("atan2 cut", atan2(y, x), {{-1.0, 0.0}, {-1.0, -0.0}}, false),
      NEURALSIM_BINARY("hypot", hypot(x, y), {{3.0, 4.0}, {-1.0, 2.0}, {0.5, -0.1}}),
      NEURALSIM_BINARY("pow(x,y)", pow(x, y), {{0.5, -1.2}, {2.0, 0.7}, {1.3, 3.0}}),
      // Negative base, integer exponent: ∂/∂x finite, ∂/∂y NaN (as Jet).
      NEURALSIM_BINARY("pow(-x,int)", pow(x, y), {{-1.3, 2.0}, {-0.7, 3.0}}, false),
      // Zero base, exponent >= 1 (Jet's cases 2 and 3).
      NEURALSIM_BINARY("pow(0,y)", pow(x, y), {{0.0, 2.0}, {0.0, 1.0}}, false),
      NEURALSIM_BINARY("max", max(x, y), {{1.0, 2.0}, {2.0, 1.0}, {-1.0, -3.0}}),
      NEURALSIM_BINARY("min", min(x, y), {{1.0, 2.0}, {2.0, 1.0}, {-1.0, -3.0}}),
      NEURALSIM_BINARY("fmax", fmax(x, y), {{1.0, 2.0}, {2.0, 1.0}, {-1.0, -3.0}}),
      NEURALSIM_BINARY("fmin", fmin(x, y), {{1.0, 2.0}, {2.0, 1.0}, {-1.0, -3.0}}),
      // Ties: max/min return the first argument (as std::max/min), fmax the
      // second and fmin the first (as Jet's fmax/fmin).
      NEURALSIM_BINARY("max tie", max(x, y), {{1.0, 1.0}}, false),
      NEURALSIM_BINARY("min tie", min(x, y), {{1.0, 1.0}}, false),
      NEURALSIM_BINARY("fmax tie", fmax(x, y), {{1.0, 1.0}}, false),
      NEURALSIM_BINARY("fmin tie", fmin(x, y), {{1.0, 1.0}}, false),
      // A compound expression mixing everything.
      NEURALSIM_BINARY("mix", (x * y + 2.0) / (1.0 + x * x) - exp(y) * sin(x * 3.0) + sqrt(x * x + y * y),
                       generic),
  };
}

TEST(RevFunctions, BinaryDerivativesMatchJetAndFiniteDifferences) {
  double worst_jet = 0, worst_fd = 0;
  int checked = 0;
  for (const Binary& b : binary_functions()) {
    for (auto [x0, y0] : b.points) {
      SCOPED_TRACE(std::string(b.name) + " at (" + std::to_string(x0) + ", " + std::to_string(y0) + ")");
      const Jet2 rj = b.jet(Jet2(x0, 0), Jet2(y0, 1));
      // Both variables.
      {
        Tape tape;
        const Rev x = tape.variable(x0), y = tape.variable(y0);
        const Rev r = b.rev(x, y);
        EXPECT_TRUE(close_rel(r.value(), rj.a, 1e-15));
        tape.reverse(r);
        EXPECT_TRUE(close_rel(tape.adjoint(x), rj.v[0], 1e-13)) << "d/dx";
        EXPECT_TRUE(close_rel(tape.adjoint(y), rj.v[1], 1e-13)) << "d/dy";
        for (int k = 0; k < 2; ++k) {
          const double d = tape.adjoint(k == 0 ? x : y);
          if (rj.v[k] != 0 && std::isfinite(rj.v[k]))
            worst_jet = std::max(worst_jet, std::abs(d - rj.v[k]) / std::abs(rj.v[k]));
        }
        if (b.fd) {
          const double hx = 1e-5 * std::max(std::abs(x0), 1e-2), hy = 1e-5 * std::max(std::abs(y0), 1e-2);
          const double fx = (b.dbl(x0 + hx, y0) - b.dbl(x0 - hx, y0)) / (2 * hx);
          const double fy = (b.dbl(x0, y0 + hy) - b.dbl(x0, y0 - hy)) / (2 * hy);
          EXPECT_TRUE(close_fd(tape.adjoint(x), fx, 1e-7)) << "d/dx vs FD";
          EXPECT_TRUE(close_fd(tape.adjoint(y), fy, 1e-7)) << "d/dy vs FD";
          worst_fd = std::max({worst_fd, std::abs(tape.adjoint(x) - fx) / std::max(1.0, std::abs(fx)),
                               std::abs(tape.adjoint(y) - fy) / std::max(1.0, std::abs(fy))});
        }
      }
      // x variable, y a constant; then x constant, y variable.
      for (int var = 0; var < 2; ++var) {
        const Jet2 sj = var == 0 ? b.jet(Jet2(x0, 0), Jet2(y0)) : b.jet(Jet2(x0), Jet2(y0, 1));
        Tape tape;
        const Rev v = tape.variable(var == 0 ? x0 : y0);
        const Rev r = var == 0 ? b.rev(v, Rev(y0)) : b.rev(Rev(x0), v);
        EXPECT_TRUE(close_rel(r.value(), sj.a, 1e-15));
        tape.reverse(r);
        EXPECT_TRUE(close_rel(tape.adjoint(v), sj.v[var], 1e-13)) << "one constant, d/d" << (var ? 'y' : 'x');
      }
      ++checked;
    }
  }
  std::printf("[ binary ] %d cases, max rel. diff vs Jet %.2e, vs FD %.2e\n", checked, worst_jet, worst_fd);
}

// Rev ⊗ double overloads (not through the Rev(double) conversion) agree with
// the Rev ⊗ Rev-constant path and with Jet.
TEST(RevFunctions, MixedDoubleOverloads) {
  const double x0 = 0.8, c = -1.7;
  const Jet1 xj(x0, 0);
  auto check = [&](const char* what, auto&& fr, auto&& fj) {
    Tape tape;
    const Rev x = tape.variable(x0);
    const Rev r = fr(x);
    const Jet1 rj = fj(xj);
    EXPECT_TRUE(close_rel(r.value(), rj.a, 1e-15)) << what;
    tape.reverse(r);
    EXPECT_TRUE(close_rel(tape.adjoint(x), rj.v[0], 1e-13)) << what;
  };
  check("atan2(x,c)", [&](const Rev& x) { return atan2(x, c); }, [&](const Jet1& x) { return atan2(x, Jet1(c)); });
  check("atan2(c,x)", [&](const Rev& x) { return atan2(c, x); }, [&](const Jet1& x) { return atan2(Jet1(c), x); });
  check("hypot(x,c)", [&](const Rev& x) { return hypot(x, c); }, [&](const Jet1& x) { return hypot(x, Jet1(c)); });
  check("hypot(c,x)", [&](const Rev& x) { return hypot(c, x); }, [&](const Jet1& x) { return hypot(Jet1(c), x); });
  check("fmax(x,c)", [&](const Rev& x) { return fmax(x, c); }, [&](const Jet1& x) { return fmax(x, c); });
  check("fmin(x,c)", [&](const Rev& x) { return fmin(x, c); }, [&](const Jet1& x) { return fmin(x, c); });
  check("fmax(c,x)", [&](const Rev& x) { return fmax(c, x); }, [&](const Jet1& x) { return fmax(c, x); });
  check("fmin(c,x)", [&](const Rev& x) { return fmin(c, x); }, [&](const Jet1& x) { return fmin(c, x); });
  check("max(x,c)", [&](const Rev& x) { return max(x, c); }, [&](const Jet1& x) { return x < c ? Jet1(c) : x; });
  check("min(c,x)", [&](const Rev& x) { return min(c, x); }, [&](const Jet1& x) { return x < c ? x : Jet1(c); });
  // fmax/fmin treat NaN as missing data.
  Tape tape;
  const Rev x = tape.variable(x0);
  const Rev nan(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(fmax(nan, x).index(), x.index());
  EXPECT_EQ(fmax(x, nan).index(), x.index());
  EXPECT_EQ(fmin(nan, x).index(), x.index());
  EXPECT_EQ(fmin(x, nan).index(), x.index());
}

TEST(RevFunctions, ComparisonsAndClassificationUseValues) {
  Tape tape;
  const Rev a = tape.variable(1.0), b = tape.variable(2.0);
  EXPECT_TRUE(a < b && a <= b && b > a && b >= a && a != b && !(a == b));
  EXPECT_TRUE(a < 1.5 && 1.5 < b && a == 1.0 && 1.0 == a && a <= 1.0 && a >= 1.0 && 2.0 >= b && 0.0 != a);
  EXPECT_TRUE(isfinite(a) && !isnan(a) && !isinf(a));
  const Rev inf = a / 0.0, nan = (a - a) / 0.0;
  EXPECT_TRUE(isinf(inf) && !isfinite(inf) && isnan(nan) && !isfinite(nan));
  EXPECT_TRUE(is_finite(a) && !is_finite(inf));
  const size_t n = tape.size();
  (void)(a < b), (void)isfinite(a), (void)floor(a), (void)ceil(b), (void)max(a, b), (void)fmin(a, b);
  EXPECT_EQ(tape.size(), n) << "comparisons, floor/ceil and selections record nothing";
  EXPECT_EQ(floor(a * 1.7).tape(), nullptr) << "floor has a constant result";
}

// ---------------------------------------------------------------------------
// Constants and exactly_zero.

TEST(RevConstants, ConstantOnlyExpressionsRecordNothing) {
  Tape tape;
  const Rev a(0.3), b(-1.2);
  Rev r = sin(a) * b + exp(a) / b - pow(a, b) + atan2(a, b) + sqrt(abs(b)) + hypot(a, b) + tanh(a * 2.0);
  r += a;
  r *= b;
  EXPECT_TRUE(r.is_constant());
  // Eigen on constants: products, norms, solves, quaternions.
  Mat6<Rev> M;
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 6; ++k) M(i, k) = Rev((i == k ? 7.0 : 0.0) + 0.1 * (i + k));
  Vec6<Rev> v = Vec6<Rev>::Ones();
  const Vec6<Rev> x = M.llt().solve(v);
  const Quat<Rev> q = Quat<Rev>(Rev(1), Rev(2), Rev(3), Rev(4)).normalized();
  const Vec3<Rev> w = q * Vec3<Rev>(Rev(1), Rev(0), Rev(0));
  const Rev s = x.norm() + (M * v).squaredNorm() + w.cross(Vec3<Rev>::UnitZ()).norm();
  EXPECT_TRUE(s.is_constant());
  EXPECT_EQ(tape.size(), 0u);
  // The engine: a Model<Rev> cast from double and ABA on constant inputs.
  const Model<double> md = testing::mixed_joint_model();
  const Model<Rev> m = md.cast<Rev>();
  Data<Rev> data(m);
  std::mt19937 rng(1);
  Eigen::VectorXd q0, qd0;
  testing::random_state(md, rng, q0, qd0);
  const VecX<Rev> qr = q0.cast<Rev>(), qdr = qd0.cast<Rev>(), tau = VecX<Rev>::Zero(m.nv);
  aba(m, data, qr, qdr, tau);
  EXPECT_EQ(tape.size(), 0u);
  for (int i = 0; i < m.nv; ++i) EXPECT_TRUE(data.qdd[i].is_constant());
}

TEST(RevConstants, ExactlyZeroSemantics) {
  Tape tape;
  using Traits = ScalarTraits<Rev, void>;
  static_assert(Traits::kHasDerivatives, "Rev carries derivatives");
  EXPECT_TRUE(Traits::exactly_zero(Rev(0.0)));
  EXPECT_TRUE(Traits::exactly_zero(Rev()));
  EXPECT_TRUE(Traits::exactly_zero(Rev(-0.0)));
  EXPECT_FALSE(Traits::exactly_zero(Rev(1e-300)));
  const Rev z = tape.variable(0.0);
  EXPECT_FALSE(Traits::exactly_zero(z)) << "a variable is never exactly zero";
  EXPECT_FALSE(Traits::exactly_zero(z * 2.0));
  EXPECT_TRUE(Traits::exactly_zero(z * 0.0)) << "no dependence left";
  EXPECT_FALSE(exactly_zero(z));
  EXPECT_TRUE(exactly_zero(Rev(0)));
  EXPECT_EQ(Traits::value(z * 2.0 + 3.0), 3.0);
  EXPECT_EQ(to_double(tape.variable(2.5)), 2.5);
}

// The engine's own branches go through these hooks: a floating base with
// constant zero armature takes ABA's direct free-root solve (it leaves the
// factorization incomplete); with the armature a variable whose value is 0,
// exactly_zero is false and the general path is taken, as for a Jet.
TEST(RevConstants, EngineUsesExactlyZero) {
  const Model<double> md = testing::mixed_joint_model();
  std::mt19937 rng(2);
  Eigen::VectorXd q0, qd0;
  testing::random_state(md, rng, q0, qd0);
  for (bool variable_armature : {false, true}) {
    Tape tape;
    Model<Rev> m = md.cast<Rev>();
    if (variable_armature) m.joints[0].dynamics.armature = tape.variable(0.0);
    Data<Rev> data(m);
    VecX<Rev> q(m.nq), qd(m.nv);
    tape.variables(q0.data(), m.nq, q.data());
    tape.variables(qd0.data(), m.nv, qd.data());
    aba(m, data, q, qd, VecX<Rev>::Zero(m.nv).eval());
    EXPECT_EQ(data.factorization_complete, variable_armature);
  }
}

// ---------------------------------------------------------------------------
// Eigen: gradients vs Jet (8 inputs per pass) and FD.

template <class F>
void expect_gradient_matches(const char* what, F&& f, const std::vector<double>& x0, double jet_tol = 1e-13,
                             double fd_tol = 1e-7) {
  double vr = 0, vj = 0;
  const std::vector<double> gr = rev_gradient([&](const std::vector<Rev>& x) { return f(x); }, x0, &vr);
  const std::vector<double> gj = jet_gradient([&](const std::vector<JetN<8>>& x) { return f(x); }, x0, &vj);
  const std::vector<double> gf =
      fd_gradient([&](const std::vector<double>& x) { return f(x); }, x0);
  EXPECT_TRUE(close_rel(vr, vj, 1e-14)) << what << " value";
  double worst_jet = 0, worst_fd = 0, gmax = 0;
  for (double g : gj) gmax = std::max(gmax, std::abs(g));
  // Relative to max(|g_i|, ‖g‖∞): a component that is small by cancellation
  // of larger terms is only accurate to ε times those terms.
  for (size_t i = 0; i < x0.size(); ++i) {
    const double ej = std::abs(gr[i] - gj[i]) / std::max(std::abs(gj[i]), gmax);
    EXPECT_LE(ej, jet_tol) << what << " d/dx" << i << " vs Jet: " << gr[i] << " vs " << gj[i];
    EXPECT_TRUE(close_fd(gr[i], gf[i], fd_tol)) << what << " d/dx" << i << " vs FD";
    worst_jet = std::max(worst_jet, ej);
    worst_fd = std::max(worst_fd, std::abs(gr[i] - gf[i]) / std::max(1.0, std::abs(gf[i])));
  }
  EXPECT_GT(gmax, 1e-3) << what << ": the test must depend on its inputs";
  std::printf("[ %s ] %zu inputs, max diff vs Jet %.2e (rel. to max(|g_i|, |g|max)), vs FD %.2e\n", what,
              x0.size(), worst_jet, worst_fd);
}

std::vector<double> random_vector(int n, unsigned seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

TEST(RevEigen, SpdSolveByLlt) {
  // x = A⁻¹ b, A = B Bᵀ + I (6x6 SPD), L = wᵀx + ‖x‖: inputs B (36), b (6).
  auto f = [](const auto& in) {
    using T = std::decay_t<decltype(in[0])>;
    Eigen::Matrix<T, 6, 6> B;
    Eigen::Matrix<T, 6, 1> b;
    for (int i = 0; i < 36; ++i) B(i % 6, i / 6) = in[i];
    for (int i = 0; i < 6; ++i) b[i] = in[36 + i];
    const Eigen::Matrix<T, 6, 6> A = B * B.transpose() + Eigen::Matrix<T, 6, 6>::Identity();
    const Eigen::Matrix<T, 6, 1> x = A.llt().solve(b);
    Eigen::Matrix<double, 6, 1> w;
    w << 1, -2, 0.5, 3, -1, 0.25;
    return T(x.dot(w.cast<T>()) + x.norm());
  };
  expect_gradient_matches("LLT 6x6", f, random_vector(42, 11));
}

TEST(RevEigen, QuaternionNormalizationAndRotation) {
  // q (4 inputs, not unit) normalized, rotating v (3 inputs); L mixes the
  // rotated vector, the rotation matrix and a quaternion product.
  auto f = [](const auto& in) {
    using T = std::decay_t<decltype(in[0])>;
    const Quat<T> q = Quat<T>(in[0], in[1], in[2], in[3]).normalized();
    const Vec3<T> v(in[4], in[5], in[6]);
    const Vec3<T> r = q * v;
    const Mat3<T> R = q.toRotationMatrix();
    const Quat<T> qq = (q * q).normalized();
    return T(r.x() * 2.0 - r.y() + 3.0 * r.z() + R(0, 1) + qq.w() * qq.x() + q.coeffs().squaredNorm());
  };
  expect_gradient_matches("quaternion", f, {0.9, -0.3, 0.5, 0.2, 1.0, -2.0, 0.5});
}

TEST(RevEigen, CrossProduct) {
  auto f = [](const auto& in) {
    using T = std::decay_t<decltype(in[0])>;
    const Vec3<T> a(in[0], in[1], in[2]), b(in[3], in[4], in[5]);
    const Vec3<T> c = a.cross(b);
    return T(c.x() - 2.0 * c.y() + 0.5 * c.z() + c.norm() + skew(a)(0, 1) * b.dot(c));
  };
  expect_gradient_matches("cross", f, {0.3, -1.2, 0.8, 1.5, 0.4, -0.6});
}

// ---------------------------------------------------------------------------
// The engine on Rev: L = Σ_k ‖q_k‖² over a 200-step rollout, w.r.t. the
// initial state and two physical parameters.

constexpr int kSteps = 200;
constexpr double kDt = 1e-3;

struct RolloutCase {
  std::string name;
  Model<double> model;
  Integrator integrator;
  ParameterRef mass, damping;
  std::vector<double> x0;  // [q0; qd0; mass; damping]
};

RolloutCase make_case(const std::string& name, const Model<double>& model, Integrator integrator,
                      const std::string& mass, const std::string& damping, double damping_value,
                      const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0) {
  RolloutCase c{name, model, integrator, resolve_parameter(model, mass), resolve_parameter(model, damping), {}};
  c.x0.assign(q0.data(), q0.data() + q0.size());
  c.x0.insert(c.x0.end(), qd0.data(), qd0.data() + qd0.size());
  c.x0.push_back(get_parameter(model, c.mass));
  c.x0.push_back(damping_value);
  return c;
}

std::vector<RolloutCase> rollout_cases() {
  std::vector<RolloutCase> cases;
  const Model<double> dp = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const Model<double> mixed = testing::mixed_joint_model();
  std::mt19937 rng(5);
  Eigen::VectorXd q0, qd0;
  testing::random_state(mixed, rng, q0, qd0);
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    const std::string suffix = integ == Integrator::kRK4 ? " rk4" : " euler";
    cases.push_back(make_case("double_pendulum" + suffix, dp, integ, "link.link2.mass", "joint.joint1.damping", 0.1,
                              Eigen::Vector2d(1.2, -0.8), Eigen::Vector2d(0.5, -0.3)));
    cases.push_back(make_case("mixed_joint" + suffix, mixed, integ, "link.elbow.mass", "joint.elbow_joint.damping",
                              0.05, q0, qd0));
  }
  return cases;
}

template <class S>
S rollout_loss(const RolloutCase& c, const std::vector<S>& x) {
  const int nq = c.model.nq, nv = c.model.nv;
  Model<S> m = c.model.template cast<S>();
  set_parameter(m, c.mass, x[nq + nv]);
  set_parameter(m, c.damping, x[nq + nv + 1]);
  Stepper<S> stepper(m, StepOptions{c.integrator, kDt, 1});
  VecX<S> q(nq), qd(nv), u(nv);
  for (int i = 0; i < nq; ++i) q[i] = x[i];
  for (int i = 0; i < nv; ++i) qd[i] = x[nq + i];
  for (int i = 0; i < nv; ++i) u[i] = S(0.3 * std::sin(i + 1.0));
  S L = S(0);
  for (int k = 0; k < kSteps; ++k) {
    stepper.step(q, qd, u, k * kDt);
    L += q.squaredNorm();
  }
  return L;
}

std::vector<double> rollout_jet_gradient(const RolloutCase& c, double* value) {
  return jet_gradient([&](const std::vector<JetN<8>>& x) { return rollout_loss(c, x); }, c.x0, value);
}

std::vector<double> rollout_rev_gradient(const RolloutCase& c, double* value, size_t* nodes = nullptr) {
  Tape tape;
  std::vector<Rev> x(c.x0.size());
  tape.variables(c.x0.data(), x.size(), x.data());
  const Rev L = rollout_loss(c, x);
  *value = L.value();
  if (nodes) *nodes = tape.size();
  tape.reverse(L);
  std::vector<double> g(x.size());
  tape.adjoints(x.data(), x.size(), g.data());
  return g;
}

class RevRollout : public ::testing::TestWithParam<int> {};

TEST_P(RevRollout, GradientMatchesJetAndFiniteDifferences) {
  const RolloutCase c = rollout_cases()[GetParam()];
  SCOPED_TRACE(c.name);
  double v_rev = 0, v_jet = 0;
  size_t nodes = 0;
  const std::vector<double> g_rev = rollout_rev_gradient(c, &v_rev, &nodes);
  const std::vector<double> g_jet = rollout_jet_gradient(c, &v_jet);
  const double v_dbl = rollout_loss(c, c.x0);
  EXPECT_TRUE(close_rel(v_rev, v_dbl, 1e-12)) << "Rev value vs double rollout";
  EXPECT_TRUE(close_rel(v_rev, v_jet, 1e-12)) << "Rev value vs Jet rollout";
  const std::vector<double> g_fd = fd_gradient([&](const std::vector<double>& x) { return rollout_loss(c, x); },
                                               c.x0, 1e-5);
  double gmax = 0;
  for (double g : g_jet) gmax = std::max(gmax, std::abs(g));
  double worst_jet = 0, worst_fd = 0;
  for (size_t i = 0; i < g_rev.size(); ++i) {
    // Relative to the component, with floors of 1e-6·‖g‖∞ (Jet) and 1e-5·‖g‖∞ (FD) for components
    // that (nearly) vanish.
    const double scale_j = std::max(std::abs(g_jet[i]), 1e-6 * gmax);
    const double scale_f = std::max(std::abs(g_fd[i]), 1e-5 * gmax);
    const double ej = std::abs(g_rev[i] - g_jet[i]) / scale_j;
    const double ef = std::abs(g_rev[i] - g_fd[i]) / scale_f;
    EXPECT_LT(ej, 1e-10) << "input " << i << ": rev " << g_rev[i] << " jet " << g_jet[i];
    EXPECT_LT(ef, 1e-6) << "input " << i << ": rev " << g_rev[i] << " fd " << g_fd[i];
    worst_jet = std::max(worst_jet, ej);
    worst_fd = std::max(worst_fd, ef);
  }
  const size_t n = g_rev.size();
  EXPECT_GT(std::abs(g_rev[n - 2]), 1e-6 * gmax) << "the mass must matter";
  EXPECT_GT(std::abs(g_rev[n - 1]), 1e-6 * gmax) << "the damping must matter";
  std::printf("[ %s ] %zu inputs, %zu nodes (%.0f per step), L = %.6g, |g|max = %.3g, max rel. diff vs Jet %.2e, "
              "vs FD %.2e\n",
              c.name.c_str(), n, nodes, double(nodes) / kSteps, v_rev, gmax, worst_jet, worst_fd);
}

std::string rollout_case_name(const ::testing::TestParamInfo<int>& info) {
  static const char* const names[] = {"DoublePendulumEuler", "MixedJointEuler", "DoublePendulumRK4", "MixedJointRK4"};
  return names[info.param];
}
INSTANTIATE_TEST_SUITE_P(Models, RevRollout, ::testing::Range(0, 4), rollout_case_name);

// Two threads, each with its own tape, model and stepper, give bitwise the
// results of one thread (no shared state).
TEST(RevThreads, TwoTapesInTwoThreadsMatchOneThread) {
  const std::vector<RolloutCase> cases = rollout_cases();
  double v0 = 0, v1 = 0;
  const std::vector<double> ref0 = rollout_rev_gradient(cases[1], &v0);
  const std::vector<double> ref1 = rollout_rev_gradient(cases[2], &v1);
  for (int round = 0; round < 2; ++round) {
    std::vector<double> g0, g1;
    double w0 = 0, w1 = 0;
    std::thread t0([&] { g0 = rollout_rev_gradient(cases[1], &w0); });
    std::thread t1([&] { g1 = rollout_rev_gradient(cases[2], &w1); });
    t0.join();
    t1.join();
    EXPECT_EQ(w0, v0);
    EXPECT_EQ(w1, v1);
    EXPECT_EQ(g0, ref0);
    EXPECT_EQ(g1, ref1);
  }
}

// ---------------------------------------------------------------------------
// Tape mechanics.

TEST(RevTape, SeedsAccumulateAndSweepsRepeat) {
  Tape tape;
  const Rev a = tape.variable(2.0), b = tape.variable(3.0);
  const Rev y1 = a * b, y2 = sin(a) + b * b;
  // One sweep for ȳ = (2, -1): x̄ = 2 ∇y1 - ∇y2.
  tape.seed(y1, 2.0);
  tape.seed(y2, -1.0);
  tape.reverse();
  EXPECT_DOUBLE_EQ(tape.adjoint(a), 2 * 3.0 - std::cos(2.0));
  EXPECT_DOUBLE_EQ(tape.adjoint(b), 2 * 2.0 - 2 * 3.0);
  // A new seed after a sweep starts afresh.
  tape.reverse(y2);
  EXPECT_DOUBLE_EQ(tape.adjoint(a), std::cos(2.0));
  EXPECT_DOUBLE_EQ(tape.adjoint(b), 6.0);
  EXPECT_EQ(tape.adjoint(Rev(1.0)), 0.0);
  tape.seed(Rev(5.0), 1.0);  // a constant output: nothing to do
}

TEST(RevTape, ClearKeepsCapacityRewindKeepsPrefix) {
  Tape tape(100);
  EXPECT_EQ(tape.size(), 0u);
  EXPECT_GE(tape.capacity(), 100u);
  const int kLoop = static_cast<int>(tape.capacity());
  const Rev p = tape.variable(1.5);  // a "parameter" kept across segments
  const Rev p2 = p * p;              // a derived model quantity
  const size_t prefix = tape.size();
  EXPECT_EQ(prefix, 2u);
  double total = 0;
  for (int seg = 0; seg < 3; ++seg) {
    tape.rewind(prefix);
    const Rev s = tape.variable(seg + 1.0);
    Rev y = s;
    // 3 nodes per iteration: the tape grows past one block of the arena.
    for (int k = 0; k < kLoop; ++k) y = y * 0.99 + p2 * 0.01;
    tape.reverse(y);
    total += tape.adjoint(p);
    EXPECT_GT(tape.adjoint(s), 0.0);
  }
  // y = s·0.99^K + p²·0.01·Σ 0.99^k; ∂y/∂p = 2p·(1 - 0.99^K) per segment.
  EXPECT_NEAR(total, 3 * 2 * 1.5 * (1 - std::pow(0.99, kLoop)), 1e-12);
  EXPECT_GE(tape.growth_count(), 1u) << "the first segment grew the arena";
  const size_t cap = tape.capacity(), growths = tape.growth_count();
  const Rev last = tape.variable(0.0);  // index beyond what follows the clear
  tape.clear();
  EXPECT_THROW(tape.adjoint(last), std::out_of_range) << "a Rev forgotten by clear()";
  EXPECT_EQ(tape.size(), 0u);
  EXPECT_EQ(tape.capacity(), cap);
  const Rev s = tape.variable(1.0);
  Rev y = s;
  for (int k = 0; k < kLoop; ++k) y = y * 0.5 + 1.0;
  EXPECT_EQ(tape.growth_count(), growths) << "no growth once capacity is reached";
  EXPECT_GT(tape.memory_bytes(), cap * sizeof(TapeNode));
}

TEST(RevTape, MixingTapesIsAnError) {
  Tape t1, t2;
  const Rev a = t1.variable(1.0), b = t2.variable(2.0);
  EXPECT_THROW(a + b, std::logic_error);
  EXPECT_THROW(a * b, std::logic_error);
  EXPECT_THROW(atan2(a, b), std::logic_error);
  EXPECT_THROW(t1.seed(b, 1.0), std::invalid_argument);
  EXPECT_NO_THROW(a + Rev(2.0));
}

// ---------------------------------------------------------------------------
// External function nodes: y = tanh(W x + c) computed by the caller in
// double with its own weights (W, c); the VJP also accumulates ∂L/∂W, ∂L/∂c
// into the caller's buffers. Checked against the same function written with
// Jets (weights as Jet inputs), through two chained calls plus tape ops
// before and after, and with a constant input.
class TanhLayer final : public ExternalFunction {
 public:
  Eigen::Matrix<double, 2, 3> W;
  Eigen::Vector2d c;
  Eigen::Matrix<double, 2, 3> dW = Eigen::Matrix<double, 2, 3>::Zero();
  Eigen::Vector2d dc = Eigen::Vector2d::Zero();
  int calls = 0;

  void forward(const double* x, double* y) const {
    const Eigen::Vector2d z = W * Eigen::Map<const Eigen::Vector3d>(x) + c;
    for (int i = 0; i < 2; ++i) y[i] = std::tanh(z[i]);
  }
  // Records y = F(x) on x's tape.
  void record(Tape& tape, const Rev* x, Rev* y, std::int64_t tag) {
    double xv[3], yv[2];
    for (int k = 0; k < 3; ++k) xv[k] = x[k].value();
    forward(xv, yv);
    tape.external(*this, x, 3, yv, y, 2, tag);
  }
  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    ++calls;
    EXPECT_EQ(call.n_in, 3);
    EXPECT_EQ(call.n_out, 2);
    const Eigen::Map<const Eigen::Vector3d> x(call.x);
    Eigen::Vector2d zbar;
    for (int i = 0; i < 2; ++i) zbar[i] = out_adj[i] * (1 - call.y[i] * call.y[i]);
    Eigen::Map<Eigen::Vector3d> x_bar(in_adj);
    x_bar += W.transpose() * zbar;
    dW += zbar * x.transpose();
    dc += zbar;
  }
};

template <class T>
Eigen::Matrix<T, 2, 1> tanh_layer(const Eigen::Matrix<T, 2, 3>& W, const Eigen::Matrix<T, 2, 1>& c,
                                  const Eigen::Matrix<T, 3, 1>& x) {
  using std::tanh;
  Eigen::Matrix<T, 2, 1> z = W * x + c;
  for (int i = 0; i < 2; ++i) z[i] = tanh(z[i]);
  return z;
}

template <class T>
T network_loss(const T& a, const T& b, const Eigen::Matrix<T, 2, 3>& W, const Eigen::Matrix<T, 2, 1>& c) {
  using std::sin;
  const Eigen::Matrix<T, 3, 1> x1(a * b, sin(a), T(0.7));  // 0.7: a constant input
  const Eigen::Matrix<T, 2, 1> y1 = tanh_layer(W, c, x1);
  const Eigen::Matrix<T, 3, 1> x2(y1[0] + b, y1[1] * a, y1[0] * y1[1]);
  const Eigen::Matrix<T, 2, 1> y2 = tanh_layer(W, c, x2);
  return y2[0] * 3.0 + y2[1] * y2[1] + a * y1[1];
}

TEST(RevExternal, VjpMatchesJetIncludingCallerWeights) {
  TanhLayer layer;
  layer.W << 0.5, -1.2, 0.3, 0.8, 0.1, -0.7;
  layer.c << 0.2, -0.1;
  const double a0 = 0.6, b0 = -1.1;

  Tape tape;
  const Rev a = tape.variable(a0), b = tape.variable(b0);
  const Rev x1[3] = {a * b, sin(a), Rev(0.7)};
  Rev y1[2], y2[2];
  layer.record(tape, x1, y1, 1);
  const Rev x2[3] = {y1[0] + b, y1[1] * a, y1[0] * y1[1]};
  layer.record(tape, x2, y2, 2);
  const Rev L = y2[0] * 3.0 + y2[1] * y2[1] + a * y1[1];
  EXPECT_EQ(tape.num_externals(), 2u);
  tape.reverse(L);
  EXPECT_EQ(layer.calls, 2);

  // Forward mode: inputs (a, b, W (6, column-major), c (2)).
  using J = JetN<10>;
  Eigen::Matrix<J, 2, 3> Wj;
  Eigen::Matrix<J, 2, 1> cj;
  for (int k = 0; k < 6; ++k) Wj(k % 2, k / 2) = J(layer.W(k % 2, k / 2), 2 + k);
  for (int k = 0; k < 2; ++k) cj[k] = J(layer.c[k], 8 + k);
  const J Lj = network_loss(J(a0, 0), J(b0, 1), Wj, cj);
  EXPECT_TRUE(close_rel(L.value(), Lj.a, 1e-15));
  EXPECT_TRUE(close_rel(tape.adjoint(a), Lj.v[0], 1e-13)) << "dL/da";
  EXPECT_TRUE(close_rel(tape.adjoint(b), Lj.v[1], 1e-13)) << "dL/db";
  for (int k = 0; k < 6; ++k) EXPECT_TRUE(close_rel(layer.dW(k % 2, k / 2), Lj.v[2 + k], 1e-13)) << "dL/dW" << k;
  for (int k = 0; k < 2; ++k) EXPECT_TRUE(close_rel(layer.dc[k], Lj.v[8 + k], 1e-13)) << "dL/dc" << k;
  // The external outputs are variables of the tape; rewinding before them
  // drops the calls.
  EXPECT_FALSE(y1[0].is_constant());
  tape.rewind(2);
  EXPECT_EQ(tape.num_externals(), 0u);
}

// A linear map with a known Jacobian, y = A x, and the FD check of the
// whole chain through it.
class LinearMap final : public ExternalFunction {
 public:
  Eigen::Matrix<double, 3, 2> A;
  void vjp(const ExternalCall&, const double* out_adj, double* in_adj) override {
    Eigen::Map<Eigen::Vector2d> x_bar(in_adj);
    x_bar = A.transpose() * Eigen::Map<const Eigen::Vector3d>(out_adj);
  }
};

TEST(RevExternal, KnownJacobian) {
  LinearMap F;
  F.A << 1, 2, -3, 0.5, 4, -1;
  auto loss = [&](double p, double q) {
    const Eigen::Vector3d y = F.A * Eigen::Vector2d(p * p, std::exp(q));
    return y[0] * y[1] + std::sin(y[2]);
  };
  const double p0 = 0.4, q0 = -0.2;
  Tape tape;
  const Rev p = tape.variable(p0), q = tape.variable(q0);
  const Rev x[2] = {p * p, exp(q)};
  const Eigen::Vector3d yv = F.A * Eigen::Vector2d(x[0].value(), x[1].value());
  Rev y[3];
  tape.external(F, x, 2, yv.data(), y, 3);
  const Rev L = y[0] * y[1] + sin(y[2]);
  tape.reverse(L);
  // Analytic: ∂L/∂y = (y1, y0, cos y2), ∂L/∂x = Aᵀ ∂L/∂y, ∂x/∂(p,q) = diag(2p, e^q).
  const Eigen::Vector3d ly(yv[1], yv[0], std::cos(yv[2]));
  const Eigen::Vector2d lx = F.A.transpose() * ly;
  EXPECT_TRUE(close_rel(tape.adjoint(p), lx[0] * 2 * p0, 1e-14));
  EXPECT_TRUE(close_rel(tape.adjoint(q), lx[1] * std::exp(q0), 1e-14));
  const double h = 1e-6;
  EXPECT_TRUE(close_fd(tape.adjoint(p), (loss(p0 + h, q0) - loss(p0 - h, q0)) / (2 * h), 1e-7));
  EXPECT_TRUE(close_fd(tape.adjoint(q), (loss(p0, q0 + h) - loss(p0, q0 - h)) / (2 * h), 1e-7));
}

// An external call whose outputs do not fit in the rest of an arena block
// starts a new block (its outputs' adjoints must be contiguous); the sweep
// crosses the block boundaries around it.
TEST(RevExternal, AcrossArenaBlocks) {
  LinearMap F;
  F.A << 1, 2, -3, 0.5, 4, -1;
  Tape tape;
  tape.reserve(0, 1, 5);  // side arenas for one call with 2 inputs, 3 outputs
  EXPECT_EQ(tape.growth_count(), 0u);
  const int64_t per_block = static_cast<int64_t>(tape.capacity());
  const Rev p = tape.variable(0.3);
  Rev z = p;
  while (static_cast<int64_t>(tape.size()) < per_block - 2) z = z * 1.0001;  // 2 slots left
  const int64_t chain = static_cast<int64_t>(tape.size()) - 1;
  const Rev x[2] = {z, z * z};  // one more node: 1 slot left, 3 outputs follow
  const Eigen::Vector3d yv = F.A * Eigen::Vector2d(x[0].value(), x[1].value());
  Rev y[3];
  const size_t before = tape.size(), growths0 = tape.growth_count();
  tape.external(F, x, 2, yv.data(), y, 3);
  EXPECT_EQ(tape.growth_count(), growths0 + 1) << "the outputs start a new block";
  EXPECT_EQ(y[0].index(), static_cast<int64_t>(before)) << "indices stay contiguous";
  EXPECT_EQ(y[2].index(), y[0].index() + 2);
  Rev L = y[0] * y[1] + y[2];
  for (int k = 0; k < per_block; ++k) L = L * 0.99999 + y[2] * 1e-6;  // a third block
  tape.reverse(L);
  // Analytic: z = p·c^chain, x = (z, z²), L = (y0 y1 + y2)·d^K + y2·1e-6·Σ d^k.
  const double c = 1.0001, d = 0.99999, K = static_cast<double>(per_block);
  const double dK = std::pow(d, K), geo = (1 - dK) / (1 - d) * 1e-6;
  const Eigen::Vector3d Ly(yv[1] * dK, yv[0] * dK, dK + geo);
  const Eigen::Vector2d Lx = F.A.transpose() * Ly;
  const double zv = x[0].value();
  const double dz_dp = std::pow(c, static_cast<double>(chain));
  EXPECT_TRUE(close_rel(tape.adjoint(p), (Lx[0] + Lx[1] * 2 * zv) * dz_dp, 1e-9));
  EXPECT_TRUE(close_rel(tape.adjoint(x[0]), Lx[0] + Lx[1] * 2 * zv, 1e-11));
  // Rewinding into the first block and recording again reuses the blocks.
  const size_t growths = tape.growth_count();
  tape.rewind(10);
  EXPECT_EQ(tape.num_externals(), 0u);
  Rev w = tape.variable(1.0);
  for (int k = 0; k < 2 * per_block; ++k) w = w * 1.0;  // x·1 records nothing
  for (int k = 0; k < 2 * per_block; ++k) w = w * 0.5 + 0.0;
  EXPECT_EQ(tape.growth_count(), growths);
  tape.reverse(w);
  EXPECT_EQ(tape.adjoint(w), 1.0);
}

// ---------------------------------------------------------------------------
// Steady state allocates nothing: segments of k steps of the mixed-joint
// model with a controller u = W [q; q̇] recorded as an external node (its
// weights accumulate outside the tape), seeded, swept, cleared.

using AllocationCounter = testing::AllocationCounter;
bool allocation_counting_active() { return AllocationCounter::available(); }

class LinearController final : public ExternalFunction {
 public:
  Eigen::MatrixXd W;   // nv x (nq + nv)
  Eigen::MatrixXd dW;  // ∂L/∂W, accumulated by vjp
  LinearController(int nq, int nv) : W(Eigen::MatrixXd::Constant(nv, nq + nv, 0.01)), dW(Eigen::MatrixXd::Zero(nv, nq + nv)) {}
  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    const Eigen::Map<const Eigen::VectorXd> x(call.x, call.n_in), ybar(out_adj, call.n_out);
    Eigen::Map<Eigen::VectorXd> x_bar(in_adj, call.n_in);
    x_bar.noalias() = W.transpose() * ybar;
    dW.noalias() += ybar * x.transpose();
  }
};

TEST(RevNoAllocation, SteadyStateSegments) {
  const bool counting = allocation_counting_active();
  const Model<double> md = testing::mixed_joint_model();
  const Model<Rev> m = md.cast<Rev>();
  const int nq = m.nq, nv = m.nv, k_steps = 5;
  for (Integrator integ : {Integrator::kSemiImplicitEuler, Integrator::kRK4}) {
    Stepper<Rev> stepper(m, StepOptions{integ, kDt, 1});
    Tape tape;
    LinearController ctrl(nq, nv);
    std::mt19937 rng(9);
    Eigen::VectorXd q0, qd0;
    testing::random_state(md, rng, q0, qd0);
    VecX<Rev> q(nq), qd(nv), u(nv), q_in(nq), qd_in(nv), x(nq + nv);
    Eigen::VectorXd xv(nq + nv), uv(nv), qbar(nq), qdbar(nv);
    auto segment = [&] {
      tape.clear();
      for (int i = 0; i < nq; ++i) q_in[i] = q[i] = tape.variable(q0[i]);
      for (int i = 0; i < nv; ++i) qd_in[i] = qd[i] = tape.variable(qd0[i]);
      for (int k = 0; k < k_steps; ++k) {
        x << q, qd;
        for (int i = 0; i < nq + nv; ++i) xv[i] = x[i].value();
        uv.noalias() = ctrl.W * xv;
        tape.external(ctrl, x.data(), nq + nv, uv.data(), u.data(), nv, k);
        stepper.step(q, qd, u, k * kDt);
      }
      for (int i = 0; i < nq; ++i) tape.seed(q[i], 2 * q[i].value());
      for (int i = 0; i < nv; ++i) tape.seed(qd[i], 1.0);
      tape.reverse();
      tape.adjoints(q_in.data(), nq, qbar.data());
      tape.adjoints(qd_in.data(), nv, qdbar.data());
    };
    segment();  // warm-up: the arenas grow to their steady size
    const size_t growths = tape.growth_count();
    long allocations = 0;
    {
      AllocationCounter counter;
      for (int s = 0; s < 3; ++s) segment();
      allocations = counter.count();
    }
    if (counting) {
      EXPECT_EQ(allocations, 0) << (integ == Integrator::kRK4 ? "rk4" : "euler");
    }
    EXPECT_EQ(tape.growth_count(), growths);
    EXPECT_TRUE(qbar.allFinite() && qdbar.allFinite() && ctrl.dW.allFinite());
    EXPECT_GT(qbar.norm(), 0.0);
    EXPECT_GT(ctrl.dW.norm(), 0.0);
    std::printf("[ no-alloc %s ] %zu nodes per %d-step segment, %zu bytes held, %ld allocations\n",
                integ == Integrator::kRK4 ? "rk4" : "euler", tape.size(), k_steps, tape.memory_bytes(), allocations);
  }
  // The arena growth was checked above either way; the allocation count
  // only where this file's interposer is the one linked.
  if (!counting)
    GTEST_SKIP() << "heap allocations not counted: allocation counting is not active in this binary "
                    "(sanitizer, non-glibc, or another translation unit, e.g. no_allocation_test.cpp, "
                    "interposes malloc); tape growth was checked";
}

}  // namespace
}  // namespace neuralsim
