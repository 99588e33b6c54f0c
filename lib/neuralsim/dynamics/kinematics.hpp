// Forward kinematics: body transforms, world poses, velocities
// (RBDA §4.1, the first pass of algorithms 5.1 and 7.1).
#pragma once

#include "neuralsim/core/errors.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/model/data.hpp"

namespace neuralsim {

// ^iX_λ(i) = X_J(q) X_T: parent body frame -> body frame of joint j (RBDA
// §4.1; X_J from jcalc, table 4.1). Revolute joints about a coordinate axis
// ±e_k (every joint of the shipped URDF robots) take a short path: X_J only
// rotates the two rows of E_T orthogonal to the axis (12 multiplications in
// place of Rodrigues' formula and a 3x3 product) and r stays r_T.
template <class S, class QVec>
inline void set_parent_transform(const Joint<S>& j, const QVec& q, Transform<S>& out) {
  if (j.coordinate_axis >= 0) {
    using std::cos;
    using std::sin;
    const int k = j.coordinate_axis, a = (k + 1) % 3, b = (k + 2) % 3;
    // R(e_k, θ) rotates the (a, b) plane: R_aa = R_bb = c, R_ba = -R_ab = s.
    // For -e_k the angle changes sign. E = Rᵀ E_T.
    const S theta = j.axis_negative ? S(-q[j.idx_q]) : S(q[j.idx_q]);
    const S c = cos(theta), s = sin(theta);
    const Mat3<S>& ET = j.origin.E;
    for (int col = 0; col < 3; ++col) {
      out.E(k, col) = ET(k, col);
      out.E(a, col) = c * ET(a, col) + s * ET(b, col);
      out.E(b, col) = c * ET(b, col) - s * ET(a, col);
    }
    out.r = j.origin.r;
    return;
  }
  Transform<S>::compose(joint_transform(j, q), j.origin, out);
}

// data.X_up[i] and data.X_world[i] of body i (its parent's X_world done).
template <class S, class QVec>
inline void update_body_kinematics(const Model<S>& model, Data<S>& data, int i, const QVec& q) {
  const Joint<S>& j = model.joints[i];
  set_parent_transform(j, q, data.X_up[i]);
  if (j.parent < 0)
    data.X_world[i] = data.X_up[i];
  else
    Transform<S>::compose(data.X_up[i], data.X_world[j.parent], data.X_world[i]);
}

// Fills data.X_up and data.X_world from q.
template <class S>
void forward_kinematics(const Model<S>& model, Data<S>& data, const VecX<S>& q) {
  check_argument_size("forward_kinematics", "q", q.size(), model.nq);
  for (int i = 0; i < model.num_bodies(); ++i) update_body_kinematics(model, data, i, q);
}

// Also fills body velocities data.v (body coordinates).
template <class S>
void forward_kinematics(const Model<S>& model, Data<S>& data, const VecX<S>& q,
                        const VecX<S>& qd) {
  check_argument_size("forward_kinematics", "q̇", qd.size(), model.nv);
  forward_kinematics(model, data, q);
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<S>& j = model.joints[i];
    const Vec6<S> vj = joint_velocity(j, qd);
    data.v[i] = j.parent < 0 ? vj : Vec6<S>(data.X_up[i].apply_motion(data.v[j.parent]) + vj);
  }
}

// World orientation (body -> world rotation) of a body.
template <class S>
Mat3<S> body_rotation(const Data<S>& data, int body) { return data.X_world[body].E.transpose(); }

// World coordinates of a point given in body coordinates.
template <class S>
Vec3<S> body_point_world(const Data<S>& data, int body, const Vec3<S>& p_local) {
  return data.X_world[body].r + data.X_world[body].E.transpose() * p_local;
}

// World pose of a named frame (requires forward_kinematics).
template <class S>
Transform<S> frame_transform_world(const Model<S>& model, const Data<S>& data, int frame) {
  const Frame<S>& f = model.frames[frame];
  return f.body < 0 ? f.placement : f.placement * data.X_world[f.body];
}

// Linear velocity in world coordinates of a point fixed in a body
// (requires the velocity pass).
template <class S>
Vec3<S> body_point_velocity_world(const Data<S>& data, int body, const Vec3<S>& p_local) {
  const Vec6<S>& v = data.v[body];
  const Vec3<S> v_point = v.template tail<3>() + Vec3<S>(v.template head<3>()).cross(p_local);
  return data.X_world[body].E.transpose() * v_point;
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_KINEMATICS_TEMPLATES(PREFIX, S) \
  PREFIX template void forward_kinematics<S>(const Model<S>&, Data<S>&, const VecX<S>&);                 \
  PREFIX template void forward_kinematics<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_KINEMATICS_TEMPLATES, extern)

}  // namespace neuralsim
