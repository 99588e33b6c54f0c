#include "neuralsim/estimate/joint_torque_residual.hpp"
#include "neuralsim/estimate/residual_common.hpp"
#include "neuralsim/step/body_drag.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {
namespace residual_internal {
namespace {

struct InverseDynamics {
  ResidualContext ctx;
  std::shared_ptr<const InverseDynamicsSamples> s;
  int row = 0;
  double weight = 1;

  template <class T>
  bool operator()(T const* const* blocks, T* residuals) const {
    Model<T> model = ctx.model->template cast<T>();
    ctx.parameters->apply(blocks[0], model);
    Data<T> data(model);
    const VecX<T> q = s->q.row(row).transpose().cast<T>();
    const VecX<T> qd = s->qd.row(row).transpose().cast<T>();
    const VecX<T> qdd = s->qdd.row(row).transpose().cast<T>();
    // Body drag enters as the external wrench it is (step/body_drag.hpp);
    // rnea reads data.f_ext.
    if (has_body_drag(model)) {
      forward_kinematics(model, data, q, qd);
      add_body_drag(model, data);
    }
    rnea(model, data, q, qd, qdd);
    passive_forces(model, data, q, qd);
    // The commanded-torque rows (observation.hpp, CommandedTorqueChannel).
    const CommandedTorqueChannel& commanded = ctx.observe.commanded_torques;
    int n = 0;
    auto row_of = [&](const Joint<T>& j, int i) {
      const T w(weight * commanded.row_weight(n));
      residuals[n++] = w * (data.tau[i] - data.tau_passive[i] - j.dynamics.gear_ratio * T(s->tau(row, i)));
    };
    if (commanded.weight > 0 && commanded.joints.empty())
      for (const Joint<T>& j : model.joints)
        for (int k = 0; k < j.nv; ++k) row_of(j, j.idx_v + k);
    if (commanded.weight > 0)
      for (const int j : commanded.joints) row_of(model.joints[static_cast<size_t>(j)], model.joints[static_cast<size_t>(j)].idx_v);
    // The IMUs at the same filtered (q, q̇, q̈), against the recorded row.
    if (!ctx.observe.imus.empty())
      n += imu_residuals(ctx, imu_calibrations(ctx, blocks[0]), model, data, *s->trajectory, s->rows[row], q, qd,
                         qdd, residuals + n);
    // The joint-torque sensors and motor currents likewise.
    joint_force_residuals(ctx, torque_constants(ctx, blocks[0]), model, data, *s->trajectory, s->rows[row], q, qd,
                          qdd, residuals + n);
    return true;
  }
};

}  // namespace
}  // namespace residual_internal

using namespace residual_internal;

ceres::CostFunction* make_inverse_dynamics_cost(const ResidualContext& ctx,
                                                const std::shared_ptr<const InverseDynamicsSamples>& samples,
                                                int row, double weight) {
  const int P = ctx.parameters->size();
  return make_dynamic(new InverseDynamics{ctx, samples, row, weight}, [&](auto& cost) {
    cost.AddParameterBlock(P);
    cost.SetNumResiduals(ctx.observe.commanded_torques.rows(ctx.model->nv) +
                         6 * static_cast<int>(ctx.observe.imus.size()) + ctx.observe.joint_force_residuals());
  });
}

}  // namespace neuralsim
