// The control signal between recorded samples: what a replay of recorded
// controls applies at a time t that lies between two samples (config
// `sim.controls`, docs/data-format.md "Controls between samples").
//
// A recording holds u_k at its sample times t_k only. What the controller
// applied in between is not recorded, and the choice matters: a controller
// that updated every 2 ms, logged at 100 Hz, held each sample only for the
// first 2 ms of a 10 ms interval; holding u_k over the whole interval
// (zero-order hold) then drives a perfect model with the wrong input, and
// its multi-step prediction error grows by orders of magnitude (issue #38).
//
//   zero_order_hold  u(t) = u_k on [t_k, t_{k+1}): the controller ran at the
//                    recording rate (the default, and the only exact choice
//                    for data that the toolkit's own `rollout` recorded).
//   hold             the controller ran at its own `period` (a divisor of
//                    the sampling interval), holding each value for one
//                    period; the values at its ticks between samples are
//                    interpolated from the samples (`tick_values`: linear
//                    or cubic) and then held over the tick.
//   linear           piecewise linear between samples (a continuous-time or
//                    very fast controller, slowly varying signal).
//   cubic            C¹ cubic Hermite between samples with Bessel slopes
//                    (the derivative at t_k of the parabola through
//                    t_{k-1}, t_k, t_{k+1}; one-sided, through the first or
//                    last three samples, at the ends): exact for quadratic
//                    signals, error O(Δt³) for smooth ones (de Boor, "A
//                    Practical Guide to Splines", ch. IV).
//
// Every interpolation is LINEAR in the recorded values: u(t) is a fixed
// stencil of at most four weights over recorded samples, computed from the
// time stamps alone. The controls themselves may therefore be of any scalar
// type (a parameter that carries derivatives), and nothing is allocated.
//
// A control delay d (actuation latency, `sim.controls.delay` or the fitted
// parameter `controls.delay`): the robot applies u(t − d), the recorded
// controls interpolated at t − d as above; before the first sample the
// control is the first sample. A negative d is a lead (the recorded
// controls lag the ones that acted, as a log that stamps a command when its
// reply arrives): u(t + |d|), and after the last sample the last sample,
// held (so the last |d| of a recording sees a held control; its du/dt, and
// ∂u/∂d there, are 0). The stencil also holds du/dt (the time
// derivative of its weights), so that ∂u(t − d)/∂d = −du/dt(t − d) is exact
// for the linear and cubic signals (at a sample time, where linear has a
// kink, the derivative from the right). The piecewise-constant signals
// (zero_order_hold, hold) have du/dt = 0 between their jumps: a delay on
// them may be fixed, not fitted, and it moves their jumps to the
// integration step that holds t_k + d.
#pragma once

#include <string>

#include <Eigen/Core>

namespace neuralsim {

enum class ControlInterpolation { kZeroOrderHold, kHold, kLinear, kCubic };
// "zero_order_hold", "hold", "linear", "cubic" (the config's names).
const char* control_interpolation_name(ControlInterpolation interpolation);

struct ControlSignal {
  ControlInterpolation interpolation = ControlInterpolation::kZeroOrderHold;
  // kHold only: the controller's update period in seconds (> 0), its ticks
  // at t_0 + tick_offset + n·period from the trajectory's first sample t_0.
  double period = 0.0;
  // kHold only: where the controller's tick falls within its period,
  // in [0, period): a controller whose ticks are not aligned with the
  // recording's first sample. Before the first tick the value held is the
  // first sample's.
  double tick_offset = 0.0;
  // kHold only: how the value at a tick between samples is found
  // (kLinear or kCubic; the other two are not allowed).
  ControlInterpolation tick_values = ControlInterpolation::kLinear;
  // The actuation latency d in seconds (finite; negative: a lead): the
  // replay applies u(t − d). A fitted `controls.delay` overrides it
  // (step/replay.hpp).
  double delay = 0.0;

  bool is_zero_order_hold() const { return interpolation == ControlInterpolation::kZeroOrderHold; }
  // Whether du/dt is nonzero between samples, so that a delay can be fitted.
  bool is_continuous() const {
    return interpolation == ControlInterpolation::kLinear || interpolation == ControlInterpolation::kCubic;
  }
};

// u(t) = Σ_j weight[j] · u_{index[j]} over `count` ≤ 4 recorded samples, and
// du/dt = Σ_j rate[j] · u_{index[j]} (zero for the piecewise-constant signals).
struct ControlStencil {
  static constexpr int kMaxSamples = 4;
  int count = 0;
  int index[kMaxSamples] = {0, 0, 0, 0};
  double weight[kMaxSamples] = {0, 0, 0, 0};
  double rate[kMaxSamples] = {0, 0, 0, 0};
};

// The stencil of u(t) for a time t in sample interval k, [time[k],
// time[k+1]] (t = time[k+1] allowed: an integrator's last stage). `time`
// holds the trajectory's strictly increasing sample times (size ≥ 1; with
// one sample the control is that sample). `step_start` is the start of the
// integration step that t belongs to: a piecewise-constant signal (zero-
// order hold, hold) applies over the whole step the piece that holds the
// step's start, so that an integrator stage at the step's end does not see
// the next piece. InvalidArgument for k outside [0, size − 2] (or k ≠ 0
// with one sample), a hold without a positive period, or tick values other
// than linear or cubic.
ControlStencil control_stencil(const ControlSignal& signal, const Eigen::VectorXd& time, int k, double t,
                               double step_start);

// The stencil of u(t − delay) for a stage at time t of the integration step
// that begins at step_start: the interval is found by bisection (the
// continuous signals key it on t − delay, the piecewise-constant ones on
// step_start − delay, as control_stencil does), and a time before the first
// sample gives the first sample (rate 0). A time after the last sample (a
// negative delay: a lead) gives the last sample (rate 0). InvalidArgument as control_stencil, and for an empty `time`.
ControlStencil delayed_control_stencil(const ControlSignal& signal, const Eigen::VectorXd& time, double t,
                                       double step_start, double delay);

// u = Σ_j w_j · samples.row(index_j): `samples` holds one sample per row
// (a Trajectory's T × nv `tau`, or a matrix of any scalar), `u` has one
// entry per column. Works for any scalar S that a sample converts to.
template <class Samples, class S>
void apply_control_stencil(const ControlStencil& stencil, const Samples& samples,
                           Eigen::Matrix<S, Eigen::Dynamic, 1>& u) {
  for (Eigen::Index i = 0; i < u.size(); ++i) {
    S sum = S(stencil.weight[0]) * S(samples(stencil.index[0], i));
    for (int j = 1; j < stencil.count; ++j) sum += S(stencil.weight[j]) * S(samples(stencil.index[j], i));
    u[i] = sum;
  }
}

// u(t − d) for a delay d that may carry derivatives, from the stencil at
// t − value(d): u = Σ_j (w_j − rate_j · δ) u_j with δ = d − value(d), whose
// value is 0 and whose derivatives are d's. First-order exact (forward and
// reverse mode): ∂u/∂d = −du/dt(t − d).
template <class Samples, class S>
void apply_delayed_control_stencil(const ControlStencil& stencil, const Samples& samples, const S& delta,
                                   Eigen::Matrix<S, Eigen::Dynamic, 1>& u) {
  for (Eigen::Index i = 0; i < u.size(); ++i) {
    S sum = (S(stencil.weight[0]) - S(stencil.rate[0]) * delta) * S(samples(stencil.index[0], i));
    for (int j = 1; j < stencil.count; ++j)
      sum += (S(stencil.weight[j]) - S(stencil.rate[j]) * delta) * S(samples(stencil.index[j], i));
    u[i] = sum;
  }
}

}  // namespace neuralsim
