// Body, frame and point Jacobians (RBDA §4.2, eq. 4.12 / 8.2): columns are
// the motion subspaces of the supporting joints, expressed where requested.
#pragma once

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

// 6 x nv Jacobian of a point fixed in `body` (given in body coordinates):
// rows [ω; ṗ] in world-aligned axes, so J·q̇ = (ω_world, velocity of the
// point in world). Requires forward_kinematics(model, data, q). `J` must be
// 6 x nv; columns of non-supporting joints are set to zero.
template <class S, class Derived>
void point_jacobian(const Model<S>& model, const Data<S>& data, int body, const Vec3<S>& p_local,
                    Eigen::MatrixBase<Derived> const& J_out) {
  auto& J = const_cast<Eigen::MatrixBase<Derived>&>(J_out);
  J.setZero();
  const Vec3<S> p = body_point_world(data, body, p_local);
  Mat6<S> Sm;
  for (int b = body; b >= 0; b = model.joints[b].parent) {
    const Joint<S>& j = model.joints[b];
    if (j.nv == 0) continue;
    motion_subspace(j, Sm);
    const Mat3<S> R = data.X_world[b].E.transpose();
    const Vec3<S>& pb = data.X_world[b].r;
    for (int k = 0; k < j.nv; ++k) {
      const Vec3<S> w = R * Sm.col(k).template head<3>();
      const Vec3<S> vo = R * Sm.col(k).template tail<3>();  // velocity of body b's origin
      J.col(j.idx_v + k).template head<3>() = w;
      J.col(j.idx_v + k).template tail<3>() = vo + w.cross(p - pb);
    }
  }
}

// Jacobian of a named frame's origin (rows [ω; ṗ], world-aligned).
template <class S, class Derived>
void frame_jacobian(const Model<S>& model, const Data<S>& data, int frame,
                    Eigen::MatrixBase<Derived> const& J_out) {
  const Frame<S>& f = model.frames[frame];
  // The frame origin in body coordinates is the placement's translation r.
  point_jacobian(model, data, f.body, f.placement.r, J_out);
}

// 6 x nv body Jacobian: J·q̇ = data.v[body] (body coordinates, [ω; v_origin]).
template <class S, class Derived>
void body_jacobian(const Model<S>& model, const Data<S>& data, int body,
                   Eigen::MatrixBase<Derived> const& J_out) {
  auto& J = const_cast<Eigen::MatrixBase<Derived>&>(J_out);
  J.setZero();
  Mat6<S> Sm;
  for (int b = body; b >= 0; b = model.joints[b].parent) {
    const Joint<S>& j = model.joints[b];
    if (j.nv == 0) continue;
    motion_subspace(j, Sm);
    // X from body b to `body`: X_world[body] * X_world[b]⁻¹.
    const Transform<S> X = data.X_world[body] * data.X_world[b].inverse();
    for (int k = 0; k < j.nv; ++k) J.col(j.idx_v + k) = X.apply_motion(Vec6<S>(Sm.col(k)));
  }
}

}  // namespace neuralsim
