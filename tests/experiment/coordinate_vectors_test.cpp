// Per-coordinate vectors in a config (experiment/experiment.hpp,
// read_coordinate_vector): a list has exactly one value per coordinate;
// only where a number for every coordinate is documented (gains, control
// signals, sampling ranges) is a number without brackets broadcast. A list
// of another length, `[0.3]` among them, is refused naming the key.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

using testing::expect_contains;
using testing::thrown_message;

Eigen::VectorXd read(const std::string& yaml, CoordinateValues form) {
  return read_coordinate_vector(Config::parse(yaml, "c.yaml"), "v", 3, 0.5, form);
}

TEST(CoordinateVectors, AListHasOneValuePerCoordinate) {
  for (CoordinateValues form : {CoordinateValues::kList, CoordinateValues::kListOrNumber}) {
    EXPECT_EQ(read("v: [1, 2, 3]\n", form), Eigen::Vector3d(1, 2, 3));
    EXPECT_EQ(read("w: 1\n", form), Eigen::Vector3d::Constant(0.5));  // absent: the fallback
    for (const char* bad : {"v: [0.3]\n", "v: [1, 2]\n", "v: [1, 2, 3, 4]\n", "v: []\n"}) {
      SCOPED_TRACE(bad);
      const std::string msg = thrown_message([&] { read(bad, form); });
      expect_contains(msg, {"c.yaml:1:", "key 'v'", "expected 3 values (one per coordinate", "got a list of"});
    }
  }
}

TEST(CoordinateVectors, ANumberIsBroadcastOnlyWhereDocumented) {
  EXPECT_EQ(read("v: 2\n", CoordinateValues::kListOrNumber), Eigen::Vector3d::Constant(2));
  expect_contains(thrown_message([] { read("v: 2\n", CoordinateValues::kList); }),
                  {"c.yaml:1:", "key 'v'", "expected a list of numbers", "'2'"});
}

// Two coordinates: a state is never broadcast; gains may be one number.
const char* kTwoLinks =
    "model: {generator: double_pendulum, lengths: [1, 1], masses: [1, 1]}\n";

TEST(CoordinateVectors, InitialStatesAndControlsOfATwoCoordinateModel) {
  const Model<double> model = load_experiment(Config::parse(kTwoLinks, "e.yaml"), false).model;
  std::mt19937_64 rng(1);
  auto states = [&](const std::string& yaml) {
    return read_initial_states(Config::parse(yaml, "s.yaml").at("s"), model, rng, 10);
  };
  EXPECT_EQ(states("s: {list: [{q: [0.1, 0.2]}]}\n").at(0).q, Eigen::Vector2d(0.1, 0.2));
  expect_contains(thrown_message([&] { states("s: {list: [{q: [0.3]}]}\n"); }),
                  {"s.yaml:1:", "s.list.0.q", "expected 2 values (one per coordinate)", "got a list of 1"});
  expect_contains(thrown_message([&] { states("s: {list: [{q: [0, 0], qd: 1}]}\n"); }),
                  {"s.list.0.qd", "expected a list of numbers"});
  // A sampling range may be one number for every coordinate, not a one-element list.
  const auto sampled = states("s: {count: 3, q_low: -0.5, q_high: 0.5}\n");
  for (const InitialState& s : sampled) EXPECT_LE(s.q.cwiseAbs().maxCoeff(), 0.5);
  expect_contains(thrown_message([&] { states("s: {count: 1, q_low: [-0.5], q_high: 0.5}\n"); }),
                  {"s.q_low", "expected 2 values", "or one number without brackets for all", "got a list of 1"});

  const ControllerRegistry controllers = standard_controllers();
  auto make = [&](const std::string& yaml) {
    return controllers.make(Config::parse(yaml, "k.yaml").at("controls"), model, 0, nullptr);
  };
  EXPECT_NE(make("controls: {type: pd, kp: 20, kd: [1, 2]}\n"), nullptr);
  EXPECT_NE(make("controls: {type: sinusoid, amplitude: 1, frequency: [0.5, 1]}\n"), nullptr);
  for (const char* bad : {"controls: {type: pd, kp: [20], kd: 2}\n", "controls: {type: constant, value: [1]}\n",
                          "controls: {type: sinusoid, phase: [1, 2, 3]}\n",
                          "controls: {type: pd, target: {amplitude: [1]}}\n"}) {
    SCOPED_TRACE(bad);
    expect_contains(thrown_message([&] { make(bad); }), {"k.yaml:1:", "controls.", "expected 2 values"});
  }
}

}  // namespace
}  // namespace neuralsim
