// Group lasso against mathematics: the proximal step satisfies the
// optimality conditions of its defining problem (and beats perturbed
// points); proximal gradient on a non-orthogonal regression reaches the
// group lasso's KKT point, all-zero from λ_max on and not below; zeros are exact and survive
// further Adam epochs with the proximal step; a network's input group, when
// zero, cuts that input off, and its output group the whole output.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <Eigen/QR>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/train/group_lasso.hpp"
#include "neuralsim/train/training_loop.hpp"

namespace neuralsim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Groups of 3, 1, 4 and 2 consecutive parameters (10 in all).
std::vector<ParameterGroup> four_groups() {
  std::vector<ParameterGroup> groups;
  int at = 0;
  for (int size : {3, 1, 4, 2}) {
    ParameterGroup g;
    g.name = "g" + std::to_string(groups.size());
    for (int i = 0; i < size; ++i) g.indices.push_back(at++);
    g.weight = std::sqrt(static_cast<double>(size));
    groups.push_back(g);
  }
  return groups;
}

VectorXd part(const VectorXd& x, const ParameterGroup& g) {
  VectorXd p(g.indices.size());
  for (std::size_t k = 0; k < g.indices.size(); ++k) p[static_cast<Eigen::Index>(k)] = x[g.indices[k]];
  return p;
}

TEST(GroupLasso, ProximalStepIsTheMinimizerOfItsProblem) {
  // prox(y) = argmin_x ½‖x − y‖² + t λ Σ c_g ‖x_g‖.
  const auto groups = four_groups();
  VectorXd y(10);
  y << 0.3, -0.2, 0.1, 2.0, 0.05, -0.02, 0.01, 0.03, 1.5, -1.0;
  const double lambda = 0.4, step = 0.5;
  VectorXd x = y;
  const int zeros = group_soft_threshold(x, groups, lambda, step);
  EXPECT_EQ(zeros, 1);  // group 2: ‖y_g‖ = 0.063 ≤ tλc_g = 0.4; group 0 (0.374 > 0.346) survives
  for (const ParameterGroup& g : groups) {
    const VectorXd xg = part(x, g), yg = part(y, g);
    const double t = step * lambda * g.weight;
    if (xg.norm() == 0) {
      EXPECT_LE(yg.norm(), t) << g.name;  // 0 ∈ ∂: ‖y_g‖ ≤ tλc_g
    } else {
      EXPECT_LT((xg - yg + t * xg / xg.norm()).norm(), 1e-14) << g.name;  // stationarity
    }
  }
  auto objective = [&](const VectorXd& z) {
    return 0.5 * (z - y).squaredNorm() + step * group_lasso_penalty(z, groups, lambda);
  };
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0, 1e-3);
  for (int k = 0; k < 200; ++k) {
    VectorXd z = x;
    for (Eigen::Index i = 0; i < z.size(); ++i) z[i] += normal(rng);
    EXPECT_GT(objective(z), objective(x));
  }
}

TEST(GroupLasso, ProximalGradientReachesTheKktPointAndLambdaMaxZerosEverything) {
  // min ½‖A w − b‖² + λ Σ c_g ‖w_g‖, A 30 × 10 (not orthogonal); b depends on
  // groups 0 and 2 only.
  const auto groups = four_groups();
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0, 1);
  MatrixXd A(30, 10);
  for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = normal(rng);
  VectorXd w_true = VectorXd::Zero(10);
  w_true << 1.0, -0.5, 0.8, 0, 0.7, 0.4, -0.6, 0.9, 0, 0;
  w_true.segment(3, 1).setZero();
  w_true.segment(8, 2).setZero();
  VectorXd b = A * w_true;
  for (Eigen::Index i = 0; i < b.size(); ++i) b[i] += 0.05 * normal(rng);
  const double L = symmetric_eigen(A.transpose() * A, false).values.maxCoeff();
  const double lambda_max = group_lasso_lambda_max(-A.transpose() * b, groups);

  auto solve = [&](double lambda) {
    VectorXd w = VectorXd::Zero(10);
    for (int it = 0; it < 20000; ++it) {  // ISTA, step 1/L (Beck & Teboulle 2009)
      w -= (A.transpose() * (A * w - b)) / L;
      group_soft_threshold(w, groups, lambda, 1.0 / L);
    }
    return w;
  };
  for (double lambda : {0.05 * lambda_max, 0.3 * lambda_max}) {
    const VectorXd w = solve(lambda);
    const VectorXd grad = A.transpose() * (A * w - b);
    for (const ParameterGroup& g : groups) {
      const VectorXd wg = part(w, g), gg = part(grad, g);
      if (wg.norm() == 0) {
        EXPECT_LE(gg.norm(), lambda * g.weight * (1 + 1e-9)) << g.name;
      } else {
        EXPECT_LT((gg + lambda * g.weight * wg / wg.norm()).norm(), 1e-8 * lambda_max) << g.name;
      }
    }
    // The groups that carry the signal survive.
    EXPECT_GT(part(w, groups[0]).norm(), 0.0) << lambda;
    EXPECT_GT(part(w, groups[2]).norm(), 0.0) << lambda;
  }
  EXPECT_EQ(solve(lambda_max * (1 + 1e-12)).norm(), 0.0);
  EXPECT_GT(solve(lambda_max * 0.99).norm(), 0.0);
}

TEST(GroupLasso, ZerosAreExactAndSurviveAnAdamEpoch) {
  // Regression on 5 features, two of them pure noise, one group per feature.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0, 1);
  const int n = 200;
  MatrixXd X(n, 5);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = normal(rng);
  VectorXd w_true(5);
  w_true << 1.5, 0, -2.0, 0, 0.8;
  const VectorXd y = X * w_true;
  std::vector<ParameterGroup> groups(5);
  for (int i = 0; i < 5; ++i) groups[static_cast<std::size_t>(i)] = {"feature" + std::to_string(i), {i}, 1.0};
  const double lambda = 0.05;
  AdamEpochOptions o;
  o.epochs = 200;
  o.batch_size = 20;
  o.schedule.base = 0.02;
  o.proximal = [&](VectorXd& x, double step, const Adam&) { group_soft_threshold(x, groups, lambda, step); };
  MinibatchLoss loss = [&](const VectorXd& w, const std::vector<int>& order, std::size_t first, std::size_t last,
                           VectorXd& gradient) {
    gradient.setZero();
    double l = 0;
    for (std::size_t k = first; k < last; ++k) {
      const int i = order[k];
      const double r = X.row(i).dot(w) - y[i];
      l += 0.5 * r * r;
      gradient += r * X.row(i).transpose();
    }
    const double m = static_cast<double>(last - first);
    gradient /= m;
    return l / m;
  };
  TrainingState s;
  s.x = VectorXd::Constant(5, 0.1);
  for (int e = 0; e < o.epochs; ++e) {
    EpochRecord r;
    ASSERT_TRUE(run_adam_epoch(s, o, n, loss, [](const VectorXd&) { return std::nan(""); }, false, r, nullptr));
    if (e == o.epochs - 2) {
      EXPECT_EQ(s.x[1], 0.0);
      EXPECT_EQ(s.x[3], 0.0);
    }
  }
  EXPECT_EQ(s.x[1], 0.0);  // still exactly zero an epoch later
  EXPECT_EQ(s.x[3], 0.0);
  // The others stay near the truth, shrunk towards zero (Adam's per-
  // coordinate steps do not match the prox's uniform threshold, so the
  // shrinkage is not exactly the lasso's λ).
  for (int i : {0, 2, 4}) {
    EXPECT_NEAR(s.x[i], w_true[i], 0.1) << i;
    EXPECT_LT(std::abs(s.x[i]), std::abs(w_true[i])) << i;
  }
}

TEST(GroupLasso, AdamMetricProximalStepReachesTheLassoSolution) {
  // Least squares with orthonormal features (XᵀX / n = I): the lasso
  // solution is the soft threshold of the least-squares weights b,
  // w_i = sign(b_i) max(|b_i| − λ, 0) (Tibshirani 1996), whatever the metric
  // of the proximal steps. With the plain threshold (t = α for every group)
  // Adam stops elsewhere: its steps have the same size whatever the
  // gradient's, the threshold's meaning is lost.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0, 1);
  const int n = 64;
  MatrixXd A(n, 4);
  for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = normal(rng);
  const MatrixXd X = Eigen::HouseholderQR<MatrixXd>(A).householderQ() * MatrixXd::Identity(n, 4) * std::sqrt(n);
  VectorXd b(4);
  b << 0.9, -0.05, -0.6, 0.02;
  const VectorXd y = X * b;
  std::vector<ParameterGroup> groups(4);
  for (int i = 0; i < 4; ++i) groups[static_cast<std::size_t>(i)] = {"w" + std::to_string(i), {i}, 1.0};
  const double lambda = 0.1;
  AdamEpochOptions o;
  o.epochs = 3000;
  o.batch_size = n;  // full batch
  o.schedule.base = 0.003;
  o.proximal = [&](VectorXd& x, double step, const Adam& adam) {
    adam_group_soft_threshold(x, groups, lambda, step, adam);
  };
  MinibatchLoss loss = [&](const VectorXd& w, const std::vector<int>&, std::size_t, std::size_t, VectorXd& gradient) {
    const VectorXd r = X * w - y;
    gradient = X.transpose() * r / n;
    return 0.5 * r.squaredNorm() / n;
  };
  TrainingState s;
  s.x = VectorXd::Constant(4, 0.3);
  for (int e = 0; e < o.epochs; ++e)
    ASSERT_TRUE(run_adam_epoch(s, o, n, loss, [](const VectorXd&) { return std::nan(""); }, false, EpochRecord{},
                               nullptr));
  for (int i = 0; i < 4; ++i) {
    const double lasso = b[i] > 0 ? std::max(b[i] - lambda, 0.0) : std::min(b[i] + lambda, 0.0);
    if (lasso == 0.0)
      EXPECT_EQ(s.x[i], 0.0) << i;
    else
      EXPECT_NEAR(s.x[i], lasso, 2e-3) << i;
  }
}

TEST(GroupLasso, NetworkGroupsCutOffAnInputOrTheWholeOutput) {
  nn::Mlp net(3, {4}, 2, nn::Activation::kTanh);
  std::vector<double> p(static_cast<std::size_t>(net.num_parameters()));
  std::mt19937_64 rng(2);
  std::normal_distribution<double> normal(0, 1);
  for (double& v : p) v = normal(rng);
  const int offset = 7;  // the network's place in a longer parameter vector
  const auto groups = network_groups(net, offset, "drag0");
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[1].name, "drag0.input.1");
  EXPECT_EQ(groups[3].name, "drag0.output");
  EXPECT_EQ(groups[0].indices.size(), 4u);
  EXPECT_EQ(groups[3].indices.size(), 4u * 2u + 2u);
  check_groups(groups, offset + net.num_parameters());

  auto output = [&](const std::vector<double>& params, double x1) {
    nn::Mlp m = net;
    m.set_parameters(params.data());
    nn::Workspace<double> ws(m);
    const double in[3] = {0.3, x1, -0.7};
    double out[2];
    m.forward(in, out, ws);
    return Eigen::Vector2d(out[0], out[1]);
  };
  EXPECT_GT((output(p, 0.5) - output(p, -0.5)).norm(), 1e-3);  // input 1 matters
  VectorXd x = VectorXd::Zero(offset + net.num_parameters());
  x.segment(offset, net.num_parameters()) = Eigen::Map<const VectorXd>(p.data(), net.num_parameters());
  group_soft_threshold(x, {groups[1]}, 1e6, 1.0);
  std::vector<double> cut(x.data() + offset, x.data() + x.size());
  EXPECT_EQ(output(cut, 0.5), output(cut, -0.5));  // exactly independent of input 1
  group_soft_threshold(x, {groups[3]}, 1e6, 1.0);
  std::vector<double> off(x.data() + offset, x.data() + x.size());
  EXPECT_EQ(output(off, 0.5).norm(), 0.0);
}

TEST(GroupLasso, PathAndGroupsAreChecked) {
  const auto path = regularization_path(2.0, 1e-3, 4);
  ASSERT_EQ(path.size(), 4u);
  EXPECT_DOUBLE_EQ(path[0], 2.0);
  EXPECT_NEAR(path[3], 2e-3, 1e-15);
  EXPECT_NEAR(path[1] / path[0], path[2] / path[1], 1e-12);
  EXPECT_THROW(regularization_path(0.0, 0.1, 4), InvalidArgument);
  EXPECT_THROW(regularization_path(1.0, 1.0, 4), InvalidArgument);
  EXPECT_THROW(regularization_path(1.0, 0.1, 1), InvalidArgument);
  EXPECT_THROW(regularization_path(std::nan(""), 0.1, 4), InvalidArgument);
  EXPECT_THROW(check_groups({{"a", {0, 1}, 1.0}, {"b", {1}, 1.0}}, 3), InvalidArgument);  // overlap
  EXPECT_THROW(check_groups({{"a", {3}, 1.0}}, 3), InvalidArgument);                      // out of range
  EXPECT_THROW(check_groups({{"a", {}, 1.0}}, 3), InvalidArgument);                       // empty
  VectorXd x = VectorXd::Ones(3);
  EXPECT_THROW(group_soft_threshold(x, {{"a", {0}, 1.0}}, -1.0, 1.0), InvalidArgument);
}

}  // namespace
}  // namespace neuralsim
