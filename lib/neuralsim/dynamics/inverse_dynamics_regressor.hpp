// The inverse-dynamics regressor: RNEA's torque is linear in the ten
// standard inertial parameters of every body (Atkeson, An & Hollerbach,
// "Estimation of inertial parameters of manipulator loads and links",
// IJRR 5(3), 1986; Khalil & Dombre, "Modeling, Identification and Control
// of Robots", 2002, ch. 12):
//
//   τ_rnea(q, q̇, q̈) = Y(q, q̇, q̈) π + armature·q̈ + rotor terms − Σ Jᵢᵀ f_ext,i
//
// with π = [π_0; π_1; …], per body b (in its own frame, about its origin)
//   π_b = [m, h_x, h_y, h_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]
// (h = m·c the first moment, I = Inertia::I_origin; Pinocchio's order).
// Y is nv × 10·num_bodies; column 10 b + k is the torque that a unit value
// of π_b[k] alone would need. The terms beyond Y π (armature, rotors,
// external forces) do not depend on π: see rnea.hpp for each.
//
// Algorithm (Pinocchio's computeJointTorqueRegressor, restated): RNEA's
// forward pass gives every body's velocity v_b and acceleration a_b (gravity
// as the base acceleration −g); the body's net force f_b = I_b a_b +
// v_b ×* I_b v_b is linear in π_b, f_b = A_b π_b with A_b a 6 × 10 matrix;
// the force crosses every joint on the path from b to the root, so the
// rows of joint j hold S_jᵀ (ʲX_b)ᵀ A_b for every b in j's subtree and
// zero elsewhere. Cost O(n·depth); nothing is allocated when Y already has
// its size.
#pragma once

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

// The standard inertial parameters of one body in the order above.
template <class S>
Eigen::Matrix<S, 10, 1> inertial_parameters(const Inertia<S>& I) {
  Eigen::Matrix<S, 10, 1> p;
  p << I.mass, I.h[0], I.h[1], I.h[2], I.I_origin(0, 0), I.I_origin(0, 1), I.I_origin(1, 1), I.I_origin(0, 2),
      I.I_origin(1, 2), I.I_origin(2, 2);
  return p;
}

// The inertia whose standard parameters are p (the inverse of the above).
template <class S>
Inertia<S> inertia_from_parameters(const Eigen::Matrix<S, 10, 1>& p) {
  Inertia<S> I;
  I.mass = p[0];
  I.h << p[1], p[2], p[3];
  I.I_origin << p[4], p[5], p[7], p[5], p[6], p[8], p[7], p[8], p[9];
  return I;
}

// π of the whole model: 10 · num_bodies values, body after body.
template <class S>
VecX<S> model_inertial_parameters(const Model<S>& model) {
  VecX<S> pi(10 * model.num_bodies());
  for (int b = 0; b < model.num_bodies(); ++b) pi.template segment<10>(10 * b) = inertial_parameters(model.bodies[b].inertia);
  return pi;
}

// A_b: the body's net force I a + v ×* I v as a linear map of π_b.
template <class S>
Eigen::Matrix<S, 6, 10> body_regressor(const Vec6<S>& v, const Vec6<S>& a) {
  Eigen::Matrix<S, 6, 10> A;
  // Column by column: the net force of the unit inertia e_k. I·x for the
  // unit inertias (Inertia::operator*): m → (0, x_lin), h_k → (e_k × x_lin,
  // −e_k × x_ang), I_kl → (E_kl x_ang, 0); then f = I a + v ×* (I v).
  auto net = [&](const Vec6<S>& Ia, const Vec6<S>& Iv) { return Vec6<S>(Ia + cross_force(v, Iv)); };
  const Vec3<S> aw = a.template head<3>(), al = a.template tail<3>();
  const Vec3<S> vw = v.template head<3>(), vl = v.template tail<3>();
  A.col(0) = net(spatial<S>(Vec3<S>::Zero(), al), spatial<S>(Vec3<S>::Zero(), vl));
  for (int k = 0; k < 3; ++k) {
    const Vec3<S> e = Vec3<S>::Unit(k);
    A.col(1 + k) = net(spatial<S>(Vec3<S>(e.cross(al)), Vec3<S>(-e.cross(aw))),
                       spatial<S>(Vec3<S>(e.cross(vl)), Vec3<S>(-e.cross(vw))));
  }
  // Rotational entries in the order xx, xy, yy, xz, yz, zz.
  static const int row[6] = {0, 0, 1, 0, 1, 2}, col[6] = {0, 1, 1, 2, 2, 2};
  for (int k = 0; k < 6; ++k) {
    Vec3<S> Ia = Vec3<S>::Zero(), Iv = Vec3<S>::Zero();
    Ia[row[k]] += aw[col[k]];
    Iv[row[k]] += vw[col[k]];
    if (row[k] != col[k]) {
      Ia[col[k]] += aw[row[k]];
      Iv[col[k]] += vw[row[k]];
    }
    A.col(4 + k) = net(spatial<S>(Ia, Vec3<S>::Zero()), spatial<S>(Iv, Vec3<S>::Zero()));
  }
  return A;
}

// Y(q, q̇, q̈) into `Y` (resized to nv × 10·num_bodies when it differs).
// Leaves RNEA's kinematics in data (X_up, X_world, v, a).
template <class S>
void inverse_dynamics_regressor(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                                const VecX<S>& qdd, MatX<S>& Y) {
  check_argument_size("inverse_dynamics_regressor", "q̇", qd.size(), model.nv);
  check_argument_size("inverse_dynamics_regressor", "q̈", qdd.size(), model.nv);
  const int nb = model.num_bodies();
  if (Y.rows() != model.nv || Y.cols() != 10 * nb) Y.resize(model.nv, 10 * nb);
  Y.setZero();
  forward_kinematics(model, data, q);
  const Vec6<S> a0 = spatial<S>(Vec3<S>::Zero(), Vec3<S>(-model.gravity));
  for (int i = 0; i < nb; ++i) {
    const Joint<S>& j = model.joints[i];
    const Vec6<S> vj = joint_velocity(j, qd);
    const Vec6<S> aj = joint_velocity(j, qdd);
    const Vec6<S> v_parent = j.parent < 0 ? Vec6<S>::Zero() : data.v[j.parent];
    const Vec6<S> a_parent = j.parent < 0 ? a0 : data.a[j.parent];
    data.v[i] = data.X_up[i].apply_motion(v_parent) + vj;
    data.a[i] = data.X_up[i].apply_motion(a_parent) + aj + cross_motion(data.v[i], vj);
  }
  Mat6<S> Sm;
  Eigen::Matrix<S, 6, 10> F;
  for (int b = 0; b < nb; ++b) {
    F = body_regressor(data.v[b], data.a[b]);
    // Up the path to the root: F in the coordinates of body j.
    for (int j = b; j >= 0; j = model.joints[j].parent) {
      const Joint<S>& jt = model.joints[j];
      if (jt.nv > 0) {
        motion_subspace(jt, Sm);
        Y.block(jt.idx_v, 10 * b, jt.nv, 10) = Sm.leftCols(jt.nv).transpose() * F;
      }
      if (jt.parent >= 0)
        for (int c = 0; c < 10; ++c) F.col(c) = data.X_up[j].apply_force_inverse(Vec6<S>(F.col(c)));
    }
  }
}

// Explicit instantiation for double (dynamics/instantiate_double.cpp): the
// fits use the regressor in double only (estimate/regressor_residual.cpp).
#define NEURALSIM_REGRESSOR_TEMPLATES(PREFIX, S)                                                                  \
  PREFIX template void inverse_dynamics_regressor<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&, \
                                                     const VecX<S>&, MatX<S>&);
NEURALSIM_REGRESSOR_TEMPLATES(extern, double)

}  // namespace neuralsim
