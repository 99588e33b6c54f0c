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

// Motion cross product  v ×  m  (RBDA eq. 2.31).
template <class S>
inline Vec6<S> cross_motion(const Vec6<S>& v, const Vec6<S>& m) {
  const Vec3<S> w = v.template head<3>(), vo = v.template tail<3>();
  const Vec3<S> mw = m.template head<3>(), mo = m.template tail<3>();
  return spatial<S>(w.cross(mw), w.cross(mo) + vo.cross(mw));
}

// Force cross product  v ×* f  (RBDA eq. 2.32).
template <class S>
inline Vec6<S> cross_force(const Vec6<S>& v, const Vec6<S>& f) {
  const Vec3<S> w = v.template head<3>(), vo = v.template tail<3>();
  const Vec3<S> n = f.template head<3>(), fo = f.template tail<3>();
  return spatial<S>(w.cross(n) + vo.cross(fo), w.cross(fo));
}

}  // namespace neuralsim
