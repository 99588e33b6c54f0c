// `simid --design-excitation` end to end (docs/simid.md, "Excitation
// design"): the designed trajectory, recorded with Gaussian noise on the
// command and fitted by simid's own inverse-dynamics route, gives base
// parameter standard errors (Gauss–Newton, with the residual variance
// estimated from that one recording) equal to the design's predicted ones
// within 10 %, for the links' base parameters and for the joints' damping
// and Coulomb friction, also when simid fits β directly
// (residual.base_parameters: least_squares); and a bad `excitation:` key is refused with exit 2 and a
// message naming the file and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "common/html_report.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "support/files.hpp"
#include "support/html_check.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace simid_excitation_app_test {
namespace {

using testing::read_json;
using testing::run_command;

std::string excitation_config(const std::string& excitation_lines) {
  return "model: {file: " + testing::source_path("configs/models/geared_arm.yaml") +
         "}\n"
         "excitation:\n" +
         excitation_lines;
}

const char* kExcitationSection =
    "  period: 2\n"
    "  harmonics: 3\n"
    "  sample_rate: 25\n"
    "  output_rate: 200\n"
    "  noise: [0.05, 0.03]\n"
    "  max_iterations: 40\n"
    "  joint_terms: [damping, friction]\n"
    "  limits: {q_lower: [-1.5, -2], q_upper: [1, 2], qd: [3, 4], qdd: [30, 40], tau: [6, 3]}\n";

// A file in a folder of the test's own output directory.
std::string excitation_app_file(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

TEST(SimidExcitation, PredictedErrorsMatchTheFitOfANoisyRecording) {
  const std::string dir = testing::fresh_dir("simid_excitation_fit");
  const std::string design_dir = excitation_app_file(dir, "design"), fit_dir = excitation_app_file(dir, "fit");
  testing::write_file(excitation_app_file(dir, "design.yaml"), excitation_config(kExcitationSection));
  const auto d = run_command(testing::app_path("simid") + " --config " + excitation_app_file(dir, "design.yaml") + " --design-excitation -q --seed 5 --out " +
                             design_dir);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  for (const char* f : {"excitation.h5", "excitation.csv", "excitation.json", "summary.json"})
    EXPECT_TRUE(std::filesystem::exists(excitation_app_file(design_dir, f))) << f;
  const nlohmann::json design = read_json(excitation_app_file(design_dir, "excitation.json"));
  const nlohmann::json summary = read_json(excitation_app_file(design_dir, "summary.json"));
  EXPECT_EQ(summary["status"], "ok");
  EXPECT_LT(summary["metrics"]["excitation"]["designed"]["condition"].get<double>(),
            summary["metrics"]["excitation"]["initial"]["condition"].get<double>());
  // The CSV: a header and one row per sample of excitation.h5.
  TrajectorySet set = read_trajectories(excitation_app_file(design_dir, "excitation.h5"));
  ASSERT_EQ(set.trajectories.size(), 1u);
  Trajectory& t = set.trajectories[0];
  const std::string csv = testing::read_text(excitation_app_file(design_dir, "excitation.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), t.size() + 1);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "time,q_shoulder,q_elbow,qd_shoulder,qd_elbow");

  // One recording: the command with N(0, σ²) noise, fitted by simid.
  std::mt19937 rng(99);
  std::normal_distribution<double> n;
  // gear·σ = 0.15 N·m on both joints: simid's fit weighs the joints'
  // torque residuals equally, the design weighs them by 1/(gear σ)².
  const double sigma[2] = {0.05, 0.03};
  for (Eigen::Index k = 0; k < t.size(); ++k)
    for (int j = 0; j < 2; ++j) t.tau(k, j) += sigma[j] * n(rng);
  write_trajectories(excitation_app_file(dir, "noisy.h5"), set);
  testing::write_file(excitation_app_file(dir, "fit.yaml"),
                      "model: {file: " + testing::source_path("configs/models/geared_arm.yaml") +
                          "}\n"
                          "sim: {dt: 0.005}\n"
                          "data: {train: noisy.h5}\n"
                          "estimate:\n"
                          "  parameters:\n"
                          "    - {name: link.link1.inertial, transform: log_cholesky}\n"
                          "    - {name: link.link2.inertial, transform: log_cholesky}\n"
                          "    - {name: joint.shoulder.damping}\n"
                          "    - {name: joint.elbow.damping}\n"
                          "    - {name: joint.shoulder.friction}\n"
                          "    - {name: joint.elbow.friction}\n"
                          "  observe: {q: 1.0}\n"
                          "  residual: {type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4},\n"
                          "             base_parameters: least_squares}\n"
                          "  solver: {max_iterations: 30}\n"
                          "  basin_hopping: {enabled: false}\n"
                          "output: {plot: false}\n");
  const auto f = run_command(testing::app_path("simid") + " --config " + excitation_app_file(dir, "fit.yaml") + " -q --seed 1 --out " + fit_dir);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const nlohmann::json fit = read_json(excitation_app_file(fit_dir, "summary.json"));
  const nlohmann::json& estimates = fit["metrics"]["base_parameters"]["estimates"];
  std::map<std::string, double> predicted;
  for (const auto& b : design["base_parameters"]) predicted[b["combination"]] = b["std_error"].get<double>();
  ASSERT_EQ(estimates.size() + 4, predicted.size());  // the design's β also holds the joints' damping and friction
  int compared = 0;
  for (const auto& e : estimates) {
    const auto it = predicted.find(e["combination"].get<std::string>());
    if (it == predicted.end()) continue;  // another choice of independent columns
    ++compared;
    const double reported = e["std_error"].get<double>();
    // The fit drops 4 samples at each end (the derivative filter) of 401 and
    // estimates σ from 2·393 residuals (±2.5 %): within 10 %.
    EXPECT_NEAR(reported / it->second, 1.0, 0.10) << it->first << ": fit " << reported << ", predicted " << it->second;
    std::printf("%s: predicted %.4g, simid's Gauss-Newton %.4g\n", it->first.c_str(), it->second, reported);
  }
  EXPECT_GE(compared, 4);
  // β fitted directly (residual.base_parameters: least_squares): the linear
  // least squares whose errors the design predicts; the recording comes
  // from a physical arm, so the consistency constraint is not active and
  // the consistent fit's β are the direct fit's (z ≈ 0).
  const nlohmann::json& direct = fit["metrics"]["base_parameters"]["least_squares"];
  ASSERT_EQ(direct["estimates"].size(), estimates.size());
  EXPECT_TRUE(direct["converged"].get<bool>());
  for (size_t k = 0; k < estimates.size(); ++k) {
    const nlohmann::json& e = direct["estimates"][k];
    EXPECT_EQ(e["combination"], estimates[k]["combination"]);
    EXPECT_LT(std::abs(e["z"].get<double>()), 0.05) << e["combination"];
    const auto it = predicted.find(e["combination"].get<std::string>());
    if (it != predicted.end()) EXPECT_NEAR(e["std_error"].get<double>() / it->second, 1.0, 0.10) << it->first;
  }
  EXPECT_EQ(direct["parameters"].size(), 4u);  // the joints' damping and friction
  EXPECT_TRUE(direct["validation_torque_rmse"].is_null());
  // report.html: the base parameters' table with the direct fit's columns.
  const std::string doc = testing::read_text(excitation_app_file(fit_dir, "report.html"));
  EXPECT_EQ(testing::html_report_violation(doc), "");
  EXPECT_NE(doc.find("fitted directly"), std::string::npos);
  EXPECT_NE(doc.find(html_escape(estimates[0]["combination"].get<std::string>())), std::string::npos);
  // The joint terms: their own base parameters, the fit's own parameters.
  const nlohmann::json params = read_json(excitation_app_file(fit_dir, "params.json"));
  for (const char* joint : {"shoulder", "elbow"})
    for (const char* term : {"damping", "friction"}) {
      const std::string name = std::string(joint) + "." + term;
      ASSERT_EQ(predicted.count(name), 1u) << name;
      const double reported = params["parameters"]["joint." + name]["std_error"].get<double>();
      EXPECT_NEAR(reported / predicted[name], 1.0, 0.10) << name << ": fit " << reported << ", predicted " << predicted[name];
      std::printf("%s: predicted %.4g, simid's Gauss-Newton %.4g\n", name.c_str(), predicted[name], reported);
    }
}

TEST(SimidExcitation, BadKeysAreRefusedWithExitTwo) {
  const std::string dir = testing::fresh_dir("simid_excitation_bad");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  harmonic: 3\n  limits: {qd: 1}\n", "excitation.harmonic"},
      {"  harmonics: 1\n  limits: {qd: 1}\n", "excitation.harmonics"},
      {"  noise: -0.1\n  limits: {qd: 1}\n", "excitation.noise"},
      {"  limits: {qd: [1, 2, 3]}\n", "excitation.limits.qd"},
      {"  links: [link1, nope]\n  limits: {qd: 1}\n", "excitation.links.1"},
      {"  harmonics: 3\n", "excitation.limits"},  // the model sets no limit: amplitude unbounded
  };
  int i = 0;
  for (const auto& [lines, key] : cases) {
    const std::string config = excitation_app_file(dir, "bad" + std::to_string(i++) + ".yaml");
    const std::string out = excitation_app_file(dir, "out" + std::to_string(i));
    testing::write_file(config, excitation_config(lines));
    const auto r = run_command(testing::app_path("simid") + " --config " + config + " --design-excitation -q --out " + out);
    EXPECT_EQ(r.exit_code, 2) << lines << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(config), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(excitation_app_file(out, "excitation.h5")));
  }
}

}  // namespace
}  // namespace simid_excitation_app_test
}  // namespace neuralsim
