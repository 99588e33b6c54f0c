// A link inertia in physical coordinates (estimate/inertial_estimate.hpp):
//  * the coordinates of θ = log_cholesky_from_inertia(I) give back the mass,
//    centre of mass and inertia about the centre of mass that built I;
//  * their Jacobian agrees with central differences;
//  * the standard errors are the delta method's sqrt(diag(G Σ Gᵀ)) with G by
//    central differences, and an undetermined coordinate (NaN in Σ) leaves
//    NaN only where it enters: the mass e^{2α} stays known.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "neuralsim/estimate/inertial_estimate.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "support/files.hpp"

namespace neuralsim::inertial_estimate_test {

Inertia<double> known_inertia() {
  Mat3<double> I_com;
  I_com << 0.040, 0.002, -0.001,  //
      0.002, 0.030, 0.003,        //
      -0.001, 0.003, 0.050;
  return Inertia<double>::from_com(2.5, Vec3<double>(0.1, -0.2, 0.05), I_com);
}

Eigen::Matrix<double, 10, 10> central_difference_jacobian(const Eigen::Matrix<double, 10, 1>& theta) {
  Eigen::Matrix<double, 10, 10> G;
  for (int i = 0; i < 10; ++i) {
    const double h = 1e-6;
    Eigen::Matrix<double, 10, 1> p = theta, m = theta;
    p[i] += h;
    m[i] -= h;
    G.col(i) = (inertial_coordinates(p) - inertial_coordinates(m)) / (2 * h);
  }
  return G;
}

TEST(InertialEstimate, CoordinatesGiveBackMassComAndInertiaAboutTheCom) {
  const Inertia<double> I = known_inertia();
  const Eigen::Matrix<double, 10, 1> theta = log_cholesky_from_inertia(I, "test link");
  Eigen::Matrix<double, 10, 10> G;
  const Eigen::Matrix<double, 10, 1> c = inertial_coordinates(theta, &G);
  Eigen::Matrix<double, 10, 1> expected;
  expected << 2.5, 0.1, -0.2, 0.05, 0.040, 0.030, 0.050, 0.002, 0.003, -0.001;
  EXPECT_LT((c - expected).cwiseAbs().maxCoeff(), 1e-12) << c.transpose();
  const Eigen::Matrix<double, 10, 10> fd = central_difference_jacobian(theta);
  EXPECT_LT((G - fd).cwiseAbs().maxCoeff(), 1e-7 * std::max(1.0, fd.cwiseAbs().maxCoeff()));
  for (int j = 1; j < 10; ++j) EXPECT_EQ(G(0, j), 0.0) << "the mass depends on α alone";
}

TEST(InertialEstimate, StandardErrorsAreTheDeltaMethodsAndNaNStaysWhereItEnters) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  model.bodies[1].inertia = known_inertia();
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.length}, {name: link.link2.inertial, transform: log_cholesky}]\n", "t.yaml"),
      "p", model);
  ASSERT_EQ(params.size(), 11);
  std::vector<double> values(11);
  values[0] = 3.0;
  const Eigen::Matrix<double, 10, 1> theta = log_cholesky_from_inertia(model.bodies[1].inertia, "link2");
  for (int k = 0; k < 10; ++k) values[static_cast<size_t>(k + 1)] = theta[k];
  std::mt19937 rng(5);
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::MatrixXd A(11, 11);
  for (int i = 0; i < 11; ++i)
    for (int j = 0; j < 11; ++j) A(i, j) = 0.01 * n01(rng);
  const Eigen::MatrixXd covariance = A * A.transpose();

  const std::vector<InertialEstimate> e = inertial_estimates(model, params, values, covariance);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].link, "link2");
  const Eigen::Matrix<double, 10, 10> G = central_difference_jacobian(theta);
  const Eigen::Matrix<double, 10, 10> S = G * covariance.block(1, 1, 10, 10) * G.transpose();
  for (int k = 0; k < 10; ++k)
    EXPECT_NEAR(e[0].std_error[k], std::sqrt(S(k, k)), 1e-6 * std::sqrt(S(k, k)))
        << InertialEstimate::coordinate_names()[static_cast<size_t>(k)];

  // t1 (coordinate 7) undetermined: the mass is still known, the centre of
  // mass along x is not.
  Eigen::MatrixXd partial = covariance;
  partial.row(8).setConstant(NAN);
  partial.col(8).setConstant(NAN);
  const std::vector<InertialEstimate> p = inertial_estimates(model, params, values, partial);
  EXPECT_NEAR(p[0].std_error[0], e[0].std_error[0], 1e-15);
  EXPECT_TRUE(std::isnan(p[0].std_error[1]));
}

}  // namespace neuralsim::inertial_estimate_test
