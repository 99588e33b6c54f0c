// Gradient check (grad/gradient_check.hpp) on functions with known exact
// gradients: the Rosenbrock function passes, a gradient wrong by 1 % on one
// coordinate is flagged on exactly that coordinate, and a cost whose
// differences cannot resolve the gradient (noise) is reported unresolved
// rather than failed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/grad/gradient_check.hpp"

namespace neuralsim {
namespace {

// f(x) = Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)², exact gradient by hand.
double rosenbrock(const Eigen::VectorXd& x, Eigen::VectorXd* g) {
  double f = 0;
  if (g) g->setZero(x.size());
  for (Eigen::Index i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    f += 100 * a * a + b * b;
    if (g) {
      (*g)[i] += -400 * a * x[i] - 2 * b;
      (*g)[i + 1] += 200 * a;
    }
  }
  return f;
}

const auto kRosenbrockCost = [](const Eigen::VectorXd& x, double* f) {
  *f = rosenbrock(x, nullptr);
  return true;
};

std::vector<std::string> names_of(Eigen::Index n) {
  std::vector<std::string> names;
  for (Eigen::Index i = 0; i < n; ++i) names.push_back("x" + std::to_string(i));
  return names;
}

TEST(GradientCheck, ExactGradientPasses) {
  Eigen::VectorXd x(5);
  x << -1.2, 1.0, 0.3, 25.0, -4e-3;  // magnitudes from 1e-3 to 25
  Eigen::VectorXd g;
  rosenbrock(x, &g);
  const GradientCheckSummary s = check_gradient(kRosenbrockCost, x, names_of(5), {{"exact", g}});
  EXPECT_TRUE(s.passed) << s.report();
  EXPECT_EQ(s.disagreeing, 0);
  EXPECT_EQ(s.unresolved, 0) << s.report();
  EXPECT_LT(s.max_relative_error, 1e-7) << s.report();  // f ~ 4e7: rounding ~1e-8 relative
  EXPECT_EQ(s.cost_evaluations, 1 + 4 * 5);
  for (const GradientCheckRow& r : s.rows) EXPECT_NEAR(r.central_difference, g[r.index], 1e-7 * std::abs(g[r.index]));
}

TEST(GradientCheck, DerivativesLostInRoundingAreUnresolved) {
  // f ≈ 4e15 at x3 = 2500: f's rounding (~1) swamps ∂f/∂x0 = −216 at h ≈ 7e-4,
  // so the differences cannot tell (they read 0): unresolved, never failed.
  Eigen::VectorXd x(5);
  x << -1.2, 1.0, 0.3, 2.5e3, -4e-4;
  Eigen::VectorXd g;
  rosenbrock(x, &g);
  const GradientCheckSummary s = check_gradient(kRosenbrockCost, x, names_of(5), {{"exact", g}});
  EXPECT_TRUE(s.passed) << s.report();
  EXPECT_EQ(s.rows[0].verdict, GradientCheckVerdict::kUnresolved) << s.report();
  EXPECT_EQ(s.rows[3].verdict, GradientCheckVerdict::kAgrees) << s.report();
}

TEST(GradientCheck, FlagsExactlyTheWrongCoordinate) {
  Eigen::VectorXd x(4);
  x << 0.5, -0.7, 1.3, 0.2;
  Eigen::VectorXd g;
  rosenbrock(x, &g);
  Eigen::VectorXd wrong = g;
  wrong[2] *= 1.01;
  const GradientCheckSummary s = check_gradient(kRosenbrockCost, x, names_of(4), {{"exact", g}, {"wrong", wrong}});
  EXPECT_FALSE(s.passed);
  EXPECT_EQ(s.disagreeing, 1);
  for (const GradientCheckRow& r : s.rows) {
    EXPECT_EQ(r.verdict == GradientCheckVerdict::kDisagrees, r.index == 2) << s.report();
    EXPECT_LT(r.relative_error[0], 1e-8);
  }
  EXPECT_NEAR(s.rows[2].relative_error[1], 0.01 / 1.01, 1e-6);
  EXPECT_NE(s.report().find("DISAGREES"), std::string::npos);
}

TEST(GradientCheck, ChecksOnlyTheChosenCoordinates) {
  Eigen::VectorXd x = Eigen::VectorXd::Constant(6, 0.4), g;
  rosenbrock(x, &g);
  g[0] = 0;  // wrong, but not checked
  GradientCheckOptions o;
  o.coordinates = {3, 5};
  const GradientCheckSummary s = check_gradient(kRosenbrockCost, x, names_of(6), {{"g", g}}, o);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].name, "x3");
  EXPECT_TRUE(s.passed);
}

TEST(GradientCheck, NoisyCostIsUnresolvedNotFailed) {
  // A cost with noise of 1e-9 per evaluation (an inner solver's tolerance):
  // at h ≈ 7e-4 the differences carry errors ~1e-6, more than a 1e-5
  // relative tolerance on a gradient of 2e-5 can tell. Over 200 noise draws
  // 199 rows were unresolved and 1 disagreed (a tail of the estimate);
  // draw 7 is one of the unresolved ones.
  const auto noisy = [](const Eigen::VectorXd& x, double* f) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x[0], sizeof bits);
    const double uniform = static_cast<double>(splitmix64(bits ^ 7) >> 11) * 0x1.0p-53;  // [0, 1)
    *f = 1e-3 * x[0] * x[0] + 1e-9 * (2 * uniform - 1);
    return true;
  };
  Eigen::VectorXd x(1);
  x << 0.01;
  Eigen::VectorXd g(1);
  g << 2e-3 * 0.01;
  const GradientCheckSummary s = check_gradient(noisy, x, {"p"}, {{"g", g}});
  EXPECT_GT(s.rows[0].relative_error[0], 1e-3) << s.report();  // the differences are far off
  EXPECT_EQ(s.rows[0].verdict, GradientCheckVerdict::kUnresolved) << s.report();
  EXPECT_TRUE(s.passed);
  EXPECT_EQ(s.unresolved, 1);
}

TEST(GradientCheck, FailedEvaluationIsUnresolved) {
  const auto fails_right = [](const Eigen::VectorXd& x, double* f) {
    *f = x[0] * x[0];
    return x[0] <= 1.0;
  };
  Eigen::VectorXd x(1), g(1);
  x << 1.0;
  g << 2.0;
  const GradientCheckSummary s = check_gradient(fails_right, x, {"p"}, {{"g", g}});
  EXPECT_EQ(s.rows[0].verdict, GradientCheckVerdict::kUnresolved);
  EXPECT_TRUE(std::isnan(s.rows[0].central_difference));
}

TEST(GradientCheck, RefusesBadArguments) {
  Eigen::VectorXd x(2), g(3);
  x << 1, 2;
  g << 1, 2, 3;
  EXPECT_THROW(check_gradient(kRosenbrockCost, x, {"a", "b"}, {{"g", g}}), InvalidArgument);
  EXPECT_THROW(check_gradient(kRosenbrockCost, x, {"a"}, {}), InvalidArgument);
  GradientCheckOptions o;
  o.coordinates = {2};
  EXPECT_THROW(check_gradient(kRosenbrockCost, x, {"a", "b"}, {}, o), InvalidArgument);
  o = {};
  o.tolerance = 0;
  EXPECT_THROW(check_gradient(kRosenbrockCost, x, {"a", "b"}, {}, o), InvalidArgument);
  x[0] = std::nan("");
  EXPECT_THROW(check_gradient(kRosenbrockCost, x, {"a", "b"}, {}), InvalidArgument);
}

}  // namespace
}  // namespace neuralsim
