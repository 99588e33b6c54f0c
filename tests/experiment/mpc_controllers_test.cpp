// `controls: {type: mpc | mpc_network}` (experiment/mpc_controllers.hpp):
// config → QuadrupedController. Every key reaches its option; bad values,
// an infeasible force limit, missing feet, a fixed-base model and a network
// of the wrong size are refused before anything runs, naming the key or
// the file; random commands depend only on (seed, trajectory index, segment).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/experiment/mpc_controllers.hpp"
#include "neuralsim/io/network_file.hpp"
#include "support/files.hpp"
#include "support/scenario.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

using testing::expect_contains;
using testing::thrown_message;

// The Laikago of configs/rollout_laikago_trot.yaml (loaded once).
class MpcControllersConfigTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(testing::shared_path("models/laikago"))) return;
    const Config cfg = Config::load(testing::source_path("configs/rollout_laikago_trot.yaml"));
    mpc_test_experiment_ = new Experiment(load_experiment(cfg));
  }
  static void TearDownTestSuite() {
    delete mpc_test_experiment_;
    mpc_test_experiment_ = nullptr;
  }
  void SetUp() override {
    NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
    ASSERT_NE(mpc_test_experiment_, nullptr) << "configs/rollout_laikago_trot.yaml did not load";
  }
  const Model<double>& laikago() const { return mpc_test_experiment_->model; }
  const StepOptions& step() const { return mpc_test_experiment_->step; }
  ControllerRegistry registry() const {
    ControllerRegistry r = standard_controllers();
    add_mpc_controllers(r, step());
    return r;
  }
  // The section `yaml` (a controls: map), as if from FILE mpc.yaml.
  static Config section(const std::string& yaml, const std::vector<std::string>& sets = {}) {
    return Config::parse("controls:\n" + yaml, "mpc.yaml", sets).at("controls");
  }
  MpcControllerSpec spec(const std::string& yaml, const std::vector<std::string>& sets = {},
                         bool network = false) const {
    return read_mpc_controller_spec(section(yaml, sets), laikago(), step(), network);
  }
  double weight() const { return laikago().total_mass() * 9.81; }

  static Experiment* mpc_test_experiment_;
};
Experiment* MpcControllersConfigTest::mpc_test_experiment_ = nullptr;

const char* const kMpcTestFull = R"(
  type: mpc
  gait: {type: trot, period: 0.4, duty_factor: 0.6, start: 0.25}
  command: {forward_speed: 0.1, lateral_speed: -0.05, yaw_rate: 0.2, height: 0.3}
  schedule:
    - {t: 1.0, forward_speed: 0.4}
    - {t: 2.0, yaw_rate: -0.3, height: 0.27}
  mpc: {horizon: 12, dt: 0.025, period: 0.02, friction: 0.7, fz_min: 5, fz_max: 250,
        state_weights: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0], force_weight: 1.0e-5}
  feet: [toeFR, toeFL, toeRR, toeRL]
  nominal_joint_positions: [0, 0.7, -1.3, 0, 0.7, -1.3, 0, 0.7, -1.3, 0, 0.7, -1.3]
  swing: {height: 0.08, kp: [400, 450, 500], kd: [10]}
  raibert_gain: 0.07
  max_step: 0.15
  torque_limit: 80
  ground_height: 0.01
  leg_gravity_compensation: false
)";

TEST_F(MpcControllersConfigTest, EveryKeyReachesItsOption) {
  const MpcControllerSpec s = spec(kMpcTestFull);
  const QuadrupedControllerOptions& o = s.options;
  EXPECT_EQ(o.gait.name, "trot");
  EXPECT_EQ(o.gait.period, 0.4);
  EXPECT_EQ(o.gait.duty_factor, 0.6);
  EXPECT_EQ(o.gait_start_time, 0.25);
  EXPECT_EQ(o.mpc.horizon, 12);
  EXPECT_EQ(o.mpc.dt, 0.025);
  EXPECT_EQ(o.mpc_every, 20);  // 0.02 s at dt = 1 ms
  EXPECT_EQ(o.mpc.friction, 0.7);
  EXPECT_EQ(o.mpc.fz_min, 5);
  EXPECT_EQ(o.mpc.fz_max, 250);
  EXPECT_EQ(o.mpc.state_weights[5], 6);
  EXPECT_EQ(o.mpc.state_weights[12], 0);
  EXPECT_EQ(o.mpc.force_weight, 1e-5);
  EXPECT_NEAR(o.mpc.gravity, 9.81, 1e-12);
  EXPECT_EQ(o.foot_frames[2], "toeRR");
  ASSERT_EQ(o.nominal_joint_positions.size(), 12);
  EXPECT_EQ(o.nominal_joint_positions[1], 0.7);
  EXPECT_EQ(o.swing_height, 0.08);
  EXPECT_EQ(o.swing_kp, Eigen::Vector3d(400, 450, 500));
  EXPECT_EQ(o.swing_kd, Eigen::Vector3d(10, 10, 10));  // one value broadcast
  EXPECT_EQ(o.raibert_gain, 0.07);
  EXPECT_EQ(o.max_step, 0.15);
  EXPECT_EQ(o.torque_limit, 80);
  EXPECT_EQ(o.ground_height, 0.01);
  EXPECT_FALSE(o.leg_gravity_compensation);
  // `command:` holds until the first entry; entries inherit what they omit from it.
  ASSERT_EQ(s.schedule.size(), 3u);
  EXPECT_EQ(s.schedule[0].t_start, 0.0);
  EXPECT_EQ(s.schedule[0].command.forward_speed, 0.1);
  EXPECT_EQ(s.schedule[0].command.height, 0.3);
  EXPECT_EQ(s.schedule[1].t_start, 1.0);
  EXPECT_EQ(s.schedule[1].command.forward_speed, 0.4);
  EXPECT_EQ(s.schedule[1].command.lateral_speed, -0.05);
  EXPECT_EQ(s.schedule[1].command.yaw_rate, 0.2);
  EXPECT_EQ(s.schedule[2].command.forward_speed, 0.1);
  EXPECT_EQ(s.schedule[2].command.yaw_rate, -0.3);
  EXPECT_EQ(s.schedule[2].command.height, 0.27);
  EXPECT_FALSE(s.random.has_value());

  // Through the registry: the controller follows the schedule.
  auto c = registry().make(section(kMpcTestFull), laikago(), 0, nullptr);
  auto* mpc = dynamic_cast<MpcRolloutController*>(c.get());
  ASSERT_NE(mpc, nullptr);
  EXPECT_FALSE(mpc->uses_network());
  EXPECT_EQ(mpc->command_at(0.5).forward_speed, 0.1);
  EXPECT_EQ(mpc->command_at(1.5).forward_speed, 0.4);
  EXPECT_EQ(mpc->command_at(2.5).yaw_rate, -0.3);
  EXPECT_EQ(mpc->controller().num_features(), 25 + 4 * 12);
}

TEST_F(MpcControllersConfigTest, DefaultsAreTheControllersAndTheNominalStandingHeight) {
  const MpcControllerSpec s = spec("  type: mpc\n  gait: {type: stand}\n");
  EXPECT_EQ(s.options.gait.duty_factor, 1.0);
  EXPECT_EQ(s.options.mpc.horizon, QuadrupedControllerOptions().mpc.horizon);
  EXPECT_EQ(s.options.mpc_every, 10);  // 0.01 s at 1 ms
  // The default height is the CoM height of the nominal pose standing on the
  // toes: the config's initial state is that pose with the toes (r = 3 cm)
  // on the ground, so its CoM height is the expected value.
  Eigen::VectorXd q(19);
  q << 0, 0, 0.356162, 0, 0, 0, 1, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25;
  Data<double> data(laikago());
  forward_kinematics(laikago(), data, q, Eigen::VectorXd::Zero(laikago().nv).eval());
  ASSERT_EQ(s.schedule.size(), 1u);
  EXPECT_NEAR(s.schedule[0].command.height, centroidal(laikago(), data).com.z(), 1e-5);
  EXPECT_EQ(s.schedule[0].command.forward_speed, 0.0);
}

TEST_F(MpcControllersConfigTest, BadValuesAreRefusedNamingTheKey) {
  const std::string base = "  type: mpc\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"controls.mpc.friction=0", "controls.mpc.friction"},
      {"controls.mpc.friction=-0.5", "controls.mpc.friction"},
      {"controls.mpc.horizon=0", "controls.mpc.horizon"},
      {"controls.mpc.dt=-0.01", "controls.mpc.dt"},
      {"controls.mpc.period=0.0015", "controls.mpc.period"},  // not a multiple of dt = 1 ms
      {"controls.mpc.period=0", "controls.mpc.period"},
      {"controls.mpc.fz_max=-1", "controls.mpc.fz_max"},
      {"controls.mpc.state_weights=[1,2,3]", "controls.mpc.state_weights"},
      {"controls.mpc.horizont=10", "horizont"},
      {"controls.gait.duty_factor=1.5", "controls.gait.duty_factor"},
      {"controls.gait.period=0", "controls.gait.period"},
      {"controls.gait.type=gallop", "controls.gait.type"},
      {"controls.command.height=-0.1", "controls.command.height"},
      {"controls.command.forward_speed=abc", "controls.command.forward_speed"},
      {"controls.command.forward_speed=100", "controls.command.forward_speed"},
      {"controls.swing.kp=[1,2]", "controls.swing.kp"},
      {"controls.raibert_gain=-1", "controls.raibert_gain"},
      {"controls.forward_speed=0.3", "forward_speed"},  // belongs under command:
      {"controls.random_commands.yaw_rate=[1,0]", "controls.random_commands.yaw_rate"},
      {"controls.random_commands.every=0", "controls.random_commands.every"},
      {"controls.random_commands.height=[0,0.3]", "controls.random_commands.height"},
  };
  for (const auto& c : cases) {
    // A structured binding cannot be captured before C++20 (clang refuses).
    const std::string& set = c.first;
    const std::string& key = c.second;
    SCOPED_TRACE(set);
    const std::string msg = thrown_message([&] { spec(base, {set}); });
    ASSERT_FALSE(msg.empty());
    expect_contains(msg, {key});
    EXPECT_THROW(spec(base, {set}), ConfigError);
  }
  // A schedule whose times do not increase, with the line of the entry.
  const std::string msg = thrown_message(
      [&] { spec("  type: mpc\n  schedule:\n    - {t: 1.0}\n    - {t: 0.5}\n"); });
  expect_contains(msg, {"mpc.yaml:", "controls.schedule.1.t", "increase"});
  EXPECT_THROW(spec("  type: mpc\n  schedule: [{t: 0}]\n  random_commands: {every: 1}\n"), ConfigError);
}

TEST_F(MpcControllersConfigTest, AForceLimitThatCannotCarryTheRobotIsRefusedWithTheNumbers) {
  // A trot stands on two feet half the time: fz_max = 0.45 m g carries the
  // robot on four feet (1.8 m g) but not on two (0.9 m g).
  const double fz = 0.45 * weight();
  const std::string fz_set = "controls.mpc.fz_max=" + std::to_string(fz);
  EXPECT_NO_THROW(spec("  type: mpc\n  gait: {type: stand}\n", {fz_set}));
  const std::string msg = thrown_message([&] { spec("  type: mpc\n  gait: {type: trot}\n", {fz_set}); });
  expect_contains(msg, {"controls.mpc.fz_max", "infeasible", "2 stance feet", "m g"});
  EXPECT_THROW(spec("  type: mpc\n", {fz_set}), ConfigError);
  // Standing needs fz_max·4 ≥ m g.
  EXPECT_THROW(spec("  type: mpc\n  gait: {type: stand}\n", {"controls.mpc.fz_max=" + std::to_string(0.2 * weight())}),
               ConfigError);
  // fz_min·4 above the weight pushes the robot off the ground.
  const std::string lo = thrown_message(
      [&] { spec("  type: mpc\n", {"controls.mpc.fz_min=" + std::to_string(0.3 * weight()), "controls.mpc.fz_max=1000"}); });
  expect_contains(lo, {"controls.mpc.fz_min", "infeasible"});
  // A friction coefficient of 0 cannot hold any horizontal force.
  expect_contains(thrown_message([&] { spec("  type: mpc\n  mpc: {friction: 0}\n"); }),
                  {"controls.mpc.friction", "> 0", "got 0"});
}

TEST_F(MpcControllersConfigTest, MissingFeetAndAFixedBaseAreConfigErrors) {
  const ControllerRegistry r = registry();
  const std::string msg = thrown_message([&] {
    r.make(section("  type: mpc\n  feet: [toeFR, toeFL, heel, toeRL]\n"), laikago(), 0, nullptr);
  });
  expect_contains(msg, {"controls.feet.2", "'heel'"});
  EXPECT_THROW(r.make(section("  type: mpc\n  feet: [toeFR, toeFL]\n"), laikago(), 0, nullptr), ConfigError);
  // A floating box has no toes: the default (Laikago) feet are named.
  const Model<double> box = load_model_section(Config::parse(R"(
model:
  name: mpc_test_box
  bodies:
    - name: box
      joint: {name: box_free, type: free}
      mass: 1.0
      inertia: [0.004, 0.004, 0.006]
)", "box.yaml").at("model"));
  const std::string no_toes = thrown_message([&] { r.make(section("  type: mpc\n"), box, 0, nullptr); });
  expect_contains(no_toes, {"controls.feet", "toeFR", "mpc_test_box"});
  EXPECT_THROW(r.make(section("  type: mpc\n"), box, 0, nullptr), ConfigError);
  // A fixed-base model (the pendulum).
  const Model<double> pendulum =
      load_model_section(Config::parse("model: {file: models/pendulum.yaml}", testing::source_path("configs/x.yaml"))
                             .at("model"));
  const std::string fixed = thrown_message([&] { r.make(section("  type: mpc\n"), pendulum, 0, nullptr); });
  expect_contains(fixed, {"controls.type", "floating base"});
  EXPECT_THROW(r.make(section("  type: mpc_network\n  weights: w.h5\n"), pendulum, 0, nullptr), ConfigError);
}

TEST_F(MpcControllersConfigTest, RandomCommandsDependOnlyOnSeedAndTrajectory) {
  const std::string yaml = R"(
  type: mpc
  random_commands: {every: 0.5, forward_speed: [-0.2, 0.4], yaw_rate: [-0.5, 0.5], height: [0.26, 0.3], seed: 7}
)";
  const MpcControllerSpec s = spec(yaml);
  ASSERT_TRUE(s.random.has_value());
  const RandomCommandSpec& rc = *s.random;
  EXPECT_EQ(rc.every, 0.5);
  EXPECT_EQ(rc.seed, 7u);
  EXPECT_EQ(rc.lateral_speed[0], 0.0);  // no range: the command's value
  EXPECT_EQ(rc.lateral_speed[1], 0.0);
  // In range; not all equal (a generator that returned lo would fail).
  double lo = 1e9, hi = -1e9;
  for (int seg = 0; seg < 200; ++seg) {
    const QuadrupedCommand c = rc.command(3, seg);
    EXPECT_GE(c.forward_speed, -0.2);
    EXPECT_LE(c.forward_speed, 0.4);
    EXPECT_GE(c.yaw_rate, -0.5);
    EXPECT_LE(c.yaw_rate, 0.5);
    EXPECT_GE(c.height, 0.26);
    EXPECT_LE(c.height, 0.3);
    EXPECT_EQ(c.lateral_speed, 0.0);
    lo = std::min(lo, c.forward_speed);
    hi = std::max(hi, c.forward_speed);
  }
  EXPECT_LT(lo, -0.1);  // 200 uniform draws cover most of the range
  EXPECT_GT(hi, 0.3);

  // Two controllers for trajectory 3 (built in any order, e.g. by different
  // threads) give the same commands; trajectory 4 and another seed differ.
  const ControllerRegistry r = registry();
  auto a = r.make(section(yaml), laikago(), 3, nullptr);
  auto other = r.make(section(yaml), laikago(), 4, nullptr);
  auto b = r.make(section(yaml), laikago(), 3, nullptr);
  auto reseeded = r.make(section(yaml, {"controls.random_commands.seed=8"}), laikago(), 3, nullptr);
  const auto* A = dynamic_cast<MpcRolloutController*>(a.get());
  const auto* B = dynamic_cast<MpcRolloutController*>(b.get());
  const auto* O = dynamic_cast<MpcRolloutController*>(other.get());
  const auto* S = dynamic_cast<MpcRolloutController*>(reseeded.get());
  ASSERT_TRUE(A && B && O && S);
  int differ_index = 0, differ_seed = 0;
  for (double t = 0.1; t < 5.0; t += 0.5) {
    EXPECT_EQ(A->command_at(t).forward_speed, B->command_at(t).forward_speed);
    EXPECT_EQ(A->command_at(t).yaw_rate, B->command_at(t).yaw_rate);
    EXPECT_EQ(A->command_at(t).height, B->command_at(t).height);
    differ_index += A->command_at(t).forward_speed != O->command_at(t).forward_speed;
    differ_seed += A->command_at(t).forward_speed != S->command_at(t).forward_speed;
  }
  EXPECT_EQ(differ_index, 10);
  EXPECT_EQ(differ_seed, 10);
  // Piecewise constant over `every`: one segment's command within it, a new one after.
  EXPECT_EQ(A->command_at(0.01).forward_speed, A->command_at(0.49).forward_speed);
  EXPECT_NE(A->command_at(0.49).forward_speed, A->command_at(0.51).forward_speed);
  EXPECT_EQ(A->command_at(0.51).forward_speed, rc.command(3, 1).forward_speed);
}

// A network file with one network `in` -> 12 (identity, zero weights) whose
// output bias is `bias`.
std::string write_mpc_test_network(const std::string& path, int in, int out, const Eigen::VectorXd& bias) {
  NamedNetwork n;
  n.name = "mpc_forces";
  n.network = nn::Mlp(in, {nn::LayerSpec{out, nn::Activation::kIdentity}});
  const std::vector<double> w(static_cast<size_t>(in) * out, 0.0);
  n.network.set_layer(0, w.data(), bias.data());
  write_networks(path, {n});
  return path;
}

TEST_F(MpcControllersConfigTest, ANetworkOfTheWrongSizeIsADataErrorNamingTheFile) {
  const std::string dir = testing::fresh_dir("mpc_network_sizes");
  const ControllerRegistry r = registry();
  const int features = 25 + 4 * 10;
  write_mpc_test_network(dir + "/narrow.h5", 20, 12, Eigen::VectorXd::Zero(12));
  write_mpc_test_network(dir + "/three.h5", features, 3, Eigen::VectorXd::Zero(3));
  write_mpc_test_network(dir + "/ok.h5", features, 12, Eigen::VectorXd::Zero(12));
  const std::string narrow = thrown_message(
      [&] { r.make(section("  type: mpc_network\n  weights: " + dir + "/narrow.h5\n"), laikago(), 0, nullptr); });
  expect_contains(narrow, {"narrow.h5", "expected 65 inputs", "got 20"});
  EXPECT_THROW(r.make(section("  type: mpc_network\n  weights: " + dir + "/narrow.h5\n"), laikago(), 0, nullptr),
               DataError);
  const std::string three = thrown_message(
      [&] { r.make(section("  type: mpc_network\n  weights: " + dir + "/three.h5\n"), laikago(), 0, nullptr); });
  expect_contains(three, {"three.h5", "expected 12 outputs", "got 3"});
  // The horizon sets the input size: a 65-input network does not fit horizon 12.
  const std::string h12 = thrown_message([&] {
    r.make(section("  type: mpc_network\n  weights: " + dir + "/ok.h5\n  mpc: {horizon: 12}\n"), laikago(), 0, nullptr);
  });
  expect_contains(h12, {"ok.h5", "expected 73 inputs", "got 65"});
  EXPECT_THROW(r.make(section("  type: mpc_network\n  weights: " + dir + "/missing.h5\n"), laikago(), 0, nullptr),
               DataError);
  // A file error also says where the config named the file.
  const std::string missing = thrown_message(
      [&] { r.make(section("  type: mpc_network\n  weights: " + dir + "/missing.h5\n"), laikago(), 0, nullptr); });
  expect_contains(missing, {"missing.h5", "does not exist", "named by", "key 'controls.weights'"});
  expect_contains(narrow, {"key 'controls.weights'"});
  EXPECT_THROW(r.make(section("  type: mpc_network\n"), laikago(), 0, nullptr), ConfigError);  // no weights:
  EXPECT_THROW(r.make(section("  type: mpc\n  weights: " + dir + "/ok.h5\n"), laikago(), 0, nullptr), ConfigError);
  auto c = r.make(section("  type: mpc_network\n  weights: " + dir + "/ok.h5\n"), laikago(), 0, nullptr);
  ASSERT_TRUE(dynamic_cast<MpcRolloutController*>(c.get())->uses_network());
  // A relative path is taken from the config file's directory.
  const MpcControllerSpec rel = read_mpc_controller_spec(
      Config::parse("controls: {type: mpc_network, weights: ok.h5}", dir + "/c.yaml").at("controls"), laikago(),
      step(), true);
  EXPECT_EQ(std::filesystem::path(rel.weights_path), std::filesystem::path(dir) / "ok.h5");
}

// Closed loop through the network kind. A one-layer linear "network" that
// imitates nothing but is a stabilizing feedback on the features: per foot
// the standing force m g / 4 (output bias) plus a PD on the CoM height
// (features [2], command [12], vertical velocity [8]), a PD on pitch and
// roll ([0], [1], ω [3], [4]; front/rear and right/left feet push
// differentially) and damping of the horizontal velocity ([6], [7]). Used
// to check that the network's output really drives the robot: it holds the
// Laikago up for 1 s, while constant forces alone (no feedback) and zero
// forces let it sink (so the check can fail).
NamedNetwork mpc_test_linear_policy(double mg, double kp, double kd, double k_att, double d_att, double k_v) {
  const int in = 65, out = 12;
  nn::RowMatrixXd W = nn::RowMatrixXd::Zero(out, in);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(out);
  const double front[4] = {1, 1, -1, -1}, right[4] = {1, -1, 1, -1};  // FR FL RR RL
  for (int i = 0; i < 4; ++i) {
    const int z = 3 * i + 2;
    b[z] = mg / 4;
    W(z, 12) += kp;  // height command
    W(z, 2) -= kp;   // CoM height
    W(z, 8) -= kd;   // CoM vertical velocity
    // Pitch θ > 0 is nose down (R = Rz Ry Rx): the front feet push more.
    W(z, 1) += front[i] * k_att;
    W(z, 4) += front[i] * d_att;
    // Roll φ > 0 lowers the right side: the right feet push more.
    W(z, 0) += right[i] * k_att;
    W(z, 3) += right[i] * d_att;
    W(3 * i, 6) = -k_v;
    W(3 * i + 1, 7) = -k_v;
  }
  NamedNetwork n;
  n.name = "mpc_forces";
  n.network = nn::Mlp(in, {nn::LayerSpec{out, nn::Activation::kIdentity}});
  n.network.set_layer(0, W.data(), b.data());
  return n;
}

double mpc_test_min_height(const std::string& controls) {
  testing::Scenario s("rollout_laikago_standing");  // same model and contact as the trot config
  ControllerRegistry r = standard_controllers();
  add_mpc_controllers(r, s.options);
  s.controller = r.make(Config::parse("controls: " + controls, "net.yaml").at("controls"), s.model, 0, nullptr);
  double min_height = 1e9;
  for (long long k = 0; k < s.steps(1.0); ++k) {
    s.step();
    min_height = std::min(min_height, s.q[2]);
  }
  return min_height;
}
double mpc_test_min_height_with_network(const std::string& weights) {
  return mpc_test_min_height("{type: mpc_network, gait: {type: stand}, weights: " + weights + "}");
}

TEST_F(MpcControllersConfigTest, AStandingForceNetworkHoldsTheRobotUp) {
  const std::string dir = testing::fresh_dir("mpc_network_stand");
  write_networks(dir + "/feedback.h5", {mpc_test_linear_policy(weight(), 3000, 300, 600, 60, 50)});
  write_networks(dir + "/constant.h5", {mpc_test_linear_policy(weight(), 0, 0, 0, 0, 0)});
  write_mpc_test_network(dir + "/zero.h5", 65, 12, Eigen::VectorXd::Zero(12));
  const double z0 = 0.356162;
  const double feedback = mpc_test_min_height_with_network(dir + "/feedback.h5");
  const double constant = mpc_test_min_height_with_network(dir + "/constant.h5");
  const double zero = mpc_test_min_height_with_network(dir + "/zero.h5");
  const double qp = mpc_test_min_height("{type: mpc, gait: {type: stand}}");
  std::printf("[ mpc_network ] min torso height over 1 s standing: feedback network %.4f m, constant m g/4 %.4f m, "
              "zero forces %.4f m, the QP %.4f m\n", feedback, constant, zero, qp);
  EXPECT_GT(feedback, z0 - 0.03);
  EXPECT_GT(qp, z0 - 0.03);
  EXPECT_LT(zero, 0.2);
}

}  // namespace
}  // namespace neuralsim
