// Rigid-body spatial inertia (RBDA §2.13, eq. 2.63).
//
// Stored compactly as mass m, first moment h = m·c and the rotational
// inertia Ī about the frame origin, so that
//   I = [Ī  h×; -h×  m·1]      (RBDA eq. 2.63, with Ī = I_c + m c× c×ᵀ)
// Multiplying a motion vector by I costs ~30 flops instead of 36 for 6x6.
#pragma once

#include "neuralsim/spatial/transform.hpp"

namespace neuralsim {

template <class S>
struct Inertia {
  S mass = S(0);
  Vec3<S> h = Vec3<S>::Zero();         // first mass moment m·c
  Mat3<S> I_origin = Mat3<S>::Zero();  // rotational inertia about the origin

  Inertia() = default;

  // From mass, centre of mass c and rotational inertia about the COM (the
  // URDF <inertial> convention), by the parallel-axis theorem.
  static Inertia from_com(const S& m, const Vec3<S>& c, const Mat3<S>& I_com) {
    Inertia I;
    I.mass = m;
    I.h = m * c;
    const Mat3<S> cx = skew(c);
    I.I_origin = I_com - m * cx * cx;  // - m c× c× = m c× c×ᵀ
    return I;
  }

  Vec3<S> com() const { return mass > S(0) ? Vec3<S>(h / mass) : Vec3<S>::Zero(); }
  Mat3<S> inertia_about_com() const {
    const Mat3<S> cx = skew(com());
    return I_origin + mass * cx * cx;
  }

  // I·v (RBDA eq. 2.63).
  Vec6<S> operator*(const Vec6<S>& v) const {
    const Vec3<S> w = v.template head<3>(), vo = v.template tail<3>();
    return spatial<S>(I_origin * w + h.cross(vo), mass * vo - h.cross(w));
  }

  Mat6<S> matrix() const {
    Mat6<S> M;
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) {
        M(k, c) = I_origin(k, c);
        M(3 + k, 3 + c) = k == c ? mass : S(0);
      }
    // Top right h×, bottom left -h× = (h×)ᵀ.
    M(0, 3) = S(0), M(1, 3) = h[2], M(2, 3) = -h[1];
    M(0, 4) = -h[2], M(1, 4) = S(0), M(2, 4) = h[0];
    M(0, 5) = h[1], M(1, 5) = -h[0], M(2, 5) = S(0);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) M(3 + k, c) = M(c, 3 + k);
    return M;
  }

  Inertia operator+(const Inertia& o) const {
    Inertia r;
    r.mass = mass + o.mass;
    r.h = h + o.h;
    r.I_origin = I_origin + o.I_origin;
    return r;
  }

  // Expresses an inertia given in frame B in frame A, for X = X_AB (A→B):
  // I_A = Xᵀ I_B X (RBDA eq. 2.66, table 2.5 "rbi" transform):
  //   m_A = m,  h_A = Eᵀh + m r,  Ī_A = EᵀĪE - r× h'× - h_A× r×  (h' = Eᵀh).
  // With a× b× = b aᵀ - (a·b)1 the two skew products collapse to
  //   Ī_A = EᵀĪE - h' rᵀ - r h_Aᵀ + (r·h' + r·h_A) 1,
  // which is symmetric (r h_Aᵀ = r h'ᵀ + m r rᵀ); only the upper triangle is
  // formed, and EᵀĪE likewise (Ī symmetric): ~75 multiplications, not ~120.
  static Inertia to_parent(const Transform<S>& X, const Inertia& I_B) {
    Inertia r;
    r.mass = I_B.mass;
    const Mat3<S>& E = X.E;
    const Vec3<S> h_rot = E.transpose() * I_B.h;  // h in A orientation, about B origin
    r.h = h_rot + I_B.mass * X.r;
    const Mat3<S> P = I_B.I_origin * E;
    const S diag = X.r.dot(h_rot) + X.r.dot(r.h);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k <= c; ++k) {
        S v = E.col(k).dot(P.col(c)) - h_rot[k] * X.r[c] - X.r[k] * r.h[c];
        if (k == c) v += diag;
        r.I_origin(k, c) = v;
        r.I_origin(c, k) = v;
      }
    return r;
  }

  // (Xᵀ I_B X) as a 6x6 matrix, written into M: to_parent(X, I_B).matrix()
  // without the intermediate (ABA's per-body world inertia).
  static void to_parent_matrix(const Transform<S>& X, const Inertia& I_B, Mat6<S>& M) {
    const Mat3<S>& E = X.E;
    const Vec3<S> h_rot = E.transpose() * I_B.h;
    const Vec3<S> hA = h_rot + I_B.mass * X.r;
    const Mat3<S> P = I_B.I_origin * E;
    const S diag = X.r.dot(h_rot) + X.r.dot(hA);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k <= c; ++k) {
        S v = E.col(k).dot(P.col(c)) - h_rot[k] * X.r[c] - X.r[k] * hA[c];
        if (k == c) v += diag;
        M(k, c) = v;
        M(c, k) = v;
      }
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) M(3 + k, 3 + c) = k == c ? I_B.mass : S(0);
    M(0, 3) = S(0), M(1, 3) = hA[2], M(2, 3) = -hA[1];
    M(0, 4) = -hA[2], M(1, 4) = S(0), M(2, 4) = hA[0];
    M(0, 5) = hA[1], M(1, 5) = -hA[0], M(2, 5) = S(0);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) M(3 + k, c) = M(c, 3 + k);
  }

  // The values in double (derivatives dropped), e.g. for physical checks.
  Inertia<double> values() const {
    Inertia<double> r;
    r.mass = to_double(mass);
    for (int k = 0; k < 3; ++k) {
      r.h[k] = to_double(h[k]);
      for (int c = 0; c < 3; ++c) r.I_origin(k, c) = to_double(I_origin(k, c));
    }
    return r;
  }

  template <class T>
  Inertia<T> cast() const {
    Inertia<T> r;
    r.mass = T(mass);
    r.h = h.template cast<T>();
    r.I_origin = I_origin.template cast<T>();
    return r;
  }
};

}  // namespace neuralsim
