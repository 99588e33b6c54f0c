// Articulated-body algorithm for forward dynamics (RBDA algorithm 7.1,
// table 7.1): q̈ = M⁻¹(τ - C q̇ - g + Jᵀf_ext) in O(n).
//
// Joint armature adds to D = SᵀIᴬS, matching crba.hpp and rnea.hpp.
// 1-DoF joints take a vector path; spherical and free joints a fixed-size
// NV path (templated), so nothing is dynamically sized or allocated.
#pragma once

#include <Eigen/Cholesky>

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {
namespace internal {

// Backward-pass step for a joint with NV > 1 degrees of freedom whose S is
// [1;0] (spherical, NV = 3) or 1 (free, NV = 6).
template <int NV, class S>
void aba_backward_multi(const Joint<S>& j, Data<S>& data, int i, const VecX<S>& tau) {
  using MatNV = Eigen::Matrix<S, NV, NV>;
  using VecNV = Eigen::Matrix<S, NV, 1>;
  const Mat6<S>& IA = data.IA[i];
  const Eigen::Matrix<S, 6, NV> U = IA.template leftCols<NV>();  // IA·S, S = [1; 0]
  MatNV D = U.template topRows<NV>();
  for (int k = 0; k < NV; ++k) D(k, k) += j.dynamics.armature;
  // D is symmetric positive definite: a fixed-size Cholesky solve is ~3x
  // cheaper than a general LU inverse (the free joint's 6x6 dominated).
  const MatNV Dinv = D.llt().solve(MatNV::Identity());
  VecNV u;
  for (int k = 0; k < NV; ++k) u[k] = tau[j.idx_v + k] - data.f[i][k];
  data.U[i].template leftCols<NV>() = U;
  data.Dinv[i].template topLeftCorner<NV, NV>() = Dinv;
  data.u[i].template head<NV>() = u;
  if (j.parent < 0) return;
  const Eigen::Matrix<S, 6, NV> UDinv = U * Dinv;
  const Mat6<S> Ia = IA - UDinv * U.transpose();
  const Vec6<S> pa = data.f[i] + Ia * data.c[i] + UDinv * u;
  data.IA[j.parent] += transform_inertia_to_parent(data.X_up[i], Ia);
  data.f[j.parent] += data.X_up[i].apply_force_inverse(pa);
}

}  // namespace internal

// Writes q̈ into data.qdd. `tau` is the total generalized force (controls and
// passive forces); external body forces are read from data.f_ext.
template <class S>
void aba(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
         const VecX<S>& tau) {
  const int n = model.num_bodies();
  // Pass 1: kinematics, velocity-product terms, rigid-body bias forces.
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    data.X_up[i] = joint_transform(j, q) * j.origin;
    const Vec6<S> vj = joint_velocity(j, qd);
    if (j.parent < 0) {
      data.X_world[i] = data.X_up[i];
      data.v[i] = vj;
      data.c[i].setZero();
    } else {
      data.X_world[i] = data.X_up[i] * data.X_world[j.parent];
      data.v[i] = data.X_up[i].apply_motion(data.v[j.parent]) + vj;
      data.c[i] = cross_motion(data.v[i], vj);
    }
    const Inertia<S>& I = model.bodies[i].inertia;
    data.IA[i] = I.matrix();
    data.f[i] = cross_force(data.v[i], Vec6<S>(I * data.v[i])) - data.f_ext[i];  // pA
  }
  // Pass 2: articulated inertias and bias forces, leaves to root.
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    switch (j.nv) {
      case 0:
        if (j.parent >= 0) {
          data.IA[j.parent] += transform_inertia_to_parent(data.X_up[i], data.IA[i]);
          data.f[j.parent] +=
              data.X_up[i].apply_force_inverse(Vec6<S>(data.f[i] + data.IA[i] * data.c[i]));
        }
        break;
      case 1: {
        // S = [axis; 0] or [0; axis]: U = IA·S touches only three columns.
        const bool revolute = j.type == JointType::kRevolute;
        const Vec6<S> U = revolute ? Vec6<S>(data.IA[i].template leftCols<3>() * j.axis)
                                   : Vec6<S>(data.IA[i].template rightCols<3>() * j.axis);
        const S D = (revolute ? U.template head<3>().dot(j.axis) : U.template tail<3>().dot(j.axis)) +
                    j.dynamics.armature;
        const S sp = revolute ? j.axis.dot(data.f[i].template head<3>()) : j.axis.dot(data.f[i].template tail<3>());
        const S u = tau[j.idx_v] - sp;
        const S Dinv = S(1) / D;
        data.U[i].col(0) = U;
        data.Dinv[i](0, 0) = Dinv;
        data.u[i][0] = u;
        if (j.parent >= 0) {
          const Vec6<S> UDinv = U * Dinv;
          const Mat6<S> Ia = data.IA[i] - UDinv * U.transpose();
          const Vec6<S> pa = data.f[i] + Ia * data.c[i] + UDinv * u;
          data.IA[j.parent] += transform_inertia_to_parent(data.X_up[i], Ia);
          data.f[j.parent] += data.X_up[i].apply_force_inverse(pa);
        }
        break;
      }
      case 3: internal::aba_backward_multi<3>(j, data, i, tau); break;
      case 6: internal::aba_backward_multi<6>(j, data, i, tau); break;
    }
  }
  // Pass 3: accelerations, root to leaves. Gravity as base acceleration -g.
  const Vec6<S> a0 = spatial<S>(Vec3<S>::Zero(), Vec3<S>(-model.gravity));
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    const Vec6<S> a_parent = j.parent < 0 ? a0 : data.a[j.parent];
    Vec6<S> a = data.X_up[i].apply_motion(a_parent) + data.c[i];
    switch (j.nv) {
      case 0: break;
      case 1: {
        const S qdd = data.Dinv[i](0, 0) * (data.u[i][0] - data.U[i].col(0).dot(a));
        data.qdd[j.idx_v] = qdd;
        if (j.type == JointType::kRevolute)
          a.template head<3>() += j.axis * qdd;
        else
          a.template tail<3>() += j.axis * qdd;
        break;
      }
      case 3: {
        const Vec3<S> qdd = data.Dinv[i].template topLeftCorner<3, 3>() *
                            (data.u[i].template head<3>() - data.U[i].template leftCols<3>().transpose() * a);
        data.qdd.template segment<3>(j.idx_v) = qdd;
        a.template head<3>() += qdd;
        break;
      }
      case 6: {
        const Vec6<S> qdd = data.Dinv[i] * (data.u[i] - data.U[i].transpose() * a);
        data.qdd.template segment<6>(j.idx_v) = qdd;
        a += qdd;
        break;
      }
    }
    data.a[i] = a;
  }
}

}  // namespace neuralsim
