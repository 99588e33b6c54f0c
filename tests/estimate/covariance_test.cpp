// Covariances of least-squares estimates (estimate/covariance.hpp), checked
// against the analytic covariance of a linear problem with known noise, and
// by Monte Carlo coverage: with heteroscedastic noise or cluster-correlated
// model mismatch the Gauss–Newton intervals are too narrow, the sandwich and
// bootstrap ones cover the actual error.
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "support/dense_reference.hpp"

namespace neuralsim {
namespace {

// y = X β + e; returns J = X and r = X β̂ − y at the least-squares optimum.
struct LinearFit {
  Eigen::MatrixXd J;
  Eigen::VectorXd r, beta;
};

LinearFit solve(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  LinearFit f;
  f.J = X;
  f.beta = testing::least_squares(X, y);
  f.r = X * f.beta - y;
  return f;
}

CovarianceOptions method(UncertaintyMethod m, int samples = 400, uint64_t seed = 1) {
  CovarianceOptions o;
  o.method = m;
  o.bootstrap_samples = samples;
  o.seed = seed;
  return o;
}

std::vector<int> every_row(int m) {
  std::vector<int> c(m);
  for (int i = 0; i < m; ++i) c[i] = i;
  return c;
}

// Homoscedastic noise σ = 0.3 on a 3-parameter line-plus-quadratic: the
// analytic covariance is σ² (XᵀX)⁻¹; Gauss–Newton, the sandwich (each row
// its own cluster: White's estimator) and the bootstrap all agree with it.
TEST(Covariance, AllMethodsAgreeWithTheAnalyticCovarianceUnderKnownNoise) {
  const int m = 4000;
  const double sigma = 0.3;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::normal_distribution<double> n(0, sigma);
  Eigen::MatrixXd X(m, 3);
  Eigen::VectorXd y(m);
  for (int i = 0; i < m; ++i) {
    const double x = u(rng);
    X.row(i) << 1, x, x * x;
    y[i] = 0.5 - 2 * x + 0.7 * x * x + n(rng);
  }
  const LinearFit f = solve(X, y);
  const Eigen::MatrixXd analytic = sigma * sigma * (X.transpose() * X).inverse();
  const std::vector<int> rows = every_row(m);
  for (const UncertaintyMethod mth :
       {UncertaintyMethod::kGaussNewton, UncertaintyMethod::kSandwich, UncertaintyMethod::kBootstrap}) {
    SCOPED_TRACE(uncertainty_method_name(mth));
    const CovarianceEstimate e = estimate_covariance(f.J, f.r, rows, method(mth, 1000));
    ASSERT_EQ(e.std_error.size(), 3);
    for (int i = 0; i < 3; ++i) {
      // Gauss–Newton: s² estimates σ² to ±√(2/m) ≈ 2 %; sandwich and
      // bootstrap are noisier (fourth moments; 1000 replicates ≈ 2 % each).
      EXPECT_NEAR(e.std_error[i] / std::sqrt(analytic(i, i)), 1.0, mth == UncertaintyMethod::kGaussNewton ? 0.04 : 0.08);
      // Covariances relative to √(Σ_ii Σ_jj): a variance from 1000 bootstrap
      // replicates has a relative s.d. of √(2/1000) = 4.5 %, hence 0.15 (3 s.d.).
      for (int j = 0; j < 3; ++j)
        EXPECT_NEAR(e.covariance(i, j) / std::sqrt(analytic(i, i) * analytic(j, j)),
                    analytic(i, j) / std::sqrt(analytic(i, i) * analytic(j, j)),
                    mth == UncertaintyMethod::kBootstrap ? 0.15 : 0.06);
    }
  }
}

// Coverage of the nominal 95 % interval β̂ ± 1.96·se of the slope, over
// Monte Carlo seeds.
struct Coverage {
  double gauss_newton = 0, sandwich = 0, bootstrap = 0;
};

template <class Generate>
Coverage coverage(int seeds, double truth, Generate generate) {
  Coverage c;
  for (int s = 0; s < seeds; ++s) {
    Eigen::MatrixXd X;
    Eigen::VectorXd y;
    std::vector<int> cluster;
    generate(static_cast<unsigned>(s), X, y, cluster);
    const LinearFit f = solve(X, y);
    const double err = std::abs(f.beta[1] - truth);
    auto covers = [&](UncertaintyMethod m) {
      const CovarianceEstimate e = estimate_covariance(f.J, f.r, cluster, method(m, 200, 1000 + s));
      return err <= 1.96 * e.std_error[1] ? 1.0 : 0.0;
    };
    c.gauss_newton += covers(UncertaintyMethod::kGaussNewton) / seeds;
    c.sandwich += covers(UncertaintyMethod::kSandwich) / seeds;
    c.bootstrap += covers(UncertaintyMethod::kBootstrap) / seeds;
  }
  return c;
}

// Noise whose σ grows as |x|³: Gauss–Newton's slope variance is
// E[σ²]/E[x²], the actual one E[x²σ²]/E[x²]², 21/9 times larger for x
// uniform on [−1, 1], so its 95 % interval covers ≈ P(|Z| < 1.96/1.53) = 80 %.
TEST(Covariance, SandwichAndBootstrapCoverHeteroscedasticErrorsWhereGaussNewtonDoesNot) {
  const int seeds = 300;
  const Coverage c = coverage(seeds, 1.5, [](unsigned seed, Eigen::MatrixXd& X, Eigen::VectorXd& y,
                                              std::vector<int>& cluster) {
    const int m = 300;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::normal_distribution<double> n(0, 1);
    X.resize(m, 2);
    y.resize(m);
    for (int i = 0; i < m; ++i) {
      const double x = u(rng);
      X.row(i) << 1, x;
      y[i] = 0.2 + 1.5 * x + std::pow(std::abs(x), 3) * n(rng);
    }
    cluster = every_row(m);
  });
  RecordProperty("coverage_gauss_newton", std::to_string(c.gauss_newton));
  RecordProperty("coverage_sandwich", std::to_string(c.sandwich));
  RecordProperty("coverage_bootstrap", std::to_string(c.bootstrap));
  // Criterion: a 95 % interval over 300 seeds (binomial s.d. 1.3 %) covers at
  // least 90 % for the robust methods; Gauss–Newton at most 87 %.
  EXPECT_LE(c.gauss_newton, 0.87);
  EXPECT_GE(c.sandwich, 0.90);
  EXPECT_GE(c.bootstrap, 0.90);
}

// Model mismatch shared within a window: 40 windows of 25 samples each carry
// an unmodelled offset u_g (σ 0.5) and sample x around a window centre, so
// the residuals of a window are correlated (as a shooting window's are).
// Gauss–Newton treats 1000 rows as independent and is far too narrow;
// clustering by window covers.
TEST(Covariance, ClusteredSandwichAndBootstrapCoverCorrelatedMismatch) {
  const int seeds = 300;
  const Coverage c = coverage(seeds, -0.8, [](unsigned seed, Eigen::MatrixXd& X, Eigen::VectorXd& y,
                                               std::vector<int>& cluster) {
    const int G = 40, n = 25;
    std::mt19937 rng(seed + 7777);
    std::uniform_real_distribution<double> u(-1, 1);
    std::normal_distribution<double> z(0, 1);
    X.resize(G * n, 2);
    y.resize(G * n);
    cluster.assign(G * n, 0);
    for (int g = 0; g < G; ++g) {
      const double centre = u(rng), offset = 0.5 * z(rng), slope_error = 0.3 * z(rng);
      for (int k = 0; k < n; ++k) {
        const int i = g * n + k;
        const double x = centre + 0.1 * u(rng);
        X.row(i) << 1, x;
        y[i] = 1.0 - 0.8 * x + offset + slope_error * (x - centre) + 0.05 * z(rng);
        cluster[i] = g;
      }
    }
  });
  RecordProperty("coverage_gauss_newton", std::to_string(c.gauss_newton));
  RecordProperty("coverage_sandwich", std::to_string(c.sandwich));
  RecordProperty("coverage_bootstrap", std::to_string(c.bootstrap));
  // Criterion as above with 40 clusters (the sandwich is a little narrow at
  // small G): robust methods ≥ 88 %, Gauss–Newton ≤ 60 %.
  EXPECT_LE(c.gauss_newton, 0.60);
  EXPECT_GE(c.sandwich, 0.88);
  EXPECT_GE(c.bootstrap, 0.88);
}

TEST(Covariance, BootstrapIsIdenticalAtAnyThreadCountAndFollowsTheSeed) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 1);
  const int m = 500;
  Eigen::MatrixXd X(m, 3);
  Eigen::VectorXd y(m);
  for (int i = 0; i < m; ++i) {
    X.row(i) << 1, n(rng), n(rng);
    y[i] = X.row(i).sum() + n(rng);
  }
  const LinearFit f = solve(X, y);
  std::vector<int> cluster(m);
  for (int i = 0; i < m; ++i) cluster[i] = i / 10;
  auto run = [&](int threads, uint64_t seed) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return estimate_covariance(f.J, f.r, cluster, method(UncertaintyMethod::kBootstrap, 300, seed)).covariance;
  };
  const Eigen::MatrixXd one = run(1, 5), two = run(2, 5), four = run(4, 5);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
  EXPECT_NE(one, run(2, 6));
}

TEST(Covariance, UndefinedOrInvalidInputs) {
  Eigen::MatrixXd J(4, 2);
  J << 1, 0, 1, 1, 1, 2, 1, 3;
  const Eigen::VectorXd r = Eigen::Vector4d(0.1, -0.2, 0.2, -0.1);
  // One cluster: the scores sum to zero at the optimum; no robust estimate.
  const CovarianceEstimate one = estimate_covariance(J, r, {0, 0, 0, 0}, method(UncertaintyMethod::kSandwich));
  EXPECT_EQ(one.clusters, 1);
  EXPECT_TRUE(std::isnan(one.std_error[0]));
  EXPECT_THROW(estimate_covariance(J, r, {0, 1}, method(UncertaintyMethod::kSandwich)), InvalidArgument);
  EXPECT_THROW(estimate_covariance(J, Eigen::Vector3d::Zero(), {}, method(UncertaintyMethod::kGaussNewton)),
               InvalidArgument);
  EXPECT_THROW(estimate_covariance(J, r, {0, -1, 1, 1}, method(UncertaintyMethod::kSandwich)), InvalidArgument);
  EXPECT_EQ(clusters_from_sizes({2, 0, 3}), (std::vector<int>{0, 0, 2, 2, 2}));
  // Gauss–Newton needs no clusters.
  EXPECT_TRUE(std::isfinite(estimate_covariance(J, r, {}, method(UncertaintyMethod::kGaussNewton)).std_error[1]));
}

std::string uncertainty_error(const std::string& yaml) {
  try {
    read_uncertainty_options(Config::parse(yaml, "cfg.yaml"), 3);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(CovarianceConfig, ReadsTheUncertaintySectionAndRefusesBadValues) {
  const UncertaintyOptions a =
      read_uncertainty_options(Config::parse("{method: bootstrap, cluster: trajectory, samples: 50, seed: 9}", "c.yaml"), 3);
  EXPECT_EQ(a.covariance.method, UncertaintyMethod::kBootstrap);
  EXPECT_EQ(a.cluster, ClusterBy::kTrajectory);
  EXPECT_EQ(a.covariance.bootstrap_samples, 50);
  EXPECT_EQ(a.covariance.seed, 9u);
  const UncertaintyOptions b = read_uncertainty_options(Config::parse("{}", "c.yaml"), 3);
  EXPECT_EQ(b.covariance.method, UncertaintyMethod::kGaussNewton);
  EXPECT_EQ(b.cluster, ClusterBy::kWindow);
  EXPECT_NE(uncertainty_error("{method: jackknife}").find("method"), std::string::npos);
  EXPECT_NE(uncertainty_error("{method: bootstrap, samples: 1}").find("samples"), std::string::npos);
  EXPECT_NE(uncertainty_error("{method: bootstrap, samples: .nan}").find("samples"), std::string::npos);
  EXPECT_NE(uncertainty_error("{method: sandwich, samples: 100}").find("only the bootstrap"), std::string::npos);
  EXPECT_NE(uncertainty_error("{method: sandwich, cluster: row}").find("cluster"), std::string::npos);
  EXPECT_NE(uncertainty_error("{method: sandwich, clusters: window}").find("clusters"), std::string::npos);
}

}  // namespace
}  // namespace neuralsim
