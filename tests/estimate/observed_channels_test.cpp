// Observation channels beyond complete q (issue #36, sensor models): gaps
// (NaN = missing) and a subset of the joints. Each fit recovers parameters
// known from the simulation that recorded the data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/estimate/residual_common.hpp"
#include "neuralsim/step/link_poses.hpp"
#include "support/fit_support.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace observed_channels_test {

StepOptions rk4(double dt) {
  StepOptions s;
  s.integrator = Integrator::kRK4;
  s.dt = dt;
  return s;
}

// The double pendulum (l = 3, 4; m = 1, 1) driven at both joints.
std::vector<Trajectory> driven_double_pendulum(const Model<double>& truth, int steps) {
  testing::SinusoidRun run;
  run.q0 = Eigen::Vector2d(0.4, -0.3);
  run.amplitude = Eigen::Vector2d(30.0, 12.0);
  run.frequency_hz = Eigen::Vector2d(0.7, 1.3);
  return testing::record_sinusoids(truth, rk4(0.01), {run}, steps);
}

struct Estimate {
  std::vector<double> value, std_error;
  bool usable = false;
  double residual_variance = 0;
};

Estimate fit(const Model<double>& model, const std::string& parameters_yaml, const std::vector<Trajectory>& data,
             const ObservationSpec& observe, int window) {
  const ParameterSet params = read_parameter_set(Config::parse("p: " + parameters_yaml, "test.yaml"), "p", model);
  std::vector<const Trajectory*> train;
  for (const auto& t : data) train.push_back(&t);
  const ResidualContext ctx{&model, &params, rk4(0.01), observe};
  ProblemOptions po;
  po.window = window;
  EstimationProblem problem(ctx, train, po);
  SolverOptions so;
  so.max_iterations = 50;
  const LocalResult result = problem.solve(params.initial_variables(), so);
  Eigen::VectorXd r;
  const Eigen::MatrixXd J = problem.parameter_jacobian(result.x, &r);
  const Identifiability id = analyze_identifiability(params, result.x, J, r);
  return {id.value, id.std_error, result.usable, id.residual_variance};
}

constexpr const char* kLengths =
    "[{name: link.link1.length, initial: 2.7, bounds: [0.1, 10]}, {name: link.link2.length, initial: 4.4, bounds: "
    "[0.1, 10]}]";

// 30 % of the samples blanked (q of both joints NaN), window starts kept:
// the fit on what is left agrees with the fit on the full data within the
// gapped fit's interval, and both with the truth. Noise makes the intervals
// finite (σ = 2 mrad).
TEST(ObservedChannels, ThirtyPercentGapsRecoverTheFullDataFit) {
  const Model<double> truth = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  std::vector<Trajectory> full = driven_double_pendulum(truth, 120);
  std::mt19937 rng(36);
  std::normal_distribution<double> noise(0.0, 2e-3);
  const int window = 30;
  // The window starts stay exact: a noisy start would bias the fit (errors
  // in variables), which is not what this test measures.
  for (Eigen::Index k = 0; k < full[0].size(); ++k)
    for (Eigen::Index c = 0; c < 2; ++c) full[0].q(k, c) += k % window ? noise(rng) : 0.0;
  std::vector<Trajectory> gapped = full;
  std::uniform_real_distribution<double> u(0, 1);
  int blanked = 0;
  for (Eigen::Index k = 0; k < gapped[0].size(); ++k)
    if (k % window != 0 && u(rng) < 0.3) {
      gapped[0].q.row(k).setConstant(std::numeric_limits<double>::quiet_NaN());
      ++blanked;
    }
  ASSERT_GT(blanked, 25);
  ObservationSpec observe;
  const ObservationSpec::Missing missing = observe.count_missing(truth, {{}, gapped});
  EXPECT_EQ(missing.missing, 2 * blanked);
  EXPECT_EQ(missing.observed, 2 * gapped[0].size());
  EXPECT_EQ(missing.per_channel.at("q"), 2 * blanked);

  const Estimate a = fit(truth, kLengths, full, observe, window);
  const Estimate b = fit(truth, kLengths, gapped, observe, window);
  ASSERT_TRUE(a.usable && b.usable);
  // The noise's σ from the residuals: the missing entries' zero rows take
  // no degree of freedom (counted, σ̂ would be √0.7 of it).
  EXPECT_NEAR(std::sqrt(a.residual_variance), 2e-3, 0.3e-3);
  EXPECT_NEAR(std::sqrt(b.residual_variance), 2e-3, 0.3e-3);
  const double truth_values[2] = {3.0, 4.0};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(std::isfinite(b.std_error[i]) && b.std_error[i] > 0);
    EXPECT_GT(b.std_error[i], a.std_error[i]);  // less data, a wider interval
    EXPECT_NEAR(b.value[i], a.value[i], 2 * b.std_error[i]) << i;
    EXPECT_NEAR(a.value[i], truth_values[i], 3 * a.std_error[i]) << i;
    EXPECT_NEAR(b.value[i], truth_values[i], 3 * b.std_error[i]) << i;
  }
}

// A start state (where a simulation begins) cannot be skipped: refused with
// the dataset, the row and why.
TEST(ObservedChannels, MissingStartStateIsRefused) {
  Trajectory tr;
  tr.name = "run";
  tr.time = Eigen::VectorXd::LinSpaced(7, 0, 0.6);
  tr.q = RowMatrixXd::Zero(7, 2);
  tr.qd = RowMatrixXd::Zero(7, 2);
  tr.q(2, 1) = std::numeric_limits<double>::quiet_NaN();  // not a start of windows of 3
  EXPECT_NO_THROW(check_complete_starts({{}, {tr}}, 3, "d.h5", "a window starts"));
  tr.qd(3, 0) = std::numeric_limits<double>::quiet_NaN();
  try {
    check_complete_starts({{}, {tr}}, 3, "d.h5", "a window starts");
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("d.h5:/trajectories/run/qd: a missing sample (NaN) at row 3, column 0, "
                                         "where a window starts"),
              std::string::npos)
        << e.what();
  }
}

// Observed through its first joint only (an unencoded second joint whose
// column is all NaN after the start), the driven double pendulum's masses
// and lengths are recovered: joint 2's motion acts on joint 1.
TEST(ObservedChannels, FirstJointAloneRecoversMassesAndLengths) {
  const Model<double> truth = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  std::vector<Trajectory> data = driven_double_pendulum(truth, 150);
  for (Eigen::Index k = 1; k < data[0].size(); ++k) {
    data[0].q(k, 1) = std::numeric_limits<double>::quiet_NaN();
    data[0].qd(k, 1) = std::numeric_limits<double>::quiet_NaN();
  }
  ObservationSpec observe;
  observe.q_joints = {0};
  EXPECT_EQ(observe.residuals_per_sample(truth), 1);
  EXPECT_EQ(observe.count_missing(truth, {{}, data}).missing, 0);  // joint 2 is not observed
  const Estimate e =
      fit(truth,
          "[{name: link.link1.mass, initial: 1.3, bounds: [0.05, 10], transform: log},"
          " {name: link.link2.mass, initial: 0.8, bounds: [0.05, 10], transform: log},"
          " {name: link.link1.length, initial: 2.8, bounds: [0.5, 10]},"
          " {name: link.link2.length, initial: 4.3, bounds: [0.5, 10]}]",
          data, observe, 150);
  ASSERT_TRUE(e.usable);
  const double truth_values[4] = {1.0, 1.0, 3.0, 4.0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(e.value[i], truth_values[i], 1e-5 * truth_values[i]) << i;
}

// The orientation residual is the rotation vector of R_dataᵀ R_model:
// checked against Eigen's angle-axis of that product (an independent
// logarithm), for rotations up to nearly π and a quaternion of either sign.
TEST(ObservedChannels, OrientationErrorIsTheRotationVector) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::Quaterniond data = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized();
    const Eigen::Vector3d axis = Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized();
    const double angle = 3.1 * std::abs(u(rng));
    const Eigen::Matrix3d R_model = data.toRotationMatrix() * Eigen::AngleAxisd(angle, axis).toRotationMatrix();
    const double sign = trial % 2 ? -1.0 : 1.0;
    const Eigen::Vector4d xyzw = sign * Eigen::Vector4d(data.x(), data.y(), data.z(), data.w());
    const Eigen::Vector3d e =
        residual_internal::orientation_error<double>(1.3 * xyzw, Eigen::Matrix3d(R_model.transpose()));
    const Eigen::AngleAxisd oracle(Eigen::Matrix3d(data.toRotationMatrix().transpose() * R_model));
    EXPECT_LT((e - oracle.angle() * oracle.axis()).norm(), 1e-9) << trial;
    EXPECT_NEAR(e.norm(), angle, 1e-9);
  }
}

// The double pendulum seen only through its links' orientations (an IMU's
// attitude, a motion-capture body), q not observed: lengths recovered. The
// orientations come from the engine's link poses (step/link_poses.hpp).
TEST(ObservedChannels, LinkOrientationsRecoverLengths) {
  const Model<double> truth = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  std::vector<Trajectory> data = driven_double_pendulum(truth, 90);
  std::vector<LinkRef> links;
  for (const char* name : {"link1", "link2"}) links.push_back(*find_link(truth, name));
  record_link_poses(truth, links, data[0]);
  for (auto& [name, pose] : data[0].link_poses) pose.leftCols<3>().setConstant(std::nan(""));  // positions unknown
  ObservationSpec observe;
  observe.q_weight = 0;
  for (const char* name : {"link1", "link2"}) observe.link_orientations.push_back({name, truth.body_index(name), 1.0});
  EXPECT_EQ(observe.residuals_per_sample(truth), 6);
  EXPECT_NO_THROW(observe.check_available({{}, data}, "d.h5"));
  const Estimate e = fit(truth, kLengths, data, observe, 30);
  ASSERT_TRUE(e.usable);
  EXPECT_NEAR(e.value[0], 3.0, 1e-6);
  EXPECT_NEAR(e.value[1], 4.0, 1e-6);
  // A pose whose quaternion is not one (norm 0.1) is refused, naming the row.
  data[0].link_poses["link2"].row(5).tail<4>() *= 0.1;
  try {
    observe.check_available({{}, data}, "d.h5");
    FAIL() << "no error";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("d.h5:/trajectories/0/link_poses/link2: row 5: expected a unit quaternion"),
              std::string::npos)
        << err.what();
  }
}

// The new observe: keys refuse bad input naming the key, expected vs actual.
TEST(ObservedChannels, BadObserveKeysAreRefused) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  auto error = [&](const std::string& yaml) -> std::string {
    try {
      read_observation(Config::parse(yaml, "c.yaml"), model);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  const ObservationSpec ok = read_observation(
      Config::parse("{q: {weight: 2, joints: [joint2]}, link_orientations: [{link: link1, weight: 3}]}", "c.yaml"),
      model);
  EXPECT_EQ(ok.q_joints, std::vector<int>{1});
  EXPECT_EQ(ok.coordinates(model, 0), std::vector<int>{1});
  ASSERT_EQ(ok.link_orientations.size(), 1u);
  EXPECT_EQ(ok.link_orientations[0].body, model.body_index("link1"));
  EXPECT_EQ(ok.residuals_per_sample(model), 1 + 3);
  EXPECT_NE(error("{q: {joints: [elbow]}}").find("unknown joint 'elbow'; the model's joints: [joint1, joint2]"),
            std::string::npos);
  EXPECT_NE(error("{q: {joints: [joint1, joint1]}}").find("listed twice"), std::string::npos);
  EXPECT_NE(error("{q: {joints: []}}").find("expected a non-empty list of joint names"), std::string::npos);
  EXPECT_NE(error("{link_orientations: [{link: hand}]}").find("unknown link 'hand'"), std::string::npos);
  EXPECT_NE(error("{link_orientations: [{link: link1, weight: -1}]}").find("weight"), std::string::npos);
}

}  // namespace observed_channels_test
}  // namespace neuralsim
