// Recursive Newton–Euler inverse dynamics (RBDA algorithm 5.1, table 5.1).
//
// τ = M(q) q̈ + C(q, q̇) q̇ + g(q) - Σ Jᵢᵀ f_ext,i, including joint armature
// (armature·q̈ on the diagonal, as a rotor would add). Passive joint forces
// (damping, friction, springs) are not included: see passive_forces.hpp.
#pragma once

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

// Writes τ into data.tau. Uses data.f_ext (body coordinates).
template <class S>
void rnea(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
          const VecX<S>& qdd) {
  check_argument_size("rnea", "q̇", qd.size(), model.nv);
  check_argument_size("rnea", "q̈", qdd.size(), model.nv);
  forward_kinematics(model, data, q);
  // Gravity enters as a fictitious base acceleration -g (RBDA §5.3).
  const Vec6<S> a0 = spatial<S>(Vec3<S>::Zero(), Vec3<S>(-model.gravity));
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<S>& j = model.joints[i];
    const Vec6<S> vj = joint_velocity(j, qd);
    const Vec6<S> aj = joint_velocity(j, qdd);  // S q̈ (c_J = 0, see configuration.hpp)
    const Vec6<S> v_parent = j.parent < 0 ? Vec6<S>::Zero() : data.v[j.parent];
    const Vec6<S> a_parent = j.parent < 0 ? a0 : data.a[j.parent];
    data.v[i] = data.X_up[i].apply_motion(v_parent) + vj;
    data.a[i] = data.X_up[i].apply_motion(a_parent) + aj + cross_motion(data.v[i], vj);
    const Inertia<S>& I = model.bodies[i].inertia;
    data.f[i] = I * data.a[i] + cross_force(data.v[i], Vec6<S>(I * data.v[i])) - data.f_ext[i];
  }
  Mat6<S> Sm;
  for (int i = model.num_bodies() - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    if (j.nv > 0) {
      motion_subspace(j, Sm);
      for (int k = 0; k < j.nv; ++k)
        data.tau[j.idx_v + k] = Sm.col(k).dot(data.f[i]) + j.dynamics.armature * qdd[j.idx_v + k];
    }
    if (j.parent >= 0) data.f[j.parent] += data.X_up[i].apply_force_inverse(data.f[i]);
  }
}

// Bias forces C(q, q̇) q̇ + g(q) - Jᵀf_ext = RNEA(q, q̇, 0), into data.bias.
template <class S>
void nonlinear_effects(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd) {
  data.qdd.setZero();
  rnea(model, data, q, qd, data.qdd);
  data.bias = data.tau;
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_RNEA_TEMPLATES(PREFIX, S) \
  PREFIX template void rnea<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&, const VecX<S>&); \
  PREFIX template void nonlinear_effects<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_RNEA_TEMPLATES, extern)

}  // namespace neuralsim
