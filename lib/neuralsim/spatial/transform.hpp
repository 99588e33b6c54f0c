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
  // Written per component (see motion.hpp): it runs once per body in every
  // kinematics pass.
  Transform operator*(const Transform& other) const {
    Transform out;
    compose(*this, other, out);
    return out;
  }
  // out = a * b (out may alias a or b). Computed into locals first: the
  // compiler must otherwise assume each store into `out` may change a or b
  // and reload them.
  static void compose(const Transform& a, const Transform& b, Transform& out) {
    const Mat3<S>& A = a.E;
    const Mat3<S>& B = b.E;
    Mat3<S> Eo;
    Vec3<S> ro;
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) Eo(k, c) = A(k, 0) * B(0, c) + A(k, 1) * B(1, c) + A(k, 2) * B(2, c);
    for (int k = 0; k < 3; ++k) ro[k] = b.r[k] + B(0, k) * a.r[0] + B(1, k) * a.r[1] + B(2, k) * a.r[2];
    out.E = Eo;
    out.r = ro;
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

// out += Xᵀ A X for a symmetric 6x6 A (an articulated inertia in child
// coordinates), i.e. the inertia expressed in the parent frame and added to
// the parent's (RBDA eq. 2.66 / table 2.5 for the rigid-body case, here for
// a general symmetric A such as an articulated inertia, RBDA table 7.1).
//
// Written blockwise with X = diag(E, E)·T, T = [1 0; -r× 1]:
//   B_kl = Eᵀ A_kl E                               (rotation of each block)
//   Tᵀ B T = [B11 + K + Kᵀ - Q r×,  B12 + Q;  (·)ᵀ,  B22]
// with Q = r× B22 and K = r× B21 (then B12 r× = -Kᵀ and r× B22 r× = Q r×).
// Symmetry is used twice: the diagonal blocks are rotated as P = A_kk E,
// then only the upper triangle of Eᵀ P is formed (45 instead of 54
// multiplications each), and only the upper triangle of Q r× is formed.
// About 190 multiplications in all, against 430 for a dense Xᵀ(A X) with
// the 3x3 structure of X and 2·216 for 6x6 products.
template <class S>
inline void add_inertia_to_parent(const Transform<S>& X, const Mat6<S>& A, Mat6<S>& out) {
  const Mat3<S>& E = X.E;
  const Vec3<S>& r = X.r;
  const Mat3<S> P11 = A.template topLeftCorner<3, 3>() * E;
  const Mat3<S> P12 = A.template topRightCorner<3, 3>() * E;
  const Mat3<S> P22 = A.template bottomRightCorner<3, 3>() * E;
  Mat3<S> B11, B12, B22;
  for (int c = 0; c < 3; ++c) {
    for (int k = 0; k <= c; ++k) {
      B11(k, c) = E.col(k).dot(P11.col(c));
      B22(k, c) = E.col(k).dot(P22.col(c));
    }
    for (int k = 0; k < 3; ++k) B12(k, c) = E.col(k).dot(P12.col(c));
  }
  B22(1, 0) = B22(0, 1);
  B22(2, 0) = B22(0, 2);
  B22(2, 1) = B22(1, 2);
  // Q = r× B22, K = r× B21 = r× B12ᵀ (column by column: r × column).
  Mat3<S> Q, K;
  for (int c = 0; c < 3; ++c) {
    Q.col(c) = r.cross(Vec3<S>(B22.col(c)));
    K.col(c) = r.cross(Vec3<S>(B12.row(c).transpose()));
  }
  const Mat3<S> C12 = B12 + Q;
  // Upper triangle of C11 = B11 + K + Kᵀ - Q r×, where row k of Q r× is
  // (Q.row(k) × r)ᵀ.
  for (int c = 0; c < 3; ++c) {
    for (int k = 0; k <= c; ++k) {
      const int c1 = (c + 1) % 3, c2 = (c + 2) % 3;  // (q × r)_c = q_c1 r_c2 - q_c2 r_c1
      const S qr = Q(k, c1) * r[c2] - Q(k, c2) * r[c1];
      const S v = B11(k, c) + K(k, c) + K(c, k) - qr;
      out(k, c) += v;
      if (k != c) out(c, k) += v;
    }
  }
  out.template topRightCorner<3, 3>() += C12;
  out.template bottomLeftCorner<3, 3>() += C12.transpose();
  out.template bottomRightCorner<3, 3>() += B22;
}

// Xᵀ A X for a symmetric A (see add_inertia_to_parent).
template <class S>
inline Mat6<S> transform_inertia_to_parent(const Transform<S>& X, const Mat6<S>& A) {
  Mat6<S> out = Mat6<S>::Zero();
  add_inertia_to_parent(X, A, out);
  return out;
}

}  // namespace neuralsim
