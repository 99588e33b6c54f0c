// Joint limits (stiff spring-damper, joint_limits.hpp): a pendulum released
// towards a limit stops at the limit (within the static deflection
// τ_g / k_limit) and rests there.
#include <gtest/gtest.h>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/io/yaml_model.hpp"

namespace neuralsim {
namespace {

TEST(JointLimits, PendulumRestsAtItsUpperLimit) {
  // 1 kg point mass at 1 m, q = 0 hangs down; the allowed range [-1, -0.3]
  // excludes the bottom, so released at q = -0.8 it swings into the upper
  // limit and comes to rest pressed against it.
  const Model<double> model = parse_yaml_model(
      ("bodies:\n  - name: link\n    joint: {name: hinge, type: revolute, axis: [0, 1, 0],"
                 " damping: 2.0, limits: {lower: -1.0, upper: -0.3}}\n    mass: 1\n    com: [0, 0, -1]\n"),
      "inline");
  ContactSettings s;
  s.ground.enabled = false;
  s.parameters.limit_stiffness = 1e4;
  s.parameters.limit_damping = 20;
  Stepper<double> stepper(model, StepOptions{});
  auto sys = install_contact(s, model, stepper);
  Eigen::VectorXd q(1), qd(1), u = Eigen::VectorXd::Zero(1);
  q << -0.8;
  qd << 0;
  double q_max = -1;
  for (int k = 0; k < 20000; ++k) {
    stepper.step(q, qd, u, k * 1e-3);
    q_max = std::max(q_max, q[0]);
  }
  // At rest against the limit: gravity torque m g l sin(0.3) balanced by k Δq.
  const double deflection = 9.81 * std::sin(0.3) / 1e4;
  EXPECT_LT(q_max, -0.3 + 0.02);
  EXPECT_NEAR(q[0], -0.3 + deflection, 1e-5);
  EXPECT_LT(std::abs(qd[0]), 1e-3);
}

}  // namespace
}  // namespace neuralsim
