// Passive joint forces: viscous damping, smooth Coulomb friction, springs
// and a constant torque offset. Coulomb friction uses Fc·tanh(q̇/v_s), a
// differentiable regularization of Fc·sign(q̇) (v_s → 0 recovers it).
// Terms are skipped only when their coefficient is exactly zero with no
// derivative (exactly_zero), so a coefficient estimated from 0 keeps ∂τ/∂Fc.
#pragma once

#include "neuralsim/model/data.hpp"

namespace neuralsim {

// Writes the passive generalized force into data.tau_passive.
template <class S>
void passive_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd) {
  using std::tanh;
  for (const Joint<S>& j : model.joints) {
    const JointDynamics<S>& d = j.dynamics;
    for (int k = 0; k < j.nv; ++k) {
      const S v = qd[j.idx_v + k];
      S t = -d.damping * v - d.torque_offset;
      if (!exactly_zero(d.coulomb_friction)) t -= d.coulomb_friction * tanh(v / d.friction_velocity);
      data.tau_passive[j.idx_v + k] = t;
    }
    if (j.nq == 1 && !exactly_zero(d.spring_stiffness))
      data.tau_passive[j.idx_v] -= d.spring_stiffness * (q[j.idx_q] - d.spring_rest);
  }
}

}  // namespace neuralsim
