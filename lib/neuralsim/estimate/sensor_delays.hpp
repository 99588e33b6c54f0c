// Sensor delays of the joint channels in the shooting residuals (issue
// #36): the sample at t_k of a channel with delay d observes the model at
// t_k − d, between two simulated samples (docs/simid.md, "Delays").
#pragma once

#include <algorithm>
#include <vector>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/model/configuration.hpp"

namespace neuralsim {
namespace residual_internal {

// What the joint channels of one sample observe when a channel is delayed:
// the model's q and q̇ at t_k − d of that channel (null: the sample is
// masked, its residuals are 0).
template <class T>
struct DelayedJointChannels {
  const VecX<T>* q = nullptr;
  const VecX<T>* qd = nullptr;
};

// Sensor delays of the joint channels (observe.q.delay, observe.qd.delay,
// fixed or fitted, of either sign): the sample at t_k observes the model at
// t_k − d (a negative d, a lead: the model at a later time). The simulated
// samples of the window are kept, and the state between two of them is the
// cubic Hermite in (q, q̇) (C¹): with H = t_{j+1} − t_j, x the fraction of
// the interval and Δ = q_{j+1} ⊖ q_j,
//   q(t)  = q_j ⊕ v(x),  v = h01(x) Δ + H (h10(x) q̇_j + h11(x) q̇_{j+1}),
//   q̇(t) = h01'(x) Δ / H + h10'(x) q̇_j + h11'(x) q̇_{j+1}   (v's derivative),
// evaluated at t_k − value(d); d's derivatives enter through the time
// derivative of the basis (∂/∂d = −∂/∂t), exact to first order. A sample
// whose t_k − d_max (the delay's upper bound, or the fixed delay) lies
// before the window's first sample, or whose t_k − d_min (the lower bound,
// or the fixed delay) lies after its last simulated sample, is masked for
// that channel in every evaluation, so the residual count does not depend
// on d. observe(k) reads the samples around t_k − d: the caller records
// every sample of the window first (a lead reads samples after k).
template <class T>
class SensorDelays {
 public:
  SensorDelays(const ResidualContext& ctx, const T* theta, const Model<T>& model, const Trajectory& tr, int start,
               int length)
      : model_(model), tr_(tr), start_(start), end_(start + length) {
    const double fixed[2] = {ctx.observe.q_delay, ctx.observe.qd_delay};
    for (int c = 0; c < 2; ++c) {
      delay_[c] = T(fixed[c]);
      min_[c] = max_[c] = fixed[c];
      active_[c] = fixed[c] != 0;
    }
    const ParameterSet& ps = *ctx.parameters;
    for (int i = 0; i < ps.size(); ++i)
      if (ps[i].kind() == ParameterKind::kSensorDelay) {
        const int c = ps[i].target.channel;
        delay_[c] = ps.physical<T>(i, theta[i]);
        min_[c] = ps[i].lower;
        max_[c] = ps[i].upper;
        active_[c] = true;
      }
    if (!active()) return;
    q_.resize(static_cast<size_t>(length) + 1);
    qd_.resize(static_cast<size_t>(length) + 1);
    for (int c = 0; c < 2; ++c) {
      seen_q_[c] = VecX<T>(model.nq);
      seen_qd_[c] = VecX<T>(model.nv);
    }
    delta_ = VecX<T>(model.nv);
    v_ = VecX<T>(model.nv);
    rate_ = VecX<T>(model.nv);
  }
  bool active() const { return active_[0] || active_[1]; }

  // The simulated state of sample k (k = start, start + 1, ..., in order).
  void record(int k, const VecX<T>& q, const VecX<T>& qd) {
    q_[static_cast<size_t>(k - start_)] = q;
    qd_[static_cast<size_t>(k - start_)] = qd;
  }

  // The simulated state of sample k, recorded already.
  const VecX<T>& q(int k) const { return q_[static_cast<size_t>(k - start_)]; }
  const VecX<T>& qd(int k) const { return qd_[static_cast<size_t>(k - start_)]; }

  // What the channels of sample k observe (every sample of the window
  // recorded already).
  DelayedJointChannels<T> observe(int k) {
    DelayedJointChannels<T> out;
    const double tolerance = 1e-9 * (tr_.time[end_] - tr_.time[start_] + 1e-3);
    for (int c = 0; c < 2; ++c) {
      const VecX<T>* seen = nullptr;
      if (!active_[c]) {
        seen = c == 0 ? &q_[static_cast<size_t>(k - start_)] : &qd_[static_cast<size_t>(k - start_)];
      } else if (tr_.time[k] - max_[c] >= tr_.time[start_] - tolerance &&
                 tr_.time[k] - min_[c] <= tr_.time[end_] + tolerance) {
        interpolate(k, delay_[c], seen_q_[c], seen_qd_[c]);
        seen = c == 0 ? &seen_q_[c] : &seen_qd_[c];
      }
      (c == 0 ? out.q : out.qd) = seen;
    }
    return out;
  }

 private:
  // (q, q̇) at t_k − d, from the samples of the window. At the window's
  // ends (a delay whose value lies at the bound that masks none), x is
  // clamped: the end sample, moving at its q̇ through d's derivatives.
  void interpolate(int k, const T& d, VecX<T>& q, VecX<T>& qd) {
    const double t = tr_.time[k] - to_double(d);
    int j = std::clamp(k, start_, end_ - 1);  // interval [t_j, t_{j+1}] holding t (clamped to the window)
    while (j > start_ && tr_.time[j] > t) --j;
    while (j < end_ - 1 && tr_.time[j + 1] < t) ++j;
    const double H = tr_.time[j + 1] - tr_.time[j];
    const double x = std::clamp((t - tr_.time[j]) / H, 0.0, 1.0);
    const VecX<T>& qa = q_[static_cast<size_t>(j - start_)];
    const VecX<T>& qb = q_[static_cast<size_t>(j + 1 - start_)];
    const VecX<T>& va = qd_[static_cast<size_t>(j - start_)];
    const VecX<T>& vb = qd_[static_cast<size_t>(j + 1 - start_)];
    difference_configuration(model_, qa, qb, delta_);
    const double x2 = x * x, x3 = x2 * x;
    const double h01 = -2 * x3 + 3 * x2, h10 = x3 - 2 * x2 + x, h11 = x3 - x2;
    const double d01 = -6 * x2 + 6 * x, d10 = 3 * x2 - 4 * x + 1, d11 = 3 * x2 - 2 * x;  // d/dx
    const double s01 = -12 * x + 6, s10 = 6 * x - 4, s11 = 6 * x - 2;                      // d²/dx²
    // −δ: the delay's derivatives, as a time shift of −δ.
    const T minus_delta = T(to_double(d)) - d;
    for (int i = 0; i < model_.nv; ++i) {
      rate_[i] = T(d01 / H) * delta_[i] + T(d10) * va[i] + T(d11) * vb[i];  // dv/dt = q̇(t)
      const T accel = T(s01 / (H * H)) * delta_[i] + T(s10 / H) * va[i] + T(s11 / H) * vb[i];
      v_[i] = T(h01) * delta_[i] + T(H * h10) * va[i] + T(H * h11) * vb[i] + rate_[i] * minus_delta;
      qd[i] = rate_[i] + accel * minus_delta;
    }
    integrate_configuration(model_, qa, v_, q);
  }

  const Model<T>& model_;
  const Trajectory& tr_;
  int start_, end_;
  T delay_[2];
  double min_[2], max_[2];
  bool active_[2];
  std::vector<VecX<T>> q_, qd_;
  VecX<T> seen_q_[2], seen_qd_[2], delta_, v_, rate_;
};

}  // namespace residual_internal
}  // namespace neuralsim
