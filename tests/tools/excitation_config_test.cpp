// The `excitation:` section (tools/excitation.hpp, docs/simid.md
// "Excitation design"): each bad value is a ConfigError naming the config
// file and the key; the defaults and the model's limits otherwise.
#include <gtest/gtest.h>

#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/tools/excitation.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace excitation_config_test {
namespace {

Model<double> excitation_config_arm() {
  return load_yaml_model(testing::source_path("configs/models/geared_arm.yaml"));
}

ExcitationDesignOptions excitation_config_read(const std::string& yaml) {
  const Config c = Config::parse("excitation:\n" + yaml, "excitation.yaml");
  return read_excitation_options(c.at("excitation"), excitation_config_arm(), 1);
}

TEST(ExcitationConfig, BadValuesNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  limits: {qd: 1, q_lower: [1, 1], q_upper: [0, 2]}\n", "excitation.limits.q_upper"},
      {"  limits: {qd: 1, q_lower: [1, 1]}\n", "excitation.limits.q_lower"},  // no upper bound
      {"  period: .nan\n  limits: {qd: 1}\n", "excitation.period"},
      {"  criterion: a_optimal\n  limits: {qd: 1}\n", "excitation.criterion"},
      {"  period: 1\n  harmonics: 5\n  sample_rate: 10\n  limits: {qd: 1}\n",
       "excitation.sample_rate"},  // < 2L + 1 samples
      {"  limits: {qdd: [1, 0]}\n", "excitation.limits.qdd"},
      {"  limits: {qd: 1, tau_max: 2}\n", "excitation.limits.tau_max"},
      {"  links: [link1, link1]\n  limits: {qd: 1}\n", "excitation.links.1"},
      {"  links: link1\n  limits: {qd: 1}\n", "excitation.links"},
      {"  margin: 0.9\n  limits: {qd: 1}\n", "excitation.margin"},
      {"  restarts: 0\n  limits: {qd: 1}\n", "excitation.restarts"},
      {"  start_at_rest: maybe\n  limits: {qd: 1}\n", "excitation.start_at_rest"},
      {"  joint_terms: [damping, coulomb]\n  limits: {qd: 1}\n", "excitation.joint_terms.1"},
      {"  joint_terms: [damping, damping]\n  limits: {qd: 1}\n", "excitation.joint_terms.1"},
      {"  joint_terms: damping\n  limits: {qd: 1}\n", "excitation.joint_terms"},
      {"  parameters: [gravity.y, link.link1.nope]\n  limits: {qd: 1}\n", "excitation.parameters.1"},
      {"  parameters: [controls.delay]\n  limits: {qd: 1}\n", "excitation.parameters.0"},  // no model quantity
      {"  parameters: [gravity.y, gravity.y]\n  limits: {qd: 1}\n", "excitation.parameters.1"},
      {"  parameters: gravity.y\n  limits: {qd: 1}\n", "excitation.parameters"},
      {"  mount: {wrench: true}\n  limits: {qd: 1}\n", "excitation.mount"},  // a fixed-base model
      {"  links: []\n  limits: {qd: 1}\n", "excitation.links"},              // nothing to identify
  };
  for (const auto& entry : cases) {
    const std::string& yaml = entry.first;
    const std::string& key = entry.second;
    const std::string m = testing::config_or_data_error([&] { excitation_config_read(yaml); }, true);
    EXPECT_NE(m.find("'" + key + "'"), std::string::npos) << yaml << m;
    EXPECT_NE(m.find("excitation.yaml"), std::string::npos) << m;
  }
}

TEST(ExcitationConfig, DefaultsAndOneNumberForEveryJoint) {
  const ExcitationDesignOptions o = excitation_config_read("  noise: 0.1\n  limits: {qd: 2, tau: [4, 0.8]}\n");
  EXPECT_EQ(o.harmonics, 5);
  EXPECT_EQ(o.period, 10);
  EXPECT_TRUE(o.start_at_rest);
  EXPECT_EQ(o.output_rate, o.sample_rate);
  EXPECT_EQ(o.noise, Eigen::Vector2d(0.1, 0.1));
  EXPECT_EQ(o.limits.qd, Eigen::Vector2d(2, 2));
  EXPECT_EQ(o.limits.tau, Eigen::Vector2d(4, 0.8));
  EXPECT_FALSE(std::isfinite(o.limits.qdd[0]));  // the model sets none
  EXPECT_FALSE(std::isfinite(o.limits.q_upper[1]));
  EXPECT_TRUE(o.joint_terms.empty());
  const ExcitationDesignOptions t = excitation_config_read("  joint_terms: [friction, armature]\n  limits: {qd: 2}\n");
  ASSERT_EQ(t.joint_terms.size(), 2u);
  EXPECT_EQ(t.joint_terms[0], ExcitationJointTerm::kFriction);
  EXPECT_EQ(t.joint_terms[1], ExcitationJointTerm::kArmature);
}

}  // namespace
}  // namespace excitation_config_test
}  // namespace neuralsim
