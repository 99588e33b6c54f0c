// The `contact:` config section and the named contact parameters: every
// documented key is read, bad input is a ConfigError that names the key,
// and parameters resolve, read and write by name.
#include <gtest/gtest.h>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/contact_config.hpp"
#include "neuralsim/io/yaml_model.hpp"

namespace neuralsim {
namespace {

Model<double> ball() {
  return parse_yaml_model(("bodies:\n  - name: ball\n    joint: {type: free}\n    mass: 1\n"
                                     "    inertia: [0.004, 0.004, 0.004]\n"
                                     "    geometry: [{type: sphere, radius: 0.1}]\n"),
                          "inline");
}

ContactSettings read(const std::string& yaml) {
  return read_contact_settings(Config::parse(yaml, "test.yaml").at("contact"), ball());
}

TEST(ContactConfig, ReadsEveryKey) {
  const ContactSettings s = read(
      "contact:\n"
      "  model: impulse\n"
      "  ground: {height: 0.5, normal: [0, 0, 2]}\n"
      "  parameters: {stiffness: 1.0e6, friction: 0.9, restitution: 0.3}\n"
      "  friction_model: stribeck\n"
      "  friction_cone: cone\n"
      "  pgs: {iterations: 7, tolerance: 1.0e-4, warm_start: false, erp: 0.1, cfm: 1.0e-6}\n"
      "  margin: 0.02\n"
      "  pairs: {self_collision: true}\n"
      "  joint_limits: false\n"
      "  gradient: taped\n"
      "  point_sets:\n"
      "    - {body: ball, points: [[0, 0, -0.1], [0.1, 0, 0]]}\n"
      "    - {name: grid, body: ball, grid: {min: [-0.02, -0.02, -0.1], max: [0.02, 0.02, -0.1], spacing: 0.02}}\n");
  EXPECT_EQ(s.model, ContactModelType::kImpulse);
  EXPECT_DOUBLE_EQ(s.ground.height, 0.5);
  EXPECT_DOUBLE_EQ(s.ground.normal.z(), 1.0);
  EXPECT_DOUBLE_EQ(s.parameters.stiffness, 1e6);
  EXPECT_DOUBLE_EQ(s.parameters.friction, 0.9);
  EXPECT_DOUBLE_EQ(s.parameters.restitution, 0.3);
  EXPECT_EQ(s.friction_model, FrictionModel::kStribeck);
  EXPECT_EQ(s.friction_cone, FrictionCone::kCone);
  EXPECT_EQ(s.pgs.max_iterations, 7);
  EXPECT_DOUBLE_EQ(s.pgs.tolerance, 1e-4);
  EXPECT_FALSE(s.pgs.warm_start);
  EXPECT_DOUBLE_EQ(s.parameters.erp, 0.1);
  EXPECT_DOUBLE_EQ(s.parameters.cfm, 1e-6);
  EXPECT_DOUBLE_EQ(s.margin, 0.02);
  EXPECT_TRUE(s.self_collision);
  EXPECT_FALSE(s.joint_limits);
  EXPECT_EQ(s.gradient, ContactGradient::kTaped);
  EXPECT_EQ(read("contact: {model: hunt_crossley}\n").gradient, ContactGradient::kNodes);  // the default
  ASSERT_EQ(s.point_sets.size(), 2u);
  EXPECT_EQ(s.point_sets[0].points.size(), 2u);
  EXPECT_EQ(s.point_sets[1].points.size(), 9u);  // 3 x 3 grid, 2 cm apart
  EXPECT_NEAR(s.point_sets[1].points.back().x(), 0.02, 1e-12);
  EXPECT_EQ(read("contact: {ground: false}\n").ground.enabled, false);
}

TEST(ContactConfig, ErrorsNameTheKey) {
  auto message = [](const std::string& yaml) {
    try {
      read(yaml);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("contact: {model: springy}\n").find("springy"), std::string::npos);
  EXPECT_NE(message("contact: {modle: impulse}\n").find("modle"), std::string::npos);
  const std::string p = message("contact: {parameters: {stifness: 1}}\n");
  EXPECT_NE(p.find("stifness"), std::string::npos) << p;
  EXPECT_NE(p.find("contact.stiffness"), std::string::npos) << p;  // lists valid names
  EXPECT_NE(message("contact: {point_sets: [{body: wheel, points: [[0,0,0]]}]}\n").find("wheel"), std::string::npos);
  EXPECT_NE(message("contact: {parameters: {friction: -1}}\n").find("friction"), std::string::npos);
  EXPECT_NE(message("contact: {pgs: {iterations: 0}}\n").find("iterations"), std::string::npos);
  EXPECT_NE(message("contact: {gradient: implicit}\n").find("gradient"), std::string::npos);
}

TEST(ContactParameters, ResolveGetSetByName) {
  const auto names = contact_parameter_names();
  EXPECT_EQ(names.size(), 14u);
  ContactParameters<double> p;
  for (const std::string& n : names) {
    const ContactParameterId id = resolve_contact_parameter(n);
    set_contact_parameter(p, id, 0.125);
    EXPECT_EQ(get_contact_parameter(p, id), 0.125) << n;
  }
  EXPECT_EQ(resolve_contact_parameter("friction"), ContactParameterId::kFriction);
  EXPECT_THROW(resolve_contact_parameter("contact.stickiness"), InvalidArgument);
  EXPECT_FALSE(find_contact_parameter("contact.stickiness"));
}

// The installed system's parameters are live: changing friction by name
// between steps changes the dynamics (what an estimator relies on).
TEST(ContactParameters, SettingByNameChangesTheSimulation) {
  const Model<double> model = ball();
  auto run = [&](double mu) {
    Stepper<double> stepper(model, StepOptions{});
    auto sys = install_contact(read("contact: {model: hunt_crossley, parameters: {stiffness: 1.0e5}}\n"), model,
                               stepper);
    set_contact_parameter(sys->parameters(), resolve_contact_parameter("contact.friction"), mu);
    Eigen::VectorXd q = model.neutral_configuration(), qd = Eigen::VectorXd::Zero(6), u = qd;
    q[2] = 0.0995;
    qd[3] = 1.0;
    for (int k = 0; k < 100; ++k) stepper.step(q, qd, u, k * 1e-3);
    return qd[3];
  };
  EXPECT_GT(run(0.1), run(0.5) + 0.1);
}

}  // namespace
}  // namespace neuralsim
