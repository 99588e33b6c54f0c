// simid's joint fit over several configurations (issue #36, "several
// configurations, one parameter vector"): the payload experiment on data
// from our own engine. A two-link arm is recorded bare and carrying a
// payload of unknown mass at its tip; the link mass and the elbow damping
// are shared, the shoulder damping differs between the recordings (fitted
// per configuration), the payload's mass exists only in the payload model.
// The joint fit recovers every value within its interval, its intervals on
// the shared parameters and on the payload are narrower than either
// configuration's alone, its gradient agrees with central differences, and
// bad configurations are refused naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "neuralsim/core/format.hpp"
#include "neuralsim/dynamics/inverse_dynamics_regressor.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/tools/identify.hpp"
#include "support/files.hpp"
#include "support/fit_support.hpp"
#include "support/html_check.hpp"
#include "support/run_command.hpp"

namespace neuralsim::simid_configurations_test {
namespace {

namespace fs = std::filesystem;

// The bare arm; the payload model adds a 0.5 kg mass fixed at the tip.
std::string scf_arm(double shoulder_damping, bool payload) {
  std::string text =
      "model:\n"
      "  name: arm\n"
      "  gravity: [0, -9.81, 0]\n"
      "  bodies:\n"
      "    - {name: link1, joint: {name: shoulder, axis: [0, 0, 1], damping: " +
      format_number(shoulder_damping) +
      "}, mass: 1.0, com: [0.25, 0, 0], inertia: [0.001, 0.02, 0.02]}\n"
      "    - {name: link2, parent: link1, joint: {name: elbow, axis: [0, 0, 1], origin: {xyz: [0.5, 0, 0]}, "
      "damping: 0.2}, mass: 0.8, com: [0.2, 0, 0], inertia: [0.001, 0.015, 0.015]}\n";
  if (payload)
    text += "    - {name: payload, parent: link2, mass: 0.5, com: [0.4, 0, 0], inertia: [0.0002, 0.0002, 0.0002]}\n";
  return text;
}

constexpr double kScfNoise = 2e-3;  // rad

// Two recordings of `model_text` under sinusoidal torques, with encoder
// noise except at the window starts (20 samples).
void scf_record(const std::string& dir, const std::string& name, const std::string& model_text, unsigned seed) {
  const std::string file = (fs::path(dir) / (name + "_truth.yaml")).string();
  testing::write_file(file, model_text);
  const Model<double> model = load_yaml_model(file);
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  const std::vector<testing::SinusoidRun> runs{
      {Eigen::Vector2d(0.3, -0.2), Eigen::Vector2d(6.0, 2.0), Eigen::Vector2d(0.7, 1.3)},
      {Eigen::Vector2d(-0.5, 0.4), Eigen::Vector2d(5.0, 2.5), Eigen::Vector2d(1.1, 0.6)}};
  TrajectorySet set;
  set.meta.model = model.name;
  set.meta.joint_names = model.velocity_names();
  set.trajectories = testing::record_sinusoids(model, step, runs, 100);
  std::mt19937 rng(seed);
  std::normal_distribution<double> unit;
  for (Trajectory& tr : set.trajectories)
    for (Eigen::Index k = 0; k < tr.size(); ++k)
      for (int j = 0; j < 2; ++j) tr.q(k, j) += k % 20 ? kScfNoise * unit(rng) : 0.0;
  write_trajectories((fs::path(dir) / (name + ".h5")).string(), set);
}

struct ScfData {
  std::string dir;
};
const ScfData& scf_data() {
  static const ScfData data = [] {
    ScfData d{testing::fresh_dir("simid_configurations")};
    testing::write_file((fs::path(d.dir) / "arm.yaml").string(), scf_arm(0.3, false));
    testing::write_file((fs::path(d.dir) / "arm_payload.yaml").string(), scf_arm(0.3, true));
    scf_record(d.dir, "bare", scf_arm(0.3, false), 1);
    scf_record(d.dir, "payload", scf_arm(0.45, true), 2);
    return d;
  }();
  return data;
}

const char* kScfEstimate =
    "sim: {integrator: rk4, dt: 0.01}\n"
    "output: {plot: false}\n"
    "estimate:\n"
    "  observe: {q: 500}\n"
    "  residual: {type: single_shooting, window: 20}\n"
    "  solver: {max_iterations: 50}\n"
    "  basin_hopping: {enabled: false}\n"
    "  parameters:\n";

// The joint fit's config; `extra` is added to the parameter list.
std::string scf_joint_config(const std::string& extra = {}) {
  return std::string(kScfEstimate) +
         "    - {name: link.link2.mass, initial: 0.5, bounds: [0.1, 3]}\n"
         "    - {name: joint.elbow.damping, initial: 0.5, bounds: [0, 2]}\n"
         "    - {name: joint.shoulder.damping, initial: 0.1, bounds: [0, 2], per_configuration: true}\n"
         "    - {name: link.payload.mass, initial: 1.0, bounds: [0.05, 3], configurations: [payload]}\n" +
         extra +
         "model: {file: arm.yaml}\n"
         "configurations:\n"
         "  - {name: bare, data: {train: bare.h5}}\n"
         "  - {name: payload, model: {file: arm_payload.yaml}, data: {train: payload.h5}}\n";
}

IdentificationResult scf_fit(const std::string& config) {
  const std::string file = (fs::path(scf_data().dir) / "fit.yaml").string();
  testing::write_file(file, config);
  return identify({Config::load(file), 1, ""});
}

const IdentifiedParameter& scf_parameter(const IdentificationResult& r, const std::string& name) {
  for (const IdentifiedParameter& p : r.parameters)
    if (p.name == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  static const IdentifiedParameter none;
  return none;
}

}  // namespace

TEST(SimidConfigurations, JointFitRecoversSharedAndPerConfigurationValuesWithNarrowerIntervals) {
  const IdentificationResult joint = scf_fit(scf_joint_config());
  ASSERT_EQ(joint.status, RunStatus::kOk) << joint.message;
  const std::vector<std::pair<std::string, double>> truth{{"link.link2.mass", 0.8},
                                                          {"joint.elbow.damping", 0.2},
                                                          {"joint.shoulder.damping@bare", 0.3},
                                                          {"joint.shoulder.damping@payload", 0.45},
                                                          {"link.payload.mass", 0.5}};
  ASSERT_EQ(joint.parameters.size(), truth.size());
  for (const auto& [name, value] : truth) {
    const IdentifiedParameter& p = scf_parameter(joint, name);
    ASSERT_TRUE(std::isfinite(p.std_error) && p.std_error > 0) << name;
    EXPECT_NEAR(p.value, value, 4 * p.std_error) << name << " ± " << p.std_error;
    std::printf("[ measured ] joint: %s = %.5f ± %.5f (truth %.5f)\n", name.c_str(), p.value, p.std_error, value);
  }
  // Each configuration's result: its parameters under their names in its
  // model, with the joint values; its own trajectories and errors, at the
  // noise level; the top level holds them all, prefixed.
  ASSERT_EQ(joint.configurations.size(), 2u);
  const IdentificationResult& payload = joint.configurations[1];
  EXPECT_EQ(payload.configuration, "payload");
  ASSERT_EQ(payload.parameters.size(), 4u);
  EXPECT_EQ(payload.parameters[2].name, "joint.shoulder.damping");
  EXPECT_EQ(payload.parameters[2].value, scf_parameter(joint, "joint.shoulder.damping@payload").value);
  EXPECT_EQ(payload.fitted_model.bodies.size(), 3u);
  EXPECT_NEAR(payload.fitted_model.bodies[2].inertia.mass, scf_parameter(joint, "link.payload.mass").value, 1e-12);
  EXPECT_NEAR(joint.configurations[0].cost + payload.cost, joint.cost, 1e-9 * joint.cost);
  ASSERT_EQ(joint.train.per_trajectory.size(), 4u);
  EXPECT_EQ(joint.train.per_trajectory[2].name, "payload.0");
  for (const TrajectoryFit& t : joint.train.per_trajectory) EXPECT_LT(t.rmse_q, 2 * kScfNoise) << t.name;

  // Each configuration alone: the same entries without the joint keys.
  const std::string bare_alone = std::string(kScfEstimate) +
                                 "    - {name: link.link2.mass, initial: 0.5, bounds: [0.1, 3]}\n"
                                 "    - {name: joint.elbow.damping, initial: 0.5, bounds: [0, 2]}\n"
                                 "    - {name: joint.shoulder.damping, initial: 0.1, bounds: [0, 2]}\n"
                                 "model: {file: arm.yaml}\ndata: {train: bare.h5}\n";
  const std::string payload_alone = std::string(kScfEstimate) +
                                    "    - {name: link.link2.mass, initial: 0.5, bounds: [0.1, 3]}\n"
                                    "    - {name: joint.elbow.damping, initial: 0.5, bounds: [0, 2]}\n"
                                    "    - {name: joint.shoulder.damping, initial: 0.1, bounds: [0, 2]}\n"
                                    "    - {name: link.payload.mass, initial: 1.0, bounds: [0.05, 3]}\n"
                                    "model: {file: arm_payload.yaml}\ndata: {train: payload.h5}\n";
  const IdentificationResult a = scf_fit(bare_alone), b = scf_fit(payload_alone);
  ASSERT_EQ(a.status, RunStatus::kOk) << a.message;
  ASSERT_EQ(b.status, RunStatus::kOk) << b.message;
  for (const char* name : {"link.link2.mass", "joint.elbow.damping"}) {
    const double sj = scf_parameter(joint, name).std_error, sa = scf_parameter(a, name).std_error,
                 sb = scf_parameter(b, name).std_error;
    std::printf("[ measured ] %s: ± %.5f joint, ± %.5f bare alone, ± %.5f payload alone\n", name, sj, sa, sb);
    // The bare arm alone already pins them; the payload's recording, where
    // they trade off against the payload, adds little. The joint interval is
    // no wider (within the spread of the residual variance's estimate) and
    // far narrower than the payload recording's alone.
    EXPECT_LT(sj, 1.02 * sa) << name;
    EXPECT_LT(sj, 0.6 * sb) << name;
  }
  // The payload's mass: the bare recording pins the arm it trades off with.
  const double sj = scf_parameter(joint, "link.payload.mass").std_error,
               sb = scf_parameter(b, "link.payload.mass").std_error;
  std::printf("[ measured ] link.payload.mass: ± %.5f joint, ± %.5f payload alone\n", sj, sb);
  EXPECT_LT(sj, 0.5 * sb);
}

// The joint problem's gradient (each configuration's Jacobian columns
// scattered into the joint vector) against central differences.
TEST(SimidConfigurations, JointGradientAgreesWithCentralDifferences) {
  const std::string file = (fs::path(scf_data().dir) / "check.yaml").string();
  testing::write_file(file, scf_joint_config());
  const IdentificationGradientCheck c = check_identification_gradient({Config::load(file), 1, ""});
  ASSERT_EQ(c.check.rows.size(), 5u);
  EXPECT_TRUE(c.check.passed);
  EXPECT_EQ(c.status, RunStatus::kOk) << c.message;
}

// The tool's outputs of a joint fit: the joint vector in params.json, each
// configuration's metrics, predictions and report section; --evaluate of
// that params.json reproduces the fit's cost.
TEST(SimidConfigurations, AppWritesEachConfigurationAndEvaluatesItsParameterFile) {
  const fs::path dir = scf_data().dir, out = fs::path(dir) / "out";
  testing::write_file((dir / "app.yaml").string(), scf_joint_config());
  const std::string simid = testing::app_path("simid") + " --config " + (dir / "app.yaml").string() + " -q --seed 1";
  const auto r = testing::run_command(simid + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json s = testing::read_json((out / "summary.json").string());
  const nlohmann::json p = testing::read_json((out / "params.json").string());
  for (const char* name : {"link.link2.mass", "joint.shoulder.damping@bare", "joint.shoulder.damping@payload",
                           "link.payload.mass"})
    EXPECT_TRUE(p["parameters"].contains(name)) << name;
  EXPECT_EQ(p["configurations"]["payload"]["parameters"]["joint.shoulder.damping"],
            p["parameters"]["joint.shoulder.damping@payload"]["value"]);
  const nlohmann::json& m = s["metrics"];
  EXPECT_EQ(m["train_per_trajectory"][2]["name"], "payload.0");
  EXPECT_EQ(m["configurations"]["bare"]["train_per_trajectory"].size(), 2u);
  EXPECT_EQ(m["configurations"]["payload"]["parameters"]["link.payload.mass"], m["parameters"]["link.payload.mass"]);
  for (const char* name : {"bare", "payload"}) {
    const TrajectorySet fit = read_trajectories((out / ("fit_" + std::string(name) + ".h5")).string());
    EXPECT_EQ(fit.trajectories.size(), 2u) << name;
    EXPECT_TRUE(fs::exists(out / ("measured_" + std::string(name) + ".h5"))) << name;
  }
  EXPECT_FALSE(fs::exists(out / "fit.h5"));
  const std::string doc = testing::read_text((out / "report.html").string());
  EXPECT_EQ(testing::html_report_violation(doc), "");
  EXPECT_EQ(testing::html_count(testing::html_section(doc, "Measured and fitted (configuration payload)"), "<h3>"), 2u);
  // The parameter file of a joint fit evaluated on its config: the same cost.
  const auto e = testing::run_command(simid + " --evaluate " + (out / "params.json").string() + " --out " +
                                      (fs::path(dir) / "evaluated").string());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const nlohmann::json se = testing::read_json((fs::path(dir) / "evaluated" / "summary.json").string());
  EXPECT_NEAR(se["metrics"]["cost"].get<double>(), m["cost"].get<double>(), 1e-6 * m["cost"].get<double>());
}

// Recordings for inverse dynamics: exact sinusoidal q(t) (q̇, q̈ in closed
// form), the command u = RNEA − passive (the damping) at every sample, with
// noise of σ = kScfTorqueNoise on u only.
constexpr double kScfTorqueNoise = 0.02;  // N·m
void scf_record_torques(const std::string& dir, const std::string& name, const std::string& model_text, unsigned seed) {
  const std::string file = (fs::path(dir) / (name + "_id_truth.yaml")).string();
  testing::write_file(file, model_text);
  const Model<double> model = load_yaml_model(file);
  Data<double> data(model);
  std::mt19937 rng(seed);
  std::normal_distribution<double> unit;
  const double amplitude[2][2] = {{1.2, 0.9}, {0.8, 1.4}}, hz[2][2] = {{0.7, 1.3}, {1.1, 0.6}};
  TrajectorySet set;
  set.meta.model = model.name;
  set.meta.joint_names = model.velocity_names();
  for (int r = 0; r < 2; ++r) {
    const int n = 300;
    Trajectory tr = testing::sized_trajectory(std::to_string(r), n, 2, 2);
    for (int k = 0; k < n; ++k) {
      const double t = 0.005 * k;
      Eigen::Vector2d q, qd, qdd;
      for (int j = 0; j < 2; ++j) {
        const double w = 2 * M_PI * hz[r][j], a = amplitude[r][j];
        q[j] = a * std::sin(w * t) + 0.3 * j;
        qd[j] = a * w * std::cos(w * t);
        qdd[j] = -a * w * w * std::sin(w * t);
      }
      rnea(model, data, Eigen::VectorXd(q), Eigen::VectorXd(qd), Eigen::VectorXd(qdd));
      passive_forces(model, data, Eigen::VectorXd(q), Eigen::VectorXd(qd));
      tr.time[k] = t;
      tr.q.row(k) = q.transpose();
      tr.qd.row(k) = qd.transpose();
      for (int j = 0; j < 2; ++j) tr.tau(k, j) = data.tau[j] - data.tau_passive[j] + kScfTorqueNoise * unit(rng);
    }
    set.trajectories.push_back(std::move(tr));
  }
  write_trajectories((fs::path(dir) / (name + "_id.h5")).string(), set);
}

// A joint inverse-dynamics fit reports each configuration's links in
// physical coordinates and its base parameters (issue #36), with errors
// from the joint problem: the shared link's inertia is fitted in both
// recordings, the payload's mass in one. Each configuration's base
// parameters hold their truth within 4 standard errors, the shared link's
// physical values and errors are the same in both configurations, and the
// payload configuration's base parameters are no less certain than in a fit
// of its recording alone (the bare recording pins the link).
TEST(SimidConfigurations, JointInverseDynamicsFitReportsEachConfigurationsInertiasAndBaseParameters) {
  const std::string dir = scf_data().dir;
  scf_record_torques(dir, "bare", scf_arm(0.3, false), 3);
  scf_record_torques(dir, "payload", scf_arm(0.45, true), 4);
  const std::string estimate =
      "sim: {integrator: rk4, dt: 0.005}\n"  // unused by inverse dynamics
      "output: {plot: false}\n"
      "estimate:\n"
      "  residual: {type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}\n"
      "  solver: {max_iterations: 60}\n"
      "  basin_hopping: {enabled: false}\n"
      "  parameters:\n"
      "    - {name: link.link2.inertial, transform: log_cholesky}\n"
      "    - {name: joint.elbow.damping, initial: 0.5, bounds: [0, 2]}\n";
  const std::string shoulder = "    - {name: joint.shoulder.damping, initial: 0.1, bounds: [0, 2]";
  const std::string payload_mass = "    - {name: link.payload.mass, initial: 1.0, bounds: [0.05, 3]";
  const IdentificationResult joint =
      scf_fit(estimate + shoulder + ", per_configuration: true}\n" + payload_mass +
              ", configurations: [payload]}\nmodel: {file: arm.yaml}\nconfigurations:\n"
                                        "  - {name: bare, data: {train: bare_id.h5}}\n"
                                        "  - {name: payload, model: {file: arm_payload.yaml}, data: {train: payload_id.h5}}\n");
  ASSERT_EQ(joint.status, RunStatus::kOk) << joint.message;
  ASSERT_EQ(joint.configurations.size(), 2u);
  EXPECT_TRUE(joint.inertials.empty());  // one model's quantities: per configuration
  const IdentificationResult& bare = joint.configurations[0];
  const IdentificationResult& payload = joint.configurations[1];
  ASSERT_EQ(bare.inertials.size(), 1u);
  ASSERT_EQ(payload.inertials.size(), 1u);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(bare.inertials[0].value[k], payload.inertials[0].value[k]) << k;
    const double a = bare.inertials[0].std_error[k], b = payload.inertials[0].std_error[k];
    EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << k << ": " << a << " against " << b;
  }
  EXPECT_NEAR(bare.inertials[0].value[0], 0.8, 4 * bare.inertials[0].std_error[0]);  // link2's mass
  // β's truth: the reported combinations of the truth's standard parameters.
  auto check_truth = [&](const IdentificationResult& c, const std::string& truth_yaml) {
    const Model<double> truth = load_yaml_model((fs::path(dir) / truth_yaml).string());
    const BaseParameterFit& b = c.base_parameters;
    Eigen::VectorXd pi(b.standard);
    for (size_t l = 0; l < b.links.size(); ++l)
      pi.segment<10>(10 * static_cast<Eigen::Index>(l)) = inertial_parameters(truth.bodies[static_cast<size_t>(truth.body_index(b.links[l]))].inertia);
    const Eigen::VectorXd beta = b.base.base_values(pi);
    ASSERT_EQ(static_cast<int>(b.estimates.size()), b.base.rank);
    for (int k = 0; k < b.base.rank; ++k) {
      const BaseParameterEstimate& e = b.estimates[static_cast<size_t>(k)];
      ASSERT_TRUE(std::isfinite(e.std_error) && e.std_error > 0) << c.configuration << " " << e.expression;
      EXPECT_NEAR(e.value, beta[k], 4 * e.std_error) << c.configuration << " " << e.expression;
    }
  };
  ASSERT_EQ(bare.base_parameters.links, std::vector<std::string>{"link2"});
  ASSERT_EQ(payload.base_parameters.links, (std::vector<std::string>{"link2", "payload"}));
  check_truth(bare, "bare_id_truth.yaml");
  check_truth(payload, "payload_id_truth.yaml");
  // The payload recording alone: the same combinations, wider.
  const IdentificationResult alone =
      scf_fit(estimate + shoulder + "}\n" + payload_mass + "}\nmodel: {file: arm_payload.yaml}\ndata: {train: payload_id.h5}\n");
  ASSERT_EQ(alone.status, RunStatus::kOk) << alone.message;
  ASSERT_EQ(alone.base_parameters.estimates.size(), payload.base_parameters.estimates.size());
  double narrowest = 1;
  for (size_t k = 0; k < alone.base_parameters.estimates.size(); ++k) {
    const BaseParameterEstimate &j = payload.base_parameters.estimates[k], &a = alone.base_parameters.estimates[k];
    ASSERT_EQ(j.expression, a.expression);
    EXPECT_LT(j.std_error, 1.05 * a.std_error) << j.expression;
    narrowest = std::min(narrowest, j.std_error / a.std_error);
    std::printf("[ measured ] %s: ± %.3g joint, ± %.3g payload alone\n", j.expression.c_str(), j.std_error, a.std_error);
  }
  EXPECT_LT(narrowest, 0.8);
  EXPECT_NE(joint.full_report().find("Base parameters (configuration payload)"), std::string::npos);
}

TEST(SimidConfigurations, BadConfigurationsAreRefusedNamingTheKey) {
  scf_data();
  auto refused = [](const std::string& config, const std::vector<std::string>& parts, bool config_error = true) {
    const std::string file = (fs::path(scf_data().dir) / "bad.yaml").string();
    testing::write_file(file, config);
    testing::expect_contains(
        testing::config_or_data_error([&] { identify({Config::load(file), 1, ""}); }, config_error), parts);
  };
  auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };
  const std::string good = scf_joint_config();
  // Configurations that share no parameter: separate fits.
  refused(std::string(kScfEstimate) +
              "    - {name: joint.elbow.damping, initial: 0.5, bounds: [0, 2], per_configuration: true}\n"
              "model: {file: arm.yaml}\nconfigurations:\n  - {name: a, data: {train: bare.h5}}\n"
              "  - {name: b, data: {train: bare.h5}}\n",
          {"key 'estimate.parameters'", "the configurations share no parameter"});
  refused(replaced(good, "configurations: [payload]", "configurations: [paylod]"),
          {"estimate.parameters.3.configurations.0", "no configuration 'paylod'", "did you mean 'payload'"});
  refused(replaced(good, "  - {name: payload, model", "  - {name: bare, model"),
          {"configurations.1.name", "configuration 'bare' is named twice"});
  refused(replaced(good, "{name: bare, data", "{name: bare/x, data"), {"configurations.0.name", "plain name"});
  refused(replaced(good, "model: {file: arm.yaml}\n", "model: {file: arm.yaml}\ndata: {train: bare.h5}\n"),
          {"key 'data'", "each configuration gives its own data"});
  refused(replaced(good, "  - {name: bare, data: {train: bare.h5}}\n", ""),
          {"key 'configurations'", "expected at least two configurations, got 1"});
  refused(replaced(good, "{name: bare, data: {train: bare.h5}}", "{name: bare}"),
          {"configurations.0.data", "every configuration gives its own data"});
  refused(replaced(good, "{name: bare, data", "{name: bare, sim: {dt: 0.1}, data"),
          {"unknown key 'configurations.0.sim'"});
  // The payload's mass named where the bare model has no payload.
  refused(replaced(good, "configurations: [payload]", "configurations: [bare, payload]"),
          {"estimate.parameters.3.name", "link.payload.mass"});
  // A missing data file names the configuration's key.
  refused(replaced(good, "train: payload.h5", "train: nothing.h5"), {"configurations.1.data.train"}, false);
  // A configuration's own params are added to the top-level ones and checked.
  refused(replaced(good, "{name: bare, data", "{name: bare, params: {joint.elbow.spring.stiffnes: 1}, data"),
          {"joint.elbow.spring.stiffnes"});
  // Reach targets: a joint fit compares recorded motion.
  {
    std::string targets = replaced(good, "observe: {q: 500}", "observe: {q: 0, link_positions: [{link: link2}]}");
    const std::string target = "{targets: [{name: t, q0: [0.1, 0.2], qd0: [0, 0], time: 0.2, link: link2, "
                               "position: [0.5, 0, 0]}]}";
    targets = replaced(targets, "{train: bare.h5}", target);
    targets = replaced(targets, "{train: payload.h5}", target);
    refused(targets, {"key 'configurations'", "reach targets (data.targets) are refused"});
  }
  // The joint keys without configurations.
  refused(std::string(kScfEstimate) + "    - {name: joint.elbow.damping, per_configuration: true}\n" +
              "model: {file: arm.yaml}\ndata: {train: bare.h5}\n",
          {"estimate.parameters.0.per_configuration", "no top-level 'configurations:'"});
}

}  // namespace neuralsim::simid_configurations_test
