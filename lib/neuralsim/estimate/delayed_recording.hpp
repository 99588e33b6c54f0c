// A recording as a fit with delays sees it (issue #36): what the held-out
// measures compare, so that a fit with a delay is scored with that delay.
//
// The fit's model (docs/simid.md, "Delays"): the robot applies u(t − d_u)
// (control delay d_u), and the sample of a joint channel at t_k holds the
// model's value at t_k − d (sensor delays d_q of q, d_qd of q̇). In the
// clock of the angle channel, s = t − d_q, the recorded q is the model's q,
// the controls act with the delay d_u + d_q, and the model's q̇ at the
// sample t_k is the recorded q̇ at t_k + d_qd − d_q. So a prediction that
// restarts from a recorded state (a window) is the ordinary replay of a
// recording whose q̇ column is read d_qd − d_q later, under the control
// delay d_u + d_q; and the torque that acted at the state of sample k (the
// inverse-dynamics measure) is the recorded control at t_k − d_u − d_q.
// A common sensor delay of q and q̇ is therefore a control delay: it cannot
// be told from one in a prediction from a recorded state.
#pragma once

#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/step/control_signal.hpp"

namespace neuralsim {

// Seconds, of either sign (a negative delay is a lead).
struct FitDelays {
  double controls = 0;  // d_u: controls.delay (fixed, sim.controls.delay, or fitted)
  double q = 0;         // d_q: observe.q.delay
  double qd = 0;        // d_qd: observe.qd.delay
  bool any() const { return controls != 0 || q != 0 || qd != 0; }
};

// The delays at parameters x: a fitted delay from x, else the fixed one
// (ctx.step.controls.delay, ctx.observe.q_delay, ctx.observe.qd_delay).
FitDelays delays_at(const ResidualContext& ctx, const std::vector<double>& x);

// `tr` with its q̇ column read `shift` seconds later (earlier when < 0):
// q̇_k := q̇(t_k + shift), linear between the recorded samples (the error,
// |q⃛| Δt²/8, is far below a recorded velocity's noise at sampling rates a
// delay is fitted on). Samples whose t_k + shift lies outside the recording
// are dropped, with every channel of theirs (q, τ, link poses, IMUs, ...).
// `tr` itself when shift is 0. InvalidArgument when no sample is left.
Trajectory shift_velocity(const Trajectory& tr, double shift);

// The recorded controls acting at each sample time, T × nv: row k is
// u(t_k − delay) under `signal` (step/control_signal.hpp; a piecewise-
// constant signal holds the piece of t_k − delay, as a step starting at t_k
// does). `tr.tau` when delay is 0 or `tr` has no τ.
RowMatrixXd controls_at_samples(const Trajectory& tr, const ControlSignal& signal, double delay);

}  // namespace neuralsim
