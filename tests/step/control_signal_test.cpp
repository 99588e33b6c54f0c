// Controls between recorded samples (step/control_signal.hpp) against
// closed forms: each interpolation on signals it must reproduce exactly,
// the sine of issue #38 within its interpolation-error bound, and a replay
// of a recorded point mass (q̈ = u/m, no gravity, solved in closed form)
// through step/replay.hpp, where the right interpolation predicts at
// integration-error level and the zero-order hold is orders of magnitude off.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/scalar.hpp"
#include "neuralsim/step/control_signal.hpp"
#include "neuralsim/step/replay.hpp"
#include "support/allocation_counter.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace control_signal_test {

constexpr double kPi = 3.14159265358979323846;
constexpr double kOmega = 2 * kPi * 5;  // the 5 Hz control of issue #38

using Signal = std::function<double(double)>;

// u(t) through the stencil of interval k, the step starting at t.
double interpolate(const ControlSignal& signal, const Eigen::VectorXd& time, const Eigen::MatrixXd& samples,
                   int k, double t, double step_start) {
  Eigen::VectorXd u(1);
  apply_control_stencil(control_stencil(signal, time, k, t, step_start), samples, u);
  return u[0];
}

Eigen::MatrixXd sample(const Eigen::VectorXd& time, const Signal& f) {
  Eigen::MatrixXd s(time.size(), 1);
  for (Eigen::Index k = 0; k < time.size(); ++k) s(k, 0) = f(time[k]);
  return s;
}

// 100 Hz from 0.
Eigen::VectorXd uniform_time(int n, double dt) {
  Eigen::VectorXd t(n);
  for (int k = 0; k < n; ++k) t[k] = k * dt;
  return t;
}

// Largest |interpolated − exact| over 50 points per interval of [t_from, t_to).
double max_error(const ControlSignal& signal, const Eigen::VectorXd& time, const Signal& exact, int k_from,
                 int k_to) {
  const Eigen::MatrixXd s = sample(time, exact);
  double worst = 0;
  for (int k = k_from; k < k_to; ++k)
    for (int i = 0; i <= 50; ++i) {
      const double t = time[k] + (time[k + 1] - time[k]) * i / 50.0;
      worst = std::max(worst, std::abs(interpolate(signal, time, s, k, t, t) - exact(t)));
    }
  return worst;
}

ControlSignal kind(ControlInterpolation i) {
  ControlSignal s;
  s.interpolation = i;
  return s;
}

TEST(ControlSignal, ZeroOrderHoldIsTheSampleOfTheInterval) {
  const Eigen::VectorXd time = uniform_time(5, 0.01);
  const Eigen::MatrixXd s = sample(time, [](double t) { return 1 + 100 * t * t; });
  for (int k = 0; k < 4; ++k)
    for (double x : {0.0, 0.3, 1.0})  // the last RK4 stage (x = 1) still sees u_k
      EXPECT_EQ(interpolate(kind(ControlInterpolation::kZeroOrderHold), time, s, k, time[k] + x * 0.01, time[k]),
                s(k, 0));
}

TEST(ControlSignal, LinearIsExactForALinearSignal) {
  Eigen::VectorXd time(5);
  time << 0.0, 0.01, 0.025, 0.03, 0.05;  // non-uniform
  const Signal f = [](double t) { return 0.7 - 3.0 * t; };
  EXPECT_LT(max_error(kind(ControlInterpolation::kLinear), time, f, 0, 4), 1e-14);
}

TEST(ControlSignal, CubicWithBesselSlopesIsExactForAQuadratic) {
  for (const bool uniform : {true, false}) {
    Eigen::VectorXd time = uniform_time(7, 0.01);
    if (!uniform) time << 0.0, 0.012, 0.02, 0.035, 0.041, 0.06, 0.07;
    const Signal f = [](double t) { return 0.5 + 20 * t - 900 * t * t; };
    // Bessel's slope is the derivative of the parabola through three
    // samples: exact inside; the one-sided three-point end slopes as well.
    EXPECT_LT(max_error(kind(ControlInterpolation::kCubic), time, f, 1, 5), 1e-12) << "uniform " << uniform;
    EXPECT_LT(max_error(kind(ControlInterpolation::kCubic), time, f, 0, 6), 1e-12) << "uniform " << uniform;
    // A cubic is not reproduced (the slopes are only second order): the test can fail.
    const Signal g = [](double t) { return 1e5 * t * t * t; };
    EXPECT_GT(max_error(kind(ControlInterpolation::kCubic), time, g, 1, 5), 1e-4);
  }
}

TEST(ControlSignal, SineAt100HzWithinEachInterpolationsBound) {
  const Eigen::VectorXd time = uniform_time(21, 0.01);
  const Signal f = [](double t) { return std::sin(kOmega * t); };
  const double dt = 0.01;
  const double zoh = max_error(kind(ControlInterpolation::kZeroOrderHold), time, f, 0, 20);
  const double lin = max_error(kind(ControlInterpolation::kLinear), time, f, 0, 20);
  const double cub = max_error(kind(ControlInterpolation::kCubic), time, f, 2, 18);
  RecordProperty("sine_error_zoh", testing::sci(zoh));
  RecordProperty("sine_error_linear", testing::sci(lin));
  RecordProperty("sine_error_cubic", testing::sci(cub));
  // |u − u_k| ≤ ω Δt; linear: Δt²/8 max|u''| = Δt² ω²/8; cubic Hermite with
  // slopes of error Δt² ω³/6: ≤ Δt⁴ ω⁴/384 + (4/27) Δt · Δt² ω³/6.
  EXPECT_LE(zoh, kOmega * dt);
  EXPECT_GT(zoh, 0.5 * kOmega * dt);
  EXPECT_LE(lin, dt * dt * kOmega * kOmega / 8);
  EXPECT_GT(lin, 0.5 * dt * dt * kOmega * kOmega / 8);
  EXPECT_LE(cub, std::pow(dt * kOmega, 4) / 384 + 4.0 / 27 * dt * dt * dt * std::pow(kOmega, 3) / 6);
  EXPECT_LT(cub, lin / 10);
}

// A controller that updated every 2 ms and held its value, logged at 100 Hz:
// the hold reproduces it exactly when the tick values are recovered exactly
// (linear ticks of a linear law, cubic ticks of a quadratic one).
TEST(ControlSignal, HoldReproducesASignalHeldAtTheControllersPeriod) {
  const double period = 0.002;
  const Eigen::VectorXd time = uniform_time(8, 0.01);
  for (const ControlInterpolation ticks : {ControlInterpolation::kLinear, ControlInterpolation::kCubic}) {
    const Signal law = ticks == ControlInterpolation::kLinear ? Signal([](double t) { return 2 - 40 * t; })
                                                               : Signal([](double t) { return 1 + 30 * t - 800 * t * t; });
    const Signal held = [&](double t) { return law(std::floor(t / period + 1e-9) * period); };
    const Eigen::MatrixXd s = sample(time, law);  // samples fall on ticks
    ControlSignal signal = kind(ControlInterpolation::kHold);
    signal.period = period;
    signal.tick_values = ticks;
    for (int k = 0; k < 7; ++k)
      for (int step = 0; step < 20; ++step) {  // 0.5 ms integration steps
        const double start = time[k] + step * 0.0005;
        for (double c : {0.0, 0.5, 1.0}) {  // RK4 stage times; all keyed on the step's start
          const double t = start + c * 0.0005;
          EXPECT_NEAR(interpolate(signal, time, s, k, t, start), held(start), 1e-12)
              << "k " << k << " step " << step << " c " << c;
        }
      }
    // Not the zero-order hold: the value changes inside an interval.
    EXPECT_GT(std::abs(interpolate(signal, time, s, 3, time[3] + 0.009, time[3] + 0.009) - s(3, 0)), 1e-3);
  }
}

// The same controller 1 ms out of phase with the recording (tick_offset):
// ticks at 1, 3, 5, ... ms; before the first tick the first sample holds.
TEST(ControlSignal, HoldWithATickOffsetReproducesAControllerOutOfPhase) {
  const double period = 0.002, offset = 0.001;
  const Eigen::VectorXd time = uniform_time(8, 0.01);
  const Signal law = [](double t) { return 2 - 40 * t; };
  const Signal held = [&](double t) {
    return t < offset - 1e-12 ? law(0.0) : law(offset + std::floor((t - offset) / period + 1e-9) * period);
  };
  const Eigen::MatrixXd s = sample(time, law);
  ControlSignal signal = kind(ControlInterpolation::kHold);
  signal.period = period;
  signal.tick_offset = offset;
  double aligned_difference = 0;
  ControlSignal aligned = signal;
  aligned.tick_offset = 0;
  for (int k = 0; k < 7; ++k)
    for (int step = 0; step < 20; ++step) {  // 0.5 ms integration steps
      const double start = time[k] + step * 0.0005;
      for (double c : {0.0, 0.5, 1.0}) {
        const double t = start + c * 0.0005;
        EXPECT_NEAR(interpolate(signal, time, s, k, t, start), held(start), 1e-12) << "k " << k << " step " << step;
      }
      aligned_difference = std::max(aligned_difference,
                                    std::abs(interpolate(aligned, time, s, k, start, start) - held(start)));
    }
  EXPECT_GT(aligned_difference, 0.03) << "the offset changes which tick holds";
  signal.tick_offset = period;
  EXPECT_THROW(interpolate(signal, time, s, 0, 0.0, 0.0), InvalidArgument);
}

// Every stencil reproduces constants (weights sum to 1) and carries the
// samples' derivatives: with Jet controls, ∂u(t)/∂u_j is the weight of j.
TEST(ControlSignal, StencilIsLinearInControlsOfAnyScalar) {
  const Eigen::VectorXd time = uniform_time(6, 0.01);
  using J = ceres::Jet<double, 6>;
  Eigen::Matrix<J, Eigen::Dynamic, Eigen::Dynamic> samples(6, 1);
  for (int k = 0; k < 6; ++k) samples(k, 0) = J(std::sin(kOmega * time[k]), k);
  ControlSignal hold = kind(ControlInterpolation::kHold);
  hold.period = 0.002;
  hold.tick_values = ControlInterpolation::kCubic;
  for (const ControlSignal& signal : {kind(ControlInterpolation::kZeroOrderHold), kind(ControlInterpolation::kLinear),
                                      kind(ControlInterpolation::kCubic), hold})
    for (int k = 0; k < 5; ++k) {
      const double t = time[k] + 0.0037;
      const ControlStencil st = control_stencil(signal, time, k, t, t);
      ASSERT_GE(st.count, 1);
      ASSERT_LE(st.count, ControlStencil::kMaxSamples);
      double sum = 0;
      for (int j = 0; j < st.count; ++j) sum += st.weight[j];
      EXPECT_NEAR(sum, 1.0, 1e-12) << control_interpolation_name(signal.interpolation) << " k " << k;
      Eigen::Matrix<J, Eigen::Dynamic, 1> u(1);
      apply_control_stencil(st, samples, u);
      double sum_v = 0;
      for (int j = 0; j < st.count; ++j) EXPECT_NEAR(u[0].v[st.index[j]], st.weight[j], 1e-15);
      for (int i = 0; i < 6; ++i) sum_v += u[0].v[i];
      EXPECT_NEAR(sum_v, 1.0, 1e-12);
    }
}

TEST(ControlSignal, RejectsAnIntervalOutsideTheTrajectoryAndAHoldWithoutPeriod) {
  const Eigen::VectorXd time = uniform_time(3, 0.01);
  EXPECT_THROW(control_stencil(kind(ControlInterpolation::kLinear), time, 2, 0.025, 0.025), InvalidArgument);
  EXPECT_THROW(control_stencil(kind(ControlInterpolation::kHold), time, 0, 0.005, 0.005), InvalidArgument);
}

// ---- Replay of a recorded point mass: q̈ = u/m, no gravity -------------

constexpr double kMass = 2.0;

Model<double> point_mass() {
  Model<double> model;
  model.gravity.setZero();
  Joint<double> joint;
  joint.type = JointType::kPrismatic;
  joint.axis = Eigen::Vector3d::UnitX();
  model.add_body("mass", -1, joint, Inertia<double>::from_com(kMass, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Identity() * 0.01));
  return model;
}

// The recording at 100 Hz, 0.4 s, of the mass under u(t) = A sin(ωt)
// (`held` false: closed form q = q0 + v0 t + A/(m ω²) (ωt − sin ωt)) or under
// the same law sampled by a controller every 2 ms and held (`held` true:
// exact piecewise-constant integration of q̈ = u/m, tick by tick).
Trajectory record(bool held) {
  const double A = 3.0, dt = 0.01, q0 = 0.1, v0 = -0.2;
  const int n = 41;
  Trajectory tr;
  tr.name = held ? "held_2ms" : "continuous";
  tr.time = uniform_time(n, dt);
  tr.q.resize(n, 1);
  tr.qd.resize(n, 1);
  tr.tau.resize(n, 1);
  double q = q0, v = v0;
  for (int k = 0; k < n; ++k) {
    const double t = tr.time[k];
    tr.tau(k, 0) = A * std::sin(kOmega * t);
    if (!held) {
      tr.q(k, 0) = q0 + v0 * t + A / (kMass * kOmega * kOmega) * (kOmega * t - std::sin(kOmega * t));
      tr.qd(k, 0) = v0 + A / (kMass * kOmega) * (1 - std::cos(kOmega * t));
      continue;
    }
    tr.q(k, 0) = q;
    tr.qd(k, 0) = v;
    for (int tick = 0; tick < 5; ++tick) {  // five 2 ms ticks per interval
      const double a = A * std::sin(kOmega * (t + tick * 0.002)) / kMass, h = 0.002;
      q += v * h + 0.5 * a * h * h;
      v += a * h;
    }
  }
  return tr;
}

// Largest |q error| over 10-sample windows restarted from the recording.
double replay_error(const Trajectory& recorded, const ControlSignal& signal, Integrator integrator, double dt) {
  const Model<double> model = point_mass();
  StepOptions options{integrator, dt, 1};
  options.controls = signal;
  Stepper<double> stepper(model, options);
  const Trajectory predicted = predict_recording(stepper, recorded, 10);
  return (predicted.q - recorded.q).cwiseAbs().maxCoeff();
}

TEST(ControlSignal, ReplayOfARecordedPointMassNeedsTheRightInterpolation) {
  ControlSignal hold = kind(ControlInterpolation::kHold);
  hold.period = 0.002;
  hold.tick_values = ControlInterpolation::kCubic;
  const Trajectory continuous = record(false), held = record(true);
  const ControlSignal zoh = kind(ControlInterpolation::kZeroOrderHold);
  // RK4 at 1 ms: stages at their own times.
  const double e_zoh = replay_error(continuous, zoh, Integrator::kRK4, 0.001);
  const double e_lin = replay_error(continuous, kind(ControlInterpolation::kLinear), Integrator::kRK4, 0.001);
  const double e_cub = replay_error(continuous, kind(ControlInterpolation::kCubic), Integrator::kRK4, 0.001);
  const double e_held_zoh = replay_error(held, zoh, Integrator::kRK4, 0.002);
  const double e_held_hold = replay_error(held, hold, Integrator::kRK4, 0.002);
  const double e_held_hold_euler = replay_error(held, hold, Integrator::kSemiImplicitEuler, 0.0005);
  for (const auto& [name, e] : {std::pair<const char*, double>{"continuous_zoh", e_zoh}, {"continuous_linear", e_lin},
                                {"continuous_cubic", e_cub}, {"held_zoh", e_held_zoh}, {"held_hold_cubic", e_held_hold},
                                {"held_hold_cubic_euler_0.5ms", e_held_hold_euler}})
    RecordProperty(name, testing::sci(e));
  // q error over 10 samples (0.1 s) from a control error δu: ≤ max|δu|/m · 0.1²/2.
  const double A = 3.0, horizon = 0.1, dt = 0.01;
  const double bound = horizon * horizon / (2 * kMass);
  EXPECT_LE(e_zoh, bound * A * kOmega * dt);
  EXPECT_LE(e_lin, bound * A * dt * dt * kOmega * kOmega / 8);
  EXPECT_LE(e_cub, bound * A * (std::pow(dt * kOmega, 4) / 384 + 4.0 / 27 * std::pow(dt, 3) * std::pow(kOmega, 3) / 6));
  EXPECT_LT(e_cub, e_zoh / 100);
  // The 2 ms controller: cubic tick values are within ~1e-3 A of the truth,
  // RK4 integrates the piecewise-constant input exactly.
  EXPECT_LE(e_held_hold, bound * A * 4.0 / 27 * std::pow(dt, 3) * std::pow(kOmega, 3) / 6 * 2);
  EXPECT_LT(e_held_hold, e_held_zoh / 100);
  // Semi-implicit Euler at 0.5 ms: first order, yet well below the hold's error.
  EXPECT_LT(e_held_hold_euler, e_held_zoh / 10);
}

// The stepper evaluates a varying control at each substep and RK4 stage at
// the stage's own time (c = 0, ½, ½, 1), keyed on the substep's start.
TEST(ControlSignal, StepperEvaluatesTheControlAtEveryStageTime) {
  struct Calls {
    int n = 0;
    double start[64], t[64];
  } calls;
  ControlSource<double> source;
  source.context = &calls;
  source.evaluate = [](const void* context, double step_start, double t, Eigen::VectorXd& u) {
    auto& c = *static_cast<Calls*>(const_cast<void*>(context));
    if (c.n < 64) {
      c.start[c.n] = step_start;
      c.t[c.n] = t;
    }
    ++c.n;
    u.setConstant(1.0);
  };
  const Model<double> model = point_mass();
  for (const Integrator integrator : {Integrator::kRK4, Integrator::kSemiImplicitEuler}) {
    calls.n = 0;
    Stepper<double> stepper(model, StepOptions{integrator, 0.004, 2});  // h = 2 ms
    Eigen::VectorXd q = Eigen::VectorXd::Zero(1), qd = Eigen::VectorXd::Zero(1);
    stepper.step(q, qd, source, 0.1, 0.01);  // ceil(10 / 2) = 5 substeps
    const bool rk4 = integrator == Integrator::kRK4;
    ASSERT_EQ(calls.n, rk4 ? 20 : 5);
    const double stage[4] = {0.0, 0.5, 0.5, 1.0};
    for (int i = 0; i < calls.n; ++i) {
      const int s = rk4 ? i / 4 : i;
      EXPECT_NEAR(calls.start[i], 0.1 + 0.002 * s, 1e-15);
      EXPECT_NEAR(calls.t[i], 0.1 + 0.002 * (s + (rk4 ? stage[i % 4] : 0.0)), 1e-15);
    }
    // u = 1 N on 2 kg for 10 ms from rest: q̇ = 5 mm/s exactly.
    EXPECT_NEAR(qd[0], 0.01 / kMass, 1e-15);
  }
}

TEST(ControlSignal, InterpolatedReplayDoesNotAllocatePerStep) {
  if (!testing::AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  const Model<double> model = point_mass();
  StepOptions options{Integrator::kRK4, 0.001, 1};
  options.controls = kind(ControlInterpolation::kCubic);
  Stepper<double> stepper(model, options);
  const Trajectory tr = record(false);
  Eigen::VectorXd q = tr.q.row(0).transpose(), qd = tr.qd.row(0).transpose();
  long count = 0;
  {
    testing::AllocationCounter counter;
    replay_window(stepper, tr, 0, 40, q, qd, [](int, const Eigen::VectorXd&, const Eigen::VectorXd&) {});
    count = counter.count();
  }
  EXPECT_LE(count, 1);  // the replay's own control vector, once
}

// ---- A control delay d: u(t − d) and ∂u/∂d (issue #36) ------------------

// u(t − d) and ∂u(t − d)/∂d = −Σ rate_j u_j from the delayed stencil.
struct DelayedControl {
  double value = 0, d_delay = 0;
};
DelayedControl delayed_control(const ControlSignal& signal, const Eigen::VectorXd& time,
                               const Eigen::MatrixXd& samples, double t, double delay) {
  const ControlStencil st = delayed_control_stencil(signal, time, t, t, delay);
  DelayedControl out;
  for (int j = 0; j < st.count; ++j) {
    out.value += st.weight[j] * samples(st.index[j], 0);
    out.d_delay -= st.rate[j] * samples(st.index[j], 0);
  }
  return out;
}

// Non-uniform sample times: the stencils use the time stamps, not a step.
Eigen::VectorXd delay_test_times() {
  Eigen::VectorXd t(8);
  t << 0.0, 0.01, 0.018, 0.031, 0.04, 0.052, 0.06, 0.075;
  return t;
}

// Linear reproduces a linear signal, cubic (Bessel slopes) a quadratic:
// u(t − d) and ∂u/∂d = −u'(t − d) are then the closed forms.
TEST(ControlSignal, DelayedSignalAndItsDelayDerivativeMatchClosedForms) {
  const Eigen::VectorXd time = delay_test_times();
  const auto lin = [](double t) { return 0.3 - 20 * t; };
  const auto quad = [](double t) { return 1 + 7 * t - 300 * t * t; };
  const auto dquad = [](double t) { return 7 - 600 * t; };
  const Eigen::MatrixXd s_lin = sample(time, lin), s_quad = sample(time, quad);
  for (double delay : {0.0, 0.0013, 0.005, 0.0217})
    for (double t = delay + 1e-4; t < time[7]; t += 0.0011) {
      const DelayedControl l = delayed_control(kind(ControlInterpolation::kLinear), time, s_lin, t, delay);
      EXPECT_NEAR(l.value, lin(t - delay), 1e-12) << "t " << t << " d " << delay;
      EXPECT_NEAR(l.d_delay, 20.0, 1e-9);
      const DelayedControl c = delayed_control(kind(ControlInterpolation::kCubic), time, s_quad, t, delay);
      EXPECT_NEAR(c.value, quad(t - delay), 1e-12) << "t " << t << " d " << delay;
      EXPECT_NEAR(c.d_delay, -dquad(t - delay), 1e-9) << "t " << t << " d " << delay;
    }
}

// Before the first sample the control is the first sample (no rate); at
// zero delay the delayed stencil is the interval's stencil.
TEST(ControlSignal, DelayedSignalBeforeTheFirstSampleIsTheFirstSample) {
  const Eigen::VectorXd time = delay_test_times();
  const Eigen::MatrixXd s = sample(time, [](double t) { return 2 + std::sin(40 * t); });
  for (const ControlInterpolation i : {ControlInterpolation::kZeroOrderHold, ControlInterpolation::kLinear,
                                       ControlInterpolation::kCubic}) {
    const DelayedControl before = delayed_control(kind(i), time, s, 0.004, 0.005);
    EXPECT_EQ(before.value, s(0, 0));
    EXPECT_EQ(before.d_delay, 0.0);
    for (int k = 0; k < 7; ++k) {
      const double t = time[k] + 0.4 * (time[k + 1] - time[k]);
      EXPECT_NEAR(delayed_control(kind(i), time, s, t, 0.0).value, interpolate(kind(i), time, s, k, t, t), 1e-15);
    }
  }
  // The piecewise-constant signals have no rate; a delay of whole sample
  // intervals selects the shifted piece despite rounding.
  const Eigen::VectorXd uniform = uniform_time(6, 0.01);
  const Eigen::MatrixXd su = sample(uniform, [](double t) { return t; });
  for (int k = 2; k < 5; ++k) {
    const DelayedControl z = delayed_control(kind(ControlInterpolation::kZeroOrderHold), uniform, su, uniform[k], 0.02);
    EXPECT_EQ(z.value, su(k - 2, 0)) << k;
    EXPECT_EQ(z.d_delay, 0.0);
  }
}

// On a sine at 100 Hz: ∂u/∂d of the stencil against central differences of
// the interpolated u(t − d) in d (away from the samples, where linear has a
// kink), and against the closed form −ω A cos(ω(t − d)) within the cubic's
// derivative error.
TEST(ControlSignal, DelayDerivativeAgreesWithCentralDifferencesOnASine) {
  const Eigen::VectorXd time = uniform_time(21, 0.01);
  const double A = 1.5;
  const Eigen::MatrixXd s = sample(time, [&](double t) { return A * std::sin(kOmega * t); });
  const double delay = 0.0053, eps = 1e-7;
  double worst_fd = 0, worst_closed = 0;
  for (const ControlInterpolation i : {ControlInterpolation::kLinear, ControlInterpolation::kCubic})
    for (int k = 2; k < 19; ++k)
      for (double x : {0.2, 0.5, 0.8}) {
        const double t = time[k] + x * 0.01 + delay;
        const DelayedControl c = delayed_control(kind(i), time, s, t, delay);
        const double fd = (delayed_control(kind(i), time, s, t, delay + eps).value -
                           delayed_control(kind(i), time, s, t, delay - eps).value) / (2 * eps);
        worst_fd = std::max(worst_fd, std::abs(c.d_delay - fd) / (A * kOmega));
        if (i == ControlInterpolation::kCubic)
          worst_closed = std::max(worst_closed, std::abs(c.d_delay + A * kOmega * std::cos(kOmega * (t - delay))));
      }
  RecordProperty("max_relative_fd_error", testing::sci(worst_fd));
  RecordProperty("cubic_derivative_error", testing::sci(worst_closed));
  EXPECT_LT(worst_fd, 1e-7);
  // The derivative of a cubic Hermite with O(h²) slopes: error O(h²) u'''.
  EXPECT_LT(worst_closed, A * std::pow(kOmega, 3) * 0.01 * 0.01 / 6);
}

// A delay that carries derivatives (a Jet, as a fitted controls.delay):
// the derivative of u(t − d) is −du/dt, and its value the double's.
TEST(ControlSignal, DelayDerivativeReachesTheControlsThroughAJet) {
  const Eigen::VectorXd time = delay_test_times();
  const Eigen::MatrixXd s = sample(time, [](double t) { return std::cos(30 * t); });
  using J = ceres::Jet<double, 1>;
  const J delay(0.0071, 0);
  for (double t = 0.012; t < 0.075; t += 0.0047) {
    const ControlStencil st =
        delayed_control_stencil(kind(ControlInterpolation::kCubic), time, t, t, to_double(delay));
    Eigen::Matrix<J, Eigen::Dynamic, 1> u(1);
    apply_delayed_control_stencil(st, s, J(delay - J(to_double(delay))), u);
    const DelayedControl c = delayed_control(kind(ControlInterpolation::kCubic), time, s, t, 0.0071);
    EXPECT_EQ(u[0].a, c.value);
    EXPECT_NEAR(u[0].v[0], c.d_delay, 1e-12);
  }
}

// The point mass under a delayed actuator: the recording holds the command
// u_k = A sin(ω t_k), the mass feels A sin(ω(t − d)) (0 before t = d, the
// first sample): q = q0 + v0 t + A/(m ω²)(ω τ − sin ω τ), τ = max(t − d, 0).
// The replay with the delay predicts it within the cubic's error; without
// it, the prediction is off by the delay.
TEST(ControlSignal, ReplayWithAControlDelayMatchesTheDelayedClosedForm) {
  const double A = 3.0, dt = 0.01, q0 = 0.1, v0 = -0.2, delay = 0.005;
  const int n = 41;
  Trajectory tr;
  tr.name = "delayed";
  tr.time = uniform_time(n, dt);
  tr.q.resize(n, 1);
  tr.qd.resize(n, 1);
  tr.tau.resize(n, 1);
  for (int k = 0; k < n; ++k) {
    const double t = tr.time[k], tau = std::max(t - delay, 0.0);
    tr.tau(k, 0) = A * std::sin(kOmega * t);
    tr.q(k, 0) = q0 + v0 * t + A / (kMass * kOmega * kOmega) * (kOmega * tau - std::sin(kOmega * tau));
    tr.qd(k, 0) = v0 + A / (kMass * kOmega) * (1 - std::cos(kOmega * tau));
  }
  ControlSignal delayed = kind(ControlInterpolation::kCubic);
  delayed.delay = delay;
  const double e_delayed = replay_error(tr, delayed, Integrator::kRK4, 0.001);
  const double e_ignored = replay_error(tr, kind(ControlInterpolation::kCubic), Integrator::kRK4, 0.001);
  RecordProperty("delayed", testing::sci(e_delayed));
  RecordProperty("delay_ignored", testing::sci(e_ignored));
  const double bound = 0.1 * 0.1 / (2 * kMass);
  EXPECT_LE(e_delayed, bound * A * (std::pow(dt * kOmega, 4) / 384 + 4.0 / 27 * std::pow(dt, 3) * std::pow(kOmega, 3) / 6));
  EXPECT_LT(e_delayed, e_ignored / 100);
}

}  // namespace control_signal_test
}  // namespace neuralsim
