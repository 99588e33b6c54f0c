#include "neuralsim/step/control_signal.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace control_signal_detail {

// Adds w·u_index to the stencil's value and r·u_index to its rate, merging
// a repeated index. Every stencil built below spans at most four
// consecutive samples, so it never overflows.
void add(ControlStencil& s, int index, double w, double r = 0.0) {
  for (int j = 0; j < s.count; ++j)
    if (s.index[j] == index) {
      s.weight[j] += w;
      s.rate[j] += r;
      return;
    }
  s.index[s.count] = index;
  s.weight[s.count] = w;
  s.rate[s.count] = r;
  ++s.count;
}

// The slope at sample j as weights over samples, scaled by `scale` (value)
// and `rate_scale` (rate) and added to `s`: the derivative at t_j of the parabola through three neighbouring
// samples (Bessel's slope inside, the one-sided three-point formula at the
// ends), the secant with two samples. Exact for quadratics (de Boor ch. IV).
void add_slope(ControlStencil& s, const Eigen::VectorXd& time, int j, double scale, double rate_scale) {
  const int n = static_cast<int>(time.size());
  // c: the slope's weight on sample i.
  const auto add_weight = [&](int i, double c) { add(s, i, scale * c, rate_scale * c); };
  if (n == 2) {
    const double h = time[1] - time[0];
    add_weight(0, -1 / h);
    add_weight(1, 1 / h);
    return;
  }
  if (j == 0) {  // parabola through 0, 1, 2 at t_0
    const double a = time[1] - time[0], b = time[2] - time[1];
    add_weight(0, -(2 * a + b) / (a * (a + b)));
    add_weight(1, (2 * a + b) / (a * (a + b)) + a / (b * (a + b)));
    add_weight(2, -a / (b * (a + b)));
  } else if (j == n - 1) {  // parabola through n−3, n−2, n−1 at t_{n−1}
    const double a = time[n - 2] - time[n - 3], b = time[n - 1] - time[n - 2];
    add_weight(n - 3, b / (a * (a + b)));
    add_weight(n - 2, -((2 * b + a) / (b * (a + b)) + b / (a * (a + b))));
    add_weight(n - 1, (2 * b + a) / (b * (a + b)));
  } else {  // Bessel: parabola through j−1, j, j+1 at t_j
    const double a = time[j] - time[j - 1], b = time[j + 1] - time[j];
    add_weight(j - 1, -(b / a) / (a + b));
    add_weight(j, (b / a - a / b) / (a + b));
    add_weight(j + 1, (a / b) / (a + b));
  }
}

// The continuous interpolants on interval k at time t, with their time
// derivatives (dx/dt = 1/H).
ControlStencil continuous_stencil(ControlInterpolation kind, const Eigen::VectorXd& time, int k, double t) {
  ControlStencil s;
  const double H = time[k + 1] - time[k];
  const double x = std::clamp((t - time[k]) / H, 0.0, 1.0);
  if (kind == ControlInterpolation::kLinear) {
    add(s, k, 1.0 - x, -1.0 / H);
    add(s, k + 1, x, 1.0 / H);
    return s;
  }
  // Cubic Hermite basis (h00, h10, h01, h11) on [t_k, t_{k+1}] and its
  // derivatives in t.
  const double x2 = x * x, x3 = x2 * x;
  add(s, k, 2 * x3 - 3 * x2 + 1, (6 * x2 - 6 * x) / H);
  add(s, k + 1, -2 * x3 + 3 * x2, (-6 * x2 + 6 * x) / H);
  add_slope(s, time, k, H * (x3 - 2 * x2 + x), 3 * x2 - 4 * x + 1);
  add_slope(s, time, k + 1, H * (x3 - x2), 3 * x2 - 2 * x);
  return s;
}

}  // namespace control_signal_detail

const char* control_interpolation_name(ControlInterpolation interpolation) {
  switch (interpolation) {
    case ControlInterpolation::kZeroOrderHold: return "zero_order_hold";
    case ControlInterpolation::kHold: return "hold";
    case ControlInterpolation::kLinear: return "linear";
    case ControlInterpolation::kCubic: return "cubic";
  }
  return "zero_order_hold";
}

ControlStencil control_stencil(const ControlSignal& signal, const Eigen::VectorXd& time, int k, double t,
                               double step_start) {
  namespace d = control_signal_detail;
  const int n = static_cast<int>(time.size());
  ControlStencil s;
  if (n == 1 && k == 0) {
    d::add(s, 0, 1.0);
    return s;
  }
  if (k < 0 || k > n - 2)
    throw InvalidArgument("control_stencil: interval " + std::to_string(k) + " is outside a trajectory of " +
                          std::to_string(n) + " samples");
  switch (signal.interpolation) {
    case ControlInterpolation::kZeroOrderHold:
      d::add(s, k, 1.0);
      return s;
    case ControlInterpolation::kLinear:
    case ControlInterpolation::kCubic:
      return d::continuous_stencil(signal.interpolation, time, k, t);
    case ControlInterpolation::kHold: break;
  }
  if (!(signal.period > 0) || !std::isfinite(signal.period))
    throw InvalidArgument("control_stencil: a hold needs a positive control period");
  if (signal.tick_values != ControlInterpolation::kLinear && signal.tick_values != ControlInterpolation::kCubic)
    throw InvalidArgument("control_stencil: the tick values of a hold are interpolated linearly or cubically");
  // The tick that holds the step's start. The tolerance absorbs the rounding
  // of step_start = t_k + s·h, which lies on a tick boundary at most
  // (the period is a multiple of the step, checked by the config reader).
  if (!(signal.tick_offset >= 0 && signal.tick_offset < signal.period))
    throw InvalidArgument("control_stencil: a hold's tick offset must lie in [0, period)");
  const double origin = time[0] + signal.tick_offset;
  const double ticks = std::floor((step_start - origin) / signal.period + 1e-6);
  if (ticks < 0) {  // before the controller's first tick: the first sample
    control_signal_detail::add(s, 0, 1.0);
    return s;
  }
  const double tick_time = origin + ticks * signal.period;
  // The interval that holds the tick (the tick may begin before t_k when the
  // sampling is not a multiple of the period).
  int j = std::min(k, n - 2);
  while (j > 0 && time[j] > tick_time + 1e-9 * signal.period) --j;
  s = d::continuous_stencil(signal.tick_values, time, j, tick_time);
  for (double& r : s.rate) r = 0.0;  // held over the tick: no rate
  return s;
}

ControlStencil delayed_control_stencil(const ControlSignal& signal, const Eigen::VectorXd& time, double t,
                                       double step_start, double delay) {
  const int n = static_cast<int>(time.size());
  if (n == 0) throw InvalidArgument("delayed_control_stencil: the trajectory has no sample");
  const double delayed = t - delay, delayed_start = step_start - delay;
  // The time that selects the interval: a piecewise-constant signal holds
  // the piece of the step's (delayed) start over the whole step.
  // A piecewise-constant signal's key is nudged forward by 1e-9 of a mean
  // sample interval: a delay of whole sample intervals then selects the
  // shifted piece, not the one before it by rounding.
  const double nudge = n > 1 ? 1e-9 * (time[n - 1] - time[0]) / (n - 1) : 0.0;
  const double key = signal.is_continuous() ? delayed : delayed_start + nudge;
  ControlStencil s;
  if (n == 1 || key < time[0]) {  // before the first sample: the first sample
    control_signal_detail::add(s, 0, 1.0);
    return s;
  }
  if (key >= time[n - 1]) {  // at or after the last sample: the last
    control_signal_detail::add(s, n - 1, 1.0);
    return s;
  }
  const int k = std::clamp(static_cast<int>(std::upper_bound(time.data(), time.data() + n, key) - time.data()) - 1,
                           0, n - 2);
  return control_stencil(signal, time, k, delayed, delayed_start);
}

}  // namespace neuralsim
