// The convex-MPC gait controller in closed loop on the simulated Laikago
// (URDF, floating base, four toe spheres on the ground, impulse contact with
// μ = 0.8, dt = 1 ms: configs/rollout_laikago_standing.yaml): it stands,
// trots in place, walks forward at a commanded speed and turns at a
// commanded yaw rate without falling. "Falling" is judged physically: the
// torso stays above 0.2 m (its belly would touch the ground near 0.1 m;
// the toes-only contact geometry means only the toes may touch), the tilt
// stays below 20°. Plus the controller's interfaces: the feature vector,
// the held MPC forces, a force policy in place of the QP.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "neuralsim/control/quadruped_controller.hpp"
#include "neuralsim/core/dense.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "support/files.hpp"
#include "support/allocation_counter.hpp"
#include "support/scenario.hpp"

namespace neuralsim {
namespace {

using testing::Scenario;

class QuadrupedControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
  }
};

double com_height(const Model<double>& model, const Eigen::VectorXd& q) {
  Data<double> data(model);
  forward_kinematics(model, data, q, Eigen::VectorXd::Zero(model.nv).eval());
  return centroidal(model, data).com.z();
}

double yaw_of(const Eigen::VectorXd& q) {
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
  return std::atan2(R(1, 0), R(0, 0));
}

double tilt_of(const Eigen::VectorXd& q) {
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
  return std::acos(std::clamp(R(2, 2), -1.0, 1.0));  // angle between body z and world z
}

struct LoopStats {
  double min_height = 1e9, max_tilt = 0, mean_vx = 0, mean_vy = 0, mean_yaw_rate = 0, seconds = 0;
  Eigen::Vector3d drift = Eigen::Vector3d::Zero();
  long long failures = 0, solves = 0;
  double two_contact_fraction = 0;  // steps with exactly two toes on the ground
  double max_swing_clearance = 0;   // highest toe-sphere bottom above the ground [m]
  int max_contacts = 0;
};

// Simulates `duration` seconds; velocities are averaged over [t_avg, end]
// from positions (world), the yaw rate from the unwrapped yaw.
LoopStats simulate(Scenario& s, QuadrupedController* ctrl, double duration, double t_avg) {
  LoopStats r;
  const Eigen::Vector3d p0 = s.q.head<3>();
  Eigen::Vector3d p_avg = p0;
  double yaw = yaw_of(s.q), yaw_unwrapped = yaw, yaw_avg = 0;
  const long long n = s.steps(duration), n_avg = s.steps(t_avg);
  const auto start = std::chrono::steady_clock::now();
  for (long long k = 0; k < n; ++k) {
    if (k == n_avg) {
      p_avg = s.q.head<3>();
      yaw_avg = yaw_unwrapped;
    }
    s.step();
    const double y = yaw_of(s.q);
    yaw_unwrapped += std::remainder(y - yaw, 2 * M_PI);
    yaw = y;
    r.min_height = std::min(r.min_height, s.q[2]);
    const int nc = s.contact->num_contacts();
    r.max_contacts = std::max(r.max_contacts, nc);
    if (nc == 2) r.two_contact_fraction += 1.0 / n;
    for (int i = 0; i < 4; ++i)
      r.max_swing_clearance = std::max(r.max_swing_clearance, ctrl->legs().foot_position(i).z() - 0.03);
    r.max_tilt = std::max(r.max_tilt, tilt_of(s.q));
    if (!s.q.allFinite()) break;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double T = duration - t_avg;
  r.mean_vx = (s.q[0] - p_avg.x()) / T;
  r.mean_vy = (s.q[1] - p_avg.y()) / T;
  r.mean_yaw_rate = (yaw_unwrapped - yaw_avg) / T;
  r.drift = s.q.head<3>() - p0;
  r.failures = ctrl->num_qp_failures();
  r.solves = ctrl->num_mpc_solves();
  std::printf("[ mpc ] %.1f s in %.2f s wall: min torso height %.3f m, max tilt %.1f deg, mean v (%.3f, %.3f) m/s, "
              "yaw rate %.3f rad/s, drift (%.3f, %.3f, %.3f) m, %lld MPC solves, %lld QP failures, "
              "two toes down %.0f %% of steps, swing clearance %.3f m\n",
              duration, r.seconds, r.min_height, r.max_tilt * 180 / M_PI, r.mean_vx, r.mean_vy, r.mean_yaw_rate,
              r.drift.x(), r.drift.y(), r.drift.z(), r.solves, r.failures, 100 * r.two_contact_fraction,
              r.max_swing_clearance);
  return r;
}

QuadrupedController* install(Scenario& s, const QuadrupedControllerOptions& o, QuadrupedCommand cmd) {
  auto c = std::make_unique<QuadrupedController>(s.model, o);
  QuadrupedController* raw = c.get();
  cmd.height = com_height(s.model, s.q);
  raw->set_command(cmd);
  s.controller = std::move(c);
  return raw;
}

QuadrupedControllerOptions trot_options() {
  QuadrupedControllerOptions o;
  o.gait = GaitParameters::trot(0.3, 0.5);
  o.gait_start_time = 0.2;
  return o;
}

constexpr double kMinTorso = 0.2;
constexpr double kMaxTilt = 20 * M_PI / 180;

TEST_F(QuadrupedControllerTest, StandsOnAllFourFeetWithTheMpc) {
  Scenario s("rollout_laikago_standing");
  QuadrupedControllerOptions o;
  o.gait = GaitParameters::stand();
  QuadrupedController* c = install(s, o, QuadrupedCommand{});
  const double z0 = s.q[2];
  const LoopStats r = simulate(s, c, 1.5, 0.5);
  EXPECT_GT(r.min_height, z0 - 0.03);
  EXPECT_LT(r.max_tilt, 3 * M_PI / 180);
  EXPECT_LT(r.drift.head<2>().norm(), 0.02);
  EXPECT_EQ(r.failures, 0);
  // Standing still, the MPC's forces carry the weight (the toes' contact
  // forces balance m g when the robot is at rest).
  double fz = 0;
  for (int i = 0; i < 4; ++i) fz += c->mpc_forces_world()(2, i);
  const double W = c->mpc().parameters().mass * 9.81;
  EXPECT_NEAR(fz, W, 0.05 * W);
}

TEST_F(QuadrupedControllerTest, TrotsInPlaceForThreeSeconds) {
  Scenario s("rollout_laikago_standing");
  QuadrupedController* c = install(s, trot_options(), QuadrupedCommand{});
  const LoopStats r = simulate(s, c, 3.0, 1.0);
  EXPECT_GT(r.min_height, kMinTorso);
  EXPECT_LT(r.max_tilt, kMaxTilt);
  EXPECT_LT(r.drift.head<2>().norm(), 0.25);  // in place: no walking away
  EXPECT_LT(std::abs(r.mean_vx), 0.08);
  EXPECT_EQ(r.failures, 0);
  // It really trots: most steps have one diagonal pair down (the rest are
  // touchdown overlaps), the swing feet clear the ground, and only the four
  // toes ever touch it (the contact geometry is the toe spheres; the torso
  // height bound keeps the body off the ground).
  EXPECT_GT(r.two_contact_fraction, 0.6);
  EXPECT_GT(r.max_swing_clearance, 0.03);
  EXPECT_LE(r.max_contacts, 4);
}

TEST_F(QuadrupedControllerTest, WalksForwardAtTheCommandedSpeed) {
  Scenario s("rollout_laikago_standing");
  QuadrupedCommand cmd;
  cmd.forward_speed = 0.3;
  QuadrupedController* c = install(s, trot_options(), cmd);
  const LoopStats r = simulate(s, c, 4.0, 2.0);
  EXPECT_GT(r.min_height, kMinTorso);
  EXPECT_LT(r.max_tilt, kMaxTilt);
  // Mean over two seconds (6.7 gait cycles) after a 2 s start-up, from the
  // base displacement. Tolerance 0.05 m/s (1/6 of the command): the MPC
  // tracks velocity softly (velocity weight 5 against the height and
  // attitude weights), the foothold heuristic has no integral action, and
  // the base oscillates within each trot cycle, so the mean over a whole
  // number of cycles is only known to a few cm/s (measured: 0.313).
  EXPECT_NEAR(r.mean_vx, 0.3, 0.05);
  EXPECT_NEAR(r.mean_vy, 0.0, 0.05);
  EXPECT_GT(r.two_contact_fraction, 0.6);
}

TEST_F(QuadrupedControllerTest, TurnsAtTheCommandedYawRate) {
  Scenario s("rollout_laikago_standing");
  QuadrupedCommand cmd;
  cmd.yaw_rate = 0.5;
  QuadrupedController* c = install(s, trot_options(), cmd);
  const LoopStats r = simulate(s, c, 4.0, 2.0);
  EXPECT_GT(r.min_height, kMinTorso);
  EXPECT_LT(r.max_tilt, kMaxTilt);
  // Tolerance 0.08 rad/s (1/6 of the command), for the same reasons as the
  // forward speed (measured: 0.494); turning in place: little translation.
  EXPECT_NEAR(r.mean_yaw_rate, 0.5, 0.08);
  EXPECT_LT(r.drift.head<2>().norm(), 0.3);
}

TEST_F(QuadrupedControllerTest, FollowsAScheduleAndRecoversFromAPush) {
  // Forward, then forward while turning, then back to trotting in place;
  // a lateral push (+0.4 m/s to the base) at t = 1.5 s.
  Scenario s("rollout_laikago_standing");
  QuadrupedController* c = install(s, trot_options(), QuadrupedCommand{});
  const double h = com_height(s.model, s.q);
  c->set_schedule({{0.0, {0.2, 0.0, 0.0, h}}, {1.0, {0.3, 0.0, 0.4, h}}, {2.0, {0.0, 0.0, 0.0, h - 0.02}}});
  double min_height = 1e9, max_tilt = 0;
  for (long long k = 0; k < s.steps(3.0); ++k) {
    if (k == s.steps(1.5)) {
      const Eigen::Matrix3d R = Eigen::Quaterniond(s.q[6], s.q[3], s.q[4], s.q[5]).normalized().toRotationMatrix();
      s.qd.segment<3>(3) += R.transpose() * Eigen::Vector3d(0, 0.4, 0);  // body-frame linear velocity
    }
    s.step();
    min_height = std::min(min_height, s.q[2]);
    max_tilt = std::max(max_tilt, tilt_of(s.q));
  }
  std::printf("[ mpc ] schedule + push: min torso height %.3f m, max tilt %.1f deg\n", min_height,
              max_tilt * 180 / M_PI);
  EXPECT_GT(min_height, kMinTorso);
  EXPECT_LT(max_tilt, kMaxTilt);
  EXPECT_EQ(c->num_qp_failures(), 0);
}

// 20 s under random commands and pushes (the data-generation scenario of
// issue 14); disabled by default for its runtime (~3 s): run with
// --gtest_also_run_disabled_tests.
TEST_F(QuadrupedControllerTest, DISABLED_TrotsTwentySecondsUnderRandomCommandsAndPushes) {
  Scenario s("rollout_laikago_standing");
  QuadrupedController* c = install(s, trot_options(), QuadrupedCommand{});
  const double h = com_height(s.model, s.q);
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<CommandSegment> schedule;
  for (int i = 0; i < 10; ++i)
    schedule.push_back({2.0 * i, {0.1 + 0.25 * u(rng), 0.1 * u(rng), 0.5 * u(rng), h + 0.02 * u(rng)}});
  c->set_schedule(schedule);
  double min_height = 1e9, max_tilt = 0;
  for (long long k = 0; k < s.steps(20.0); ++k) {
    if (k > 0 && k % s.steps(3.0) == 0) {
      const Eigen::Matrix3d R = Eigen::Quaterniond(s.q[6], s.q[3], s.q[4], s.q[5]).normalized().toRotationMatrix();
      s.qd.segment<3>(3) += R.transpose() * Eigen::Vector3d(0.3 * u(rng), 0.3 * u(rng), 0);
    }
    s.step();
    min_height = std::min(min_height, s.q[2]);
    max_tilt = std::max(max_tilt, tilt_of(s.q));
  }
  std::printf("[ mpc ] 20 s random commands + pushes: min torso height %.3f m, max tilt %.1f deg, %lld solves, "
              "%lld failures\n", min_height, max_tilt * 180 / M_PI, c->num_mpc_solves(), c->num_qp_failures());
  EXPECT_GT(min_height, kMinTorso);
  EXPECT_LT(max_tilt, kMaxTilt);
}

TEST_F(QuadrupedControllerTest, TheFallCriteriaCatchAControllerThatDoesNotSupportTheBody) {
  // Negative control for the closed-loop tests: the same trot with a force
  // policy that commands no ground reaction forces lets the body fall, and
  // the torso-height criterion sees it.
  Scenario s("rollout_laikago_standing");
  QuadrupedController* c = install(s, trot_options(), QuadrupedCommand{});
  c->set_force_policy([](const Eigen::Ref<const Eigen::VectorXd>&, Eigen::Ref<Eigen::VectorXd> f) { f.setZero(); });
  const LoopStats r = simulate(s, c, 1.5, 0.5);
  EXPECT_LT(r.min_height, kMinTorso);
}

TEST_F(QuadrupedControllerTest, FeaturesDescribeWhatTheMpcSees) {
  Scenario s("rollout_laikago_standing");
  QuadrupedControllerOptions o = trot_options();
  o.gait_start_time = 0.0;
  QuadrupedCommand cmd;
  cmd.forward_speed = 0.2;
  cmd.yaw_rate = -0.1;
  QuadrupedController* c = install(s, o, cmd);
  const int N = o.mpc.horizon;
  ASSERT_EQ(c->num_features(), 25 + 4 * N);
  const Eigen::VectorXd q0 = s.q;
  s.step();
  ASSERT_TRUE(c->mpc_updated());
  const Eigen::VectorXd& f = c->features();
  EXPECT_NEAR(f[0], 0.0, 1e-9);  // level start: roll, pitch 0
  EXPECT_NEAR(f[1], 0.0, 1e-9);
  EXPECT_NEAR(f[9], 0.2, 0);
  EXPECT_NEAR(f[11], -0.1, 0);
  // Stance feet at the start: their contact points are on the ground (z = 0
  // within the PGS penetration), at the toes' horizontal offsets from the CoM.
  Data<double> data(s.model);
  forward_kinematics(s.model, data, q0, Eigen::VectorXd::Zero(s.model.nv).eval());
  const Eigen::Vector3d com = centroidal(s.model, data).com;
  EXPECT_NEAR(f[2], com.z(), 1e-12);
  const char* toes[4] = {"toeFR", "toeFL", "toeRR", "toeRL"};
  for (int i = 0; i < 4; ++i) {
    if (f[25 + i] < 0.5) continue;
    EXPECT_NEAR(f[13 + 3 * i + 2], 0.0, 2e-3) << "leg " << i;
    const Frame<double>& fr = s.model.frames[s.model.frame_index(toes[i])];
    const Eigen::Vector3d toe = body_point_world(data, fr.body, fr.placement.r);
    EXPECT_NEAR(f[13 + 3 * i], toe.x() - com.x(), 1e-12) << "leg " << i;  // yaw 0 at the start
    EXPECT_NEAR(f[13 + 3 * i + 1], toe.y() - com.y(), 1e-12) << "leg " << i;
  }
  // The contact table is the trot: diagonal pairs equal, pairs opposite.
  for (int k = 0; k < N; ++k) {
    EXPECT_EQ(f[25 + 4 * k + 0], f[25 + 4 * k + 3]);
    EXPECT_EQ(f[25 + 4 * k + 1], f[25 + 4 * k + 2]);
    EXPECT_NE(f[25 + 4 * k + 0], f[25 + 4 * k + 1]);
  }
  // Held between solves: the next step (no contact change, k % 10 != 0) reuses them.
  const Eigen::VectorXd forces = c->mpc_forces();
  s.step();
  EXPECT_FALSE(c->mpc_updated());
  EXPECT_EQ((c->mpc_forces() - forces).norm(), 0.0);
}

TEST_F(QuadrupedControllerTest, AForcePolicyReplacesTheQp) {
  Scenario s("rollout_laikago_standing");
  QuadrupedControllerOptions o;
  o.gait = GaitParameters::stand();
  QuadrupedController* c = install(s, o, QuadrupedCommand{});
  int calls = 0;
  long long features_seen = 0;
  c->set_force_policy([&](const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> forces) {
    ++calls;
    features_seen = x.size();
    forces.setZero();
    for (int i = 0; i < 4; ++i) forces[3 * i + 2] = 25.0;  // 25 N up per foot (yaw frame)
  });
  s.step();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(features_seen, c->num_features());
  EXPECT_EQ(c->num_mpc_solves(), 1);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(c->mpc_forces_world()(2, i), 25.0, 1e-12);
  // The stance torques are then -Jᵀ f with the policy's forces.
  // (the controller's legs hold the kinematics of the step just taken)
  const QuadrupedLegs& legs = c->legs();
  for (int i = 0; i < 4; ++i) {
    Eigen::VectorXd tau = Eigen::VectorXd::Zero(s.model.nv);
    legs.stance_torque(i, Eigen::Vector3d(0, 0, 25.0), tau);
    legs.add_gravity_compensation(i, tau);
    for (int idx : legs.joint_velocity_indices(i)) EXPECT_NEAR(c->torques()[idx], tau[idx], 1e-9);
  }
}

TEST_F(QuadrupedControllerTest, RejectsBadOptionsAndCommands) {
  Scenario s("rollout_laikago_standing");
  QuadrupedControllerOptions o;
  o.mpc_every = 0;
  EXPECT_THROW(QuadrupedController(s.model, o), InvalidArgument);
  o = QuadrupedControllerOptions();
  o.foot_frames[2] = "no_such_toe";
  EXPECT_THROW(QuadrupedController(s.model, o), ModelError);
  QuadrupedController c(s.model, QuadrupedControllerOptions());
  QuadrupedCommand bad;
  bad.height = -1;
  EXPECT_THROW(c.set_command(bad), InvalidArgument);
  EXPECT_THROW(c.set_schedule({{0.0, {}}, {0.0, {}}}), InvalidArgument);
  c.set_schedule({{0.0, QuadrupedCommand{0.1, 0, 0, 0.3}}, {1.0, QuadrupedCommand{0.3, 0, 0, 0.3}}});
  EXPECT_EQ(c.command_at(0.5).forward_speed, 0.1);
  EXPECT_EQ(c.command_at(1.5).forward_speed, 0.3);
}

TEST_F(QuadrupedControllerTest, ControlStepsDoNotAllocate) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting unavailable";
  Scenario s("rollout_laikago_standing");
  QuadrupedController* c = install(s, trot_options(), QuadrupedCommand{});
  for (int k = 0; k < 300; ++k) s.step();  // into the trot: swing and stance legs, MPC solves
  Eigen::VectorXd u = Eigen::VectorXd::Zero(s.model.nv);
  long count = 0;
  {
    testing::AllocationCounter counter;
    for (long long k = 300; k < 400; ++k) c->compute(k, k * 1e-3, s.q, s.qd, u);
    count = counter.count();
  }
  EXPECT_GT(c->num_mpc_solves(), 10);
  EXPECT_EQ(count, 0);
}

TEST_F(QuadrupedControllerTest, CompositeInertiaIsTheWholeRobot) {
  Scenario s("rollout_laikago_standing");
  double m = 0;
  Eigen::Matrix3d I;
  QuadrupedController::composite_inertia(s.model, Eigen::VectorXd(), &m, &I);
  EXPECT_NEAR(m, s.model.total_mass(), 1e-9);
  // The URDF's chassis alone has Ixx 0.22, Iyy 0.431, Izz 0.565; the legs add.
  EXPECT_GT(I(0, 0), 0.22);
  EXPECT_GT(I(1, 1), 0.431);
  EXPECT_GT(I(2, 2), 0.565);
  EXPECT_GT(symmetric_eigenvalues(I).minCoeff(), 0);
}

}  // namespace
}  // namespace neuralsim
