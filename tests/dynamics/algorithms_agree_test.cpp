// ABA, CRBA and RNEA are three independent algorithms; on every model they
// must agree (support/algorithms_agree.hpp).
#include <gtest/gtest.h>

#include <random>

#include <Eigen/Dense>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "support/algorithms_agree.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

using testing::expect_algorithms_agree;

TEST(AlgorithmsAgree, ShippedYamlModels) {
  for (const auto& path : testing::shipped_yaml_models())
    expect_algorithms_agree(load_yaml_model(testing::source_path(path)));
}

TEST(AlgorithmsAgree, EveryJointType) { expect_algorithms_agree(testing::mixed_joint_model()); }

// ABA solves a floating base without armature directly in world coordinates
// (aba_free_root); a free joint with armature, or one below another body,
// takes the general multi-DoF path. Both must agree with CRBA and RNEA.
TEST(AlgorithmsAgree, FreeJointGeneralPath) {
  Model<double> with_armature = testing::mixed_joint_model();
  with_armature.joints[0].dynamics.armature = 0.03;
  expect_algorithms_agree(with_armature);

  Model<double> nested = testing::mixed_joint_model();
  Joint<double> free;
  free.type = JointType::kFree;
  free.origin = Transform<double>(Mat3<double>::Identity(), Vec3<double>(0.1, -0.2, 0.3));
  nested.add_body("drone", 2, free, Inertia<double>::from_com(0.7, Vec3<double>(0.01, 0.02, -0.03),
                                                              Vec3<double>(0.02, 0.03, 0.04).asDiagonal()));
  expect_algorithms_agree(nested);
}

// A revolute joint about a negative coordinate axis (CRBA and ABA read one
// component of a force for it, with its sign) and a prismatic one along -x.
TEST(AlgorithmsAgree, NegativeCoordinateAxes) {
  Model<double> m = testing::mixed_joint_model();
  std::mt19937 rng(3);
  auto joint = [](JointType t, const Eigen::Vector3d& axis, const Eigen::Vector3d& xyz) {
    Joint<double> j;
    j.type = t;
    j.axis = axis;
    j.origin = Transform<double>(rpy_rotation<double>(0.2, -0.1, 0.4).transpose(), xyz);
    return j;
  };
  m.add_body("foot", 5, joint(JointType::kRevolute, {0, 0, -1}, {0, 0, -0.3}), testing::random_inertia(rng));
  m.add_body("piston", 6, joint(JointType::kPrismatic, {-1, 0, 0}, {0.1, 0, 0}), testing::random_inertia(rng));
  ASSERT_EQ(m.joints[6].coordinate_axis, 2);
  ASSERT_TRUE(m.joints[6].axis_negative);
  expect_algorithms_agree(m);
}

TEST(AlgorithmsAgree, ThirtyLinkChain) {
  expect_algorithms_agree(parse_yaml_model("generator: chain\nlinks: 30\nlength: 0.1\nmass: 0.5\n", "inline"), 2);
}

// RNEA against a textbook closed form: the point-mass pendulum
// τ = m l² q̈ + m g l sin q (Spong, Hutchinson & Vidyasagar, §6.1).
TEST(Rnea, PendulumClosedForm) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  Data<double> data(model);
  const double m = 1.0, l = 1.0, g = 9.81;
  Eigen::VectorXd q(1), qd(1), qdd(1);
  q << 0.7;
  qd << -1.3;
  qdd << 2.1;
  rnea(model, data, q, qd, qdd);
  // Rotating about +y by q moves the bob (0, 0, -l) to (-l sin q, 0, -l cos q);
  // gravity then pulls it back, so the holding torque is +m g l sin q.
  const double expected = m * l * l * qdd[0] + m * g * l * std::sin(q[0]);
  EXPECT_NEAR(data.tau[0], expected, 1e-12);
}

}  // namespace
}  // namespace neuralsim
