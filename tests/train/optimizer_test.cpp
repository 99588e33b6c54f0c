// Optimizers against mathematics: Adam's first two steps worked out by hand
// from Kingma & Ba's Algorithm 1, decoupled weight decay against its
// closed form, clipping against a 3-4-5 triangle, the schedules against
// their formulas at chosen epochs, and L-BFGS against the known minimum of
// the Rosenbrock function.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/train/optimizer.hpp"
#include "support/allocation_counter.hpp"

namespace neuralsim {
namespace {

using Eigen::VectorXd;

TEST(TrainAdam, FirstTwoStepsByHand) {
  // x0 = (1, −2), g1 = (0.5, −2), g2 = (−1, 0.1), α = 0.1, β1 = 0.9, β2 = 0.999, ε = 1e−8.
  AdamOptions o;
  o.learning_rate = 0.1;
  Adam adam(2, o);
  VectorXd x(2), g1(2), g2(2);
  x << 1, -2;
  g1 << 0.5, -2;
  g2 << -1, 0.1;
  const double eps = 1e-8;

  // Step 1: m = 0.1 g1 = (0.05, −0.2), v = 0.001 g1² = (0.00025, 0.004);
  // m̂ = m / 0.1 = g1, v̂ = v / 0.001 = g1², so the step is α g1 / (|g1| + ε).
  adam.step(x, g1);
  const double x1a = 1 - 0.1 * 0.5 / (0.5 + eps), x1b = -2 + 0.1 * 2 / (2 + eps);
  EXPECT_NEAR(x[0], x1a, 1e-15);
  EXPECT_NEAR(x[1], x1b, 1e-15);
  EXPECT_NEAR(adam.m()[0], 0.05, 1e-16);
  EXPECT_NEAR(adam.v()[1], 0.004, 1e-16);
  EXPECT_EQ(adam.t(), 1);

  // Step 2: m = 0.9 m + 0.1 g2 = (−0.055, −0.17); v = 0.999 v + 0.001 g2² =
  // (0.00124975, 0.004006); bias corrections 1 − 0.9² = 0.19, 1 − 0.999² = 0.001999.
  adam.step(x, g2);
  const double ma = -0.055 / 0.19, mb = -0.17 / 0.19;
  const double va = 0.00124975 / 0.001999, vb = 0.004006 / 0.001999;
  EXPECT_NEAR(x[0], x1a - 0.1 * ma / (std::sqrt(va) + eps), 1e-14);
  EXPECT_NEAR(x[1], x1b - 0.1 * mb / (std::sqrt(vb) + eps), 1e-14);
  EXPECT_NEAR(adam.m()[1], -0.17, 1e-15);
  EXPECT_NEAR(adam.v()[0], 0.00124975, 1e-15);

  // restore() continues from a saved state exactly as the original.
  Adam copy(2, o);
  copy.restore(adam.m(), adam.v(), adam.t());
  VectorXd y = x;
  adam.step(x, g1, 0.05);
  copy.step(y, g1, 0.05);
  EXPECT_EQ(x, y);
  EXPECT_THROW(copy.restore(VectorXd::Zero(3), VectorXd::Zero(2), 1), InvalidArgument);
}

TEST(TrainAdam, WeightDecayIsDecoupled) {
  AdamOptions o;
  o.weight_decay = 0.01;
  Adam adam(3, o);
  VectorXd x(3);
  x << 2, -4, 8;
  const VectorXd x0 = x;
  // Zero gradient: Adam's own update is 0, only x ← x − α λ x remains.
  adam.step(x, VectorXd::Zero(3), 0.1);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(x[i], x0[i] * (1 - 0.1 * 0.01));
  // Masked variables do not decay; a fractional mask scales the decay.
  VectorXd mask(3);
  mask << 1, 0, 0.5;
  adam.set_decay_mask(mask);
  const VectorXd x1 = x;
  adam.step(x, VectorXd::Zero(3), 0.1);
  EXPECT_DOUBLE_EQ(x[0], x1[0] * (1 - 1e-3));
  EXPECT_EQ(x[1], x1[1]);
  EXPECT_DOUBLE_EQ(x[2], x1[2] * (1 - 0.5e-3));
  // Decoupled: the decay is not divided by √v̂ (under a large gradient, L2
  // regularization through the gradient would vanish; this does not).
  Adam a(1, o), b(1, AdamOptions{});
  VectorXd xa(1), xb(1), g(1);
  xa << 5;
  xb << 5;
  g << 1000;
  a.step(xa, g, 0.1);
  b.step(xb, g, 0.1);
  EXPECT_NEAR(xa[0] - xb[0], -0.1 * 0.01 * 5, 1e-12);
  EXPECT_THROW(adam.set_decay_mask(VectorXd::Ones(2)), InvalidArgument);
  EXPECT_THROW(Adam(2, AdamOptions{1e-3, 1.0, 0.999, 1e-8, 0}), InvalidArgument);
}

TEST(TrainAdam, StepAndClippingAllocateNothing) {
  if (!neuralsim::testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc";
  AdamOptions o;
  o.weight_decay = 1e-3;
  Adam adam(1000, o);
  adam.set_decay_mask(VectorXd::Ones(1000));
  VectorXd x = VectorXd::Ones(1000), g = VectorXd::LinSpaced(1000, -1, 1);
  long count = 0;
  {
    neuralsim::testing::AllocationCounter counter;
    for (int i = 0; i < 10; ++i) {
      clip_gradient_norm(g, 0.5);
      adam.step(x, g, 1e-3);
    }
    count = counter.count();
  }
  EXPECT_EQ(count, 0);
}

TEST(TrainClipping, GlobalNorm) {
  VectorXd g(2);
  g << 3, 4;
  EXPECT_EQ(clip_gradient_norm(g, 10), 5);
  EXPECT_EQ(g, (VectorXd(2) << 3, 4).finished());  // below the limit: untouched
  EXPECT_EQ(clip_gradient_norm(g, 0), 5);            // off
  EXPECT_EQ(g[0], 3);
  EXPECT_EQ(clip_gradient_norm(g, 1), 5);
  EXPECT_NEAR(g[0], 0.6, 1e-15);
  EXPECT_NEAR(g[1], 0.8, 1e-15);
  EXPECT_NEAR(g.norm(), 1, 1e-15);
}

TEST(TrainSchedule, ValuesAtChosenEpochs) {
  using Kind = LearningRateSchedule::Kind;
  LearningRateSchedule s;
  s.base = 2;
  EXPECT_EQ(s.at(0, 10), 2);
  EXPECT_EQ(s.at(9, 10), 2);

  s.kind = Kind::kStep;
  s.gamma = 0.5;
  s.step_every = 3;
  EXPECT_EQ(s.at(0, 10), 2);
  EXPECT_EQ(s.at(2, 10), 2);
  EXPECT_EQ(s.at(3, 10), 1);
  EXPECT_EQ(s.at(7, 10), 0.5);

  s.kind = Kind::kExponential;
  s.gamma = 0.9;
  EXPECT_NEAR(s.at(2, 10), 2 * 0.81, 1e-15);

  s.kind = Kind::kCosine;
  s.final_fraction = 0.1;
  EXPECT_NEAR(s.at(0, 10), 2, 1e-15);
  EXPECT_NEAR(s.at(5, 10), 2 * (0.1 + 0.9 * 0.5), 1e-15);  // cos(π/2) = 0
  EXPECT_NEAR(s.at(10, 10), 2 * 0.1, 1e-15);

  // Linear warmup over 2 epochs, then cosine over the remaining 8.
  s.warmup_epochs = 2;
  EXPECT_NEAR(s.at(0, 10), 2.0 / 3, 1e-15);
  EXPECT_NEAR(s.at(1, 10), 4.0 / 3, 1e-15);
  EXPECT_NEAR(s.at(2, 10), 2, 1e-15);
  EXPECT_NEAR(s.at(6, 10), 2 * (0.1 + 0.9 * 0.5), 1e-15);  // e' = 4 of 8

  EXPECT_NO_THROW(s.check());
  s.gamma = 0;
  EXPECT_THROW(s.check(), InvalidArgument);
  s.gamma = 0.5;
  s.base = -1;
  EXPECT_THROW(s.check(), InvalidArgument);
}

// f = (1 − x)² + 100 (y − x²)², minimum 0 at (1, 1).
double lbfgs_rosenbrock(const VectorXd& x, VectorXd* g) {
  const double a = 1 - x[0], b = x[1] - x[0] * x[0];
  if (g) {
    g->resize(2);
    (*g)[0] = -2 * a - 400 * x[0] * b;
    (*g)[1] = 200 * b;
  }
  return a * a + 100 * b * b;
}

TEST(TrainLbfgs, RosenbrockMinimum) {
  const VectorXd x0 = Eigen::Vector2d(-1.2, 1);
  LbfgsOptions o;
  o.max_iterations = 500;
  int calls = 0;
  const LbfgsResult r = minimize_lbfgs(lbfgs_rosenbrock, x0, o, [&](int iteration, double) {
    EXPECT_EQ(iteration, ++calls);  // accepted iterations only, in order
    return true;
  });
  EXPECT_NEAR(r.x[0], 1, 1e-6) << r.termination;
  EXPECT_NEAR(r.x[1], 1, 1e-6) << r.termination;
  EXPECT_LT(r.final_loss, 1e-12);
  EXPECT_EQ(r.iterations, calls);
  EXPECT_GT(r.iterations, 5);
}

TEST(TrainLbfgs, StopsWhenTheCallbackSaysSo) {
  const VectorXd x0 = Eigen::Vector2d(-1.2, 1);
  const double f0 = lbfgs_rosenbrock(x0, nullptr);
  LbfgsOptions o;
  o.max_iterations = 500;
  const LbfgsResult r = minimize_lbfgs(lbfgs_rosenbrock, x0, o, [](int iteration, double) { return iteration < 3; });
  EXPECT_EQ(r.iterations, 3);
  EXPECT_EQ(r.termination, "stopped by the caller");
  EXPECT_LT(r.final_loss, f0);
  EXPECT_EQ(r.final_loss, lbfgs_rosenbrock(r.x, nullptr));  // the result is the point of the last iteration
}

TEST(TrainLbfgs, NonFiniteTrialPointsAndErrors) {
  const VectorXd x0 = Eigen::Vector2d(-1.2, 1);
  LbfgsOptions o;
  o.max_iterations = 500;
  // NaN outside a disc: the line search shortens the step and still converges.
  const auto fenced = [](const VectorXd& x, VectorXd* g) {
    if (x.norm() > 2) return std::nan("");
    return lbfgs_rosenbrock(x, g);
  };
  const LbfgsResult r = minimize_lbfgs(fenced, x0, o);
  EXPECT_NEAR(r.x[0], 1, 1e-6) << r.termination;
  // Not finite at the start: NumericalError.
  EXPECT_THROW(minimize_lbfgs([](const VectorXd&, VectorXd*) { return std::nan(""); }, x0, o), NumericalError);
  // An exception from f reaches the caller with its type.
  int calls = 0;
  EXPECT_THROW(minimize_lbfgs(
                   [&](const VectorXd& x, VectorXd* g) {
                     if (++calls == 5) throw DataError("from f");
                     return lbfgs_rosenbrock(x, g);
                   },
                   x0, o),
               DataError);
  // And so does one from the callback.
  EXPECT_THROW(minimize_lbfgs(lbfgs_rosenbrock, x0, o, [](int, double) -> bool { throw std::logic_error("cb"); }),
               std::logic_error);
}

}  // namespace
}  // namespace neuralsim
