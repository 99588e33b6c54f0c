// Training windows with the recorded controls interpolated between samples
// (sim.controls, step/control_signal.hpp; train/hybrid_window_model.hpp):
//  * a perfect model replays a recording of a continuous control, sampled
//    every 10 ms and simulated at 2 ms, to the cubic's interpolation error,
//    where the zero-order hold it used before is orders of magnitude off;
//  * the window model's free rollout and its unrolled loss are replay_window's
//    (the one replay simid and rollout --compare use), to rounding;
//  * ∂loss/∂x with interpolated controls against central differences, in
//    the one-step and unrolled modes (a physical parameter, a network's weights);
//  * a fixed control delay (the robot applies u(t − d)): a perfect model
//    with the delay replays a delayed recording to the interpolation error,
//    its rollout is replay_window's with the delay, and its gradients agree
//    with central differences;
//  * interpolation without a recording is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "augment/augment_support.hpp"
#include "neuralsim/step/replay.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"
#include "neuralsim/train/training_data.hpp"

namespace neuralsim::interpolated_controls_window_test {

constexpr double kSampleInterval = 0.01;  // recorded at 100 Hz
constexpr int kSamples = 41;

// The damped double pendulum of the augmentation tests under its continuous
// sinusoidal controls, integrated with RK4 at 0.25 ms, recorded every 10 ms
// (what another engine's log of a fast controller looks like). With
// `delay` the system applies u(t − delay) (u(0) before that: the first
// sample, as the replay does), while the log holds u(t).
Trajectory continuous_control_recording(const testing::Scene& scene, double delay = 0.0) {
  StepOptions fine = scene.step;
  fine.integrator = Integrator::kRK4;
  fine.dt = 2.5e-4;
  Stepper<double> stepper(scene.model, fine);
  const int nv = scene.model.nv;
  struct Delayed {
    const testing::Scene* scene;
    double delay;
  } delayed{&scene, delay};
  ControlSource<double> source;
  source.context = &delayed;
  source.evaluate = [](const void* context, double, double t, VecX<double>& u) {
    const auto& d = *static_cast<const Delayed*>(context);
    for (int i = 0; i < static_cast<int>(u.size()); ++i) u[i] = d.scene->control(i, std::max(0.0, t - d.delay));
  };
  Trajectory tr;
  tr.name = "continuous";
  tr.time.resize(kSamples);
  tr.q.resize(kSamples, scene.model.nq);
  tr.qd.resize(kSamples, nv);
  tr.tau.resize(kSamples, nv);
  Eigen::VectorXd q = scene.q0, qd = scene.qd0;
  for (int k = 0; k < kSamples; ++k) {
    const double t = k * kSampleInterval;
    tr.time[k] = t;
    tr.q.row(k) = q.transpose();
    tr.qd.row(k) = qd.transpose();
    for (int i = 0; i < nv; ++i) tr.tau(k, i) = scene.control(i, t);
    if (k + 1 < kSamples) stepper.step(q, qd, source, t, kSampleInterval);
  }
  return tr;
}

RolloutProblem interpolating_problem(const testing::Scene& scene, ControlInterpolation interpolation) {
  RolloutProblem p;
  p.model = scene.model;
  p.step = scene.step;
  p.step.integrator = Integrator::kRK4;
  p.step.dt = 2e-3;  // five integration steps per recorded interval
  p.step.controls.interpolation = interpolation;
  EstimatedParameter damping;
  damping.target = *resolve_named_parameter("joint.joint1.damping", p.model, false);
  damping.initial = p.model.joints[0].dynamics.damping;
  p.physical = ParameterSet({damping});
  return p;
}

double largest_q_error(HybridWindowModel& m, const Trajectory& tr, const Trajectory* recording) {
  const Eigen::MatrixXd controls = tr.tau.topRows(kSamples - 1).transpose();
  Eigen::MatrixXd Q, QD;
  m.rollout(m.initial_parameters(), tr.q.row(0).transpose(), tr.qd.row(0).transpose(), controls, &Q, &QD, recording);
  return (Q.transpose() - tr.q.bottomRows(kSamples - 1)).cwiseAbs().maxCoeff();
}

// The largest q difference between the window model's free rollout of the
// whole recording and replay_window's (simid's and rollout --compare's).
double largest_difference_from_replay(const RolloutProblem& p, const Trajectory& tr) {
  HybridWindowModel m(p);
  Stepper<double> stepper(p.model, p.step);
  Eigen::VectorXd q = tr.q.row(0).transpose(), qd = tr.qd.row(0).transpose();
  Eigen::MatrixXd replay_q(p.model.nq, kSamples - 1);
  replay_window(stepper, tr, 0, kSamples - 1, q, qd,
                [&](int k, const Eigen::VectorXd& qk, const Eigen::VectorXd&) { replay_q.col(k - 1) = qk; });
  Eigen::MatrixXd Q, QD;
  m.rollout(m.initial_parameters(), tr.q.row(0).transpose(), tr.qd.row(0).transpose(),
            tr.tau.topRows(kSamples - 1).transpose(), &Q, &QD, &tr);
  return (Q - replay_q).cwiseAbs().maxCoeff();
}

TEST(InterpolatedControlsWindow, PerfectModelReplaysToTheInterpolationError) {
  const testing::Scene scene = testing::pendulum_scene();
  const Trajectory tr = continuous_control_recording(scene);
  HybridWindowModel cubic(interpolating_problem(scene, ControlInterpolation::kCubic));
  const double e_cubic = largest_q_error(cubic, tr, &tr);
  // Zero-order hold: each window step is sim.dt long under its sample's
  // control, so the data interval must be sim.dt: give it a 10 ms step.
  RolloutProblem p = interpolating_problem(scene, ControlInterpolation::kZeroOrderHold);
  p.step.dt = kSampleInterval;
  p.step.substeps = 5;
  HybridWindowModel held_10ms(p);
  const double e_held = largest_q_error(held_10ms, tr, nullptr);
  std::printf("[window replay] largest q error over 40 samples: cubic %.2e, zero-order hold %.2e\n", e_cubic, e_held);
  EXPECT_LT(e_cubic, 1e-7) << "cubic " << e_cubic << ", held " << e_held;
  EXPECT_GT(e_held, 1e4 * e_cubic) << "cubic " << e_cubic << ", held " << e_held;
}

TEST(InterpolatedControlsWindow, RolloutAndLossAreTheReplayOfSimid) {
  const testing::Scene scene = testing::pendulum_scene();
  const Trajectory tr = continuous_control_recording(scene);
  for (ControlInterpolation kind : {ControlInterpolation::kLinear, ControlInterpolation::kCubic}) {
    const RolloutProblem p = interpolating_problem(scene, kind);
    HybridWindowModel m(p);
    Stepper<double> stepper(p.model, p.step);
    EXPECT_LT(largest_difference_from_replay(p, tr), 1e-12) << control_interpolation_name(kind);

    // The unrolled loss of a window starting at sample 10 is the replay's
    // weighted squared error over its steps, from sample 10.
    TrajectorySet set;
    set.trajectories = {tr};
    const std::vector<TrainingWindow> windows = make_windows(set, {8, 10, 0});
    ASSERT_GE(windows.size(), 2u);
    const TrainingWindow& w = windows[1];
    ASSERT_EQ(w.start, 10);
    WindowLossWeights weights{Eigen::VectorXd::Constant(2, 3.0), Eigen::VectorXd::Constant(2, 0.5)};
    Eigen::VectorXd q = tr.q.row(10).transpose(), qd = tr.qd.row(10).transpose();
    double expected = 0;
    replay_window(stepper, set.trajectories[0], 10, 8, q, qd,
                  [&](int k, const Eigen::VectorXd& qk, const Eigen::VectorXd& qdk) {
                    expected += (weights.wq.array() * (qk - tr.q.row(k).transpose()).array().square()).sum() +
                                (weights.wqd.array() * (qdk - tr.qd.row(k).transpose()).array().square()).sum();
                  });
    expected /= 8;
    const double L = m.loss(m.initial_parameters(), w, TrainingMode::kUnrolled, weights, nullptr);
    EXPECT_NEAR(L, expected, 1e-12 * std::max(1.0, std::abs(expected))) << control_interpolation_name(kind);
  }
}

// Without a delay, and with a 7 ms control delay (a window that starts after it, at sample 10).
TEST(InterpolatedControlsWindow, GradientsAgreeWithCentralDifferences) {
  for (double delay : {0.0, 0.007}) {
    const testing::Scene scene = testing::pendulum_scene();
    Trajectory tr = continuous_control_recording(scene, delay);
    RolloutProblem p = interpolating_problem(scene, ControlInterpolation::kCubic);
    p.step.controls.delay = delay;
    p.augment = {testing::make_blueprint(p.model, "torque2",
                                         testing::joint_site(p.model, "joint2", SiteQuantity::kJointTorque),
                                         AugmentMode::kResidual, {"joint.joint2.qd", "joint.joint2.u"}, {3}, 0.5, 7)};
    HybridWindowModel m(p);
    TrajectorySet set;
    set.trajectories = {tr};
    const std::vector<TrainingWindow> windows = make_windows(set, {6, 10, 0});
    const TrainingWindow& w = windows[1];
    const WindowLossWeights weights{Eigen::VectorXd::Ones(2), Eigen::VectorXd::Constant(2, 0.1)};
    Eigen::VectorXd x = m.initial_parameters();
    for (Eigen::Index i = 1; i < x.size(); ++i) x[i] += 0.05 * std::sin(3.0 * i);  // nonzero network outputs
    // (The detached mode's gradient is not the loss's by definition: its
    // oracle is in hybrid_window_model_test.)
    for (TrainingMode mode : {TrainingMode::kOneStep, TrainingMode::kUnrolled}) {
      Eigen::VectorXd grad;
      m.loss(x, w, mode, weights, &grad);
      for (Eigen::Index i = 0; i < x.size(); ++i) {
        const double h = 1e-5 * std::max(1.0, std::abs(x[i]));
        Eigen::VectorXd xp = x, xm = x;
        xp[i] += h;
        xm[i] -= h;
        const double fd = (m.loss(xp, w, mode, weights, nullptr) - m.loss(xm, w, mode, weights, nullptr)) / (2 * h);
        EXPECT_NEAR(grad[i], fd, 1e-6 * std::max(1e-3, std::abs(fd)))
            << training_mode_name(mode) << ", parameter " << i << ", delay " << delay;
      }
    }
  }
}

// An actuator 7 ms late (not a multiple of the 2 ms step nor of the 10 ms
// samples): sim.controls.delay in training is the delay of simid's replay.
TEST(InterpolatedControlsWindow, AFixedControlDelayIsTheReplaysDelay) {
  constexpr double kDelay = 0.007;
  const testing::Scene scene = testing::pendulum_scene();
  const Trajectory tr = continuous_control_recording(scene, kDelay);
  RolloutProblem p = interpolating_problem(scene, ControlInterpolation::kCubic);
  HybridWindowModel undelayed(p);
  p.step.controls.delay = kDelay;
  HybridWindowModel delayed(p);
  const double e_delayed = largest_q_error(delayed, tr, &tr), e_undelayed = largest_q_error(undelayed, tr, &tr);
  std::printf("[window replay] 7 ms late actuator: largest q error %.2e with the delay, %.2e without\n", e_delayed,
              e_undelayed);
  EXPECT_LT(e_delayed, 1e-7);
  EXPECT_GT(e_undelayed, 1e3 * e_delayed);
  // The zero-order hold with a delay reads the recording too: both are replay_window's.
  for (ControlInterpolation kind : {ControlInterpolation::kCubic, ControlInterpolation::kZeroOrderHold}) {
    p.step.controls.interpolation = kind;
    EXPECT_LT(largest_difference_from_replay(p, tr), 1e-12) << control_interpolation_name(kind);
  }
  // (Its gradients: GradientsAgreeWithCentralDifferences.)
}

TEST(InterpolatedControlsWindow, InterpolationWithoutARecordingIsRefused) {
  const testing::Scene scene = testing::pendulum_scene();
  const Trajectory tr = continuous_control_recording(scene);
  HybridWindowModel m(interpolating_problem(scene, ControlInterpolation::kLinear));
  TrajectorySet set;
  set.trajectories = {tr};
  TrainingWindow w = make_windows(set, {4, 4, 0})[0];
  w.recording = nullptr;  // a hand-made window
  const WindowLossWeights weights{Eigen::VectorXd::Ones(2), Eigen::VectorXd::Ones(2)};
  try {
    m.loss(m.initial_parameters(), w, TrainingMode::kUnrolled, weights, nullptr);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("interpolation 'linear', delay 0.000000 s) reads the recorded controls"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace neuralsim::interpolated_controls_window_test
