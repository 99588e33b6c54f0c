// Base inertial parameters (estimate/base_parameters.hpp) against counts
// derived by the symbolic regrouping rules (Gautier & Khalil, IEEE T-RA
// 6(3), 1990; Khalil & Dombre, "Modeling, Identification and Control of
// Robots", 2002, §9.4):
//  - planar 2-link arm in a vertical plane (the double pendulum): 6,
//    ZZ1R, MX1R, MZ1R (link 1 on its fixed axis, its mass-moment terms
//    plus link 2's mass regrouped) and ZZ2, MX2, MZ2 of link 2: 2 · 3;
//  - a fixed-base serial arm of n revolute joints whose first axis is
//    vertical and whose other axes are in general position: every link
//    after the first keeps 7 of its 10 (its m, the first moment along its
//    axis and one inertia about the axis regroup into its predecessor),
//    the first keeps only ZZ1R: 7n − 6, 43 for the 7-DoF Panda (fingers
//    fixed).
// And the combinations are invariant: at states the decomposition never
// saw, W π = W_1 β for random π.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "neuralsim/estimate/base_parameters.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace base_parameters_test {
namespace {

// max |W π − W_1 β| / max |W π| at new states, over random π.
double invariance_error(const Model<double>& model, const BaseParameters& base) {
  const Eigen::MatrixXd W = random_state_regressor(model, 10, 1234);
  Eigen::MatrixXd W1(W.rows(), base.rank);
  for (int k = 0; k < base.rank; ++k) W1.col(k) = W.col(base.independent[static_cast<size_t>(k)]);
  const Eigen::MatrixXd B = base.combination_matrix(static_cast<int>(W.cols()));
  double worst = 0;
  for (int t = 0; t < 3; ++t) {
    const Eigen::VectorXd pi = Eigen::VectorXd::Random(W.cols());
    const Eigen::VectorXd tau = W * pi;
    worst = std::max(worst, (tau - W1 * (B * pi)).cwiseAbs().maxCoeff() / tau.cwiseAbs().maxCoeff());
    EXPECT_LE((B * pi - base.base_values(pi)).cwiseAbs().maxCoeff(), 1e-12);
  }
  return worst;
}

Model<double> panda_seven_dof() {
  std::ifstream in(testing::shared_path("models/franka_panda/panda.urdf"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (size_t at = text.find("type=\"prismatic\""); at != std::string::npos; at = text.find("type=\"prismatic\""))
    text.replace(at, 16, "type=\"fixed\"");
  return build_urdf_model(text, "panda.urdf (fingers fixed)");
}

TEST(BaseParameters, PlanarTwoLinkArmHasSix) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const BaseParameters base = compute_base_parameters(random_state_regressor(model, 30, 1));
  EXPECT_EQ(base.rank, 6);
  EXPECT_EQ(base.independent.size() + base.dependent.size(), 20u);
  EXPECT_LE(invariance_error(model, base), 1e-10);
}

TEST(BaseParameters, SevenDofPandaHasFortyThree) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/franka_panda/panda.urdf");
  const Model<double> model = panda_seven_dof();
  ASSERT_EQ(model.nv, 7);
  const BaseParameters base = compute_base_parameters(random_state_regressor(model, 60, 2));
  EXPECT_EQ(base.rank, 43);
  EXPECT_LE(invariance_error(model, base), 1e-9);
  // Link 1 turns about the vertical: of its ten columns only I_zz acts
  // (panda_link0, the fixed base, has none), and it enters one β.
  const std::vector<std::string> names = standard_parameter_names(model);
  ASSERT_EQ(names.size(), 80u);
  int link1_in = 0;
  for (int k = 0; k < base.rank; ++k) {
    const std::string e = base_parameter_expression(base, k, names);
    for (const char* c : {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz"})
      EXPECT_EQ(e.find(std::string("panda_link1.") + c + " "), std::string::npos) << e;
    if (e.find("panda_link1.Izz") != std::string::npos) ++link1_in;
  }
  EXPECT_EQ(link1_in, 1);
}

// The rank does not depend on the units: scaling a column (kg → g) leaves
// it unchanged, and the decomposition of a rank-deficient matrix built by
// hand is recovered exactly.
TEST(BaseParameters, KnownCombinationRecovered) {
  Eigen::MatrixXd W = Eigen::MatrixXd::Random(40, 3);
  Eigen::MatrixXd W5(40, 5);
  W5 << W, 2.0 * W.col(0) - 0.5 * W.col(2), Eigen::VectorXd::Zero(40);
  const BaseParameters base = compute_base_parameters(W5);
  EXPECT_EQ(base.rank, 3);
  ASSERT_EQ(base.dependent.size(), 2u);
  EXPECT_EQ(base.dependent[1], 4);
  Eigen::MatrixXd scaled = W5;
  scaled.col(1) *= 1e3;
  EXPECT_EQ(compute_base_parameters(scaled).rank, 3);
  const Eigen::VectorXd pi = Eigen::VectorXd::Random(5);
  Eigen::MatrixXd W1(40, 3);
  for (int k = 0; k < 3; ++k) W1.col(k) = W5.col(base.independent[static_cast<size_t>(k)]);
  EXPECT_LE((W5 * pi - W1 * base.base_values(pi)).cwiseAbs().maxCoeff(), 1e-12);
}

}  // namespace
}  // namespace base_parameters_test
}  // namespace neuralsim
