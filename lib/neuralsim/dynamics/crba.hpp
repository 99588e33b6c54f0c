// Composite-rigid-body algorithm for the joint-space inertia matrix
// (RBDA algorithm 6.2, table 6.2), including joint armature and motor
// rotors (Joint::has_rotor). A rotor rides on its joint's parent, so its
// inertia Ir a aᵀ joins the parent's composite, and its motion gr·q̇ a
// (RBDA §9.6) adds gr²·Ir to M_ii and carries the force [gr Ir a; 0] up the
// tree with the column of q_i: M_ki += S_kᵀ X*(gr Ir a) for the ancestors k.
#pragma once

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

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
  Mat6<S> Si, Sj;
  for (int i = 0; i < n; ++i) {
    const Joint<S>& ji = model.joints[i];
    if (ji.nv == 0) continue;
    motion_subspace(ji, Si);
    for (int k = 0; k < ji.nv; ++k) {
      // F = Ic_i S_i[k], carried up the tree as a force (RBDA eq. 6.13).
      Vec6<S> F = data.Ic[i] * Vec6<S>(Si.col(k));
      for (int kk = 0; kk < ji.nv; ++kk) data.M(ji.idx_v + kk, ji.idx_v + k) = Si.col(kk).dot(F);
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
        motion_subspace(jb, Sj);
        for (int kk = 0; kk < jb.nv; ++kk) {
          const S Mij = Sj.col(kk).dot(F);
          data.M(jb.idx_v + kk, ji.idx_v + k) = Mij;
          data.M(ji.idx_v + k, jb.idx_v + kk) = Mij;
        }
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
