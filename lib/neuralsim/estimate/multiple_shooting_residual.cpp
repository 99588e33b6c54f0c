#include "neuralsim/estimate/joint_torque_residual.hpp"
#include "neuralsim/estimate/residual_common.hpp"

namespace neuralsim {
namespace residual_internal {
namespace {

struct MultipleShooting {
  ResidualContext ctx;
  Window w;
  bool last = false;
  ContinuityWeights continuity;

  template <class T>
  bool operator()(T const* const* blocks, T* residuals) const {
    Simulation<T> sim(ctx, blocks[0]);
    const Model<T>& model = sim.model();
    Stepper<T>& stepper = sim.stepper();
    const Trajectory& tr = *w.trajectory;
    const int nq = model.nq, nv = model.nv;
    VecX<T> q(nq), qd(nv), dq(nv);
    for (int i = 0; i < nq; ++i) q[i] = blocks[1][i];
    for (int i = 0; i < nv; ++i) qd[i] = blocks[1][nq + i];
    normalize_configuration(model, q);
    SensorDelays<T> sensors(ctx, blocks[0], model, tr, w.start, w.length);
    const std::vector<ImuCalibration<T>> imus = imu_calibrations(ctx, blocks[0]);
    const std::vector<T> k_t = torque_constants(ctx, blocks[0]);
    T delay_storage;
    const T* delay = fitted_control_delay(ctx, blocks[0], delay_storage);
    // The residuals of sample k, through the sensor delays when there are any.
    auto residuals_at = [&](int k, const VecX<T>& qk, const VecX<T>& qdk, T* r) {
      int written = 0;
      if (!sensors.active()) {
        written = sample_residuals(ctx, model, stepper.data(), tr, k, qk, qdk, dq, r);
      } else {
        const DelayedJointChannels<T> seen = sensors.observe(k);
        written = sample_residuals(ctx, model, stepper.data(), tr, k, qk, qdk, dq, r, &seen);
      }
      return written + shooting_sensor_residuals(ctx, imus, k_t, stepper, tr, k, qk, qdk, r + written, delay);
    };
    const int end = w.start + w.length;
    int n = 0;
    bool finite = true;
    if (!sensors.active()) {
      n = residuals_at(w.start, q, qd, residuals);
      finite = replay_window(
          stepper, tr, w.start, w.length, q, qd,
          [&](int k, const VecX<T>& qk, const VecX<T>& qdk) {
            if (k < end || last) n += residuals_at(k, qk, qdk, residuals + n);
          },
          delay);
    } else {
      // Sample k observes the model at t_k − d, which a lead (d < 0) puts
      // after t_k: the whole segment first, then its residuals.
      sensors.record(w.start, q, qd);
      finite = replay_window(
          stepper, tr, w.start, w.length, q, qd,
          [&](int k, const VecX<T>& qk, const VecX<T>& qdk) { sensors.record(k, qk, qdk); }, delay);
      if (finite)
        for (int k = w.start; k < end || (last && k == end); ++k)
          n += residuals_at(k, sensors.q(k), sensors.qd(k), residuals + n);
    }
    if (!finite) return false;
    if (!last) {
      VecX<T> q_next(nq);
      for (int i = 0; i < nq; ++i) q_next[i] = blocks[2][i];
      normalize_configuration(model, q_next);
      difference_configuration(model, q_next, q, dq);
      const double factor = continuity.factor ? *continuity.factor : 1.0;
      const T wq(factor * continuity.q), wqd(factor * continuity.qd);
      for (int i = 0; i < nv; ++i) residuals[n++] = wq * dq[i];
      for (int i = 0; i < nv; ++i) residuals[n++] = wqd * (qd[i] - blocks[2][nq + i]);
    }
    return true;
  }
};

}  // namespace
}  // namespace residual_internal

using namespace residual_internal;

ceres::CostFunction* make_multiple_shooting_cost(const ResidualContext& ctx, const Window& window, bool last,
                                                 const ContinuityWeights& continuity) {
  const int P = ctx.parameters->size();
  const int state = ctx.model->nq + ctx.model->nv;
  const int per = ctx.observe.residuals_per_sample(*ctx.model);
  return make_dynamic(new MultipleShooting{ctx, window, last, continuity}, [&](auto& cost) {
    cost.AddParameterBlock(P);
    cost.AddParameterBlock(state);
    if (last) {
      cost.SetNumResiduals((window.length + 1) * per);
    } else {
      cost.AddParameterBlock(state);
      cost.SetNumResiduals(window.length * per + 2 * ctx.model->nv);
    }
  });
}

}  // namespace neuralsim
