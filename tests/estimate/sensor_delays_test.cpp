// The sensor delays of the shooting residuals (estimate/sensor_delays.hpp)
// against closed forms: the cubic Hermite in (q, q̇) reproduces a cubic
// q(t) exactly, so the state seen at t_k − d, and its derivatives in d
// through a Jet delay, are those of the polynomial; samples too early for
// the delay's bound are masked.
#include <gtest/gtest.h>

#include "neuralsim/estimate/sensor_delays.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/yaml_model.hpp"

namespace neuralsim {
namespace sensor_delays_test {

using residual_internal::DelayedJointChannels;
using residual_internal::SensorDelays;

using J = ceres::Jet<double, 2>;  // derivatives in (q delay, q̇ delay)

double cubic_q(double t) { return 0.2 - 1.5 * t + 4 * t * t - 30 * t * t * t; }
double cubic_qd(double t) { return -1.5 + 8 * t - 90 * t * t; }
double cubic_qdd(double t) { return 8 - 180 * t; }

TEST(SensorDelays, HermiteReproducesACubicAndItsDelayDerivatives) {
  const Model<double> model = parse_yaml_model("generator: pendulum\nlength: 1.0\nmass: 1.0\n", "inline");
  const Model<J> model_j = model.cast<J>();
  Trajectory tr;
  tr.time.resize(8);
  tr.time << 0.0, 0.004, 0.01, 0.013, 0.02, 0.026, 0.03, 0.037;  // non-uniform
  tr.q.resize(8, 1);
  tr.qd.resize(8, 1);
  for (int k = 0; k < 8; ++k) {
    tr.q(k, 0) = cubic_q(tr.time[k]);
    tr.qd(k, 0) = cubic_qd(tr.time[k]);
  }
  ControlSignal controls;
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: observe.q.delay, bounds: [0, 0.012]}, {name: observe.qd.delay, bounds: [0, 0.006]}]",
                    "sensor.yaml"),
      "p", model, nullptr, nullptr, &controls);
  ObservationSpec observe;
  observe.qd_weight = 1;
  const ResidualContext ctx{&model, &params, StepOptions{}, observe};
  const double dq = 0.0093, dqd = 0.0041;
  const J theta[2] = {J(dq, 0), J(dqd, 1)};
  const int start = 1;
  SensorDelays<J> sensors(ctx, theta, model_j, tr, start, 6);
  ASSERT_TRUE(sensors.active());
  for (int k = start; k < 8; ++k) {
    VecX<J> q(1), qd(1);
    q[0] = J(tr.q(k, 0));
    qd[0] = J(tr.qd(k, 0));
    sensors.record(k, q, qd);
    const DelayedJointChannels<J> seen = sensors.observe(k);
    // Masked while t_k − bound precedes the window's first sample (t = 0.004).
    EXPECT_EQ(seen.q == nullptr, tr.time[k] - 0.012 < tr.time[start]) << k;
    EXPECT_EQ(seen.qd == nullptr, tr.time[k] - 0.006 < tr.time[start]) << k;
    if (seen.q) {
      const double t = tr.time[k] - dq;
      EXPECT_NEAR((*seen.q)[0].a, cubic_q(t), 1e-14) << k;
      EXPECT_NEAR((*seen.q)[0].v[0], -cubic_qd(t), 1e-11) << k;
      EXPECT_EQ((*seen.q)[0].v[1], 0.0);
    }
    if (seen.qd) {
      const double t = tr.time[k] - dqd;
      EXPECT_NEAR((*seen.qd)[0].a, cubic_qd(t), 1e-12) << k;
      EXPECT_NEAR((*seen.qd)[0].v[1], -cubic_qdd(t), 1e-9) << k;
      EXPECT_EQ((*seen.qd)[0].v[0], 0.0);
    }
  }
}

// Without a delay nothing is kept and the channels see the state itself.
TEST(SensorDelays, InactiveWithoutADelay) {
  const Model<double> model = parse_yaml_model("generator: pendulum\nlength: 1.0\nmass: 1.0\n", "inline");
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: joint.joint1.damping, bounds: [0, 1]}]", "sensor.yaml"), "p", model);
  const ResidualContext ctx{&model, &params, StepOptions{}, ObservationSpec{}};
  Trajectory tr;
  tr.time = Eigen::VectorXd::LinSpaced(3, 0, 0.02);
  const double theta[1] = {0.1};
  EXPECT_FALSE(SensorDelays<double>(ctx, theta, model, tr, 0, 2).active());
}

}  // namespace sensor_delays_test
}  // namespace neuralsim
