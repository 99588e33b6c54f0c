// Delays as fitted parameters (issue #36): a control delay (controls.delay)
// and a sensor delay (observe.q.delay). Data from a damped pendulum whose
// actuator applies the command d = 5 ms late, simulated by the engine at
// 0.1 ms with the delayed command evaluated in closed form at every RK4
// stage (not through the replay's stencils), then sampled at 500 Hz with
// sensor noise (and, for the sensor delay, the angle read 8 ms late from
// the fine simulation). The fit recovers the delays, the damping and the
// mass within their reported intervals; the same fit without the control
// delay biases damping and mass. Bad input is refused with ConfigError
// naming file and key.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/control_signal.hpp"
#include "support/files.hpp"
#include "support/fit_support.hpp"

namespace neuralsim {
namespace delay_estimation_test {

constexpr double kTrueDelay = 0.005;     // s
constexpr double kTrueDamping = 0.08;    // N·m·s/rad
constexpr double kTrueMass = 0.9;        // kg, at 0.5 m
constexpr double kSample = 0.002;        // 500 Hz
constexpr double kNoise = 2e-4;          // rad, on q after the first sample
constexpr double kPi = 3.14159265358979323846;

// The command the recording logs: three sines, 1.1 to 4.3 Hz.
double delay_test_command(double t) {
  return 1.2 * std::sin(2 * kPi * 1.1 * t) + 0.8 * std::sin(2 * kPi * 2.7 * t + 0.5) +
         0.5 * std::sin(2 * kPi * 4.3 * t + 1.0);
}

Model<double> delay_test_pendulum(double mass, double damping) {
  Model<double> m = parse_yaml_model("generator: pendulum\nlength: 0.5\nmass: 1.0\n", "inline");
  set_parameter(m, resolve_parameter(m, "link.link1.mass"), mass);
  set_parameter(m, resolve_parameter(m, "joint.joint1.damping"), damping);
  return m;
}

// 2 s of the truth: the actuator applies command(max(t − d, 0)) at every
// stage of RK4 at 0.1 ms (d = control_delay; negative: a lead, the command
// logged |d| after it acted); every 20th state is a sample, with noise. The
// angle sensor reads the angle `sensor_delay` late (a multiple of 0.1 ms;
// before t = sensor_delay it reads the start state; a negative one reads
// the truth simulated on past the last sample).
Trajectory delay_test_recording(unsigned seed, double sensor_delay = 0.0, double control_delay = kTrueDelay) {
  const Model<double> truth = delay_test_pendulum(kTrueMass, kTrueDamping);
  Stepper<double> stepper(truth, StepOptions{Integrator::kRK4, 1e-4, 1});
  ControlSource<double> applied;
  applied.context = &control_delay;
  applied.evaluate = [](const void* d, double, double t, Eigen::VectorXd& u) {
    u[0] = delay_test_command(std::max(t - *static_cast<const double*>(d), 0.0));
  };
  const int n = 1001, per_sample = 20;
  Trajectory tr = testing::sized_trajectory("delayed_pendulum", n, 1, 1);
  Eigen::VectorXd q = Eigen::VectorXd::Constant(1, 0.3), qd = Eigen::VectorXd::Zero(1);
  std::vector<double> fine_q;  // the angle every 0.1 ms
  for (int k = 0; k < n; ++k) {
    const double t = k * kSample;
    tr.time[k] = t;
    tr.qd(k, 0) = qd[0];
    tr.tau(k, 0) = delay_test_command(t);
    for (int s = 0; s < per_sample; ++s) {
      fine_q.push_back(q[0]);
      stepper.step(q, qd, applied, t + s * 1e-4, 1e-4);
    }
  }
  for (int s = 0; s < 400; ++s) {  // 40 ms past the last sample, for a negative sensor delay
    fine_q.push_back(q[0]);
    stepper.step(q, qd, applied, n * kSample + s * 1e-4, 1e-4);
  }
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, kNoise);
  const int lag = static_cast<int>(std::lround(sensor_delay / 1e-4));
  for (int k = 0; k < n; ++k)  // the first sample is the known start state
    tr.q(k, 0) = fine_q[static_cast<size_t>(std::max(k * per_sample - lag, 0))] + (k > 0 ? noise(rng) : 0.0);
  return tr;
}

StepOptions delay_test_step() {
  StepOptions step{Integrator::kRK4, kSample, 1};
  step.controls.interpolation = ControlInterpolation::kCubic;
  return step;
}

struct DelayFit {
  ParameterSet params;
  LocalResult result;
  Identifiability id;
  double value(int i) const { return id.value[static_cast<size_t>(i)]; }
  double error(int i) const { return id.std_error[static_cast<size_t>(i)]; }
};

// Fits `parameters_yaml` over one single-shooting window of the whole
// recording (or multiple-shooting segments of 100 samples).
DelayFit fit_delay(const Trajectory& data, const std::string& parameters_yaml, Formulation formulation,
                   double fixed_control_delay = 0.0) {
  const Model<double> start = delay_test_pendulum(1.0, 0.1);
  StepOptions step = delay_test_step();
  step.controls.delay = fixed_control_delay;
  DelayFit fit{read_parameter_set(Config::parse("p: " + parameters_yaml, "delay.yaml"), "p", start, nullptr, nullptr,
                                  &step.controls),
               {}, {}};
  ResidualContext ctx{&start, &fit.params, step, ObservationSpec{}};
  ProblemOptions po;
  po.formulation = formulation;
  po.window = formulation == Formulation::kSingleShooting ? 1000 : 100;
  EstimationProblem problem(ctx, {&data}, po);
  SolverOptions so;
  so.max_iterations = 50;
  fit.result = problem.solve(fit.params.initial_variables(), so);
  Eigen::VectorXd r;
  const Eigen::MatrixXd J = problem.parameter_jacobian(fit.result.x, &r);
  fit.id = analyze_identifiability(fit.params, fit.result.x, J, r);
  return fit;
}

// Each of the fit's three values within three of its reported standard
// errors of the truth (recorded as test properties).
void expect_within_intervals(const DelayFit& fit, const std::array<double, 3>& truth) {
  for (int i = 0; i < 3; ++i) {
    ::testing::Test::RecordProperty(fit.params[i].name(),
                                    testing::sci(fit.value(i)) + " +- " + testing::sci(fit.error(i)));
    EXPECT_LE(std::abs(fit.value(i) - truth[static_cast<size_t>(i)]), 3 * fit.error(i)) << fit.params[i].name();
  }
}

// A delay's entry, then the damping and the mass, as estimate.parameters.
std::string with_damping_and_mass(const std::string& delay_entry) {
  return "[" + delay_entry +
         ", {name: joint.joint1.damping, initial: 0.1, bounds: [0, 1]},"
         " {name: link.link1.mass, initial: 1.0, bounds: [0.1, 5]}]";
}

const std::string kWithDelay = with_damping_and_mass("{name: controls.delay, initial: 0.002, bounds: [0, 0.02]}");
const char* kWithoutDelay =
    "[{name: joint.joint1.damping, initial: 0.1, bounds: [0, 1]},"
    " {name: link.link1.mass, initial: 1.0, bounds: [0.1, 5]}]";

TEST(ControlDelayFit, RecoversTheDelayAndThePhysicalParametersWithinTheirIntervals) {
  const Trajectory data = delay_test_recording(36);
  const DelayFit fit = fit_delay(data, kWithDelay, Formulation::kSingleShooting);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  expect_within_intervals(fit, {kTrueDelay, kTrueDamping, kTrueMass});
  EXPECT_LT(fit.error(0), 2e-4);  // the interval says something: ±0.2 ms at most

  // Ignoring the delay: the damping and the mass absorb part of it (+1.1 %
  // and −1.2 % here), the mass far outside its interval, at a cost ~1000×
  // higher.
  const DelayFit ignored = fit_delay(data, kWithoutDelay, Formulation::kSingleShooting);
  ASSERT_TRUE(ignored.result.usable) << ignored.result.report;
  const double damping_bias = ignored.value(0) / kTrueDamping - 1, mass_bias = ignored.value(1) / kTrueMass - 1;
  RecordProperty("ignored_damping_bias", testing::sci(damping_bias));
  RecordProperty("ignored_mass_bias", testing::sci(mass_bias));
  RecordProperty("cost_with_delay", testing::sci(fit.result.cost));
  RecordProperty("cost_without_delay", testing::sci(ignored.result.cost));
  EXPECT_GT(std::abs(ignored.value(1) - kTrueMass), 5 * ignored.error(1));
  EXPECT_GT(std::abs(damping_bias), 0.005);
  EXPECT_GT(ignored.result.cost, 100 * fit.result.cost);
}

// The figures of docs/simid.md ("Delays"): ten noise seeds, how often each
// parameter lies within 2 reported standard errors, the mean |error| / SE,
// and the bias of the fit that ignores the delay. Run by hand
// (--gtest_also_run_disabled_tests): 20 fits.
TEST(ControlDelayFit, DISABLED_TenSeedsForTheDocs) {
  int within[3] = {0, 0, 0};
  double damping_bias = 0, mass_bias = 0, ratio[3] = {0, 0, 0};
  const double truth[3] = {kTrueDelay, kTrueDamping, kTrueMass};
  for (unsigned seed = 100; seed < 110; ++seed) {
    const Trajectory data = delay_test_recording(seed);
    const DelayFit fit = fit_delay(data, kWithDelay, Formulation::kSingleShooting);
    for (int i = 0; i < 3; ++i) {
      within[i] += std::abs(fit.value(i) - truth[i]) <= 2 * fit.error(i);
      ratio[i] += std::abs(fit.value(i) - truth[i]) / fit.error(i) / 10;
      std::printf("seed %u %s %.6g +- %.3g\n", seed, fit.params[i].name().c_str(), fit.value(i), fit.error(i));
    }
    const DelayFit ignored = fit_delay(data, kWithoutDelay, Formulation::kSingleShooting);
    damping_bias += (ignored.value(0) / kTrueDamping - 1) / 10;
    mass_bias += (ignored.value(1) / kTrueMass - 1) / 10;
    std::printf("seed %u ignored: damping %.6g +- %.3g, mass %.6g +- %.3g, cost %.4g vs %.4g\n", seed,
                ignored.value(0), ignored.error(0), ignored.value(1), ignored.error(1), ignored.result.cost,
                fit.result.cost);
  }
  for (int i = 0; i < 3; ++i) std::printf("param %d: within 2 SE %d/10, mean |error|/SE %.2f\n", i, within[i], ratio[i]);
  std::printf("ignoring the delay: damping %+.1f %%, mass %+.2f %%\n", 100 * damping_bias, 100 * mass_bias);
}

// Multiple shooting carries the delay's derivative through every segment.
TEST(ControlDelayFit, MultipleShootingRecoversTheDelay) {
  const Trajectory data = delay_test_recording(37);
  const DelayFit fit = fit_delay(data, kWithDelay, Formulation::kMultipleShooting);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  RecordProperty("delay", testing::sci(fit.value(0)) + " +- " + testing::sci(fit.error(0)));
  EXPECT_NEAR(fit.value(0), kTrueDelay, 3e-4);
  EXPECT_NEAR(fit.value(1), kTrueDamping, 0.1 * kTrueDamping);
}

// ∂cost/∂d from the Jets (the stencil's rate) against central differences
// of the cost, between samples and on a sample time (d = 2 samples).
TEST(ControlDelayFit, CostGradientInTheDelayAgreesWithCentralDifferences) {
  const Trajectory data = delay_test_recording(38);
  const Model<double> start = delay_test_pendulum(1.0, 0.1);
  const StepOptions step = delay_test_step();
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: controls.delay, initial: 0.003, bounds: [0, 0.02]}]", "delay.yaml"), "p", start,
      nullptr, nullptr, &step.controls);
  ResidualContext ctx{&start, &params, step, ObservationSpec{}};
  ProblemOptions po;
  po.window = 100;
  EstimationProblem problem(ctx, {&data}, po);
  for (double d : {0.0033, 0.0071}) {
    double cost = 0, plus = 0, minus = 0;
    std::vector<double> g;
    ASSERT_TRUE(problem.evaluate({d}, &cost, &g));
    const double eps = 1e-7;
    ASSERT_TRUE(problem.evaluate({d + eps}, &plus, nullptr));
    ASSERT_TRUE(problem.evaluate({d - eps}, &minus, nullptr));
    const double fd = (plus - minus) / (2 * eps);
    EXPECT_NEAR(g[0], fd, 1e-5 * std::abs(fd)) << "d " << d;
  }
}

// The angle sensor 8 ms late, the actuator's 5 ms known (sim.controls.delay):
// the fitted observe.q.delay and the physical parameters within their
// intervals. (The two delays are both a phase lag of the forced response;
// only the free response from the known start state tells them apart, so
// one is fixed here.)
TEST(SensorDelayFit, RecoversTheAngleSensorsDelayWithinItsInterval) {
  const Trajectory data = delay_test_recording(39, 0.008);
  const DelayFit fit =
      fit_delay(data, with_damping_and_mass("{name: observe.q.delay, initial: 0.004, bounds: [0, 0.02]}"),
                Formulation::kSingleShooting, kTrueDelay);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  expect_within_intervals(fit, {0.008, kTrueDamping, kTrueMass});
  EXPECT_LT(fit.error(0), 2e-4);
}

// The gradient of the cost at x against central differences of the cost in
// every variable, for single and multiple shooting (windows of 50 samples),
// the q̇ channel observed with weight 0.1.
void expect_delay_gradients(const Trajectory& data, const std::string& parameters_yaml, const std::vector<double>& x) {
  const Model<double> start = delay_test_pendulum(1.0, 0.1);
  const StepOptions step = delay_test_step();
  const ParameterSet params = read_parameter_set(Config::parse("p: " + parameters_yaml, "delay.yaml"), "p", start,
                                                 nullptr, nullptr, &step.controls);
  ObservationSpec observe;
  observe.qd_weight = 0.1;
  ResidualContext ctx{&start, &params, step, observe};
  for (const Formulation f : {Formulation::kSingleShooting, Formulation::kMultipleShooting}) {
    ProblemOptions po;
    po.formulation = f;
    po.window = 50;
    EstimationProblem problem(ctx, {&data}, po);
    double cost = 0;
    std::vector<double> g;
    ASSERT_TRUE(problem.evaluate(x, &cost, &g));
    for (size_t i = 0; i < x.size(); ++i) {
      const double eps = 1e-7;
      std::vector<double> plus = x, minus = x;
      plus[i] += eps;
      minus[i] -= eps;
      double cp = 0, cm = 0;
      ASSERT_TRUE(problem.evaluate(plus, &cp, nullptr));
      ASSERT_TRUE(problem.evaluate(minus, &cm, nullptr));
      const double fd = (cp - cm) / (2 * eps);
      EXPECT_NEAR(g[i], fd, 1e-5 * std::abs(fd) + 1e-9)
          << formulation_name(f) << " " << params[static_cast<int>(i)].name();
    }
  }
}

// ∂cost/∂d_s through the Hermite basis against central differences, for
// the q and q̇ channels, in single and multiple shooting.
TEST(SensorDelayFit, CostGradientInTheSensorDelayAgreesWithCentralDifferences) {
  expect_delay_gradients(delay_test_recording(40, 0.008),
                         "[{name: observe.q.delay, initial: 0.003, bounds: [0, 0.02]},"
                         " {name: observe.qd.delay, initial: 0.003, bounds: [0, 0.02]}]",
                         {0.0053, 0.0071});
}

// ---- Leads (negative delays) ---------------------------------------------------

// The logged command lags the one that acted by 5 ms (a delay of −5 ms, as
// the DFKI pendulum's torque log, docs/real-data-results.md): fitted
// between bounds of either sign, the lead, the damping and the mass are
// recovered within their intervals. The replay reads the command 5 ms
// after each stage; past the last sample it holds the last one (the last
// 5 ms of the recording see a held command).
TEST(ControlDelayFit, RecoversALeadWithinItsInterval) {
  const double lead = -0.005;
  const Trajectory data = delay_test_recording(46, 0.0, lead);
  const DelayFit fit =
      fit_delay(data, with_damping_and_mass("{name: controls.delay, initial: 0.002, bounds: [-0.02, 0.02]}"),
                Formulation::kSingleShooting);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  expect_within_intervals(fit, {lead, kTrueDamping, kTrueMass});
  EXPECT_LT(fit.error(0), 2e-4);
  if (std::getenv("NEURALSIM_PRINT"))
    std::printf("lead: %.4f +- %.4f ms, damping %.6f +- %.6f, mass %.6f +- %.6f, cost %.3g\n", 1e3 * fit.value(0),
                1e3 * fit.error(0), fit.value(1), fit.error(1), fit.value(2), fit.error(2), fit.result.cost);
}

// At a lead the replay reads the recorded command after the stage's time:
// between samples as at a lag (exact ∂u/∂d = −du/dt), past the last sample
// the last one, held (du/dt = 0 there, so ∂u/∂d = 0).
TEST(ControlDelayFit, ALeadReadsLaterSamplesAndHoldsTheLast) {
  Eigen::VectorXd time(4);
  time << 0.0, 0.01, 0.02, 0.03;
  ControlSignal cubic;
  cubic.interpolation = ControlInterpolation::kCubic;
  const ControlStencil inside = delayed_control_stencil(cubic, time, 0.012, 0.01, -0.004);
  const ControlStencil direct = control_stencil(cubic, time, 1, 0.016, 0.014);
  ASSERT_EQ(inside.count, direct.count);
  for (int j = 0; j < inside.count; ++j) {
    EXPECT_EQ(inside.index[j], direct.index[j]);
    EXPECT_NEAR(inside.weight[j], direct.weight[j], 1e-15);
    EXPECT_NEAR(inside.rate[j], direct.rate[j], 1e-12);
  }
  const ControlStencil past = delayed_control_stencil(cubic, time, 0.028, 0.028, -0.004);
  ASSERT_EQ(past.count, 1);
  EXPECT_EQ(past.index[0], 3);
  EXPECT_EQ(past.weight[0], 1.0);
  EXPECT_EQ(past.rate[0], 0.0);
}

// ∂cost/∂d at leads (control and sensor delays) against central
// differences of the cost, single and multiple shooting.
TEST(ControlDelayFit, CostGradientAtALeadAgreesWithCentralDifferences) {
  expect_delay_gradients(delay_test_recording(47, -0.004, -0.005),
                         "[{name: controls.delay, initial: -0.003, bounds: [-0.02, 0.02]},"
                         " {name: observe.q.delay, initial: -0.003, bounds: [-0.02, 0.02]},"
                         " {name: observe.qd.delay, initial: -0.003, bounds: [-0.02, 0.01]}]",
                         {-0.0047, -0.0033, -0.0071});
}

// The angle sensor 4 ms early (the sample at t_k is the model's angle at
// t_k + 4 ms), the actuator's 5 ms known: the fitted observe.q.delay is the
// lead, within its interval.
TEST(SensorDelayFit, RecoversALeadWithinItsInterval) {
  const Trajectory data = delay_test_recording(48, -0.004);
  const DelayFit fit =
      fit_delay(data, with_damping_and_mass("{name: observe.q.delay, initial: 0.0, bounds: [-0.02, 0.02]}"),
                Formulation::kSingleShooting, kTrueDelay);
  ASSERT_TRUE(fit.result.usable) << fit.result.report;
  expect_within_intervals(fit, {-0.004, kTrueDamping, kTrueMass});
  if (std::getenv("NEURALSIM_PRINT"))
    std::printf("angle lead: %.4f +- %.4f ms, damping %.6f +- %.6f, mass %.6f +- %.6f\n", 1e3 * fit.value(0),
                1e3 * fit.error(0), fit.value(1), fit.error(1), fit.value(2), fit.error(2));
}

// ---- Bad input ---------------------------------------------------------------

std::string delay_config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

TEST(ControlDelayConfig, RefusesANonFiniteDelay) {
  for (const char* bad : {"-.inf", ".nan", ".inf"}) {
    const Config sim = Config::parse(std::string("sim: {dt: 0.002, controls: {interpolation: cubic, delay: ") + bad +
                                         "}}",
                                     "delay.yaml")
                           .at("sim");
    const std::string what = delay_config_error([&] { read_step_options(sim); });
    EXPECT_NE(what.find("delay.yaml:1:"), std::string::npos) << what;
    EXPECT_NE(what.find("key 'sim.controls.delay'"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(bad) == ".nan" ? "expected a number" : "expected a finite actuation delay in s"),
              std::string::npos)
        << what;
  }
  const Config ok = Config::parse("sim: {dt: 0.002, controls: {delay: 0.004}}", "delay.yaml").at("sim");
  EXPECT_EQ(read_step_options(ok).controls.delay, 0.004);  // a fixed delay with the zero-order hold is fine
  const Config lead = Config::parse("sim: {dt: 0.002, controls: {delay: -0.004}}", "delay.yaml").at("sim");
  EXPECT_EQ(read_step_options(lead).controls.delay, -0.004);  // a lead
}

TEST(ControlDelayConfig, RefusesADelayNotShorterThanTheData) {
  TrajectorySet data;
  data.trajectories.push_back(delay_test_recording(1));  // 2 s
  const Config sim =
      Config::parse("sim: {dt: 0.002, controls: {interpolation: cubic, delay: 2.5}}", "delay.yaml").at("sim");
  const std::string what =
      delay_config_error([&] { check_control_timing(sim, read_step_options(sim), data, "data.h5"); });
  EXPECT_NE(what.find("key 'sim.controls.delay'"), std::string::npos) << what;
  EXPECT_NE(what.find("expected |delay| less than the duration 2 s of trajectory 'delayed_pendulum' (data.h5)"),
            std::string::npos)
      << what;
  const Config bound = Config::parse("p: {name: controls.delay, bounds: [-3, 0]}", "delay.yaml").at("p");
  const std::string bound_what =
      delay_config_error([&] { check_delay_within_data(bound, "bounds.0", -3.0, data, "data.h5"); });
  EXPECT_NE(bound_what.find("key 'p.bounds.0'"), std::string::npos) << bound_what;
  EXPECT_NE(bound_what.find("a delay of -3 s is not shorter than the data"), std::string::npos) << bound_what;
}

TEST(ControlDelayConfig, RefusesFittingTheDelayOfAPiecewiseConstantSignalAndBadBounds) {
  const Model<double> model = delay_test_pendulum(1.0, 0.1);
  const auto read = [&](const std::string& yaml, const ControlSignal* controls) {
    return delay_config_error(
        [&] { read_parameter_set(Config::parse("p: [" + yaml + "]", "delay.yaml"), "p", model, nullptr, nullptr, controls); });
  };
  ControlSignal zoh, hold, cubic;
  hold.interpolation = ControlInterpolation::kHold;
  hold.period = 0.001;
  cubic.interpolation = ControlInterpolation::kCubic;
  const std::string good = "{name: controls.delay, bounds: [0, 0.02]}";
  for (const ControlSignal* piecewise : {&zoh, &hold}) {
    const std::string what = read(good, piecewise);
    EXPECT_NE(what.find("key 'p.0.name'"), std::string::npos) << what;
    EXPECT_NE(what.find("expected sim.controls.interpolation linear or cubic"), std::string::npos) << what;
  }
  EXPECT_NE(read(good, nullptr).find("only simid"), std::string::npos);
  EXPECT_NE(read("{name: controls.delay}", &cubic).find("needs bounds"), std::string::npos);
  EXPECT_EQ(read("{name: controls.delay, bounds: [-0.01, 0.02]}", &cubic), "no ConfigError");  // a lead or a lag
  const std::string infinite = read("{name: controls.delay, bounds: [-.inf, 0.02]}", &cubic);
  EXPECT_NE(infinite.find("key 'p.0.bounds.0'"), std::string::npos) << infinite;
  EXPECT_NE(infinite.find("expected a finite delay bound"), std::string::npos) << infinite;
  EXPECT_NE(read("{name: controls.delay, bounds: [0, .inf]}", &cubic).find("key 'p.0.bounds.1'"), std::string::npos);
  EXPECT_NE(read("{name: controls.delay, bounds: [.nan, 0.02]}", &cubic), "no ConfigError");
  EXPECT_NE(read("{name: controls.latency, bounds: [0, 0.02]}", &cubic).find("valid: controls.delay"),
            std::string::npos);
  // Without `initial` the fit starts at sim.controls.delay.
  cubic.delay = 0.003;
  const ParameterSet p =
      read_parameter_set(Config::parse("p: [" + good + "]", "delay.yaml"), "p", model, nullptr, nullptr, &cubic);
  EXPECT_EQ(p[0].initial, 0.003);
  EXPECT_EQ(p[0].kind(), ParameterKind::kControlDelay);
  // A sensor delay: finite bounds of either sign, any interpolation of the controls.
  EXPECT_EQ(read("{name: observe.q.delay, bounds: [-0.01, 0.02]}", &zoh), "no ConfigError");
  EXPECT_NE(read("{name: observe.q.delay, bounds: [-1, .inf]}", &zoh).find("expected a finite delay bound"),
            std::string::npos);
  EXPECT_NE(read("{name: observe.q.latency, bounds: [0, 0.02]}", &zoh).find("valid: observe.q.delay, observe.qd.delay"),
            std::string::npos);
}

TEST(SensorDelayConfig, ReadsAChannelsDelayAndRefusesABadOne) {
  const Model<double> model = delay_test_pendulum(1.0, 0.1);
  const ObservationSpec spec =
      read_observation(Config::parse("o: {q: {weight: 2, delay: 0.008}, qd: 0.5}", "delay.yaml").at("o"), model);
  EXPECT_EQ(spec.q_weight, 2.0);
  EXPECT_EQ(spec.q_delay, 0.008);
  EXPECT_EQ(spec.qd_weight, 0.5);
  EXPECT_EQ(spec.qd_delay, 0.0);
  EXPECT_EQ(read_observation(Config::parse("o: {q: {delay: -0.008}}", "delay.yaml").at("o"), model).q_delay,
            -0.008);  // a lead
  for (const char* bad : {"-.inf", ".nan", ".inf"}) {
    const std::string what = delay_config_error([&] {
      read_observation(Config::parse(std::string("o: {q: {delay: ") + bad + "}}", "delay.yaml").at("o"), model);
    });
    EXPECT_NE(what.find("key 'o.q.delay'"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(bad) == ".nan" ? "expected a number" : "expected a finite sensor delay in s"),
              std::string::npos)
        << what;
  }
}

}  // namespace delay_estimation_test
}  // namespace neuralsim
