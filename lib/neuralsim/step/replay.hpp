// Replay of recorded controls along a recorded trajectory: the one routine
// that every prediction-error computation uses (shooting residuals on Jets,
// simid's evaluation, rollout --compare, training losses).
//
// The recording's own time stamps are followed (non-uniform sampling: each
// interval is one Stepper::step of its length, substepped as the options
// say) with its controls held over each interval (zero-order hold). With
// no `tau` in the recording the controls are zero.
#pragma once

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// Simulates samples start → start + length of `tr` from (q, qd), which hold
// the state at sample `start` and are advanced in place. After each step
// the callback on_sample(k, q, qd) sees the state predicted for sample k
// (k = start + 1, ..., start + length). Returns false as soon as the state
// stops being finite (q, qd then hold the non-finite state); Steppers with
// check_finite throw NumericalError instead.
template <class S, class OnSample>
bool replay_window(Stepper<S>& stepper, const Trajectory& tr, int start, int length, VecX<S>& q, VecX<S>& qd,
                   OnSample&& on_sample) {
  const int nv = stepper.model().nv;
  VecX<S> u = VecX<S>::Zero(nv);
  for (int k = start; k < start + length; ++k) {
    if (tr.has_tau())
      for (int i = 0; i < nv; ++i) u[i] = S(tr.tau(k, i));
    stepper.step(q, qd, u, tr.time[k], tr.time[k + 1] - tr.time[k]);
    for (int i = 0; i < q.size(); ++i)
      if (!is_finite(q[i])) return false;
    for (int i = 0; i < nv; ++i)
      if (!is_finite(qd[i])) return false;
    on_sample(k + 1, q, qd);
  }
  return true;
}

// The prediction of a whole recording that restarts from the measured state
// every `window` samples (window ≥ length: one open-loop rollout from the
// first sample). `qd0` (optional) replaces the measured velocity at sample
// 0. The result has the recording's name, time and controls.
Trajectory predict_recording(Stepper<double>& stepper, const Trajectory& recorded, long long window,
                             const Eigen::VectorXd* qd0 = nullptr);

}  // namespace neuralsim
