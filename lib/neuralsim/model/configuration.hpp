// Joint kinematics (jcalc, RBDA table 4.1) and configuration-space
// operations on the manifold: integrate q ⊕ v·dt and difference q1 ⊖ q0.
//
// Quaternions are stored x, y, z, w (as Eigen's coeffs() and h5py users
// expect). Velocities of spherical and free joints are in the body frame,
// which makes their motion subspaces constant (S = [1;0] and S = 1), so the
// velocity-product term c_J vanishes for every joint type here.
#pragma once

#include "neuralsim/model/model.hpp"

namespace neuralsim {

template <class S, class QVec>
inline Quat<S> joint_quaternion(const QVec& q, int i) {
  return Quat<S>(q[i + 3], q[i], q[i + 1], q[i + 2]);  // (w, x, y, z)
}

// X_J(q): joint frame -> child body frame.
template <class S, class QVec>
inline Transform<S> joint_transform(const Joint<S>& j, const QVec& q) {
  switch (j.type) {
    case JointType::kFixed: return Transform<S>();
    case JointType::kRevolute:
      return Transform<S>(axis_angle_rotation<S>(j.axis, S(q[j.idx_q])).transpose(), Vec3<S>::Zero());
    case JointType::kPrismatic:
      return Transform<S>(Mat3<S>::Identity(), j.axis * S(q[j.idx_q]));
    case JointType::kSpherical: {
      const Quat<S> qu = joint_quaternion<S>(q, j.idx_q).normalized();
      return Transform<S>(qu.toRotationMatrix().transpose(), Vec3<S>::Zero());
    }
    case JointType::kFree: {
      const Quat<S> qu = joint_quaternion<S>(q, j.idx_q + 3).normalized();
      return Transform<S>(qu.toRotationMatrix().transpose(),
                          Vec3<S>(S(q[j.idx_q]), S(q[j.idx_q + 1]), S(q[j.idx_q + 2])));
    }
  }
  return Transform<S>();
}

// Joint velocity v_J = S q̇ in body coordinates.
template <class S, class VVec>
inline Vec6<S> joint_velocity(const Joint<S>& j, const VVec& qd) {
  Vec6<S> vj = Vec6<S>::Zero();
  switch (j.type) {
    case JointType::kFixed: break;
    case JointType::kRevolute: vj.template head<3>() = j.axis * S(qd[j.idx_v]); break;
    case JointType::kPrismatic: vj.template tail<3>() = j.axis * S(qd[j.idx_v]); break;
    case JointType::kSpherical:
      for (int k = 0; k < 3; ++k) vj[k] = qd[j.idx_v + k];
      break;
    case JointType::kFree:
      for (int k = 0; k < 6; ++k) vj[k] = qd[j.idx_v + k];
      break;
  }
  return vj;
}

// Motion subspace S (6 x nv) in the first nv columns of `Sm`.
template <class S>
inline void motion_subspace(const Joint<S>& j, Mat6<S>& Sm) {
  Sm.setZero();
  switch (j.type) {
    case JointType::kFixed: break;
    case JointType::kRevolute: Sm.col(0).template head<3>() = j.axis; break;
    case JointType::kPrismatic: Sm.col(0).template tail<3>() = j.axis; break;
    case JointType::kSpherical: Sm.template topLeftCorner<3, 3>().setIdentity(); break;
    case JointType::kFree: Sm.setIdentity(); break;
  }
}

// q_out = q ⊕ dv: Euclidean for 1-DoF joints; for rotations, right
// multiplication by exp(dω) (body-frame increment); the free joint's
// position moves by R·dv_lin (its linear velocity is in the body frame).
template <class S>
void integrate_configuration(const Model<S>& model, const VecX<S>& q, const VecX<S>& dv,
                             VecX<S>& q_out) {
  for (const auto& j : model.joints) {
    switch (j.type) {
      case JointType::kFixed: break;
      case JointType::kRevolute:
      case JointType::kPrismatic: q_out[j.idx_q] = q[j.idx_q] + dv[j.idx_v]; break;
      case JointType::kSpherical: {
        const Quat<S> r = joint_quaternion<S>(q, j.idx_q);
        const Quat<S> rn = (r * quat_exp<S>(Vec3<S>(dv.template segment<3>(j.idx_v)))).normalized();
        q_out.template segment<4>(j.idx_q) = rn.coeffs();
        break;
      }
      case JointType::kFree: {
        const Quat<S> r = joint_quaternion<S>(q, j.idx_q + 3);
        // Position: the mid-rotation would be second order; first order
        // keeps the free joint consistent with semi-implicit Euler.
        q_out.template segment<3>(j.idx_q) =
            q.template segment<3>(j.idx_q) + r.toRotationMatrix() * dv.template segment<3>(j.idx_v + 3);
        const Quat<S> rn = (r * quat_exp<S>(Vec3<S>(dv.template segment<3>(j.idx_v)))).normalized();
        q_out.template segment<4>(j.idx_q + 3) = rn.coeffs();
        break;
      }
    }
  }
}

// Semi-implicit Euler velocity update q̇ += h q̈, except for free joints.
// A free joint's linear velocity is in body coordinates, v = Rᵀṗ, so its
// derivative v̇ = Rᵀp̈ - ω×v holds a pure rotation of v. Integrated
// explicitly that rotation multiplies |v| by sqrt(1 + (h|ω|)²) per step: a
// ball spinning at 60 rad/s with h = 1 ms speeds up 6x per second. Instead,
// advance the world-frame velocity (add h·Rᵀp̈ = h(v̇ + ω×v) here) and
// re-express it in the rotated body frame after the configuration update
// (transport_free_velocities). Free flight is then exact: ṗ stays constant.
template <class S>
void semi_implicit_velocity_update(const Model<S>& model, VecX<S>& qd, const VecX<S>& qdd, double h) {
  qd += S(h) * qdd;
  for (const auto& j : model.joints) {
    if (j.type != JointType::kFree) continue;
    const Vec3<S> w = qd.template segment<3>(j.idx_v) - S(h) * qdd.template segment<3>(j.idx_v);
    const Vec3<S> v = qd.template segment<3>(j.idx_v + 3) - S(h) * qdd.template segment<3>(j.idx_v + 3);
    qd.template segment<3>(j.idx_v + 3) += S(h) * w.cross(v);
  }
}

// After q ← q ⊕ dv: free joints' linear velocities (body coordinates of the
// old orientation R) are re-expressed in the new one, R·exp(dω): v ← exp(dω)ᵀv.
template <class S>
void transport_free_velocities(const Model<S>& model, const VecX<S>& dv, VecX<S>& qd) {
  for (const auto& j : model.joints) {
    if (j.type != JointType::kFree) continue;
    const Mat3<S> dR = quat_exp<S>(Vec3<S>(dv.template segment<3>(j.idx_v))).toRotationMatrix();
    const Vec3<S> v = dR.transpose() * qd.template segment<3>(j.idx_v + 3);
    qd.template segment<3>(j.idx_v + 3) = v;
  }
}

// dv = q1 ⊖ q0, the tangent vector with q0 ⊕ dv ≈ q1 (exact for rotations).
template <class S>
void difference_configuration(const Model<S>& model, const VecX<S>& q0, const VecX<S>& q1,
                              VecX<S>& dv) {
  for (const auto& j : model.joints) {
    switch (j.type) {
      case JointType::kFixed: break;
      case JointType::kRevolute:
      case JointType::kPrismatic: dv[j.idx_v] = q1[j.idx_q] - q0[j.idx_q]; break;
      case JointType::kSpherical:
      case JointType::kFree: {
        const int oq = j.type == JointType::kFree ? 3 : 0;
        const int ov = 0;
        const Quat<S> r0 = joint_quaternion<S>(q0, j.idx_q + oq);
        const Quat<S> r1 = joint_quaternion<S>(q1, j.idx_q + oq);
        Quat<S> d = r0.conjugate() * r1;
        if (d.w() < S(0)) d.coeffs() = -d.coeffs();
        using std::atan2;
        const S sn = d.vec().norm();
        Vec3<S> w;
        if (sn < S(1e-12)) {
          w = S(2) * d.vec();
        } else {
          w = d.vec() * (S(2) * atan2(sn, d.w()) / sn);
        }
        dv.template segment<3>(j.idx_v + ov) = w;
        if (j.type == JointType::kFree)
          dv.template segment<3>(j.idx_v + 3) =
              r0.toRotationMatrix().transpose() *
              (q1.template segment<3>(j.idx_q) - q0.template segment<3>(j.idx_q));
        break;
      }
    }
  }
}

// Maps a velocity v, given at the configuration q0 ⊕ θ, to the rate θ̇ of the
// tangent coordinates θ at q0 (so Runge–Kutta stages can be summed in one
// tangent space, as in Munthe-Kaas' RKMK methods). For rotations with body
// velocities, θ̇ = dexp⁻¹(θ)·ω ≈ ω + ½ θ×ω + (1/12) θ×(θ×ω) (Iserles et al.,
// "Lie-group methods", Acta Numerica 2000, §3.4; exact to the order RK4 needs).
// The free joint's position p = p0 + R0 θ_lin gives θ̇_lin = exp(θ_ang) v.
template <class S>
void velocity_in_initial_tangent(const Model<S>& model, const VecX<S>& theta, const VecX<S>& v, VecX<S>& rate) {
  for (const auto& j : model.joints) {
    switch (j.type) {
      case JointType::kFixed: break;
      case JointType::kRevolute:
      case JointType::kPrismatic: rate[j.idx_v] = v[j.idx_v]; break;
      case JointType::kSpherical:
      case JointType::kFree: {
        const Vec3<S> th = theta.template segment<3>(j.idx_v);
        const Vec3<S> w = v.template segment<3>(j.idx_v);
        const Vec3<S> thw = th.cross(w);
        rate.template segment<3>(j.idx_v) = w + S(0.5) * thw + th.cross(thw) / S(12);
        if (j.type == JointType::kFree)
          rate.template segment<3>(j.idx_v + 3) =
              quat_exp<S>(th).toRotationMatrix() * v.template segment<3>(j.idx_v + 3);
        break;
      }
    }
  }
}

// Renormalizes quaternions in place (after optimizer updates, data import).
template <class S>
void normalize_configuration(const Model<S>& model, VecX<S>& q) {
  for (const auto& j : model.joints) {
    if (j.type == JointType::kSpherical) q.template segment<4>(j.idx_q).normalize();
    if (j.type == JointType::kFree) q.template segment<4>(j.idx_q + 3).normalize();
  }
}

// Explicit instantiations (model/instantiate_*.cpp).
#define NEURALSIM_CONFIGURATION_TEMPLATES(PREFIX, S)                                                        \
  PREFIX template void integrate_configuration<S>(const Model<S>&, const VecX<S>&, const VecX<S>&, VecX<S>&); \
  PREFIX template void semi_implicit_velocity_update<S>(const Model<S>&, VecX<S>&, const VecX<S>&, double);   \
  PREFIX template void transport_free_velocities<S>(const Model<S>&, const VecX<S>&, VecX<S>&);              \
  PREFIX template void difference_configuration<S>(const Model<S>&, const VecX<S>&, const VecX<S>&, VecX<S>&); \
  PREFIX template void velocity_in_initial_tangent<S>(const Model<S>&, const VecX<S>&, const VecX<S>&,       \
                                                      VecX<S>&);                                             \
  PREFIX template void normalize_configuration<S>(const Model<S>&, VecX<S>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_CONFIGURATION_TEMPLATES, extern)

}  // namespace neuralsim
