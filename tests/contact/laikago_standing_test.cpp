// Laikago standing on four toe contacts for 10 s with its joints held by PD
// control: the base sinks less than 1 cm (PD compliance + contact depth)
// and does not drift or turn, with every contact model.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/files.hpp"
#include "support/scenario.hpp"

namespace neuralsim {
namespace {

using testing::Scenario;

class LaikagoStanding : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
  }
};

TEST_P(LaikagoStanding, SinksLessThanOneCentimetreAndDoesNotDrift) {
  // Force models: the toes' small effective mass makes the stiff contact and
  // friction laws need a 0.1 ms integration step (explicit stability).
  std::vector<std::string> sets = {"contact.model=" + GetParam()};
  if (GetParam() != "impulse") sets.push_back("sim.substeps=10");
  if (GetParam() == "penalty")
    for (const char* p : {"contact.parameters.stiffness=1e8", "contact.parameters.damping=1e5"}) sets.push_back(p);
  Scenario s("rollout_laikago_standing", sets);
  ASSERT_EQ(s.contact->geometry().pairs().size(), 4u);  // four toe spheres vs ground
  const Eigen::VectorXd q0 = s.q;
  const long long n = s.steps(10.0);
  // Loading the PD-held legs shifts the base a few mm while the PD servos
  // settle (t < 5 s); drift is any base motion after that.
  double max_sink = 0, max_drift = 0;
  Eigen::VectorXd q_settled = q0;
  for (long long k = 0; k < n; ++k) {
    s.step();
    if (k + 1 == s.steps(5.0)) q_settled = s.q;
    max_sink = std::max(max_sink, q0[2] - s.q[2]);
    if (k + 1 >= s.steps(5.0)) max_drift = std::max(max_drift, (s.q.head<3>() - q_settled.head<3>()).norm());
  }
  const Eigen::Quaterniond rot(s.q[6], s.q[3], s.q[4], s.q[5]);
  const double tilt = 2 * std::asin(std::min(1.0, rot.vec().norm()));
  const double final_sink = q0[2] - s.q[2];
  std::printf("[ laikago %s ] sink max %.3f mm final %.3f mm, drift max %.3g mm, rotation %.3g deg, "
              "|qd| %.3g, contacts %d",
              GetParam().c_str(), 1e3 * max_sink, 1e3 * final_sink, 1e3 * max_drift, tilt * 180 / M_PI,
              s.qd.norm(), s.contact->num_contacts());
  if (GetParam() == "impulse")
    std::printf(", PGS mean %.2f max %d iterations", s.contact->impulse_stats().mean_iterations(),
                s.contact->impulse_stats().max_iterations);
  std::printf("\n");
  EXPECT_LT(max_sink, 0.01);
  EXPECT_GT(s.q[2], 0.2);       // still standing
  if (GetParam() == "impulse") {
    EXPECT_LT(max_drift, 1e-4);    // no drift
    EXPECT_LT(s.qd.norm(), 1e-3);  // at rest
  } else {
    // Smooth friction never sticks: the toes creep and the legs keep a small
    // vibration (|q̇| ~ 0.1); the base still stays within 2 mm.
    EXPECT_LT(max_drift, 2e-3);
  }
  EXPECT_EQ(s.contact->num_contacts(), 4);
}

INSTANTIATE_TEST_SUITE_P(Models, LaikagoStanding, ::testing::Values("impulse", "hunt_crossley", "penalty"));

}  // namespace
}  // namespace neuralsim
