// Recursive Newton–Euler inverse dynamics (RBDA algorithm 5.1, table 5.1).
//
// τ = M(q) q̈ + C(q, q̇) q̇ + g(q) - Σ Jᵢᵀ f_ext,i, including joint armature
// (armature·q̈ on the diagonal) and motor rotors (Joint::has_rotor). Passive
// joint forces (damping, friction, springs) are not included: see
// passive_forces.hpp.
#pragma once

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

namespace internal {

// The rotor of 1-DoF joint j (Joint::has_rotor), in the coordinates of the
// joint's child body, from the child's velocity v and acceleration a: the
// carrier (parent) moves with ω_p = ω - S_ω q̇ and α_p = α - S_ω q̈ - ω × S_ω q̇
// (RBDA eq. 5.7 solved for the parent; S_ω is the angular part of S, zero for
// a prismatic joint). The rotor spins about the joint axis a at gr·q̇
// relative to the carrier: ω_r = ω_p + gr q̇ a, α_r = α_p + gr q̈ a + ω_p × gr q̇ a.
// Massless and axisymmetric, its spatial inertia is [Ir a aᵀ, 0; 0, 0] about
// any point, so its force is the pure couple
//   n_r = Ir (a (aᵀα_r) + (aᵀω_r) ω_r × a)       (Euler's equation),
// which the carrier bears, and the gear adds gr·aᵀn_r to the joint's τ
// (RBDA §9.6: τ = Gᵀ τ_tree with G mapping q̇ to the rotor's rate gr q̇).
template <class S>
Vec3<S> rotor_couple(const Joint<S>& j, const Vec6<S>& v, const Vec6<S>& a, const S& qd, const S& qdd) {
  const Vec3<S>& axis = j.axis;
  const Vec3<S> w = v.template head<3>();
  Vec3<S> w_p = w;
  Vec3<S> alpha_p = a.template head<3>();
  if (j.type == JointType::kRevolute) {
    w_p -= axis * qd;
    alpha_p -= axis * qdd + w.cross(axis) * qd;
  }
  const S& gr = j.dynamics.gear_ratio;
  const Vec3<S> w_r = w_p + axis * (gr * qd);
  const Vec3<S> alpha_r = alpha_p + axis * (gr * qdd) + w_p.cross(axis) * (gr * qd);
  const S& Ir = j.dynamics.rotor_inertia;
  return Ir * (axis * axis.dot(alpha_r) + w_r.cross(axis) * axis.dot(w_r));
}

// aᵀω_r = aᵀω_p + gr q̇, the rotor's absolute spin rate about its axis
// (energy.hpp, centroidal.hpp); v is the child body's velocity.
template <class S>
S rotor_spin_rate(const Joint<S>& j, const Vec6<S>& v, const S& qd) {
  S spin = j.axis.dot(Vec3<S>(v.template head<3>())) + j.dynamics.gear_ratio * qd;
  if (j.type == JointType::kRevolute) spin -= qd;  // aᵀω = aᵀω_p + q̇ for a revolute joint
  return spin;
}

}  // namespace internal

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
    if (j.has_rotor) {
      const Vec3<S> n = internal::rotor_couple(j, data.v[i], data.a[i], qd[j.idx_v], qdd[j.idx_v]);
      data.tau[j.idx_v] += j.dynamics.gear_ratio * j.axis.dot(n);
      if (j.parent >= 0)
        data.f[j.parent] += data.X_up[i].apply_force_inverse(spatial<S>(n, Vec3<S>::Zero()));
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
