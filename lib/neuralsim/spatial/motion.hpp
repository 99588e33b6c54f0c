// Spatial motion and force vectors (Featherstone, *Rigid Body Dynamics
// Algorithms* (RBDA), ch. 2). Stored as 6-vectors [angular; linear], the
// Plücker order of RBDA eq. 2.5, so they mix freely with 6x6 matrices.
#pragma once

#include "neuralsim/spatial/types.hpp"

namespace neuralsim {

template <class S>
inline Vec3<S> ang(const Vec6<S>& m) { return m.template head<3>(); }
template <class S>
inline Vec3<S> lin(const Vec6<S>& m) { return m.template tail<3>(); }

template <class S>
inline Vec6<S> spatial(const Vec3<S>& angular, const Vec3<S>& linear) {
  Vec6<S> r;
  r << angular, linear;
  return r;
}

// The two cross products are written out per component: Eigen's 3-vector
// cross products on head<3>()/tail<3>() blocks compile to ~2x the
// instructions (partial SSE packets, shuffles, temporaries), and these run
// several times per body in every pass of RNEA and ABA.

// Motion cross product  v ×  m  (RBDA eq. 2.31):
//   (w × mw,  w × mo + vo × mw).
template <class S>
inline Vec6<S> cross_motion(const Vec6<S>& v, const Vec6<S>& m) {
  Vec6<S> r;
  r[0] = v[1] * m[2] - v[2] * m[1];
  r[1] = v[2] * m[0] - v[0] * m[2];
  r[2] = v[0] * m[1] - v[1] * m[0];
  r[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1];
  r[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2];
  r[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0];
  return r;
}

// Force cross product  v ×* f  (RBDA eq. 2.32):
//   (w × n + vo × fo,  w × fo).
template <class S>
inline Vec6<S> cross_force(const Vec6<S>& v, const Vec6<S>& f) {
  Vec6<S> r;
  r[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4];
  r[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5];
  r[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3];
  r[3] = v[1] * f[5] - v[2] * f[4];
  r[4] = v[2] * f[3] - v[0] * f[5];
  r[5] = v[0] * f[4] - v[1] * f[3];
  return r;
}

}  // namespace neuralsim
