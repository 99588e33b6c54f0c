// End-to-end tests of the `rollout` CLI: every shipped config runs, outputs
// are what summary.json says, and every bad input exits with its documented
// code and a message that says what is wrong and where.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "neuralsim/io/hdf5_trajectory.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::run_command;

std::string rollout() { return testing::app_path("rollout"); }

nlohmann::json read_summary(const std::string& dir) {
  return nlohmann::json::parse(testing::read_text(dir + "/summary.json"));
}

using testing::write_file;

class ShippedConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedConfig, RunsAndWritesWhatSummarySays) {
  if (GetParam().find("laikago") != std::string::npos) {
    NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
  }
  const std::string out = fresh_dir("shipped_" + GetParam());
  const auto r = run_command(rollout() + " --config configs/" + GetParam() + ".yaml --seed 3 -q --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json s = read_summary(out);
  EXPECT_EQ(s["status"], "ok");
  EXPECT_EQ(s["seed"], 3);
  EXPECT_TRUE(s.contains("provenance"));
  const TrajectorySet set = read_trajectories(out + "/trajectories.h5");
  EXPECT_EQ(set.trajectories.size(), s["metrics"]["num_trajectories"].get<size_t>());
  EXPECT_EQ(set.meta.seed, 3);
  for (const auto& tr : set.trajectories) {
    EXPECT_EQ(tr.q.cols(), s["metrics"]["nq"].get<int>());
    EXPECT_TRUE(tr.q.allFinite());
  }
}

INSTANTIATE_TEST_SUITE_P(Rollout, ShippedConfig,
                         ::testing::Values("rollout_double_pendulum", "rollout_pendulum_pd",
                                           "rollout_cartpole_sinusoid", "rollout_chain_constant",
                                           "rollout_swimmer", "rollout_laikago_drop", "rollout_ball_bounce",
                                           "rollout_ball_resting", "rollout_box_sliding", "rollout_ball_throw",
                                           "rollout_laikago_standing", "rollout_planar_pushing",
                                           "rollout_ball_bounce_slide", "rollout_laikago_trot",
                                           "rollout_laikago_mjcf", "rollout_drag_chain",
                                           "rollout_sigmoid_friction_arm"));

TEST(RolloutApp, SameSeedSameDataDifferentSeedDifferentData) {
  const std::string a = fresh_dir("seed_a"), b = fresh_dir("seed_b"), c = fresh_dir("seed_c");
  const std::string cmd = rollout() + " --config configs/rollout_double_pendulum.yaml -q --set sim.duration=0.5";
  ASSERT_EQ(run_command(cmd + " --seed 5 --out " + a).exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --seed 5 --threads 1 --out " + b).exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --seed 6 --out " + c).exit_code, 0);
  const auto A = read_trajectories(a + "/trajectories.h5"), B = read_trajectories(b + "/trajectories.h5"),
             C = read_trajectories(c + "/trajectories.h5");
  EXPECT_EQ(A.trajectories[3].q, B.trajectories[3].q);
  EXPECT_NE(A.trajectories[3].q, C.trajectories[3].q);
}

// Replaying data generated with the true lengths is exact; a model with a
// wrong link length predicts worse, and more so at longer horizons.
TEST(RolloutApp, CompareReportsErrorsThatGrowWithModelMismatch) {
  const std::string gen = fresh_dir("cmp_gen"), ok = fresh_dir("cmp_ok"), bad = fresh_dir("cmp_bad");
  const std::string base = rollout() + " --config configs/rollout_double_pendulum.yaml -q --set sim.duration=2";
  ASSERT_EQ(run_command(base + " --out " + gen).exit_code, 0);
  const std::string data = gen + "/trajectories.h5";
  ASSERT_EQ(run_command(base + " --compare " + data + " --out " + ok).exit_code, 0);
  const auto r = run_command(base + " --set params.link.link1.length=3.1 --compare " + data + " --out " + bad);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s_ok = read_summary(ok), s_bad = read_summary(bad);
  EXPECT_LT(s_ok["metrics"]["mean_rmse_q"].get<double>(), 1e-9);
  EXPECT_GT(s_bad["metrics"]["mean_rmse_q"].get<double>(), 1e-3);
  const auto& h = s_bad["metrics"]["per_trajectory"][0]["rmse_q_by_horizon"];
  EXPECT_LT(h["10"].get<double>(), h["100"].get<double>());
  EXPECT_TRUE(std::filesystem::exists(bad + "/compare.h5"));
}

TEST(RolloutApp, HelpAndUsageErrors) {
  EXPECT_EQ(run_command(rollout() + " --help").exit_code, 0);
  EXPECT_EQ(run_command(rollout() + " --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_command(rollout()).exit_code, 2);  // --config is required
}

TEST(RolloutApp, MalformedYamlNamesFileAndLine) {
  const std::string dir = fresh_dir("bad_yaml");
  write_file(dir + "/bad.yaml", "model:\n  file: x.yaml\nsim: [dt: 0.1\n");
  const auto r = run_command(rollout() + " --config " + dir + "/bad.yaml --out " + dir + "/out");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml:"), std::string::npos) << r.err;
}

TEST(RolloutApp, UnknownKeyAndUnknownParameterAreConfigErrors) {
  const std::string dir = fresh_dir("bad_keys");
  auto r = run_command(rollout() + " --config configs/rollout_double_pendulum.yaml --set sim.dtt=0.1 --out " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dtt"), std::string::npos) << r.err;
  r = run_command(rollout() + " --config configs/rollout_double_pendulum.yaml --set params.link.link9.mass=1 --out " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("link.link9.mass"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("link.link1.length"), std::string::npos) << r.err;  // lists valid names
  EXPECT_FALSE(std::filesystem::exists(dir + "/trajectories.h5"));
}

TEST(RolloutApp, MismatchedDatasetIsADataError) {
  const std::string dir = fresh_dir("mismatch");
  // Pendulum data (nq = 1) replayed on the double pendulum (nq = 2).
  const auto r = run_command(rollout() + " --config configs/rollout_double_pendulum.yaml --compare datasets/pendulum_pd.h5 --out " + dir);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("pendulum_pd.h5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected [joint1, joint2]"), std::string::npos) << r.err;
}

TEST(RolloutApp, DivergenceIsANumericalErrorThatSaysWhere) {
  const std::string dir = fresh_dir("diverge");
  // A PD gain of 1e9 with 1 s explicit steps grows ~1e9x per step until it overflows.
  const auto r = run_command(rollout() +
                             " --config configs/rollout_pendulum_pd.yaml --set sim.dt=1 --set sim.duration=100"
                             " --set controls.kp=[1e9] -q --out " + dir);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("diverged at t ="), std::string::npos) << r.err;
  EXPECT_EQ(read_summary(dir)["status"], "diverged");
  EXPECT_FALSE(std::filesystem::exists(dir + "/trajectories.h5"));
}

// Ctrl-C keeps the trajectories that were complete and writes no stubs: a
// later tool must never train on a cut trajectory it cannot tell apart.
TEST(RolloutApp, InterruptWritesOnlyCompleteTrajectories) {
  const std::string dir = fresh_dir("interrupt");
  // Trajectory 0 is short and completes; trajectory 1 runs long enough that
  // SIGINT after 1 s lands in the middle of it.
  const auto r = run_command("timeout --preserve-status -s INT 1 " + rollout() +
                             " --config configs/rollout_double_pendulum.yaml --set sim.duration=3000 --set "
                             "initial_states.count=2 --threads 1 -q --out " + dir);
  ASSERT_EQ(r.exit_code, 130) << r.err;
  const auto summary = read_summary(dir);
  EXPECT_EQ(summary["status"], "interrupted");
  EXPECT_EQ(summary["metrics"]["num_requested_trajectories"], 2);
  const long long written = summary["metrics"]["num_trajectories"];
  EXPECT_LT(written, 2);
  if (written > 0) {
    const auto set = read_trajectories(dir + "/trajectories.h5");
    for (const auto& t : set.trajectories) EXPECT_EQ(t.size(), 3000001);
  } else {
    EXPECT_FALSE(std::filesystem::exists(dir + "/trajectories.h5"));
  }
}

// Windows in seconds and the inverse-dynamics torque error. The friction
// dataset is 4 trajectories of 4 s at 100 Hz generated by this config: every
// 0.5 s with a 1 s horizon gives the starts 0, 0.5, ..., 3 (7 windows per
// trajectory) and skips 3.5 and 4 (their horizon runs past the data).
// The torque error with a 7-sample cubic Savitzky–Golay fit (0.06 s at
// 100 Hz): the default 31 samples (0.3 s) pass only ~4 Hz at 100 Hz and
// flatten this chaotic motion's q̈ (RMSE 0.65 instead of 0.09 N·m).
const char* kFrictionCompare =
    " --config configs/rollout_double_pendulum_friction.yaml --compare datasets/double_pendulum_friction.h5 -q"
    " --set compare.windows.every=0.5 --set compare.windows.horizon=1.0"
    " --set 'compare.torque={derivatives: {method: savitzky_golay, window: 7, order: 3}}'";

TEST(RolloutApp, CompareReportsWindowsInSecondsAndTorqueError) {
  const std::string ok = fresh_dir("cmp_windows_ok"), off = fresh_dir("cmp_windows_offset"),
                    bad = fresh_dir("cmp_windows_bad");
  auto r = run_command(rollout() + kFrictionCompare + " --out " + ok);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double c = 0.5;
  r = run_command(rollout() + kFrictionCompare + " --set params.joint.joint2.torque_offset=" + std::to_string(c) +
                  " --out " + off);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(rollout() + kFrictionCompare + " --set params.link.link2.length=1.2 --out " + bad);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m_ok = read_summary(ok)["metrics"], m_off = read_summary(off)["metrics"],
             m_bad = read_summary(bad)["metrics"];

  const auto& w = m_ok["windows"];
  EXPECT_EQ(w["every_s"].get<double>(), 0.5);
  EXPECT_EQ(w["horizon_s"].get<double>(), 1.0);
  EXPECT_EQ(w["count"].get<int>(), 4 * 7);
  EXPECT_EQ(w["skipped"].get<int>(), 4 * 2);
  ASSERT_EQ(w["per_window"].size(), 28u);
  for (int k = 0; k < 7; ++k) {
    const auto& pw = w["per_window"][k];
    EXPECT_EQ(pw["trajectory"], "000");
    EXPECT_NEAR(pw["t0"].get<double>(), 0.5 * k, 1e-9);
    EXPECT_NEAR(pw["t1"].get<double>(), 0.5 * k + 1.0, 1e-9);
  }
  ASSERT_EQ(w["per_trajectory"].size(), 4u);
  EXPECT_EQ(w["per_trajectory"][3]["count"].get<int>(), 7);
  // The data-generating model replays each window exactly.
  for (const char* key : {"mean_rmse_q", "median_rmse_q", "mean_rmse_qd", "median_rmse_qd"})
    EXPECT_LT(w[key].get<double>(), 1e-9) << key;
  EXPECT_GT(m_bad["windows"]["mean_rmse_q"].get<double>(), 1e-3);

  // Torque: with the true model only the q̈ estimate errs (a local cubic of
  // 100 Hz data, torques held over each interval). A
  // constant offset c on joint2 moves its RMSE by at most that error
  // (‖e + c‖ lies within c ± ‖e‖), and leaves joint1 as it was.
  const auto& t_ok = m_ok["torque"];
  ASSERT_TRUE(t_ok["rmse_per_joint"].contains("joint1")) << t_ok.dump();
  const double e1 = t_ok["rmse_per_joint"]["joint1"], e2 = t_ok["rmse_per_joint"]["joint2"];
  EXPECT_LT(t_ok["rmse"].get<double>(), 0.5);
  EXPECT_NEAR(m_off["torque"]["rmse_per_joint"]["joint2"].get<double>(), c, e2 + 1e-12);
  EXPECT_DOUBLE_EQ(m_off["torque"]["rmse_per_joint"]["joint1"].get<double>(), e1);
  EXPECT_GT(m_bad["torque"]["rmse"].get<double>(), t_ok["rmse"].get<double>());
  EXPECT_EQ(t_ok["samples"].get<int>(), 4 * (401 - 6));
  EXPECT_EQ(t_ok["derivatives"]["method"], "savitzky_golay");
  EXPECT_EQ(t_ok["derivatives"]["window"], 7);
}

// compare.torque takes simid's derivative options and defaults: `true` is
// Savitzky–Golay (31, cubic) on the recording's time stamps; filter_window
// is the moving average with central differences; bad values name the key.
TEST(RolloutApp, CompareTorqueHasSimidsDerivativeOptions) {
  const std::string base = " --config configs/rollout_double_pendulum_friction.yaml --compare "
                           "datasets/double_pendulum_friction.h5 -q --force";
  const std::string def = fresh_dir("cmp_torque_default"), ma = fresh_dir("cmp_torque_ma");
  auto r = run_command(rollout() + base + " --set compare.torque=true --out " + def);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(rollout() + base + " --set 'compare.torque={filter_window: 5}' --out " + ma);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t_def = read_summary(def)["metrics"]["torque"], t_ma = read_summary(ma)["metrics"]["torque"];
  EXPECT_EQ(t_def["derivatives"]["method"], "savitzky_golay");
  EXPECT_EQ(t_def["derivatives"]["window"], 31);
  EXPECT_EQ(t_def["derivatives"]["order"], 3);
  EXPECT_EQ(t_def["samples"].get<int>(), 4 * (401 - 30));
  EXPECT_EQ(t_ma["derivatives"]["method"], "central_difference");
  EXPECT_EQ(t_ma["derivatives"]["window"], 5);
  EXPECT_EQ(t_ma["samples"].get<int>(), 4 * (401 - 6));
  for (const auto& [sets, key] : std::vector<std::pair<std::string, std::string>>{
           {"--set 'compare.torque={derivatives: {method: savitzky_golay, window: 8}}'",
            "compare.torque.derivatives.window"},
           {"--set 'compare.torque={derivatives: {method: sg}}'", "compare.torque.derivatives.method"},
           {"--set 'compare.torque={filter_window: 3, derivatives: {window: 7}}'", "compare.torque.filter_window"},
           {"--set 'compare.torque={window: 7}'", "window"}}) {
    const std::string dir = fresh_dir("cmp_torque_bad");
    r = run_command(rollout() + base + " " + sets + " --out " + dir + "/run");
    EXPECT_EQ(r.exit_code, 2) << sets << "\n" << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << sets << "\n" << r.err;
  }
}

// A lumped planar link (issue #37): the double pendulum's link 2 (1 kg at
// 4 m) with an inertia of −1 kg·m² about its COM, 15 about its joint, is
// accepted because every joint turns about y, with a warning naming the link.
TEST(RolloutApp, AcceptsALumpedPlanarLinkWithAWarningNamingIt) {
  const std::string lumped = fresh_dir("rollout_lumped");
  const auto r = run_command(rollout() + " --config configs/rollout_double_pendulum.yaml -q --set sim.duration=0.5"
                                         " --set params.link.link2.inertia.yy=-1 --out " + lumped);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_summary(lumped);
  ASSERT_EQ(s["warnings"].size(), 1u) << s["warnings"].dump();
  const std::string w = s["warnings"][0];
  EXPECT_NE(w.find("link 'link2'"), std::string::npos) << w;
  EXPECT_NE(w.find("planar chain"), std::string::npos) << w;
  EXPECT_NE(r.err.find("link 'link2'"), std::string::npos) << "logged as well";
}

// Every configured horizon keeps its key; one longer than the data is null.
TEST(RolloutApp, CompareHorizonLongerThanTheDataIsNullNotRenamed) {
  const std::string out = fresh_dir("cmp_long_horizon");
  const auto r = run_command(rollout() + " --config configs/rollout_double_pendulum_friction.yaml -q --compare "
                             "datasets/double_pendulum_friction.h5 --set compare.horizons=[10,401,100000] --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto h = read_summary(out)["metrics"]["per_trajectory"][0]["rmse_q_by_horizon"];
  EXPECT_EQ(h.size(), 3u) << h.dump();
  EXPECT_TRUE(h["10"].is_number());
  EXPECT_TRUE(h["401"].is_number());
  ASSERT_TRUE(h.contains("100000"));
  EXPECT_TRUE(h["100000"].is_null());
}

struct WindowBadCase {
  const char* name;
  const char* sets;
  const char* key;
};
void PrintTo(const WindowBadCase& c, std::ostream* os) { *os << c.name; }

class RolloutBadWindows : public ::testing::TestWithParam<WindowBadCase> {};

TEST_P(RolloutBadWindows, ExitTwoNamingTheKey) {
  const WindowBadCase& c = GetParam();
  const std::string dir = fresh_dir(std::string("cmp_bad_windows_") + c.name);
  const auto r = run_command(rollout() + " --config configs/rollout_double_pendulum_friction.yaml -q --compare "
                             "datasets/double_pendulum_friction.h5 " + c.sets + " --out " + dir + "/run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(c.key), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run/compare.h5"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RolloutBadWindows,
    ::testing::Values(
        WindowBadCase{"negative_every", "--set compare.windows.every=-1 --set compare.windows.horizon=1",
                      "compare.windows.every"},
        WindowBadCase{"infinite_every", "--set compare.windows.every=.inf --set compare.windows.horizon=1",
                      "compare.windows.every"},
        WindowBadCase{"zero_horizon", "--set compare.windows.every=1 --set compare.windows.horizon=0",
                      "compare.windows.horizon"},
        WindowBadCase{"infinite_horizon", "--set compare.windows.every=1 --set compare.windows.horizon=.inf",
                      "compare.windows.horizon"},
        WindowBadCase{"horizon_longer_than_data", "--set compare.windows.every=1 --set compare.windows.horizon=4.5",
                      "compare.windows.horizon"},
        WindowBadCase{"missing_horizon", "--set compare.windows.every=1", "compare.windows.horizon"},
        WindowBadCase{"typo", "--set compare.windows.evry=1 --set compare.windows.horizon=1", "evry"},
        WindowBadCase{"torque_not_bool", "--set compare.torque=yes_please", "compare.torque"}),
    [](const ::testing::TestParamInfo<WindowBadCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace neuralsim

namespace neuralsim {
namespace {

// import-csv turns the shipped headerless example into an HDF5 file with
// the description's units, and rollout --compare reads the description
// directly, as every tool that reads trajectories does.
TEST(ImportCsvApp, HeaderlessExampleRoundTripsThroughHdf5) {
  const std::string out = testing::fresh_dir("import_headerless");
  const auto r = testing::run_command(testing::app_path("import-csv") +
                                      " --config configs/import/example_headerless.yaml -q --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TrajectorySet set = read_trajectories(out + "/trajectories.h5");
  ASSERT_EQ(set.trajectories.size(), 1u);
  const Trajectory& t = set.trajectories[0];
  EXPECT_EQ(t.size(), 401);
  EXPECT_NEAR(t.time[1] - t.time[0], 0.005, 1e-12);
  EXPECT_NEAR(t.q(0, 0), M_PI / 6, 1e-9);  // 30 degrees
  EXPECT_TRUE(t.has_tau());
  const nlohmann::json s = testing::read_json(out + "/summary.json");
  EXPECT_EQ(s["app"], "import-csv");
  EXPECT_EQ(s["metrics"]["num_samples"], 401);
  EXPECT_EQ(s["outputs"].size(), 1u);

  const std::string cmp = testing::fresh_dir("import_headerless_compare");
  const auto c = testing::run_command(testing::app_path("rollout") +
                                      " --config configs/rollout_pendulum_pd.yaml --set controls.type=zero"
                                      " --compare configs/import/example_headerless.yaml -q --out " + cmp);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(testing::read_json(cmp + "/summary.json")["metrics"]["mean_rmse_q"].is_number());
}

// #41: the shipped positions-only example (an undamped unit pendulum's
// angle at 400 Hz, no time, no velocity): stamps k / 400, q̇ derived, the
// 10 end samples of the window dropped, the last quarter written as
// validation.h5. The derived q̇ must conserve the pendulum's energy:
// q̇² = 2 g (cos q − cos 30°) (l = 1).
TEST(ImportCsvApp, PositionsOnlyAtASampleRateWithDerivedVelocityAndSplit) {
  const std::string out = testing::fresh_dir("import_positions_rate");
  const auto r = testing::run_command(testing::app_path("import-csv") +
                                      " --config configs/import/example_positions_rate.yaml -q --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TrajectorySet train = read_trajectories(out + "/trajectories.h5");
  const TrajectorySet validation = read_trajectories(out + "/validation.h5");
  ASSERT_EQ(train.trajectories.size(), 1u);
  ASSERT_EQ(validation.trajectories.size(), 1u);
  const Trajectory& t = train.trajectories[0];
  const Trajectory& v = validation.trajectories[0];
  // 801 samples, 10 dropped at each end: 781; floor(0.25 * 781) = 195 validate.
  ASSERT_EQ(t.size(), 586);
  ASSERT_EQ(v.size(), 195);
  EXPECT_EQ(t.time[0], 10 / 400.0);
  EXPECT_EQ(v.time[0], 596 / 400.0);
  EXPECT_EQ(v.time[194], 790 / 400.0);
  const double g = 9.81, cos0 = std::cos(M_PI / 6);
  for (const Trajectory* tr : {&t, &v})
    for (Eigen::Index k = 0; k < tr->size(); ++k)
      EXPECT_NEAR(tr->qd(k, 0) * tr->qd(k, 0), 2 * g * (std::cos(tr->q(k, 0)) - cos0), 1e-5) << k;  // measured 1.8e-6
  const nlohmann::json s = testing::read_json(out + "/summary.json");
  EXPECT_EQ(s["metrics"]["num_samples"], 586);
  EXPECT_EQ(s["metrics"]["validation_num_samples"], 195);
  EXPECT_EQ(s["outputs"].size(), 2u);
  EXPECT_NE(s["warnings"].dump().find("first and last 10 samples"), std::string::npos) << s["warnings"].dump();
}

// Rows a CSV import drops (a repeated time stamp) are a warning wherever the
// CSV is read: on stderr under -q and in summary.json's warnings, in
// import-csv and in the tools that read a CSV description as data.
TEST(ImportCsvApp, DroppedDuplicateRowsAreAWarningInEveryTool) {
  const std::string dir = testing::fresh_dir("import_duplicates");
  std::string csv = "t,x,y\n";
  for (int k = 0; k < 60; ++k) csv += std::to_string(0.01 * k) + ",0.1,0.2\n" + (k == 30 ? "0.3,0.1,0.2\n" : "");
  testing::write_file(dir + "/log.csv", csv);
  testing::write_file(dir + "/import.yaml",
                      "csv_import:\n  files: [log.csv]\n  time: t\n  model: double_pendulum\n"
                      "  joint_names: [joint1, joint2]\n  q: [x, y]\n  qd: [x, y]\n");
  const std::string warning = "log.csv: dropped 1 row(s) with duplicate time stamps (first on line 33)";
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"import-csv", " --config " + dir + "/import.yaml"},
      {"rollout", " --config configs/rollout_double_pendulum.yaml --compare " + dir + "/import.yaml"},
      {"simid", " --config configs/simid_double_pendulum_lengths.yaml --set data.train=" + dir +
                    "/import.yaml --set estimate.basin_hopping.rounds=1 --set estimate.basin_hopping.population=1"
                    " --set estimate.solver.max_iterations=1"}};
  for (const auto& [app, args] : runs) {
    SCOPED_TRACE(app);
    const std::string out = dir + "/out_" + app;
    const auto r = testing::run_command(testing::app_path(app) + args + " -q --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
    const nlohmann::json warnings = testing::read_json(out + "/summary.json")["warnings"];
    EXPECT_EQ(std::count_if(warnings.begin(), warnings.end(),
                            [&](const nlohmann::json& w) { return w.get<std::string>().find(warning) != std::string::npos; }),
              1)
        << warnings.dump();
  }
}

// --strict (#35): an MJCF element with no counterpart (a site on the world) is one
// warning without it and an error naming the element and its line with it;
// a model that is not MJCF refuses the flag.
TEST(RolloutApp, StrictRefusesWhatAnMjcfModelCannotExpress) {
  const std::string dir = fresh_dir("rollout_strict");
  write_file(dir + "/pendulum.xml",
                      "<mujoco>\n  <compiler angle=\"radian\"/>\n  <worldbody>\n    <body name=\"link1\">\n"
                      "      <joint name=\"joint1\" axis=\"0 1 0\"/>\n"
                      "      <inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"1e-3 1e-3 1e-3\"/>\n"
                      "    </body>\n    <site name=\"mark\" pos=\"0 0 -1\"/>\n  </worldbody>\n</mujoco>\n");
  write_file(dir + "/rollout.yaml",
                      "name: strict\nmodel: {mjcf: pendulum.xml}\nsim: {integrator: rk4, dt: 0.01, duration: 0.1}\n"
                      "initial_states: {list: [{q: [0.3]}]}\ncontrols: {type: constant, value: [0]}\n");
  const auto lenient = run_command(rollout() + " --config " + dir + "/rollout.yaml -q --out " + dir + "/a");
  ASSERT_EQ(lenient.exit_code, 0) << lenient.err;
  const auto s = testing::read_json(dir + "/a/summary.json");
  ASSERT_FALSE(s["warnings"].empty());
  EXPECT_NE(s["warnings"].dump().find("site"), std::string::npos) << s["warnings"].dump();
  const auto strict = run_command(rollout() + " --config " + dir + "/rollout.yaml -q --strict --out " + dir + "/b");
  EXPECT_EQ(strict.exit_code, 2) << strict.err;
  EXPECT_NE(strict.err.find("pendulum.xml:8"), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("site"), std::string::npos) << strict.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/b/summary.json"));
  const auto other = run_command(rollout() + " --config configs/rollout_double_pendulum.yaml -q --strict --out " +
                                 dir + "/c");
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("--strict applies to MJCF models"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace neuralsim
