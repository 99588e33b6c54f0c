// Inertia consistency (model/inertia_check.hpp): a planar chain accepts the
// lumped links published planar models give (inertia about the joint below
// m·r²) because its joint-space inertia is exactly the lumped one (checked
// against the closed form); any other model refuses them; and rounding is
// judged against the model's inertias, not a link's own zero.
#include "neuralsim/model/inertia_check.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {
namespace {

// A double pendulum about y given as lumped planar parameters: masses m1,
// m2, COM distances a1, a2, link length L1, inertias about the joints J1,
// J2 (ixx = iyy, a rod, with inertia_about: origin). J2 = 0.6·m2·a2²: about its COM
// link 2 has J2 − m2·a2² < 0, no 3-D body.
struct Lumped {
  double m1 = 1.2, m2 = 0.8, a1 = 0.15, a2 = 0.2, L1 = 0.3;
  double J1 = 0.04, J2 = 0.6 * 0.8 * 0.2 * 0.2;
  std::string yaml(const std::string& axis2 = "[0, 1, 0]") const {
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "name: lumped\n"
                  "bodies:\n"
                  "  - {name: link1, joint: {name: joint1, type: revolute, axis: [0, 1, 0]}, mass: %.17g,\n"
                  "     com: [0, 0, %.17g], inertia_about: origin, inertia: {ixx: %.17g, iyy: %.17g}}\n"
                  "  - {name: link2, parent: link1, joint: {name: joint2, type: revolute, axis: %s,\n"
                  "     origin: {xyz: [0, 0, %.17g]}}, mass: %.17g, com: [0, 0, %.17g], inertia_about: origin,\n"
                  "     inertia: {ixx: %.17g, iyy: %.17g}}\n",
                  m1, -a1, J1, J1, axis2.c_str(), -L1, m2, -a2, J2, J2);
    return buf;
  }
};

TEST(PlanarChain, AxisOfParallelRevoluteAndCrossingPrismaticJoints) {
  const Lumped l;
  const std::optional<Eigen::Vector3d> a = planar_axis(parse_yaml_model(l.yaml(), "m.yaml"));
  ASSERT_TRUE(a);
  EXPECT_LT((a->cwiseAbs() - Eigen::Vector3d::UnitY()).norm(), 1e-12);
  // A cart-pole: prismatic along x, hinge about y.
  EXPECT_TRUE(planar_axis(parse_yaml_model("generator: cartpole", "c.yaml")));
  // Skew axes, a ball joint, or no revolute joint: not planar.
  const Model<double> skew = parse_yaml_model(
      "bodies: [{name: a, joint: {type: revolute, axis: [0, 1, 0]}, mass: 1, inertia: [0.1, 0.1, 0.1]},"
      " {name: b, parent: a, joint: {type: revolute, axis: [1, 0, 0]}, mass: 1, inertia: [0.1, 0.1, 0.1]}]",
      "s.yaml");
  EXPECT_FALSE(planar_axis(skew));
  EXPECT_FALSE(planar_axis(parse_yaml_model(
      "bodies: [{name: a, joint: {type: spherical}, mass: 1, inertia: [0.1, 0.1, 0.1]}]", "b.yaml")));
  EXPECT_FALSE(planar_axis(parse_yaml_model(
      "bodies: [{name: a, joint: {type: prismatic, axis: [1, 0, 0]}, mass: 1}]", "p.yaml")));
}

// M(q) of the lumped planar double pendulum (e.g. Spong, Hutchinson &
// Vidyasagar, Robot Modeling and Control, §7.4.1, with the inertias taken
// about the joints): M11 = J1 + m2·L1² + J2 + 2·m2·L1·a2·cos q2,
// M12 = J2 + m2·L1·a2·cos q2, M22 = J2.
TEST(PlanarChain, LumpedLinksGiveTheLumpedJointSpaceInertia) {
  const Lumped l;
  const Model<double> model = parse_yaml_model(l.yaml(), "m.yaml");
  EXPECT_THROW(model.validate(InertiaCheck::kPhysical), ModelError);
  const std::vector<std::string> warnings = model.validate(InertiaCheck::kJointSpace);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("link 'link2'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("planar chain"), std::string::npos) << warnings[0];
  Data<double> data(model);
  for (const double q2 : {0.0, 0.7, 2.0, M_PI}) {
    Eigen::VectorXd q(2);
    q << 0.3, q2;
    crba(model, data, q);
    const double c = std::cos(q2), b = l.m2 * l.L1 * l.a2;
    EXPECT_NEAR(data.M(0, 0), l.J1 + l.m2 * l.L1 * l.L1 + l.J2 + 2 * b * c, 1e-12) << q2;
    EXPECT_NEAR(data.M(0, 1), l.J2 + b * c, 1e-12) << q2;
    EXPECT_NEAR(data.M(1, 1), l.J2, 1e-12) << q2;
  }
  // The same link behind a joint about x: the 3-D tensor matters, refused
  // naming the link and saying why.
  try {
    parse_yaml_model(l.yaml("[1, 0, 0]"), "m.yaml");
    ADD_FAILURE() << "a lumped link accepted in a non-planar chain";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("link 'link2'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("planar chain"), std::string::npos) << e.what();
  }
}

// Rounding: a massless link whose inertia is a rounding residue (an I_c of
// −2e-17 left by J − m·r² = 0 in a conversion) is not a violation in a model
// whose inertias are of order 0.1; its own scale (2e-17) used to be the
// reference, and the check failed. A real violation (−1e-6) still fails.
TEST(InertiaTolerance, RoundingIsJudgedAgainstTheModelsInertias) {
  auto model = [](double residue) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "bodies: [{name: a, joint: {type: spherical}, mass: 1, inertia: [0.1, 0.12, 0.15]},"
                  " {name: b, parent: a, joint: {type: fixed}, mass: 0, inertia: [0, %.17g, 0]}]",
                  residue);
    return std::string(buf);
  };
  Inertia<double> residue;
  residue.I_origin(1, 1) = -2e-17;
  EXPECT_FALSE(inertia_problem(residue).empty());         // alone: no scale to judge it by
  EXPECT_TRUE(inertia_problem(residue, 0.1).empty());     // in its model: rounding
  const Model<double> m = parse_yaml_model(model(-2e-17), "r.yaml");
  EXPECT_TRUE(m.validate(InertiaCheck::kPhysical).empty());
  EXPECT_THROW(parse_yaml_model(model(-1e-6), "r.yaml"), ConfigError);
}

}  // namespace
}  // namespace neuralsim
