// One contact between two shapes, with every quantity a contact model (or a
// neural augmentation of one) reads, under a clear name.
//
// Conventions: all vectors are in world coordinates. Shape/body `a` is the
// one the normal points into: a force along +normal pushes a away from b.
// Body b may be -1 (the world: ground plane, world-fixed shapes).
#pragma once

#include "neuralsim/spatial/types.hpp"

namespace neuralsim {

template <class S>
struct Contact {
  int pair = -1;     // index into ContactGeometry::pairs()
  int feature = 0;   // which of the pair's points (box corner, capsule end, ...)
  int body_a = -1, body_b = -1;

  Vec3<S> point = Vec3<S>::Zero();    // midway between the two surfaces
  Vec3<S> normal = Vec3<S>::UnitZ();  // unit, from b towards a
  S distance = S(0);                  // signed gap along the normal; < 0 = penetration depth
  Mat3<S> frame = Mat3<S>::Identity();  // columns [normal, tangent1, tangent2], right-handed
  Vec3<S> relative_velocity = Vec3<S>::Zero();  // velocity of a's material point minus b's
  S normal_velocity = S(0);                     // normal · relative_velocity; < 0 = approaching
  Vec3<S> tangential_velocity = Vec3<S>::Zero();  // relative_velocity without its normal part

  // Filled by the contact model: force on a (the opposite acts on b). The
  // impulse model stores impulse / h, so both read as forces.
  Vec3<S> force = Vec3<S>::Zero();
  S normal_force = S(0);
};

// An orthonormal frame [n, t1, t2] with t1 perpendicular to the world axis
// least aligned with n, so the tangents are continuous in n except where
// that choice of axis flips (never for a fixed ground normal).
template <class S>
Mat3<S> contact_frame(const Vec3<S>& n) {
  using std::abs;
  const double ax = abs(to_double(n.x())), ay = abs(to_double(n.y())), az = abs(to_double(n.z()));
  Vec3<S> e = Vec3<S>::Zero();
  if (ax <= ay && ax <= az)
    e.x() = S(1);
  else if (ay <= az)
    e.y() = S(1);
  else
    e.z() = S(1);
  const Vec3<S> t1 = n.cross(e).normalized();
  const Vec3<S> t2 = n.cross(t1);
  Mat3<S> F;
  F.col(0) = n;
  F.col(1) = t1;
  F.col(2) = t2;
  return F;
}

}  // namespace neuralsim
