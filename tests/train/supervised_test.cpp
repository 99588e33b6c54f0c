// Supervised regression (train/supervised.hpp): the loss's gradient against
// central finite differences; a linear network trained by minibatch Adam
// reaches the ordinary least-squares optimum of a noisy linear problem
// (normal equations, solved independently by QR); the same bits at any
// thread count; a run resumed from its state equals an uninterrupted one.
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <cmath>
#include <random>

#include "neuralsim/train/supervised.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace supervised_test_detail {

struct SvLinearProblem {
  nn::RowMatrixXd x, y, xv, yv;
  Eigen::MatrixXd A;
  Eigen::VectorXd b;
};

// y = A x + b + noise with inputs of very different scales and offsets (the
// normalization must handle them).
SvLinearProblem sv_make_linear_problem(int n, int nv, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N(0.0, 1.0);
  SvLinearProblem p;
  p.A.resize(2, 3);
  p.A << 1.5, -2.0, 0.3, 0.2, 0.7, -1.1;
  p.b = Eigen::Vector2d(3.0, -40.0);
  const Eigen::Vector3d scale(0.01, 1.0, 100.0), offset(0.5, -2.0, 30.0);
  auto fill = [&](nn::RowMatrixXd& x, nn::RowMatrixXd& y, int rows) {
    x.resize(rows, 3);
    y.resize(rows, 2);
    for (int k = 0; k < rows; ++k) {
      Eigen::Vector3d xi;
      for (int i = 0; i < 3; ++i) xi[i] = offset[i] + scale[i] * N(rng);
      Eigen::Vector3d xs = xi.cwiseQuotient(scale);  // A acts on the scaled inputs
      x.row(k) = xi.transpose();
      y.row(k) = (p.A * xs + p.b).transpose() + 0.1 * Eigen::RowVector2d(N(rng), N(rng));
    }
  };
  fill(p.x, p.y, n);
  fill(p.xv, p.yv, nv);
  return p;
}

nn::Mlp sv_linear_network(const SvLinearProblem& p) {
  nn::Mlp net(3, std::vector<nn::Index>{}, 2, nn::Activation::kTanh, nn::Activation::kIdentity);
  fit_regression_normalization(net, p.x, p.y);
  return net;
}

}  // namespace supervised_test_detail

using supervised_test_detail::sv_linear_network;
using supervised_test_detail::sv_make_linear_problem;

TEST(SupervisedRegression, GradientMatchesCentralDifferences) {
  const auto p = sv_make_linear_problem(40, 10, 1);
  nn::Mlp net(3, std::vector<nn::Index>{5, 4}, 2, nn::Activation::kTanh);
  fit_regression_normalization(net, p.x, p.y);
  std::mt19937_64 rng(3);
  net.initialize(nn::Init::kXavierUniform, rng);
  SupervisedRegression reg(net, p.x, p.y, p.xv, p.yv, SupervisedOptions{});
  Eigen::VectorXd x = reg.initial_state().x, g;
  reg.train_loss(x, &g);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double h = 1e-6;
    Eigen::VectorXd xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    const double fd = (reg.train_loss(xp) - reg.train_loss(xm)) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "parameter " << i;
  }
}

TEST(SupervisedRegression, LinearNetworkReachesTheLeastSquaresOptimum) {
  const auto p = sv_make_linear_problem(256, 64, 2);
  // Ordinary least squares on [x 1] per output (Householder QR).
  Eigen::MatrixXd X1(p.x.rows(), 4);
  X1 << p.x, Eigen::VectorXd::Ones(p.x.rows());
  const Eigen::MatrixXd beta = testing::least_squares(X1, p.y);  // 4 x 2
  SupervisedOptions o;
  o.epochs = 400;
  o.batch_size = 32;
  o.schedule.kind = LearningRateSchedule::Kind::kCosine;
  o.schedule.base = 0.03;
  o.schedule.final_fraction = 0.0;
  o.seed = 5;
  SupervisedRegression reg(sv_linear_network(p), p.x, p.y, p.xv, p.yv, o);
  TrainingState s = reg.initial_state();
  reg.run(s, {});
  ASSERT_EQ(s.epoch, o.epochs);
  const nn::Mlp fit = reg.network_at(s.x);
  nn::Workspace<double> ws(fit);
  // The trained network's affine map equals the LS fit: compare predictions
  // on the training inputs against X1·β (relative to the targets' spread).
  double worst = 0;
  Eigen::Vector2d y;
  for (Eigen::Index k = 0; k < p.x.rows(); ++k) {
    fit.forward(p.x.row(k).data(), y.data(), ws);
    const Eigen::RowVector2d ls = X1.row(k) * beta;
    for (int j = 0; j < 2; ++j) worst = std::max(worst, std::abs(y[j] - ls[j]) / fit.output_scale()[j]);
  }
  EXPECT_LT(worst, 2e-3);
  // And the training RMSE is the noise level (0.1), which LS cannot beat.
  const Eigen::VectorXd rmse = reg.rmse(s.x, false);
  EXPECT_NEAR(rmse[0], 0.1, 0.02);
  EXPECT_NEAR(rmse[1], 0.1, 0.02);
  // A zero network (predicting the mean) is much worse: the test can fail.
  EXPECT_GT(reg.rmse(Eigen::VectorXd::Zero(s.x.size()), false).minCoeff(), 1.0);
}

TEST(SupervisedRegression, SameBitsAtAnyThreadCountAndAfterResume) {
  const auto p = sv_make_linear_problem(300, 50, 3);
  nn::Mlp net(3, std::vector<nn::Index>{16}, 2, nn::Activation::kTanh);
  fit_regression_normalization(net, p.x, p.y);
  std::mt19937_64 rng(4);
  net.initialize(nn::Init::kXavierUniform, rng);
  SupervisedOptions o;
  o.epochs = 12;
  o.batch_size = 50;  // several parallel blocks per minibatch
  o.schedule.base = 0.01;
  o.seed = 9;
  SupervisedRegression reg(net, p.x, p.y, p.xv, p.yv, o);
  auto train = [&](int threads) {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, threads);
    TrainingState s = reg.initial_state();
    reg.run(s, {});
    return s;
  };
  const TrainingState one = train(1), two = train(2);
  ASSERT_EQ(one.x.size(), two.x.size());
  for (Eigen::Index i = 0; i < one.x.size(); ++i) EXPECT_EQ(one.x[i], two.x[i]) << i;
  EXPECT_EQ(one.best_epoch, two.best_epoch);
  // Interrupted after 5 epochs (the state copied, as a checkpoint would
  // hold it), then resumed.
  TrainingState part = reg.initial_state();
  reg.run(part, [](const TrainingState& s) { return s.epoch < 5; });
  ASSERT_EQ(part.epoch, 5);
  TrainingState resumed = part;
  reg.run(resumed, {});
  for (Eigen::Index i = 0; i < one.x.size(); ++i) EXPECT_EQ(one.x[i], resumed.x[i]) << i;
  // The loss went down.
  EXPECT_LT(one.history.back().validation_loss, 0.5 * reg.validation_loss(reg.initial_state().x));
}

TEST(SupervisedRegression, StopFlagLeavesTheStateUnchanged) {
  const auto p = sv_make_linear_problem(64, 8, 4);
  SupervisedRegression reg(sv_linear_network(p), p.x, p.y, p.xv, p.yv, SupervisedOptions{});
  TrainingState s = reg.initial_state();
  std::atomic<bool> stop{true};
  EXPECT_FALSE(reg.run_epoch(s, &stop));
  EXPECT_EQ(s.epoch, 0);
  EXPECT_TRUE(s.history.empty());
}

}  // namespace neuralsim
