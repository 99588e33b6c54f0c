// Plücker coordinate transforms (RBDA §2.8, table 2.5).
//
// A Transform X = (E, r) maps coordinates from frame A to frame B, where E
// rotates A-coordinates into B-coordinates and r is B's origin expressed in
// A. As a 6x6 motion transform X = [E 0; -E r× E]. Stored as (E, r) because
// applying it costs ~2 3x3 products instead of a 6x6 one.
#pragma once

#include "neuralsim/spatial/motion.hpp"

namespace neuralsim {

template <class S>
struct Transform {
  Mat3<S> E = Mat3<S>::Identity();
  Vec3<S> r = Vec3<S>::Zero();

  Transform() = default;
  Transform(const Mat3<S>& E_, const Vec3<S>& r_) : E(E_), r(r_) {}

  static Transform identity() { return Transform(); }

  // Motion vector from A to B:  X m = (E w, E (v - r × w)).
  Vec6<S> apply_motion(const Vec6<S>& m) const {
    const Vec3<S> w = m.template head<3>();
    return spatial<S>(E * w, E * (Vec3<S>(m.template tail<3>()) - r.cross(w)));
  }
  // Inverse motion transform, B to A:  X⁻¹ m = (Eᵀ w, Eᵀ v + r × Eᵀ w).
  Vec6<S> apply_motion_inverse(const Vec6<S>& m) const {
    const Vec3<S> w = E.transpose() * m.template head<3>();
    return spatial<S>(w, E.transpose() * m.template tail<3>() + r.cross(w));
  }
  // Force vector from A to B:  X* f = (E (n - r × f), E f).
  Vec6<S> apply_force(const Vec6<S>& f) const {
    const Vec3<S> fo = f.template tail<3>();
    return spatial<S>(E * (Vec3<S>(f.template head<3>()) - r.cross(fo)), E * fo);
  }
  // Transposed motion transform = force transform B to A:
  // Xᵀ f = (Eᵀ n + r × Eᵀ f, Eᵀ f).
  Vec6<S> apply_force_inverse(const Vec6<S>& f) const {
    const Vec3<S> fo = E.transpose() * f.template tail<3>();
    return spatial<S>(E.transpose() * f.template head<3>() + r.cross(fo), fo);
  }

  // Composition: (this * other) maps with `other` first, then `this`.
  // For X_BC * X_AB: E = E_BC E_AB, r = r_AB + E_ABᵀ r_BC (RBDA table 2.5).
  Transform operator*(const Transform& other) const {
    return Transform(E * other.E, other.r + other.E.transpose() * r);
  }
  Transform inverse() const { return Transform(E.transpose(), -(E * r)); }

  Mat6<S> motion_matrix() const {
    Mat6<S> X;
    X.template topLeftCorner<3, 3>() = E;
    X.template topRightCorner<3, 3>().setZero();
    X.template bottomLeftCorner<3, 3>() = -E * skew(r);
    X.template bottomRightCorner<3, 3>() = E;
    return X;
  }

  template <class T>
  Transform<T> cast() const {
    return Transform<T>(E.template cast<T>(), r.template cast<T>());
  }
};

// Xᵀ A X for a symmetric 6x6 A (an articulated inertia), written blockwise:
// X = diag(E,E)·[1 0; -r× 1], so the rotation is applied to each 3x3 block and
// the translation with cheap skew products. ~4x fewer flops than 6x6 GEMMs.
template <class S>
inline Mat6<S> transform_inertia_to_parent(const Transform<S>& X, const Mat6<S>& A) {
  const Mat3<S> Et = X.E.transpose();
  const Mat3<S> B11 = Et * A.template topLeftCorner<3, 3>() * X.E;
  const Mat3<S> B12 = Et * A.template topRightCorner<3, 3>() * X.E;
  const Mat3<S> B22 = Et * A.template bottomRightCorner<3, 3>() * X.E;
  const Mat3<S> rx = skew(X.r);
  // T = [1 0; -r× 1],  Tᵀ B T with B21 = B12ᵀ.
  const Mat3<S> C12 = B12 + rx * B22;
  Mat6<S> out;
  const Mat3<S> C11 = B11 + rx * B12.transpose() - C12 * rx;
  out.template topLeftCorner<3, 3>() = C11;
  out.template topRightCorner<3, 3>() = C12;
  out.template bottomLeftCorner<3, 3>() = C12.transpose();
  out.template bottomRightCorner<3, 3>() = B22;
  return out;
}

}  // namespace neuralsim
