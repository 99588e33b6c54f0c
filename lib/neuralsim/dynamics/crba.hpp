// Composite-rigid-body algorithm for the joint-space inertia matrix
// (RBDA algorithm 6.2, table 6.2), including joint armature and motor
// rotors (Joint::has_rotor). A rotor rides on its joint's parent, so its
// inertia Ir a aᵀ joins the parent's composite, and its motion gr·q̇ a
// (RBDA §9.6) adds gr²·Ir to M_ii and carries the force [gr Ir a; 0] up the
// tree with the column of q_i: M_ki += S_kᵀ X*(gr Ir a) for the ancestors k.
#pragma once

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

namespace crba_detail {

// Column k of the motion subspace S of joint j (body coordinates).
template <class S>
inline Vec6<S> motion_column(const Joint<S>& j, int k) {
  Vec6<S> s = Vec6<S>::Zero();
  switch (j.type) {
    case JointType::kRevolute: s.template head<3>() = j.axis; break;
    case JointType::kPrismatic: s.template tail<3>() = j.axis; break;
    case JointType::kSpherical:
    case JointType::kFree: s[k] = S(1); break;
    case JointType::kFixed: break;
  }
  return s;
}

// Sᵀ F for a force F in joint j's body coordinates, written to
// out[0 .. j.nv): by joint type, without forming S (RBDA eq. 6.13's
// projection): one component of F for a hinge about a coordinate axis, a
// dot product for other hinges and sliders, F's moment for a ball joint and
// F itself for a free joint.
template <class S, class Out>
inline void project_force(const Joint<S>& j, const Vec6<S>& F, Out&& out) {
  switch (j.type) {
    case JointType::kRevolute:
      if (j.coordinate_axis >= 0)
        out(0) = j.axis_negative ? S(-F[j.coordinate_axis]) : F[j.coordinate_axis];
      else
        out(0) = j.axis.dot(F.template head<3>());
      break;
    case JointType::kPrismatic: out(0) = j.axis.dot(F.template tail<3>()); break;
    case JointType::kSpherical:
      for (int k = 0; k < 3; ++k) out(k) = F[k];
      break;
    case JointType::kFree:
      for (int k = 0; k < 6; ++k) out(k) = F[k];
      break;
    case JointType::kFixed: break;
  }
}

}  // namespace crba_detail

// Writes M(q) into data.M (both triangles). Runs forward kinematics itself.
template <class S>
void crba(const Model<S>& model, Data<S>& data, const VecX<S>& q) {
  forward_kinematics(model, data, q);
  const int n = model.num_bodies();
  for (int i = 0; i < n; ++i) data.Ic[i] = model.bodies[i].inertia;
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    if (j.parent < 0) continue;
    if (j.has_rotor) {
      const Mat3<S> rotor = j.dynamics.rotor_inertia * j.axis * j.axis.transpose();
      data.Ic[j.parent] = data.Ic[j.parent] + Inertia<S>::to_parent(data.X_up[i], data.Ic[i] + Inertia<S>::from_com(S(0), Vec3<S>::Zero(), rotor));
    } else {
      data.Ic[j.parent] = data.Ic[j.parent] + Inertia<S>::to_parent(data.X_up[i], data.Ic[i]);
    }
  }
  data.M.setZero();
  for (int i = 0; i < n; ++i) {
    const Joint<S>& ji = model.joints[i];
    if (ji.nv == 0) continue;
    for (int k = 0; k < ji.nv; ++k) {
      const int col = ji.idx_v + k;
      // F = Ic_i S_i[k], carried up the tree as a force (RBDA eq. 6.13).
      Vec6<S> F = data.Ic[i] * crba_detail::motion_column(ji, k);
      crba_detail::project_force(ji, F, [&](int kk) -> S& { return data.M(ji.idx_v + kk, col); });
      if (ji.has_rotor) {
        const S& gr = ji.dynamics.gear_ratio;
        data.M(ji.idx_v, ji.idx_v) += gr * gr * ji.dynamics.rotor_inertia;
        F.template head<3>() += (gr * ji.dynamics.rotor_inertia) * ji.axis;
      }
      int b = i;
      while (model.joints[b].parent >= 0) {
        F = data.X_up[b].apply_force_inverse(F);
        b = model.joints[b].parent;
        const Joint<S>& jb = model.joints[b];
        if (jb.nv == 0) continue;
        crba_detail::project_force(jb, F, [&](int kk) -> S& { return data.M(jb.idx_v + kk, col); });
        for (int kk = 0; kk < jb.nv; ++kk) data.M(col, jb.idx_v + kk) = data.M(jb.idx_v + kk, col);
      }
    }
    for (int k = 0; k < ji.nv; ++k) data.M(ji.idx_v + k, ji.idx_v + k) += ji.dynamics.armature;
  }
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_CRBA_TEMPLATES(PREFIX, S) \
  PREFIX template void crba<S>(const Model<S>&, Data<S>&, const VecX<S>&);
NEURALSIM_CRBA_TEMPLATES(extern, double)  // Jets instantiate on use: identification does not need crba

}  // namespace neuralsim
