// Markers fixed on a link (issue #41): a link-position channel compares the
// world position of a point fixed in the link's frame, r + R·point, with the
// data's link_poses/<data> entry. Checked against the double pendulum's
// trigonometry written out by hand, against central differences of the
// shooting residual in a length, and for the config's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/residual_common.hpp"
#include "support/fit_support.hpp"

namespace neuralsim {
namespace marker_point_test {

// The double pendulum (configs/models/double_pendulum.yaml: l1 = 3, l2 = 4,
// both joints about y, q = 0 hangs straight down along −z): a rotation by φ
// about y maps a link-frame point p to (cos φ px + sin φ pz, py,
// −sin φ px + cos φ pz); link 2's origin is link 1's end, l1 (−sin q1, 0,
// −cos q1), and link 2 is turned by q1 + q2.
Eigen::Vector3d rotated_about_y(double phi, const Eigen::Vector3d& p) {
  return {std::cos(phi) * p.x() + std::sin(phi) * p.z(), p.y(), -std::sin(phi) * p.x() + std::cos(phi) * p.z()};
}

// Channels: link 1's origin (the default point), a marker on link 1 and one
// on link 2 off every axis, each under its own data name.
ObservationSpec marker_channels(const Model<double>& model) {
  return read_observation(Config::parse("{q: 0, link_positions: [{link: link1},"
                                        " {link: link1, point: [0, 0, -1.5], data: elbow_marker, weight: 0.5},"
                                        " {link: link2, point: [0.3, 0.2, -0.4], data: tip_marker, weight: 2}]}",
                                        "c.yaml"),
                          model);
}

TEST(MarkerPoints, ResidualIsTheClosedFormWorldPositionOfThePoint) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const ResidualContext ctx{&model, nullptr, testing::rk4_step(0.01), marker_channels(model)};
  ASSERT_EQ(ctx.observe.residuals_per_sample(model), 9);
  const Eigen::Vector3d measured(0.1, -0.2, 0.3);  // every marker's recorded position (orientation missing)
  Trajectory tr;
  tr.name = "t";
  tr.time = Eigen::VectorXd::Zero(1);
  tr.q = RowMatrixXd::Zero(1, 2);
  tr.qd = RowMatrixXd::Zero(1, 2);
  for (const char* name : {"link1", "elbow_marker", "tip_marker"}) {
    tr.link_poses[name] = RowMatrixXd::Constant(1, 7, std::numeric_limits<double>::quiet_NaN());
    tr.link_poses[name].leftCols<3>() = measured.transpose();
  }
  Data<double> data(model);
  Eigen::VectorXd dq(2);
  for (const Eigen::Vector2d& q : {Eigen::Vector2d(0.3, -0.7), Eigen::Vector2d(1.2, 0.4), Eigen::Vector2d(-2.0, 2.5)}) {
    const Eigen::VectorXd qv = q, qd = Eigen::Vector2d::Zero();
    Eigen::VectorXd r(9);
    ASSERT_EQ(residual_internal::sample_residuals(ctx, model, data, tr, 0, qv, qd, dq, r.data()), 9);
    const Eigen::Vector3d elbow = 3.0 * Eigen::Vector3d(-std::sin(q[0]), 0, -std::cos(q[0]));
    const Eigen::Vector3d expected[3] = {
        Eigen::Vector3d::Zero(),                                                // link 1's origin, on the axis
        1.5 * Eigen::Vector3d(-std::sin(q[0]), 0, -std::cos(q[0])),             // halfway down link 1
        elbow + rotated_about_y(q[0] + q[1], Eigen::Vector3d(0.3, 0.2, -0.4)),  // off link 2's axis
    };
    const double weight[3] = {1.0, 0.5, 2.0};
    for (int c = 0; c < 3; ++c)
      EXPECT_LT((r.segment<3>(3 * c) - weight[c] * (expected[c] - measured)).norm(), 1e-12)
          << "channel " << c << " at q = " << q.transpose() << ": " << r.segment<3>(3 * c).transpose();
  }
}

// The Jacobian Ceres takes from the Jets of a single-shooting window
// observed only through the markers, in both lengths (the tip marker moves
// with link 1's length through link 2's origin; link 2's length moves its
// mass, hence the motion), against central differences.
TEST(MarkerPoints, ShootingJacobianInTheLengthsMatchesCentralDifferences) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.length, initial: 2.9}, {name: link.link2.length, initial: 4.2}]",
                    "test.yaml"),
      "p", model);
  const ResidualContext ctx{&model, &params, testing::rk4_step(0.01), marker_channels(model)};
  testing::SinusoidRun run{Eigen::Vector2d(0.5, -0.4), Eigen::Vector2d(3.0, 1.0), Eigen::Vector2d(0.7, 1.3)};
  Trajectory tr = testing::record_sinusoids(model, ctx.step, {run}, 30)[0];
  for (const char* name : {"link1", "elbow_marker", "tip_marker"})
    tr.link_poses[name] = RowMatrixXd::Constant(tr.size(), 7, 0.25);  // any recorded positions
  std::unique_ptr<ceres::CostFunction> cost(make_single_shooting_cost(ctx, Window{&tr, 0, 30}));
  const int m = cost->num_residuals();
  ASSERT_EQ(m, 30 * 9);
  std::vector<double> theta = params.initial_variables(), r(static_cast<size_t>(m)), J(static_cast<size_t>(2 * m));
  const double* blocks[] = {theta.data()};
  double* jacobians[] = {J.data()};
  ASSERT_TRUE(cost->Evaluate(blocks, r.data(), jacobians));
  const double h = 1e-6;
  double worst = 0, largest = 0;
  for (int c = 0; c < 2; ++c) {
    std::vector<double> plus = theta, minus = theta, rp(r.size()), rm(r.size());
    plus[static_cast<size_t>(c)] += h;
    minus[static_cast<size_t>(c)] -= h;
    const double* bp[] = {plus.data()};
    const double* bm[] = {minus.data()};
    ASSERT_TRUE(cost->Evaluate(bp, rp.data(), nullptr));
    ASSERT_TRUE(cost->Evaluate(bm, rm.data(), nullptr));
    for (int row = 0; row < m; ++row) {
      const double fd = (rp[static_cast<size_t>(row)] - rm[static_cast<size_t>(row)]) / (2 * h);
      const double ad = J[static_cast<size_t>(row * 2 + c)];
      worst = std::max(worst, std::abs(fd - ad));
      largest = std::max(largest, std::abs(ad));
    }
  }
  EXPECT_GT(largest, 0.5);
  EXPECT_LT(worst, 1e-6 * largest);
}

// Bad `point` and `data` keys are one-line ConfigErrors naming the key, a
// data entry the recording lacks a DataError naming the dataset.
TEST(MarkerPoints, BadPointsDataNamesAndMissingEntriesAreRefused) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  auto error = [&](const std::string& channels) -> std::string {
    try {
      read_observation(Config::parse("{q: 0, link_positions: " + channels + "}", "c.yaml"), model);
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    return "no error";
  };
  const auto expect_error = [&](const std::string& channels, const std::vector<std::string>& parts) {
    const std::string e = error(channels);
    for (const std::string& part : parts) EXPECT_NE(e.find(part), std::string::npos) << channels << " -> " << e;
  };
  expect_error("[{link: link2, point: [0, .nan, 0]}]",
               {"link_positions.0.point.1'", "expected a finite number", "got '.nan'"});
  expect_error("[{link: link2, point: [0, .inf, 0]}]", {"link_positions.0.point", "finite"});
  expect_error("[{link: link2, point: [0, 0, 2000]}]", {"link_positions.0.point", "|point| <= 1e3"});
  expect_error("[{link: link2, point: [0, 0]}]", {"link_positions.0.point", "expected 3 numbers", "got 2"});
  expect_error("[{link: link2, point: 0.4}]", {"link_positions.0.point", "expected [x, y, z]"});
  expect_error("[{link: link2}, {link: link2, point: [0, 0, -4]}]",
               {"link_positions.1.link", "data name 'link2' listed twice", "different `data` names"});
  expect_error("[{link: link1}, {link: link2, point: [0, 0, -4], data: link1}]",
               {"link_positions.1.data", "data name 'link1' listed twice"});
  expect_error("[{link: link2, data: tip/marker}]", {"link_positions.0.data", "plain name", "'tip/marker'"});
  expect_error("[{link: link2, data: ''}]", {"link_positions.0.data", "plain name"});
  expect_error("[{link: link2, pointt: [0, 0, 1]}]", {"pointt"});
  EXPECT_NE(error("[]").find("nothing is observed"), std::string::npos);
  // An orientation has no point: the key is unknown there.
  try {
    read_observation(Config::parse("{link_orientations: [{link: link1, point: [0, 0, 1]}]}", "c.yaml"), model);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("point"), std::string::npos) << e.what();
  }
  // Two markers on one link, told apart by their data names; one missing.
  const ObservationSpec spec = marker_channels(model);
  Trajectory tr;
  tr.name = "swing";
  tr.link_poses["link1"] = tr.link_poses["elbow_marker"] = RowMatrixXd::Zero(2, 7);
  try {
    spec.check_available({{}, {tr}}, "d.h5");
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("d.h5:/trajectories/swing/link_poses/tip_marker: observation channel "
                                         "'link_positions.tip_marker' is not in the data"),
              std::string::npos)
        << e.what();
  }
  // A marker's orientation columns may be missing (NaN): only x y z count.
  tr.link_poses["tip_marker"] = RowMatrixXd::Zero(2, 7);
  tr.link_poses["tip_marker"].rightCols<4>().setConstant(std::nan(""));
  tr.link_poses["tip_marker"](1, 0) = std::nan("");
  tr.time = Eigen::Vector2d(0, 0.01);
  tr.q = RowMatrixXd::Zero(2, 2);
  tr.qd = RowMatrixXd::Zero(2, 2);
  EXPECT_NO_THROW(spec.check_available({{}, {tr}}, "d.h5"));
  const ObservationSpec::Missing missing = spec.count_missing(model, {{}, {tr}});
  EXPECT_EQ(missing.observed, 2 * 9);
  EXPECT_EQ(missing.missing, 1);
  EXPECT_EQ(missing.per_channel.at("link_positions.tip_marker"), 1);
}

}  // namespace marker_point_test
}  // namespace neuralsim
