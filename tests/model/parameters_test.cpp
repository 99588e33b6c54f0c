#include "neuralsim/model/parameters.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

TEST(Parameters, LinkLengthMovesComAndChildJoint) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const ParameterRef l1 = resolve_parameter(model, "link.link1.length");
  EXPECT_DOUBLE_EQ(get_parameter(model, l1), 3.0);
  set_parameter(model, l1, 2.5);
  // At q = 0 the first bob hangs at z = -2.5 and the second at -(2.5 + 4).
  Data<double> data(model);
  forward_kinematics(model, data, model.neutral_configuration());
  const Eigen::Vector3d c1 = body_point_world(data, 0, model.bodies[0].inertia.com());
  const Eigen::Vector3d c2 = body_point_world(data, 1, model.bodies[1].inertia.com());
  EXPECT_NEAR(c1.z(), -2.5, 1e-12);
  EXPECT_NEAR(c2.z(), -6.5, 1e-12);
}

TEST(Parameters, MassKeepsComAndInertiaAboutCom) {
  Model<double> model = testing::mixed_joint_model();
  const Inertia<double> before = model.bodies[2].inertia;
  set_parameter(model, resolve_parameter(model, "link.elbow.mass"), 3.0);
  const Inertia<double>& after = model.bodies[2].inertia;
  EXPECT_DOUBLE_EQ(after.mass, 3.0);
  EXPECT_LT((after.com() - before.com()).norm(), 1e-12);
  EXPECT_LT((after.inertia_about_com() - before.inertia_about_com()).norm(), 1e-12);
}

TEST(Parameters, EveryListedNameRoundTrips) {
  Model<double> model = testing::mixed_joint_model();
  for (const std::string& name : parameter_names(model)) {
    const ParameterRef r = resolve_parameter(model, name);
    const double v = get_parameter(model, r) + 0.125;
    set_parameter(model, r, v);
    EXPECT_NEAR(get_parameter(model, r), v, 1e-12) << name;
  }
}

TEST(Parameters, UnknownNameListsValidOnes) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  try {
    resolve_parameter(model, "link.link1.lenght");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("link.link1.lenght"), std::string::npos);
    EXPECT_NE(msg.find("link.link1.length"), std::string::npos);
  }
}

TEST(Parameterization, LogCholeskyRoundTripAndAlwaysPhysical) {
  std::mt19937 rng(3);
  for (int t = 0; t < 20; ++t) {
    const Inertia<double> I = testing::random_inertia(rng);
    const auto th = log_cholesky_from_inertia(I, "test");
    const Inertia<double> back = inertia_from_log_cholesky<double>(th);
    EXPECT_NEAR(back.mass, I.mass, 1e-10);
    EXPECT_LT((back.h - I.h).norm(), 1e-10);
    EXPECT_LT((back.I_origin - I.I_origin).norm(), 1e-10);
  }
  // Arbitrary θ must give positive mass and principal moments obeying the
  // triangle inequality (physical consistency).
  for (int t = 0; t < 200; ++t) {
    const Eigen::Matrix<double, 10, 1> th = Eigen::Matrix<double, 10, 1>::Random() * 2.0;
    const Inertia<double> I = inertia_from_log_cholesky<double>(th);
    ASSERT_GT(I.mass, 0);
    const Eigen::Vector3d d = symmetric_eigenvalues(I.inertia_about_com());
    EXPECT_GT(d.minCoeff(), 0);
    EXPECT_LE(d[2], d[0] + d[1] + 1e-9);
  }
}

TEST(Parameterization, EveryLogCholeskyPointReadsBackWhatItWrote) {
  // What a fit writes (any θ, including the nearly singular inertias of a
  // fit that collapsed a principal moment: θ's log-diagonal far below the
  // others), a restart reads back as an inertia and converts again; the
  // conversion must accept it and give the same θ to rounding.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int checked = 0;
  for (int t = 0; t < 2000; ++t) {
    Eigen::Matrix<double, 10, 1> th;
    th[0] = 3 * u(rng);                                    // log mass scale
    for (int k = 1; k < 4; ++k) th[k] = -9.0 + 8.0 * (u(rng) + 1) / 2;  // log-diagonal in [-9, -1]
    for (int k = 4; k < 7; ++k) th[k] = 0.5 * u(rng);
    for (int k = 7; k < 10; ++k) th[k] = 0.3 * u(rng);    // COM offsets up to 0.3 m
    const Inertia<double> I = inertia_from_log_cholesky<double>(th);
    Eigen::Matrix<double, 10, 1> back;
    ASSERT_NO_THROW(back = log_cholesky_from_inertia(I, "link")) << th.transpose();
    const Inertia<double> again = inertia_from_log_cholesky<double>(back);
    EXPECT_NEAR(again.mass, I.mass, 1e-12 * I.mass);
    EXPECT_LT((again.I_origin - I.I_origin).norm(), 1e-9 * I.I_origin.norm() + 1e-15);
    ++checked;
  }
  EXPECT_EQ(checked, 2000);
}

TEST(Parameterization, RejectsInconsistentInertia) {
  Inertia<double> bad = Inertia<double>::from_com(1.0, Eigen::Vector3d::Zero(),
                                                  Eigen::Vector3d(1.0, 1.0, 5.0).asDiagonal());
  EXPECT_THROW(log_cholesky_from_inertia(bad, "link.x"), ModelError);
}

}  // namespace
}  // namespace neuralsim
