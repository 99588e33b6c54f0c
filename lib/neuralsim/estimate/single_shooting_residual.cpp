#include "neuralsim/estimate/joint_torque_residual.hpp"
#include "neuralsim/estimate/residual_common.hpp"

namespace neuralsim {
namespace residual_internal {
namespace {

struct SingleShooting {
  ResidualContext ctx;
  Window w;
  StartStateFit fit;

  template <class T>
  bool operator()(T const* const* blocks, T* residuals) const {
    Simulation<T> sim(ctx, blocks[0]);
    const Model<T>& model = sim.model();
    Stepper<T>& stepper = sim.stepper();
    const Trajectory& tr = *w.trajectory;
    VecX<T> q, qd, dq(model.nv);
    load_state(tr, w.start, q, qd);
    if (w.start == 0) ctx.parameters->apply_initial_velocity(blocks[0], qd);
    if (fit.any()) apply_start_block(model, fit, blocks[1], q, qd);
    normalize_configuration(model, q);
    int n = 0;
    T delay_storage;
    const T* delay = fitted_control_delay(ctx, blocks[0], delay_storage);
    SensorDelays<T> sensors(ctx, blocks[0], model, tr, w.start, w.length);
    const std::vector<ImuCalibration<T>> imus = imu_calibrations(ctx, blocks[0]);
    const std::vector<T> k_t = torque_constants(ctx, blocks[0]);
    if (!sensors.active())
      return replay_window(
          stepper, tr, w.start, w.length, q, qd,
          [&](int k, const VecX<T>& qk, const VecX<T>& qdk) {
            n += sample_residuals(ctx, model, stepper.data(), tr, k, qk, qdk, dq, residuals + n);
            n += shooting_sensor_residuals(ctx, imus, k_t, stepper, tr, k, qk, qdk, residuals + n, delay);
          },
          delay);
    // Sensor delays: sample k observes the model at t_k − d, which a lead
    // (d < 0) puts after t_k: the whole window first, then its residuals.
    sensors.record(w.start, q, qd);
    if (!replay_window(
            stepper, tr, w.start, w.length, q, qd,
            [&](int k, const VecX<T>& qk, const VecX<T>& qdk) { sensors.record(k, qk, qdk); }, delay))
      return false;
    for (int k = w.start + 1; k <= w.start + w.length; ++k) {
      const DelayedJointChannels<T> seen = sensors.observe(k);
      n += sample_residuals(ctx, model, stepper.data(), tr, k, sensors.q(k), sensors.qd(k), dq, residuals + n, &seen);
      n += shooting_sensor_residuals(ctx, imus, k_t, stepper, tr, k, sensors.q(k), sensors.qd(k), residuals + n, delay);
    }
    return true;
  }
};

}  // namespace
}  // namespace residual_internal

using namespace residual_internal;

ceres::CostFunction* make_single_shooting_cost(const ResidualContext& ctx, const Window& window,
                                               const StartStateFit& fit) {
  const int P = ctx.parameters->size();
  const int start = fit.size(ctx.model->nv);
  return make_dynamic(new SingleShooting{ctx, window, fit}, [&](auto& cost) {
    cost.AddParameterBlock(P);
    if (start > 0) cost.AddParameterBlock(start);
    cost.SetNumResiduals(window.length * ctx.observe.residuals_per_sample(*ctx.model));
  });
}

}  // namespace neuralsim
