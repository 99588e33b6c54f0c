// simid through contact: experiment 3 (friction and restitution of a ball
// that bounces and slides, impulse model) and experiment 5 (Degrave's ball
// throw: initial velocities that land a ball on a target, Hunt–Crossley),
// end to end through the CLIs, plus the errors of contact and initial-state
// parameters.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::run_command;

std::string contact_simid_app() { return testing::app_path("simid"); }
std::string contact_rollout_app() { return testing::app_path("rollout"); }
using testing::read_json;

TEST(SimidContact, RecoversFrictionAndRestitutionOfABouncingSlidingBall) {
  // The first second holds the bounces and the sliding phase.
  const std::string out = fresh_dir("simid_bounce_slide");
  const auto r = run_command(contact_simid_app() + " --config configs/simid_ball_bounce_slide.yaml -q --seed 2"
                                       " --set data.max_samples=101 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_LT(s["metrics"]["max_relative_error"].get<double>(), 1e-6) << s["metrics"].dump();
  EXPECT_TRUE(s["metrics"]["identifiable"].get<bool>());
  EXPECT_LT(s["metrics"]["validation_rmse_q"].get<double>(), 1e-6);

  // rollout reads contact.* from the parameter file: starting from wrong
  // contact parameters, the fitted ones replay the recording.
  const std::string base = " --config configs/rollout_ball_bounce_slide.yaml -q --set sim.duration=1.0"
                           " --set contact.parameters.friction=0.8 --set contact.parameters.restitution=0.5"
                           " --compare datasets/ball_bounce_slide.h5";
  const std::string wrong = fresh_dir("bounce_slide_wrong"), fitted = fresh_dir("bounce_slide_fitted");
  ASSERT_EQ(run_command(contact_rollout_app() + base + " --out " + wrong).exit_code, 0);
  const auto rf = run_command(contact_rollout_app() + base + " --set params_file=" + out + "/params.json --out " + fitted);
  ASSERT_EQ(rf.exit_code, 0) << rf.err;
  const double e_wrong = read_json(wrong + "/summary.json")["metrics"]["mean_rmse_q"].get<double>();
  const double e_fitted = read_json(fitted + "/summary.json")["metrics"]["mean_rmse_q"].get<double>();
  EXPECT_GT(e_wrong, 1e-2);
  EXPECT_LT(e_fitted, 1e-6);
}

TEST(SimidContact, BallThrowLandsOnTheTargetAndRolloutConfirmsTheHit) {
  const std::string out = fresh_dir("simid_ball_throw");
  const auto r = run_command(contact_simid_app() + " --config configs/simid_ball_throw.yaml -q --seed 1 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_LT(s["metrics"]["mean_target_distance"].get<double>(), 1e-3) << s["metrics"].dump();
  EXPECT_FALSE(s["metrics"].contains("train_rmse_q"));  // q is a placeholder for targets

  const std::string hit = fresh_dir("ball_throw_hit");
  const auto rh = run_command(contact_rollout_app() + " --config configs/rollout_ball_throw_check.yaml -q --set params_file=" +
                              out + "/params.json --out " + hit);
  ASSERT_EQ(rh.exit_code, 0) << rh.err;
  const auto sh = read_json(hit + "/summary.json");
  EXPECT_TRUE(sh["metrics"]["targets_hit"].get<bool>());
  EXPECT_LT(sh["metrics"]["targets"][0]["distance"].get<double>(), 1e-3);

  // The unoptimized throw misses: exit code 5, distances still written.
  const std::string miss = fresh_dir("ball_throw_miss");
  const auto rm = run_command(contact_rollout_app() + " --config configs/rollout_ball_throw_check.yaml -q --out " + miss);
  EXPECT_EQ(rm.exit_code, 5) << rm.err;
  EXPECT_NE(rm.err.find("target missed"), std::string::npos) << rm.err;
  const auto sm = read_json(miss + "/summary.json");
  EXPECT_EQ(sm["status"], "target_missed");
  EXPECT_GT(sm["metrics"]["targets"][0]["distance"].get<double>(), 0.1);
}

struct BadContactInput {
  const char* name;
  std::string args;
  const char* message;
};
void PrintTo(const BadContactInput& c, std::ostream* os) { *os << c.name; }

class SimidContactBadInput : public ::testing::TestWithParam<BadContactInput> {};

TEST_P(SimidContactBadInput, IsAConfigErrorThatSaysWhy) {
  const BadContactInput& c = GetParam();
  const std::string out = fresh_dir(std::string("simid_contact_bad_") + c.name);
  const auto r = run_command(contact_simid_app() + c.args + " -q --out " + out + "/run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out + "/run/params.json"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimidContactBadInput,
    ::testing::Values(
        BadContactInput{"contact_parameter_without_contact",
                        " --config configs/simid_double_pendulum_lengths.yaml"
                        " --set 'estimate.parameters=[{name: contact.friction, initial: 0.5}]'",
                        "no 'contact:' section"},
        BadContactInput{"unknown_contact_parameter",
                        " --config configs/simid_ball_bounce_slide.yaml --set estimate.parameters.0.name=contact.frction",
                        "valid: contact.stiffness"},
        BadContactInput{"unknown_initial_velocity",
                        " --config configs/simid_ball_throw.yaml --set estimate.parameters.0.name=initial.qd.ball_free.x",
                        "valid: initial.qd.ball_free.wx"},
        BadContactInput{"initial_velocity_with_multiple_shooting",
                        " --config configs/simid_ball_throw.yaml --set estimate.residual.type=multiple_shooting",
                        "need residual type single_shooting"},
        BadContactInput{"contact_with_inverse_dynamics",
                        " --config configs/simid_ball_bounce_slide.yaml --set estimate.residual.type=inverse_dynamics",
                        "does not model contact forces"},
        BadContactInput{"targets_with_joint_observation",
                        " --config configs/simid_ball_throw.yaml --set estimate.observe.q=1",
                        "observe only link positions"}),
    [](const ::testing::TestParamInfo<BadContactInput>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace neuralsim
