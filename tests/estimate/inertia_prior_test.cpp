// The geometric inertia prior (estimate/inertia_prior.hpp): its distance is
// the log-norm of the generalized eigenvalues of (J, J0), unchanged by a
// change of link frame and of units; its derivative (Daleckii–Krein) and
// the link prior's Jacobian through the parameters agree with central
// differences, also at the prior's centre where every eigenvalue is 1.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include <cmath>
#include <random>

#include "neuralsim/estimate/inertia_prior.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/parameters/named_parameter.hpp"

namespace neuralsim {
namespace inertia_prior_test {
namespace {

// A physically consistent pseudo-inertia from random log-Cholesky
// coordinates (every θ gives one).
Eigen::Matrix4d random_pseudo_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::Matrix<double, 10, 1> th;
  for (int k = 0; k < 10; ++k) th[k] = u(rng);
  return pseudo_inertia(inertia_from_log_cholesky(th));
}

double log_eigen_norm(const Eigen::Matrix4d& J, const Eigen::Matrix4d& J0) {
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::Matrix4d> g(J, J0);
  return std::sqrt(g.eigenvalues().array().log().square().sum());
}

}  // namespace

TEST(GeometricInertiaPrior, DistanceIsTheLogNormOfTheGeneralizedEigenvaluesAndFrameInvariant) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::Matrix4d J = random_pseudo_inertia(rng), J0 = random_pseudo_inertia(rng);
    const double d = GeometricInertiaDistance(J0).distance(J);
    EXPECT_NEAR(d, log_eigen_norm(J, J0), 1e-10 * (1 + d));
    EXPECT_NEAR(GeometricInertiaDistance(J0).distance(J0), 0, 1e-12);
    // A change of link frame (rotation, translation), of length unit (s)
    // and of mass unit (c): J → c X J Xᵀ for both, the distance unchanged.
    Eigen::Matrix4d X = Eigen::Matrix4d::Identity();
    X.topLeftCorner<3, 3>() = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
    X.topRightCorner<3, 1>() = Eigen::Vector3d(u(rng), u(rng), u(rng));
    const double s = 1000, c = 0.001;  // m → mm, kg → t
    X.topRows<3>() *= s;
    const Eigen::Matrix4d Jt = c * X * J * X.transpose(), J0t = c * X * J0 * X.transpose();
    EXPECT_NEAR(GeometricInertiaDistance(J0t).distance(Jt), d, 1e-8 * (1 + d)) << trial;
  }
  // Toward the boundary of physical consistency the distance grows without
  // bound: the mass → 0 with the rest fixed.
  const Eigen::Matrix4d J0 = pseudo_inertia(Inertia<double>::from_com(1.0, Eigen::Vector3d::Zero(), 0.01 * Mat3<double>::Identity()));
  Eigen::Matrix4d J = J0;
  J(3, 3) = 1e-6;
  EXPECT_GT(GeometricInertiaDistance(J0).distance(J), 13);  // |log 1e-6| = 13.8
  J(3, 3) = -1e-6;
  EXPECT_EQ(GeometricInertiaDistance(J0).distance(J), std::numeric_limits<double>::infinity());
}

TEST(GeometricInertiaPrior, ResidualDerivativeMatchesCentralDifferencesAlsoAtTheCentre) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const Eigen::Matrix4d J0 = random_pseudo_inertia(rng);
  const GeometricInertiaDistance dist(J0);
  for (const Eigen::Matrix4d& J : {J0, random_pseudo_inertia(rng)}) {
    std::vector<Eigen::Matrix4d> D;
    for (int k = 0; k < 4; ++k) {
      Eigen::Matrix4d M;
      for (int a = 0; a < 16; ++a) M.data()[a] = u(rng);
      D.push_back(0.05 * (M + M.transpose()));
    }
    Vec10 r;
    std::vector<Vec10> dr;
    ASSERT_TRUE(dist.residual(J, &r, D, &dr));
    EXPECT_NEAR(r.norm(), dist.distance(J), 1e-14);
    for (size_t k = 0; k < D.size(); ++k) {
      const double h = 1e-6;
      Vec10 rp, rm;
      ASSERT_TRUE(dist.residual(J + h * D[k], &rp));
      ASSERT_TRUE(dist.residual(J - h * D[k], &rm));
      const Vec10 fd = (rp - rm) / (2 * h);
      EXPECT_LT((dr[k] - fd).norm(), 1e-7 * (1 + fd.norm())) << "direction " << k << "\n" << dr[k].transpose()
                                                               << "\n" << fd.transpose();
    }
  }
}

// The link prior through the parameters: a log-Cholesky block of one link,
// the mass and a COM entry of the other, at a point away from the model.
TEST(GeometricInertiaPrior, LinkPriorJacobianMatchesCentralDifferences) {
  Model<double> model =
      parse_yaml_model("generator: double_pendulum\nlengths: [0.4, 0.3]\nmasses: [3.0, 2.0]\n", "arm.yaml");
  for (const char* link : {"link1", "link2"})  // the generator's point masses have a singular pseudo-inertia
    for (const char* c : {"xx", "yy", "zz"})
      set_parameter(model, resolve_parameter(model, std::string("link.") + link + ".inertia." + c), 0.02);
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.inertial, transform: log_cholesky}, {name: link.link2.mass},"
                    " {name: link.link2.com.x}, {name: joint.joint1.damping}]",
                    "test.yaml"),
      "p", model);
  ASSERT_EQ(params.size(), 13);
  EXPECT_EQ(inertial_bodies(params), (std::vector<int>{0, 1}));
  std::vector<double> x = params.initial_variables();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  for (double& v : x) v += u(rng);
  for (int body : {0, 1}) {
    const LinkInertiaPrior prior(model, params, body, 4.0);
    EXPECT_EQ(prior.variables().size(), body == 0 ? 10u : 2u);
    std::vector<double> r(10), jac(10 * 13), rp(10), rm(10);
    ASSERT_TRUE(prior.evaluate(x.data(), r.data(), jac.data()));
    for (int i = 0; i < 13; ++i) {
      std::vector<double> xp = x, xm = x;
      const double h = 1e-5;  // the eigensolver's rounding (~1e-13 in r) over 2h stays below 1e-7
      xp[static_cast<size_t>(i)] += h;
      xm[static_cast<size_t>(i)] -= h;
      ASSERT_TRUE(prior.evaluate(xp.data(), rp.data(), nullptr));
      ASSERT_TRUE(prior.evaluate(xm.data(), rm.data(), nullptr));
      for (int k = 0; k < 10; ++k) {
        const double fd = (rp[static_cast<size_t>(k)] - rm[static_cast<size_t>(k)]) / (2 * h);
        EXPECT_NEAR(jac[static_cast<size_t>(k * 13 + i)], fd, 1e-7 * (1 + std::abs(fd))) << body << " " << i << " " << k;
      }
    }
    // The weight: ‖r‖² = w d² with d from the model's pseudo-inertia.
    Model<double> moved = model;
    params.apply(x.data(), moved);
    const double d = GeometricInertiaDistance(pseudo_inertia(model.bodies[static_cast<size_t>(body)].inertia))
                         .distance(pseudo_inertia(moved.bodies[static_cast<size_t>(body)].inertia));
    double r2 = 0;
    for (double v : r) r2 += v * v;
    EXPECT_NEAR(r2, 4.0 * d * d, 1e-12 * (1 + r2));
  }
}

}  // namespace inertia_prior_test
}  // namespace neuralsim
