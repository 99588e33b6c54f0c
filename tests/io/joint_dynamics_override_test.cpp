// `joints:` — per-joint dynamics for models that do not spell out their
// joints: generators, URDF files and shared model files
// (io/yaml_model.hpp apply_joint_dynamics, experiment load_model_section).
// The passive torque that results is checked against the friction laws'
// closed forms (docs/models.md), not against the loader.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {
namespace joint_override_test {

// τ_passive of a one-DoF model at q̇ = v (q = 0).
double passive_torque_at(const Model<double>& model, int dof, double v) {
  Data<double> data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(model.nq), qd = Eigen::VectorXd::Zero(model.nv);
  qd[dof] = v;
  passive_forces(model, data, q, qd);
  return data.tau_passive[dof];
}

std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace joint_override_test
using namespace joint_override_test;

TEST(JointDynamicsOverride, GeneratorJointTakesTheAtanLawAndItsClosedForm) {
  const Model<double> m = parse_yaml_model(
      "model:\n  generator: pendulum\n  joints:\n    joint1: {friction_law: atan, friction: 0.3, "
      "friction_velocity: 0.01, damping: 0.05}\n",
      "pendulum_atan.yaml");
  ASSERT_EQ(m.joints[0].dynamics.friction_law, FrictionLaw::kAtan);
  for (double v : {-0.5, 0.003, 0.02, 2.0}) {
    const double expected = -0.3 * (2.0 / M_PI) * std::atan(v / 0.01) - 0.05 * v;
    EXPECT_NEAR(passive_torque_at(m, 0, v), expected, 1e-12) << "v = " << v;
  }
  // tanh (the default law) differs measurably at v = 0.02: the test can fail.
  const Model<double> t = parse_yaml_model(
      "model:\n  generator: pendulum\n  joints:\n    joint1: {friction: 0.3, friction_velocity: 0.01}\n", "t.yaml");
  EXPECT_GT(std::abs(passive_torque_at(t, 0, 0.02) - passive_torque_at(m, 0, 0.02) - 0.05 * 0.02), 1e-3);
}

TEST(JointDynamicsOverride, StribeckPeakOnAGeneratedDoublePendulumJoint) {
  const Model<double> m = parse_yaml_model(
      "model:\n  generator: double_pendulum\n  joints:\n    joint2: {friction_law: stribeck, friction: 0.2, "
      "friction_static: 0.5, stribeck_velocity: 0.05, friction_velocity: 0.001}\n",
      "dp.yaml");
  EXPECT_EQ(m.joints[0].dynamics.friction_law, FrictionLaw::kTanh);  // joint1 untouched
  const double v = 0.03;
  const double expected = -(0.2 + (0.5 - 0.2) * std::exp(-(v / 0.05) * (v / 0.05))) * std::tanh(v / 0.001);
  EXPECT_NEAR(passive_torque_at(m, 1, v), expected, 1e-12);
  EXPECT_NEAR(passive_torque_at(m, 0, v), 0.0, 1e-15);
}

TEST(JointDynamicsOverride, UrdfModelGetsAFrictionLawArmatureAndOffset) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/cartpole.urdf");
  const std::string cfg = "model:\n  urdf: " + testing::shared_path("models/cartpole.urdf") +
                          "\n  joints:\n    cart_to_pole: {friction_law: atan, friction: 0.1, friction_velocity: "
                          "0.02, armature: 0.004, torque_offset: 0.07}\n";
  const Model<double> m = load_model_section(Config::parse(cfg, "urdf_case.yaml").at("model"));
  int body = -1;
  for (int i = 0; i < m.num_bodies(); ++i)
    if (m.joints[i].name == "cart_to_pole") body = i;
  ASSERT_GE(body, 0);
  const JointDynamics<double>& d = m.joints[body].dynamics;
  EXPECT_EQ(d.friction_law, FrictionLaw::kAtan);
  EXPECT_DOUBLE_EQ(d.armature, 0.004);
  const int pole = m.joints[body].idx_v;
  // τ_passive = −Fc·(2/π)·atan(v/v_s) − offset (the recorded torque is τ + offset).
  const double v = 0.05;
  EXPECT_NEAR(passive_torque_at(m, pole, v), -0.1 * (2.0 / M_PI) * std::atan(v / 0.02) - 0.07, 1e-12);
}

TEST(JointDynamicsOverride, BadEntriesNameTheFileKeyAndChoices) {
  const std::string unknown = thrown([] {
    parse_yaml_model("model:\n  generator: double_pendulum\n  joints:\n    elbow: {friction: 0.1}\n", "dp.yaml");
  });
  EXPECT_NE(unknown.find("dp.yaml:4"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("no joint named 'elbow'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("joints: joint1, joint2"), std::string::npos) << unknown;
  const std::string law = thrown([] {
    parse_yaml_model("model:\n  generator: pendulum\n  joints:\n    joint1: {friction_law: lugre}\n", "p.yaml");
  });
  EXPECT_NE(law.find("model.joints.joint1.friction_law"), std::string::npos) << law;
  EXPECT_NE(law.find("valid: tanh, atan, stribeck"), std::string::npos) << law;
  const std::string stat = thrown([] {
    parse_yaml_model("model:\n  generator: pendulum\n  joints:\n    joint1: {friction_static: 0.4}\n", "p.yaml");
  });
  EXPECT_NE(stat.find("used only with friction_law: stribeck"), std::string::npos) << stat;
  const std::string negative = thrown([] {
    parse_yaml_model("model:\n  generator: pendulum\n  joints:\n    joint1: {friction: -1}\n", "p.yaml");
  });
  EXPECT_NE(negative.find("model.joints.joint1.friction"), std::string::npos) << negative;
  const std::string typo = thrown([] {
    parse_yaml_model("model:\n  generator: pendulum\n  joints:\n    joint1: {frictoin: 0.1}\n", "p.yaml");
  });
  EXPECT_NE(typo.find("did you mean 'friction'"), std::string::npos) << typo;
  const std::string nan = thrown([] {
    parse_yaml_model("model:\n  generator: pendulum\n  joints:\n    joint1: {torque_offset: .nan}\n", "p.yaml");
  });
  EXPECT_NE(nan.find("torque_offset"), std::string::npos) << nan;
}

}  // namespace
}  // namespace neuralsim
