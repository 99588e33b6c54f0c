// Replay of recorded controls along a recorded trajectory: the one routine
// that every prediction-error computation uses (shooting residuals on Jets,
// simid's evaluation, rollout --compare, training losses).
//
// The recording's own time stamps are followed (non-uniform sampling: each
// interval is one Stepper::step of its length, substepped as the options
// say: the integration step is the stepper's, independent of the data
// interval). Between samples the controls follow the stepper's
// options().controls (step/control_signal.hpp): held over each interval
// (zero-order hold, the default), or interpolated and evaluated at every
// substep and RK4 stage. A control delay d (options().controls.delay, or
// a fitted one that carries derivatives) applies u(t − d) at every stage
// (control_signal.hpp: delayed_control_stencil; before the recording's first
// sample, its first sample; a negative d, a lead, after its last sample,
// its last sample). Only the recorded samples are handed to
// on_sample, so every loss and metric compares at recorded samples. With
// no `tau` in the recording the controls are zero.
#pragma once

#include <functional>
#include <vector>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// The recorded controls of one recording, interpolated between its samples
// as `signal` says, during the step over sample interval `interval`
// [time[interval], time[interval + 1]]: the context of a ControlSource
// (recorded_control_source). Used by replay_window and by the training
// windows' rollouts (grad/rollout_gradient.hpp).
struct RecordedControls {
  const Trajectory* trajectory = nullptr;
  const ControlSignal* signal = nullptr;
  int interval = 0;
};

namespace replay_detail {
template <class S>
void evaluate_recorded(const void* context, double step_start, double t, VecX<S>& u) {
  const auto& c = *static_cast<const RecordedControls*>(context);
  if (c.signal->delay != 0.0) {  // a fixed delay (a config value; a fitted one is evaluate_delayed's)
    apply_delayed_control_stencil(delayed_control_stencil(*c.signal, c.trajectory->time, t, step_start, c.signal->delay),
                                  c.trajectory->tau, S(0.0), u);
    return;
  }
  apply_control_stencil(control_stencil(*c.signal, c.trajectory->time, c.interval, t, step_start),
                        c.trajectory->tau, u);
}

// The recorded controls under a control delay d that may carry derivatives.
template <class S>
struct DelayedControls {
  const RecordedControls* recorded;
  const S* delay;
};
template <class S>
void evaluate_delayed(const void* context, double step_start, double t, VecX<S>& u) {
  const auto& c = *static_cast<const DelayedControls<S>*>(context);
  const RecordedControls& r = *c.recorded;
  // The stencil at t − value(d); d's derivatives enter through the rate.
  const double d = to_double(*c.delay);
  apply_delayed_control_stencil(delayed_control_stencil(*r.signal, r.trajectory->time, t, step_start, d),
                                r.trajectory->tau, S(*c.delay - S(d)), u);
}
}  // namespace replay_detail

// The ControlSource that reads `recorded` (kept by the caller; its interval
// may change between steps), at t − signal.delay when the signal has one.
template <class S>
ControlSource<S> recorded_control_source(const RecordedControls* recorded) {
  ControlSource<S> source;
  source.evaluate = &replay_detail::evaluate_recorded<S>;
  source.context = recorded;
  return source;
}

// Simulates samples start → start + length of `tr` from (q, qd), which hold
// the state at sample `start` and are advanced in place. After each step
// the callback on_sample(k, q, qd) sees the state predicted for sample k
// (k = start + 1, ..., start + length). Returns false as soon as the state
// stops being finite (q, qd then hold the non-finite state); Steppers with
// check_finite throw NumericalError instead. `delay` (optional) replaces
// options().controls.delay: a fitted delay whose derivatives reach the
// controls (∂u/∂d = −du/dt(t − d)).
template <class S, class OnSample>
bool replay_window(Stepper<S>& stepper, const Trajectory& tr, int start, int length, VecX<S>& q, VecX<S>& qd,
                   OnSample&& on_sample, const S* delay = nullptr) {
  const int nv = stepper.model().nv;
  VecX<S> u = VecX<S>::Zero(nv);
  const ControlSignal& signal = stepper.options().controls;
  const S delay_value = delay ? *delay : S(signal.delay);
  const bool delayed = delay != nullptr || signal.delay != 0.0;  // structural: which delay is given
  const bool interpolate = tr.has_tau() && (!signal.is_zero_order_hold() || delayed);
  RecordedControls recorded{&tr, &signal, start};
  const replay_detail::DelayedControls<S> delayed_controls{&recorded, &delay_value};
  ControlSource<S> source = recorded_control_source<S>(&recorded);
  if (delayed) {
    source.evaluate = &replay_detail::evaluate_delayed<S>;
    source.context = &delayed_controls;
  }
  for (int k = start; k < start + length; ++k) {
    if (interpolate) {
      recorded.interval = k;
      stepper.step(q, qd, source, tr.time[k], tr.time[k + 1] - tr.time[k]);
    } else {
      if (tr.has_tau())
        for (int i = 0; i < nv; ++i) u[i] = S(tr.tau(k, i));
      stepper.step(q, qd, u, tr.time[k], tr.time[k + 1] - tr.time[k]);
    }
    for (int i = 0; i < q.size(); ++i)
      if (!is_finite(q[i])) return false;
    for (int i = 0; i < nv; ++i)
      if (!is_finite(qd[i])) return false;
    on_sample(k + 1, q, qd);
  }
  return true;
}

// States to restart a prediction from instead of the recorded ones: row i
// of q and qd is the state at sample samples[i] (increasing). simid's fitted
// starting states (estimate/residuals.hpp: one per shooting window or
// multiple-shooting segment) are of this form.
struct StartStates {
  std::vector<int> samples;
  RowMatrixXd q, qd;  // rows = samples.size(); nq and nv columns
};

// Called by predict_recording after each window (start, length, the
// prediction so far): rows start … start + length of its q and qd hold the
// window's simulated states (row start + length until the next window's
// restart replaces it).
using WindowCallback = std::function<void(long long start, long long length, const Trajectory& predicted)>;

// The prediction of a whole recording that restarts from the measured state
// every `window` samples (window ≥ length: one open-loop rollout from the
// first sample). `qd0` (optional) replaces the measured velocity at sample
// 0; `starts` (optional) replace the measured state at the restarts whose
// sample they hold (and then win over qd0); `after_window` (optional) sees
// each window's simulated states. The result has the recording's name, time
// and controls.
Trajectory predict_recording(Stepper<double>& stepper, const Trajectory& recorded, long long window,
                             const Eigen::VectorXd* qd0 = nullptr, const StartStates* starts = nullptr,
                             const WindowCallback& after_window = {});

}  // namespace neuralsim
