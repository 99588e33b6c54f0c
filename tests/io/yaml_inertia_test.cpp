// A link's inertia given about a point other than its COM (`inertia_about`):
// the model must hold the COM inertia that the parallel-axis theorem gives,
// checked against the textbook inertias of a uniform rod and against the
// joint-space inertia CRBA computes from it; a tensor too small for its mass
// and offset is refused with the link and the key named.
#include <gtest/gtest.h>

#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/io/yaml_model.hpp"

namespace neuralsim {
namespace {

constexpr double kMass = 2.0, kLength = 0.6;
// A uniform rod along -z of kMass and kLength, hinged about y at its end:
// about its COM Iyy = m L²/12; about the hinge m L²/3 (Featherstone, RBDA §2.13).
const double kRodCom = kMass * kLength * kLength / 12.0;
const double kRodEnd = kMass * kLength * kLength / 3.0;

std::string rod(const std::string& inertia_lines, const std::string& joint = "{type: revolute, axis: [0, 1, 0]}") {
  return "bodies:\n"
         "  - name: rod\n"
         "    joint: " + joint + "\n"
         "    mass: " + std::to_string(kMass) + "\n" + inertia_lines;
}

Model<double> load_rod(const std::string& text) { return parse_yaml_model(text, "rod.yaml"); }

double joint_space_inertia(const Model<double>& model) {
  Data<double> data(model);
  const Eigen::VectorXd q = Eigen::VectorXd::Zero(model.nq);
  crba(model, data, q);
  return data.M(0, 0);
}

TEST(YamlInertiaAbout, OriginGivesTheRodsCentroidalInertia) {
  const Model<double> m = load_rod(rod("    com: [0, 0, -0.3]\n"
                                   "    inertia: [" + std::to_string(kRodEnd) + ", " + std::to_string(kRodEnd) +
                                   ", 0]\n    inertia_about: origin\n"));
  const Eigen::Matrix3d I = m.bodies[0].inertia.inertia_about_com();
  EXPECT_NEAR(I(0, 0), kRodCom, 1e-6);
  EXPECT_NEAR(I(1, 1), kRodCom, 1e-6);
  EXPECT_NEAR(I(2, 2), 0.0, 1e-12);
  // The joint-space inertia about the hinge is what was given.
  EXPECT_NEAR(joint_space_inertia(m), kRodEnd, 1e-6);
}

TEST(YamlInertiaAbout, ComIsTheDefaultAndAgreesWithTheShiftedForm) {
  const Model<double> about_com = load_rod(rod("    com: [0, 0, -0.3]\n    inertia: [" + std::to_string(kRodCom) +
                                           ", " + std::to_string(kRodCom) + ", 0]\n"));
  const Model<double> explicit_com = load_rod(rod("    com: [0, 0, -0.3]\n    inertia: [" + std::to_string(kRodCom) +
                                              ", " + std::to_string(kRodCom) + ", 0]\n    inertia_about: com\n"));
  EXPECT_NEAR(joint_space_inertia(about_com), kRodEnd, 1e-6);
  EXPECT_EQ(joint_space_inertia(about_com), joint_space_inertia(explicit_com));
}

TEST(YamlInertiaAbout, AnyPointWithProductsOfInertia) {
  // About p = (0.1, 0, -0.5) with the COM at (0, 0, -0.3): d = c - p =
  // (-0.1, 0, 0.2), so the tensor about p has a product of inertia in x-z.
  const Eigen::Vector3d d(-0.1, 0.0, 0.2);
  Eigen::Matrix3d Ic = Eigen::Vector3d(0.05, 0.06, 0.02).asDiagonal();
  const Eigen::Matrix3d Ip = Ic + kMass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
  char buf[256];
  std::snprintf(buf, sizeof buf, "    inertia: [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g]\n", Ip(0, 0), Ip(1, 1),
                Ip(2, 2), Ip(0, 1), Ip(0, 2), Ip(1, 2));
  const Model<double> m = load_rod(rod(std::string("    com: [0, 0, -0.3]\n") + buf +
                                   "    inertia_about: [0.1, 0, -0.5]\n"));
  EXPECT_LT((m.bodies[0].inertia.inertia_about_com() - Ic).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(YamlInertiaAbout, UsesTheComThatLengthComFractionGives) {
  const Model<double> m = load_rod(rod("    length: {value: 0.6, axis: [0, 0, -1], com_fraction: 0.5}\n"
                                   "    inertia: [" + std::to_string(kRodEnd) + ", " + std::to_string(kRodEnd) +
                                   ", 0]\n    inertia_about: origin\n"));
  EXPECT_NEAR(m.bodies[0].inertia.inertia_about_com()(1, 1), kRodCom, 1e-6);
}

TEST(YamlInertiaAbout, TooSmallForItsOffsetIsRefusedNamingTheLink) {
  // m d² = 2 · 0.09 = 0.18 > 0.1: about the COM the moment would be negative.
  // On a hinge that is a lumped planar link (inertia about the joint 0.1),
  // accepted with a warning (model/inertia_check.hpp); on a ball joint the
  // whole tensor matters and it is refused.
  const std::string lines = "    com: [0, 0, -0.3]\n    inertia: [0.1, 0.1, 0]\n    inertia_about: origin\n";
  EXPECT_EQ(load_rod(rod(lines)).validate(InertiaCheck::kJointSpace).size(), 1u);
  try {
    (void)load_rod(rod(lines, "{type: spherical}"));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rod.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find("inertia"), std::string::npos) << what;
    EXPECT_NE(what.find("link 'rod'"), std::string::npos) << what;
    EXPECT_NE(what.find("after moving it from 'inertia_about' to the COM"), std::string::npos) << what;
  }
}

TEST(YamlInertiaAbout, BadValuesAreRefused) {
  EXPECT_THROW((void)load_rod(rod("    com: [0, 0, -0.3]\n    inertia_about: origin\n")), ConfigError);
  EXPECT_THROW((void)load_rod(rod("    inertia: [1, 1, 1]\n    inertia_about: joint_axis\n")), ConfigError);
  EXPECT_THROW((void)load_rod(rod("    inertia: [1, 1, 1]\n    inertia_about: [0, .nan, 0]\n")), ConfigError);
  EXPECT_THROW((void)load_rod(rod("    inertia: [1, 1, 1]\n    inertia_about: [0, 0]\n")), ConfigError);
}

}  // namespace
}  // namespace neuralsim
