// `sim.controls` (step/control_signal.hpp) through the config reader: the
// valid forms, and each bad input as one ConfigError line naming the file,
// line and key, with the expected and the actual value.
#include <gtest/gtest.h>

#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"

namespace neuralsim {
namespace control_timing_config_test {

StepOptions read(const std::string& sim) {
  const Config root = Config::parse("sim:\n" + sim, "exp.yaml");
  return read_step_options(root.at("sim"));
}

// The ConfigError of reading `sim`, checked to be one line at exp.yaml:LINE.
std::string error_of(const std::string& sim) {
  try {
    read(sim);
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("exp.yaml:"), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "accepted:\n" << sim;
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ControlTimingConfig, ReadsEachInterpolation) {
  EXPECT_TRUE(read("  dt: 0.001\n").controls.is_zero_order_hold());
  EXPECT_EQ(read("  dt: 0.001\n  controls: {interpolation: linear}\n").controls.interpolation,
            ControlInterpolation::kLinear);
  EXPECT_EQ(read("  dt: 0.001\n  controls: {interpolation: cubic}\n").controls.interpolation,
            ControlInterpolation::kCubic);
  const StepOptions hold = read("  dt: 0.001\n  substeps: 2\n  controls: {interpolation: hold, period: 0.002, tick_values: cubic}\n");
  EXPECT_EQ(hold.controls.interpolation, ControlInterpolation::kHold);
  EXPECT_DOUBLE_EQ(hold.controls.period, 0.002);
  EXPECT_EQ(hold.controls.tick_values, ControlInterpolation::kCubic);
  EXPECT_EQ(read("  dt: 0.002\n  controls: {interpolation: hold, period: 0.002}\n").controls.tick_values,
            ControlInterpolation::kLinear);
}

// A controller out of phase with the recording: its ticks at t_0 + offset.
TEST(ControlTimingConfig, ATickOffsetIsAMultipleOfTheStepWithinThePeriod) {
  EXPECT_DOUBLE_EQ(
      read("  dt: 0.0005\n  controls: {interpolation: hold, period: 0.002, tick_offset: 0.0015}\n").controls.tick_offset,
      0.0015);
  for (const std::string& offset : {"0.002", "0.00025", "-0.0005"}) {
    const std::string msg =
        error_of("  dt: 0.0005\n  controls: {interpolation: hold, period: 0.002, tick_offset: " + offset + "}\n");
    EXPECT_TRUE(has(msg, "sim.controls.tick_offset")) << msg;
    EXPECT_TRUE(has(msg, "in [0, period = 0.002 s)")) << msg;
  }
  EXPECT_TRUE(has(error_of("  dt: 0.0005\n  controls: {interpolation: hold, period: 0.002, tick_offset: .nan}\n"),
                  "sim.controls.tick_offset"));
  EXPECT_TRUE(has(error_of("  dt: 0.001\n  controls: {interpolation: cubic, tick_offset: 0.001}\n"),
                  "is only for interpolation 'hold'"));
}

TEST(ControlTimingConfig, AnUnknownInterpolationListsTheValidNames) {
  const std::string msg = error_of("  dt: 0.001\n  controls:\n    interpolation: spline\n");
  EXPECT_TRUE(has(msg, "exp.yaml:4")) << msg;
  EXPECT_TRUE(has(msg, "sim.controls.interpolation")) << msg;
  EXPECT_TRUE(has(msg, "spline")) << msg;
  for (const char* name : {"zero_order_hold", "hold", "linear", "cubic"}) EXPECT_TRUE(has(msg, name)) << msg;
}

TEST(ControlTimingConfig, APeriodMustBeAPositiveMultipleOfTheStep) {
  for (const std::string& period : {"0.0015", "0.0005", "-0.002", "0"}) {
    const std::string msg = error_of("  dt: 0.001\n  controls: {interpolation: hold, period: " + period + "}\n");
    EXPECT_TRUE(has(msg, "sim.controls.period")) << msg;
    EXPECT_TRUE(has(msg, "expected a positive multiple of the simulation step sim.dt / sim.substeps = 0.001 s")) << msg;
    EXPECT_TRUE(has(msg, "got " + period)) << msg;
  }
  // The step is dt / substeps: 0.0005 s divides 0.0015 s.
  EXPECT_DOUBLE_EQ(read("  dt: 0.001\n  substeps: 2\n  controls: {interpolation: hold, period: 0.0015}\n").controls.period,
                   0.0015);
  EXPECT_TRUE(has(error_of("  dt: 0.001\n  controls: {interpolation: hold}\n"), "sim.controls.period"));
}

TEST(ControlTimingConfig, APeriodOrTickValuesOnlyWithHold) {
  for (const std::string& kind : {"linear", "cubic", "zero_order_hold"}) {
    const std::string msg = error_of("  dt: 0.001\n  controls: {interpolation: " + kind + ", period: 0.002}\n");
    EXPECT_TRUE(has(msg, "sim.controls.period")) << msg;
    EXPECT_TRUE(has(msg, "only for interpolation 'hold'")) << msg;
    EXPECT_TRUE(has(msg, "got interpolation '" + kind + "'")) << msg;
  }
  EXPECT_TRUE(has(error_of("  dt: 0.001\n  controls: {interpolation: linear, tick_values: cubic}\n"),
                  "sim.controls.tick_values"));
  EXPECT_TRUE(has(error_of("  dt: 0.002\n  controls: {interpolation: hold, period: 0.002, tick_values: hold}\n"),
                  "sim.controls.tick_values"));
  EXPECT_TRUE(has(error_of("  dt: 0.001\n  controls: {interpolate: linear}\n"), "interpolate"));
  EXPECT_TRUE(has(error_of("  dt: 0.001\n  controls: linear\n"), "sim.controls"));
}

TEST(ControlTimingConfig, TheStepMustDivideTheDataInterval) {
  const Config root = Config::parse("sim:\n  dt: 0.003\n  controls: {interpolation: linear}\n", "exp.yaml");
  const StepOptions o = read_step_options(root.at("sim"));
  TrajectorySet data;
  Trajectory tr;
  tr.name = "run1";
  tr.time = Eigen::VectorXd::LinSpaced(11, 0.0, 0.1);  // 10 ms
  data.trajectories.push_back(tr);
  try {
    check_control_timing(root.at("sim"), o, data, "data.h5");
    FAIL() << "accepted a 3 ms step for 10 ms samples";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(has(msg, "exp.yaml:2")) << msg;
    EXPECT_TRUE(has(msg, "sim.dt")) << msg;
    EXPECT_TRUE(has(msg, "expected a divisor of 0.01 s (data.h5, trajectory 'run1'), got 0.003 s")) << msg;
  }
  // A dividing step, and the zero-order hold (substeps shrink to fit), pass.
  const Config ok = Config::parse("sim:\n  dt: 0.002\n  controls: {interpolation: linear}\n", "exp.yaml");
  EXPECT_NO_THROW(check_control_timing(ok.at("sim"), read_step_options(ok.at("sim")), data, "data.h5"));
  const Config zoh = Config::parse("sim:\n  dt: 0.003\n", "exp.yaml");
  EXPECT_NO_THROW(check_control_timing(zoh.at("sim"), read_step_options(zoh.at("sim")), data, "data.h5"));
}

TEST(ControlTimingConfig, DatasetControlsRefuseAnInterpolation) {
  const Config root = Config::parse("sim:\n  dt: 0.001\n  controls: {interpolation: cubic}\n", "exp.yaml");
  try {
    refuse_control_interpolation(root.at("sim"), read_step_options(root.at("sim")), "rollout with controls of type 'dataset'");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has(e.what(), "sim.controls.interpolation")) << e.what();
    EXPECT_TRUE(has(e.what(), "expected zero_order_hold, got 'cubic'")) << e.what();
  }
}

}  // namespace control_timing_config_test
}  // namespace neuralsim
