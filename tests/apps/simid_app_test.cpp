// End-to-end tests of the `simid` CLI: it recovers ground truth, is
// reproducible at any thread count, checkpoints and resumes, writes the best
// result on Ctrl-C, and rejects bad input with its documented exit code
// without leaving half-written outputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "common/html_report.hpp"
#include "common/python.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/parameter_file.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/simulate.hpp"
#include "support/files.hpp"
#include "support/html_check.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::run_command;

std::string simid() { return testing::app_path("simid"); }
const char* kLengthsConfig = " --config configs/simid_double_pendulum_lengths.yaml";
// Short data keep each fit around a second.
const char* kFast = " --set data.max_samples=101 --set estimate.residual.window=20 -q";

using testing::read_json;

TEST(SimidApp, RecoversDoublePendulumLengthsAndWritesAllOutputs) {
  const std::string out = fresh_dir("simid_lengths");
  // -q alone skips the plot (sweeps); output.plot=true asks for it.
  const auto r = run_command(simid() + kLengthsConfig + kFast + " --set output.plot=true --seed 3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "ok");
  EXPECT_LT(s["metrics"]["max_relative_error"].get<double>(), 1e-6);
  const auto p = read_json(out + "/params.json");
  EXPECT_NEAR(p["parameters"]["link.link1.length"]["value"].get<double>(), 3.0, 1e-5);
  EXPECT_NEAR(p["parameters"]["link.link2.length"]["value"].get<double>(), 4.0, 1e-5);
  EXPECT_TRUE(p["parameters"]["link.link1.length"]["std_error"].is_number());
  EXPECT_EQ(p["correlation"].size(), 2u);
  for (const char* f : {"identifiability.txt", "fit.h5", "measured.h5", "checkpoint.json"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  // The plot needs Debian's python3-matplotlib and python3-h5py (scripts/setup.sh installs them).
  const std::string python = neuralsim::python_interpreter();  // the one simid uses
  if (run_command("'" + python + "' -c 'import h5py, matplotlib'").exit_code == 0) {
    EXPECT_TRUE(std::filesystem::exists(out + "/fit.png"));
  }
  // rollout reads the fitted parameters back.
  const std::string ro = fresh_dir("simid_rollout_params");
  const auto rr = run_command(testing::app_path("rollout") +
                              " --config configs/rollout_double_pendulum.yaml -q --set sim.duration=0.2 --set params_file=" +
                              out + "/params.json --out " + ro);
  EXPECT_EQ(rr.exit_code, 0) << rr.err;
}

// report.html (apps/simid/simid_report.cpp): self-contained and
// well-formed, every fitted parameter and every warning in it (here: a
// length held below its true value ends at its bound), measured against
// fitted for both joint angles of every trajectory, a residual histogram
// per angle, and a hostile trajectory name escaped.
TEST(SimidApp, ReportIsSelfContainedAndShowsEveryChannel) {
  const std::string out = fresh_dir("simid_report");
  TrajectorySet data = read_trajectories(testing::source_path("datasets/double_pendulum.h5"));
  const std::string hostile = "<script>alert('x')&\"q\"";
  data.trajectories.front().name = hostile;
  write_trajectories(out + "_data.h5", data);
  const auto r = run_command(simid() + kLengthsConfig + kFast + " --set data.train=" + out + "_data.h5" +
                             " --set estimate.parameters.1.bounds=[0.1,3.5] --set estimate.basin_hopping.enabled=false"
                             " --set estimate.parameters.0.initial=3 --set estimate.parameters.1.initial=3.4"
                             " --set estimate.solver.max_iterations=10 --seed 3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  const std::string doc = testing::read_text(out + "/report.html");
  EXPECT_EQ(testing::html_report_violation(doc), "");
  EXPECT_NE(doc.find(html_escape(hostile)), std::string::npos);
  EXPECT_EQ(doc.find(hostile), std::string::npos);
  for (const char* name : {"link.link1.length", "link.link2.length"}) EXPECT_NE(doc.find(name), std::string::npos);
  ASSERT_FALSE(s["warnings"].empty());
  for (const auto& w : s["warnings"]) EXPECT_NE(doc.find(html_escape(w.get<std::string>())), std::string::npos) << w;
  EXPECT_NE(doc.find("<tr class=\"flag\"><td>link.link2.length</td>"), std::string::npos);
  const auto& m = s["metrics"];
  const std::size_t trajectories = m["train_per_trajectory"].size() + m["validation_per_trajectory"].size();
  const std::string fits = testing::html_section(doc, "Measured and fitted");
  EXPECT_EQ(testing::html_count(fits, "<h3>"), trajectories);
  EXPECT_EQ(testing::html_count(fits, "<polyline"), 2 * 2 * trajectories);  // q1 and q2, measured and fitted
  EXPECT_EQ(testing::html_count(testing::html_section(doc, "Residuals"), "<figure>"), 2u);
  EXPECT_GE(testing::html_count(testing::html_section(doc, "Convergence"), "<polyline"), 1u);
  EXPECT_NE(testing::html_section(doc, "Provenance").find(s["provenance"]["git_revision"].get<std::string>()),
            std::string::npos);
  // An XML parser agrees (where the helper scripts' python3 is installed: 127 when not).
  const auto x = run_command("'" + neuralsim::python_interpreter() +
                             "' -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " + out + "/report.html");
  if (x.exit_code != 127) EXPECT_EQ(x.exit_code, 0) << x.err;
}

// A body named like markup (model files are user input): its parameter's
// name is escaped wherever the report shows it (parameter table, heat map,
// identifiability, provenance), and the document stays well-formed.
TEST(SimidApp, ReportEscapesAHostileLinkName) {
  NEURALSIM_SKIP_WITHOUT_SHARED("real-data/dfki-simple-pendulum");
  const std::string out = fresh_dir("simid_report_hostile");
  std::string model = testing::read_text(testing::source_path("configs/models/dfki_pendulum.yaml"));
  model.replace(model.find("name: link1"), 11, "name: \"<script>l1&\"");
  testing::write_file(out + "_model.yaml", model);
  const auto r = run_command(simid() + " --config configs/simid_real_dfki_sg.yaml -q --set model.file=" + out +
                             "_model.yaml --set 'estimate.parameters.0.name=link.<script>l1&.mass'"
                             " --set estimate.solver.max_iterations=3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string doc = testing::read_text(out + "/report.html");
  EXPECT_EQ(testing::html_report_violation(doc), "");
  EXPECT_NE(testing::html_section(doc, "Parameters").find("<td>link.&lt;script&gt;l1&amp;.mass</td>"), std::string::npos);
  EXPECT_NE(doc.find(">1 link.&lt;script&gt;l1&amp;.mass</text>"), std::string::npos);  // the heat map's row
}

// params.json records the values held fixed beside the estimates, and a
// params_file reads both back (the estimate wins where a name is in both).
TEST(SimidApp, ParamsJsonRecordsTheFixedValues) {
  const std::string out = fresh_dir("simid_fixed");
  const auto r = run_command(simid() + " --config configs/simid_double_pendulum_friction.yaml" + kFast +
                             " --set estimate.basin_hopping.rounds=1 --set estimate.solver.max_iterations=2"
                             " --set params.joint.joint2.spring.stiffness=0.25 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = read_json(out + "/params.json");
  ASSERT_TRUE(p.contains("fixed")) << p.dump();
  EXPECT_EQ(p["fixed"]["joint.joint1.friction_velocity"]["value"].get<double>(), 0.05);
  EXPECT_EQ(p["fixed"]["joint.joint2.spring.stiffness"]["value"].get<double>(), 0.25);
  EXPECT_NE(p["fixed"]["joint.joint1.friction_velocity"]["source"].get<std::string>().find(".yaml"), std::string::npos);
  EXPECT_FALSE(p["fixed"].contains("link.link1.mass"));  // estimated, so under "parameters" only
  const std::map<std::string, double> back = read_parameter_file(out + "/params.json");
  EXPECT_EQ(back.at("joint.joint2.spring.stiffness"), 0.25);
  EXPECT_EQ(back.at("link.link1.mass"), p["parameters"]["link.link1.mass"]["value"].get<double>());
}

// Data from a pendulum whose motor adds armature 0.05 to a link with
// (Ixx, Iyy, Izz) = (0.01, 0.01, 0.001) about y: a fit of the plain entry
// inertia.yy absorbs it, Iyy ≈ 0.06 > Ixx + Izz, which no rigid body has.
// simid says so in the summary instead of reporting it silently.
TEST(SimidApp, WarnsWhenPlainInertiaEntriesFitANonPhysicalBody) {
  const std::string dir = fresh_dir("simid_nonphysical");
  const std::string body =
      "  bodies:\n"
      "    - {name: link1, joint: {name: j1, axis: [0, 1, 0], ARM}, mass: 1.0, com: [0, 0, -0.5],"
      " inertia: [0.01, 0.01, 0.001]}\n";
  auto model_with = [&](const std::string& armature) {
    std::string b = body;
    b.replace(b.find("ARM"), 3, "armature: " + armature);
    return "model:\n  name: geared\n" + b;
  };
  const Model<double> truth = [&] {
    Config c = Config::parse(model_with("0.05"), "truth.yaml");
    return build_yaml_model(c.at("model"));
  }();
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  TrajectorySet set;
  set.meta.joint_names = {"j1"};
  for (int k = 0; k < 2; ++k) {
    Stepper<double> stepper(truth, step);
    Sinusoid sine;
    sine.offset = sine.phase = Eigen::VectorXd::Zero(1);
    sine.amplitude = Eigen::VectorXd::Constant(1, 3.0 + k);
    sine.frequency_hz = Eigen::VectorXd::Constant(1, 0.7 + 0.3 * k);
    SinusoidControl<double> control(sine);
    set.trajectories.push_back(simulate(stepper, Eigen::VectorXd::Constant(1, 0.2 * k),
                                        Eigen::VectorXd::Zero(1), control, 200, [] { return false; }));
    set.trajectories.back().name = "run" + std::to_string(k);
  }
  write_trajectories(dir + "/data.h5", set);
  testing::write_file(dir + "/fit.yaml",
             model_with("0.0") +
                 "sim: {integrator: rk4, dt: 0.01}\n"
                 "data: {train: data.h5}\n"
                 "estimate:\n"
                 "  parameters: [{name: link.link1.inertia.yy, initial: 0.01, bounds: [0, 1]}]\n"
                 "  residual: {type: single_shooting, window: 50}\n"
                 "  basin_hopping: {enabled: false}\n");
  const std::string out = dir + "/out";
  const auto r = run_command(simid() + " --config " + dir + "/fit.yaml -q --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_NEAR(s["metrics"]["parameters"]["link.link1.inertia.yy"].get<double>(), 0.06, 1e-4);
  EXPECT_EQ(s["metrics"]["physically_consistent"], false);
  bool warned = false;
  for (const auto& w : s["warnings"])
    warned = warned || (w.get<std::string>().find("not physical") != std::string::npos &&
                        w.get<std::string>().find("log_cholesky") != std::string::npos);
  EXPECT_TRUE(warned) << s["warnings"].dump();
}

// Basin hopping with a fixed budget (no early stop) must give bit-identical
// results on 1 and 2 threads.
TEST(SimidApp, SameSeedSameResultAtAnyThreadCount) {
  const std::string a = fresh_dir("simid_t1"), b = fresh_dir("simid_t2");
  const std::string cmd = simid() + kLengthsConfig + kFast +
                          " --set estimate.basin_hopping.rounds=2 --set estimate.basin_hopping.population=3"
                          " --set estimate.basin_hopping.cost_threshold=-1 --set estimate.residual.window=100 --seed 9";
  ASSERT_EQ(run_command(cmd + " --threads 1 --out " + a).exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --threads 2 --out " + b).exit_code, 0);
  const auto pa = read_json(a + "/params.json"), pb = read_json(b + "/params.json");
  EXPECT_EQ(pa["parameters"], pb["parameters"]);
  EXPECT_EQ(read_json(a + "/summary.json")["metrics"]["basin_hopping"]["history"].size(), 2u);
  // -q without output.plot: no drawing (sweeps), and summary.json lists no plot.
  EXPECT_FALSE(std::filesystem::exists(a + "/fit.png"));
  EXPECT_EQ(read_json(a + "/summary.json").dump().find("fit.png"), std::string::npos);
}

// The shipped MJCF example (issue #35): the double pendulum read from
// configs/models/double_pendulum.xml, its sim.dt and integrator taken from the
// file's <option>, fits the masses, damping and friction the dataset was
// generated with (the generator's double pendulum, the same mechanism).
TEST(SimidApp, MjcfModelRecoversDoublePendulumFriction) {
  const std::string out = fresh_dir("simid_mjcf");
  const auto r = run_command(simid() + " --config configs/simid_mjcf_double_pendulum_friction.yaml" + kFast +
                             " --seed 3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "ok");
  const auto p = read_json(out + "/params.json");
  EXPECT_NEAR(p["parameters"]["link.link1.mass"]["value"].get<double>(), 1.5, 1e-3);
  EXPECT_NEAR(p["parameters"]["link.link2.mass"]["value"].get<double>(), 0.8, 1e-3);
}

// Fossen drag coefficients are named parameters (issue #38): the shipped
// example fits four of the chain's (configs/simid_drag_chain.yaml) from 50 %
// off and recovers the values datasets/drag_chain.h5 was generated with.
TEST(SimidApp, DragChainRecoversFossenDragCoefficients) {
  const std::string out = fresh_dir("simid_drag_chain");
  // One round of basin hopping: its first local solves already reach a cost of 1e-24.
  const auto r = run_command(simid() + " --config configs/simid_drag_chain.yaml" + kFast +
                             " --set estimate.basin_hopping.rounds=1 --seed 1 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(out + "/summary.json")["status"], "ok");
  const auto p = read_json(out + "/params.json")["parameters"];
  for (const auto& [name, truth] : std::vector<std::pair<std::string, double>>{{"link.link1.drag.linear.y", 0.8},
                                                                               {"link.link2.drag.quadratic.y", 0.9},
                                                                               {"link.link3.drag.linear.y", 0.7},
                                                                               {"link.link2.drag.linear.x", 0.2}})
    EXPECT_NEAR(p[name]["value"].get<double>(), truth, 1e-6 * truth) << name;
}

TEST(SimidApp, ResumeContinuesFromCheckpointToTheSameResult) {
  const std::string straight = fresh_dir("simid_straight"), resumed = fresh_dir("simid_resumed");
  const std::string cmd = simid() + kLengthsConfig + kFast +
                          " --set estimate.basin_hopping.population=2 --set estimate.basin_hopping.cost_threshold=-1"
                          " --set estimate.residual.window=100 --seed 4";
  ASSERT_EQ(run_command(cmd + " --set estimate.basin_hopping.rounds=3 --out " + straight).exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --set estimate.basin_hopping.rounds=1 --out " + resumed).exit_code, 0);
  EXPECT_EQ(read_json(resumed + "/checkpoint.json")["next_round"], 1);
  const auto r = run_command(cmd + " --set estimate.basin_hopping.rounds=3 --resume --out " + resumed);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(resumed + "/summary.json")["metrics"]["basin_hopping"]["history"].size(), 3u);
  EXPECT_EQ(read_json(resumed + "/params.json")["parameters"], read_json(straight + "/params.json")["parameters"]);
  // A checkpoint from other parameters is refused.
  const auto bad = run_command(simid() + " --config configs/simid_double_pendulum_friction.yaml -q --resume --out " + resumed);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST(SimidApp, InterruptWritesBestResultSoFar) {
  const std::string out = fresh_dir("simid_interrupt");
  const auto r = run_command("timeout --preserve-status -s INT 1 " + simid() + kLengthsConfig +
                             " -q --set estimate.basin_hopping.rounds=100000 --set estimate.basin_hopping.cost_threshold=-1"
                             " --set data.max_samples=101 --threads 1 --out " + out);
  ASSERT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(read_json(out + "/summary.json")["status"], "interrupted");
  const auto p = read_json(out + "/params.json");
  EXPECT_TRUE(p["parameters"]["link.link1.length"]["value"].is_number());
}

struct SimidBadCase {
  const char* name;
  std::string args;
  int exit_code;
  std::string message;
  const char* needs_shared = nullptr;  // a path under ../shared the case reads
};
void PrintTo(const SimidBadCase& c, std::ostream* os) { *os << c.name; }

class SimidBadInput : public ::testing::TestWithParam<SimidBadCase> {};

TEST_P(SimidBadInput, ExitsWithCodeAndMessageAndWritesNothing) {
  const SimidBadCase& c = GetParam();
  if (c.needs_shared) {
    NEURALSIM_SKIP_WITHOUT_SHARED(c.needs_shared);
  }
  const std::string out = fresh_dir(std::string("simid_bad_") + c.name);
  const auto r = run_command(simid() + c.args + " --out " + out + "/run");
  EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out + "/run/params.json"));
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string dir = fresh_dir("simid_inputs_" + name);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimidBadInput,
    ::testing::Values(
        SimidBadCase{"unknown_parameter",
                 std::string(kLengthsConfig) + " --set estimate.parameters.0.name=link.link1.lenght", 2,
                 "(valid: gravity.x"},
        SimidBadCase{"inverted_bounds", std::string(kLengthsConfig) + " --set estimate.parameters.0.bounds=[10,0.1]", 2,
                 "inverted"},
        SimidBadCase{"nan_bounds", std::string(kLengthsConfig) + " --set estimate.parameters.0.bounds=[.nan,10]", 2, "got '.nan'"},
        SimidBadCase{"joint_mismatch", std::string(kLengthsConfig) + " --set data.train=datasets/pendulum_pd.h5", 3,
                 "joint names do not match"},
        SimidBadCase{"missing_channel",
                 std::string(kLengthsConfig) + " --set 'estimate.observe.link_positions=[{link: link2}]'", 3,
                 "link_poses/link2"},
        // Markers (a point on a link): a bad point or a data name twice is a
        // config error, a data entry the file lacks a data error.
        SimidBadCase{"marker_point_not_finite",
                 std::string(kLengthsConfig) +
                     " --set 'estimate.observe.link_positions=[{link: link2, point: [0, .nan, -1]}]'",
                 2, "estimate.observe.link_positions.0.point.1': expected a finite number"},
        SimidBadCase{"marker_data_twice",
                 std::string(kLengthsConfig) +
                     " --set 'estimate.observe.link_positions=[{link: link2}, {link: link2, point: [0, 0, -1]}]'",
                 2, "data name 'link2' listed twice"},
        SimidBadCase{"marker_missing_data",
                 std::string(kLengthsConfig) +
                     " --set 'estimate.observe.link_positions=[{link: link2, point: [0, 0, -1], data: tip_marker}]'",
                 3, "link_poses/tip_marker: observation channel 'link_positions.tip_marker'"},
        // The real free-swing recordings have no torques.
        SimidBadCase{"inverse_dynamics_without_torque",
                 std::string(kLengthsConfig) +
                     " --set model.file=configs/models/pendulum.yaml --set data.train=configs/import/multiarm_single_validation.yaml"
                     " --set 'estimate.parameters=[{name: link.link1.length}]' --set 'estimate.ground_truth={}'"
                     " --set estimate.residual.type=inverse_dynamics",
                 3, "/tau", "real-data/multiarm-pendulum"},
        SimidBadCase{"missing_data", std::string(kLengthsConfig) + " --set data.train=datasets/no_such_file.h5", 3,
                 "no_such_file.h5"},
        // β fitted directly: torque residuals of link inertias only.
        SimidBadCase{"base_parameters_shooting",
                 std::string(kLengthsConfig) + " --set estimate.residual.base_parameters=least_squares", 2,
                 "estimate.residual.base_parameters"},
        SimidBadCase{"base_parameters_without_inertias",
                 std::string(kLengthsConfig) + " --set estimate.residual.type=inverse_dynamics"
                                               " --set estimate.residual.base_parameters=least_squares",
                 2, "needs link inertias"},
        // Fitted starting states: only where a window is simulated, not beside
        // a shared initial.qd.* (both would set the starting velocity), not
        // with lbfgs (which moves θ only).
        SimidBadCase{"fit_initial_state_inverse_dynamics",
                 std::string(kLengthsConfig) + " --set estimate.residual.type=inverse_dynamics"
                                               " --set 'estimate.residual.fit_initial_state={q: true}'",
                 2, "estimate.residual.fit_initial_state"},
        SimidBadCase{"fit_initial_state_with_initial_qd",
                 std::string(kLengthsConfig) +
                     " --set 'estimate.parameters=[{name: link.link1.length, bounds: [0.1, 10]},"
                     " {name: initial.qd.joint1}]' --set 'estimate.ground_truth={}'"
                     " --set 'estimate.residual.fit_initial_state={qd: true}'",
                 2, "initial.qd.*"},
        SimidBadCase{"fit_initial_state_reach_targets",
                 " --config configs/simid_ball_throw.yaml --set 'estimate.residual.fit_initial_state={q: true}'", 2,
                 "a reach target's start state is given"},
        SimidBadCase{"fit_initial_state_lbfgs",
                 std::string(kLengthsConfig) + " --set estimate.solver.type=lbfgs"
                                               " --set 'estimate.residual.fit_initial_state={q: true}'",
                 2, "lbfgs cannot optimize starting states"}),
    [](const ::testing::TestParamInfo<SimidBadCase>& i) { return std::string(i.param.name); });

// residual.fit_initial_state on exact data: the fitted start of every
// 20-sample window is the recorded state, the lengths come back, and fit.h5
// holds each training trajectory's starts as "fitted_start_<name>" (one
// sample per window start, at its time).
TEST(SimidApp, FittedStartStatesAreRecoveredAndWrittenToFitH5) {
  const std::string out = fresh_dir("simid_fitted_starts");
  const auto r = run_command(simid() + kLengthsConfig + kFast +
                             " --set 'estimate.residual.fit_initial_state={q: true, qd: true}' --seed 3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_LT(s["metrics"]["max_relative_error"].get<double>(), 1e-5);
  const TrajectorySet measured = read_trajectories(out + "/measured.h5");
  const TrajectorySet fitted = read_trajectories(out + "/fit.h5");
  std::map<std::string, const Trajectory*> by_name;
  for (const Trajectory& t : fitted.trajectories) by_name[t.name] = &t;
  int checked = 0;
  for (const Trajectory& m : measured.trajectories) {
    if (m.name.rfind("validation_", 0) == 0) continue;
    ASSERT_TRUE(by_name.count("fitted_start_" + m.name)) << m.name;
    const Trajectory& f = *by_name["fitted_start_" + m.name];
    ASSERT_EQ(f.size(), 5);  // 101 samples, windows of 20
    for (Eigen::Index k = 0; k < f.size(); ++k) {
      EXPECT_NEAR(f.time[k], m.time[20 * k], 1e-12);
      EXPECT_LT((f.q.row(k) - m.q.row(20 * k)).cwiseAbs().maxCoeff(), 1e-5) << m.name << " " << k;
      EXPECT_LT((f.qd.row(k) - m.qd.row(20 * k)).cwiseAbs().maxCoeff(), 1e-4) << m.name << " " << k;
      // summary.json holds the same starts.
      const auto& js = s["metrics"]["start_states"][m.name];
      EXPECT_EQ(js["samples"][k].get<int>(), 20 * k);
      for (Eigen::Index c = 0; c < f.q.cols(); ++c) EXPECT_EQ(js["q"][k][c].get<double>(), f.q(k, c));
      for (Eigen::Index c = 0; c < f.qd.cols(); ++c) EXPECT_EQ(js["qd"][k][c].get<double>(), f.qd(k, c));
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
  for (const Trajectory& t : fitted.trajectories) EXPECT_NE(t.name.rfind("fitted_start_validation_", 0), 0u) << t.name;
  // q and q̇ (2 + 2) of 5 windows per training trajectory, profiled out.
  EXPECT_EQ(read_json(out + "/params.json")["identifiability"]["nuisance_parameters"], 4 * 5 * checked);
}

// With fitted starts, a resumed fit ends where an uninterrupted one does,
// standard errors included: the checkpoint holds the best solve's starts,
// at which the errors are computed.
TEST(SimidApp, FittedStartsResumeToTheSameResult) {
  const std::string straight = fresh_dir("simid_starts_straight"), resumed = fresh_dir("simid_starts_resumed");
  const std::string cmd = simid() + kLengthsConfig + kFast +
                          " --set 'estimate.residual.fit_initial_state={q: true, qd: true}'"
                          " --set estimate.basin_hopping.population=1 --set estimate.basin_hopping.cost_threshold=-1"
                          " --set estimate.solver.max_iterations=3 --seed 5";
  ASSERT_EQ(run_command(cmd + " --set estimate.basin_hopping.rounds=2 --out " + straight).exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --set estimate.basin_hopping.rounds=1 --out " + resumed).exit_code, 0);
  EXPECT_FALSE(read_json(resumed + "/checkpoint.json")["best"]["states"].empty());
  const auto r = run_command(cmd + " --set estimate.basin_hopping.rounds=2 --resume --out " + resumed);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(resumed + "/params.json")["parameters"], read_json(straight + "/params.json")["parameters"]);
  EXPECT_EQ(read_json(resumed + "/summary.json")["metrics"]["train_per_trajectory"],
            read_json(straight + "/summary.json")["metrics"]["train_per_trajectory"]);
}

// Multiple shooting: the fit is analysed at its fitted segment states (the
// training cost per trajectory sums to the fit's cost), which fit.h5 holds
// as "fitted_start_<name>", one sample per segment.
TEST(SimidApp, MultipleShootingSegmentStatesAreTheAnalysedOnesAndWritten) {
  const std::string out = fresh_dir("simid_segments");
  const auto r = run_command(simid() + kLengthsConfig + kFast +
                             " --set estimate.residual.type=multiple_shooting --seed 3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json(out + "/summary.json")["metrics"];
  double sum = 0;
  for (const auto& t : m["train_per_trajectory"]) sum += t["cost"].get<double>();
  EXPECT_NEAR(sum, m["cost"].get<double>(), 1e-9 * std::max(1.0, m["cost"].get<double>()));
  const TrajectorySet fitted = read_trajectories(out + "/fit.h5");
  int segments = 0;
  for (const Trajectory& t : fitted.trajectories)
    if (t.name.rfind("fitted_start_", 0) == 0) {
      EXPECT_EQ(t.size(), 5) << t.name;  // 101 samples, segments of 20
      ++segments;
    }
  EXPECT_EQ(segments, static_cast<int>(m["train_per_trajectory"].size()));
  // How the segments join (issue #41): 4 joints per trajectory; a warning
  // exactly when the RMS gap exceeds the tolerance times the q misfit.
  const auto& ms = m["multiple_shooting"];
  EXPECT_EQ(ms["joins"].get<int>(), 4 * segments);
  const double gap = ms["gap_rms"].get<double>();
  const bool joined = gap <= ms["tolerance"].get<double>() * ms["misfit_rms_q"].get<double>() || gap <= 1e-9;
  EXPECT_EQ(ms["joined"].get<bool>(), joined);
  bool warned = false;
  for (const auto& w : read_json(out + "/summary.json")["warnings"])
    warned = warned || w.get<std::string>().find("segments do not join") != std::string::npos;
  EXPECT_EQ(warned, !joined);
  EXPECT_GE(ms["gap_q_max"].get<double>(), ms["gap_q_rms"].get<double>());
}

// An empty dataset (a CSV with a header and no rows) is a data error.
TEST(SimidApp, EmptyDatasetIsADataError) {
  const std::string csv = write_temp("empty.csv", "time,phi1,dphi1\n");
  const std::string desc = write_temp(
      "empty.yaml", "csv_import:\n  files: [\"" + csv +
                        "\"]\n  time: time\n  model: pendulum\n  joint_names: [joint1]\n  q: [{terms: {phi1: 1.0}}]\n  qd: [{terms: {dphi1: 1.0}}]\n");
  const std::string out = fresh_dir("simid_empty");
  const auto r = run_command(simid() + " --config configs/simid_double_pendulum_lengths.yaml --set data.train=" + desc +
                             " --set model.file=configs/models/pendulum.yaml --set 'estimate.parameters=[{name: link.link1.length}]'"
                             " --set 'estimate.ground_truth={}' --out " + out);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out + "/params.json"));
}

// Windowed validation in seconds and the inverse-dynamics torque error of the
// fitted and of the initial parameters. With data.max_samples=101 every
// trajectory lasts 1 s at 100 Hz: windows every 0.2 s with a 0.3 s horizon
// start at 0, 0.2, 0.4, 0.6 (4 per trajectory) and skip 0.8 and 1.0.
TEST(SimidApp, ReportsWindowedValidationAndTorqueError) {
  const std::string out = fresh_dir("simid_windows");
  const auto r = run_command(simid() + kLengthsConfig + kFast +
                             " --set estimate.evaluation.every=0.2 --set estimate.evaluation.horizon=0.3"
                             " --set estimate.parameters.0.initial=2.0 --set estimate.parameters.1.initial=5.0"
                             " --seed 3 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json(out + "/summary.json")["metrics"];
  const size_t n_train = m["train_per_trajectory"].size(), n_val = m["validation_per_trajectory"].size();
  ASSERT_GT(n_val, 0u);
  for (const char* split : {"train_windows", "validation_windows"}) {
    const auto& w = m[split];
    const size_t n = std::string(split) == "train_windows" ? n_train : n_val;
    ASSERT_TRUE(w.is_object()) << split;
    EXPECT_EQ(w["count"].get<size_t>(), 4 * n) << split;
    EXPECT_EQ(w["skipped"].get<size_t>(), 2 * n) << split;
    ASSERT_EQ(w["per_window"].size(), 4 * n) << split;
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(w["per_window"][k]["t0"].get<double>(), 0.2 * k, 1e-9);
      EXPECT_NEAR(w["per_window"][k]["t1"].get<double>(), 0.2 * k + 0.3, 1e-9);
    }
    // The lengths are recovered to 1e-6: the windows replay the data.
    EXPECT_LT(w["mean_rmse_q"].get<double>(), 1e-4) << split;
    // Non-negative values: at least half are ≥ the median, so mean ≥ median / 2.
    EXPECT_LE(w["median_rmse_q"].get<double>(), 2 * w["mean_rmse_q"].get<double>() + 1e-15) << split;
  }
  for (const char* split : {"train_torque", "validation_torque"}) {
    const auto& t = m[split];
    ASSERT_TRUE(t.is_object()) << split;
    EXPECT_TRUE(t["rmse_per_joint"]["joint1"].is_number()) << t.dump();
    EXPECT_TRUE(t["rmse_per_joint"]["joint2"].is_number()) << t.dump();
    // Lengths 2 and 5 instead of 3 and 4 explain the recorded (zero) torques worse.
    EXPECT_GT(t["initial"]["rmse"].get<double>(), 2 * t["rmse"].get<double>()) << t.dump();
  }
}

// Evaluation only (issue #37): `--evaluate params.json` of a fit writes the
// metrics of that fit's own post-fit evaluation, without fitting (no
// iteration, no round); `max_iterations: 0` evaluates the initial values,
// which the fit reports as its `initial` torque error and initial cost.
TEST(SimidApp, EvaluateOnlyReproducesTheFitsOwnMetrics) {
  const std::string fit = fresh_dir("simid_eval_fit"), ev = fresh_dir("simid_eval_only"),
                    ini = fresh_dir("simid_eval_initial");
  const std::string opts = std::string(kLengthsConfig) + kFast +
                           " --set estimate.evaluation.every=0.2 --set estimate.evaluation.horizon=0.3"
                           " --set estimate.parameters.0.initial=2.0 --set estimate.parameters.1.initial=5.0"
                           " --set estimate.basin_hopping.enabled=false"
                           " --set estimate.basin_hopping.random_initial=false --seed 3";
  auto r = run_command(simid() + opts + " --out " + fit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(simid() + opts + " --evaluate " + fit + "/params.json --out " + ev);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(simid() + opts + " --set estimate.solver.max_iterations=0 --out " + ini);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto mf = read_json(fit + "/summary.json")["metrics"], me = read_json(ev + "/summary.json")["metrics"],
             mi = read_json(ini + "/summary.json")["metrics"];
  EXPECT_FALSE(mf["evaluate_only"].get<bool>());
  EXPECT_TRUE(me["evaluate_only"].get<bool>());
  EXPECT_EQ(me["evaluated_file"], fit + "/params.json");
  EXPECT_EQ(me["best_local_solve"]["iterations"], 0);
  EXPECT_EQ(me["basin_hopping"]["stop_reason"], "evaluate_only");
  EXPECT_GT(mf["best_local_solve"]["iterations"].get<int>(), 1);
  // Every number of the post-fit evaluation, recursively (the values pass
  // through params.json: equal to rounding).
  std::function<void(const nlohmann::json&, const nlohmann::json&, const std::string&)> same =
      [&](const nlohmann::json& a, const nlohmann::json& b, const std::string& path) {
        ASSERT_EQ(a.type(), b.type()) << path;
        if (a.is_object()) {
          ASSERT_EQ(a.size(), b.size()) << path;
          for (const auto& [k, v] : a.items()) {
            ASSERT_TRUE(b.contains(k)) << path << "." << k;
            same(v, b[k], path + "." + k);
          }
        } else if (a.is_array()) {
          ASSERT_EQ(a.size(), b.size()) << path;
          for (size_t i = 0; i < a.size(); ++i) same(a[i], b[i], path + "[" + std::to_string(i) + "]");
        } else if (a.is_number_float()) {
          EXPECT_NEAR(a.get<double>(), b.get<double>(), 1e-9 * std::abs(a.get<double>()) + 1e-15) << path;
        } else {
          EXPECT_EQ(a, b) << path;
        }
      };
  for (const char* key : {"train_rmse_q", "validation_rmse_q", "train_per_trajectory", "validation_per_trajectory",
                          "train_windows", "validation_windows", "train_torque", "validation_torque", "parameters",
                          "identifiable", "physically_consistent", "cost"})
    same(mf[key], me[key], key);
  same(mf["uncertainty"]["std_error"], me["uncertainty"]["std_error"], "uncertainty.std_error");
  // max_iterations 0: the initial values, as the fit saw them.
  EXPECT_TRUE(mi["evaluate_only"].get<bool>());
  EXPECT_FALSE(mi.contains("evaluated_file"));
  EXPECT_NEAR(mi["parameters"]["link.link1.length"].get<double>(), 2.0, 1e-12);
  for (const char* key : {"rmse_per_joint", "rmse", "samples", "per_trajectory"})
    same(mf["train_torque"]["initial"][key], mi["train_torque"][key], std::string("initial train_torque.") + key);
  EXPECT_NEAR(mi["cost"].get<double>(), mf["best_local_solve"]["initial_cost"].get<double>(),
              1e-9 * mi["cost"].get<double>());
}

TEST(SimidApp, EvaluationWindowsAreCheckedBeforeAnyOutput) {
  struct Case {
    const char* sets;
    const char* message;
  };
  for (const Case& c : {Case{" --set estimate.evaluation.every=0.2 --set estimate.evaluation.horizon=0.3"
                             " --set estimate.evaluation_window=10",
                             "estimate.evaluation"},
                        Case{" --set estimate.evaluation.every=0.2 --set estimate.evaluation.horizon=1.5",
                             "estimate.evaluation.horizon"},
                        Case{" --set estimate.evaluation.every=-0.2 --set estimate.evaluation.horizon=0.3",
                             "estimate.evaluation.every"},
                        Case{" --set estimate.evaluation.every=0.2 --set estimate.evaluation.horizon=.inf",
                             "estimate.evaluation.horizon"}}) {
    const std::string out = fresh_dir("simid_bad_windows");
    const auto r = run_command(simid() + kLengthsConfig + kFast + c.sets + " --out " + out + "/run");
    EXPECT_EQ(r.exit_code, 2) << c.sets << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out + "/run/params.json"));
  }
}

// Static recordings (a pendulum hanging at rest) have no spread: a model
// whose gravity leans by 1e-8 m/s² drifts by 1e-9 rad from them, which is
// not "10 times the data's spread" (#41).
TEST(SimidApp, StaticDataGivesNoSpreadWarning) {
  const std::string dir = fresh_dir("simid_static");
  const std::string model = "model: {generator: pendulum, length: 1.0, mass: 1.0}\nsim: {integrator: rk4, dt: 0.01";
  testing::write_file(dir + "/truth.yaml", model + ", duration: 0.5}\n"
                      "initial_states: {list: [{q: [0.0], qd: [0.0]}, {q: [0.0], qd: [0.0]}]}\ncontrols: {type: zero}\n");
  ASSERT_EQ(run_command(testing::app_path("rollout") + " -q --config " + dir + "/truth.yaml --out " + dir + "/truth")
                .exit_code, 0);
  testing::write_file(dir + "/fit.yaml", model + "}\nparams: {gravity.x: 1.0e-8}\ndata: {train: truth/trajectories.h5}\n"
                      "estimate:\n  parameters: [{name: joint.joint1.damping, initial: 0.1, bounds: [0, 1]}]\n"
                      "  residual: {type: single_shooting, window: 20}\n  basin_hopping: {enabled: false}\n");
  const auto r = run_command(simid() + " --config " + dir + "/fit.yaml -q --out " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(dir + "/out/summary.json");
  for (const auto& w : s["warnings"]) EXPECT_EQ(w.get<std::string>().find("RMS residual"), std::string::npos) << w;
}

// --check-gradients: the table and the verdict, no fit; refuses --evaluate.
TEST(SimidApp, CheckGradientsWritesTheTableAndFitsNothing) {
  const std::string out = fresh_dir("simid_check_gradients");
  // Away from the lengths that made the data (at them the gradient is rounding).
  const auto r = run_command(simid() + kLengthsConfig + kFast +
                             " --set 'estimate.parameters=[{name: link.link1.length, initial: 2.5, bounds: [0.1, 10]}, "
                             "{name: link.link2.length, initial: 4.5, bounds: [0.1, 10]}]' --check-gradients --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "ok");
  EXPECT_TRUE(s["metrics"]["gradient_check"]["passed"].get<bool>());
  EXPECT_EQ(s["metrics"]["gradient_check"]["checked"].get<int>(), 2);
  const auto j = read_json(out + "/gradient_check.json");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["name"], "link.link1.length");
  EXPECT_EQ(j["rows"][0]["verdict"], "agrees");
  EXPECT_LT(j["rows"][0]["relative_error"]["forward_mode"].get<double>(), 1e-7);
  EXPECT_EQ(j["transformations"]["link.link1.length"], "identity");
  EXPECT_TRUE(std::filesystem::exists(out + "/gradient_check.txt"));
  EXPECT_FALSE(std::filesystem::exists(out + "/params.json"));
  const auto both = run_command(simid() + kLengthsConfig + kFast + " --check-gradients --evaluate configs/simid_double_pendulum_lengths.yaml --out " +
                                fresh_dir("simid_check_gradients_evaluate"));
  EXPECT_EQ(both.exit_code, 2) << both.err;
  const auto bad = run_command(simid() + kLengthsConfig + kFast + " --check-gradients --gradient-tolerance -1 --out " +
                               fresh_dir("simid_check_gradients_bad"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace neuralsim
