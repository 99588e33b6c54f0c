// Narrow phase: signed distance, normal and contact point(s) between pairs of
// primitives, in world coordinates. Closed-form for every pair (Ericson,
// *Real-Time Collision Detection*, 2005, §5.1–5.2), templated on the scalar
// so that penetration depths carry derivatives (ceres::Jet).
//
// Every function writes Hit{point, normal, distance} for shape a against
// shape b (normal from b towards a; point midway between the surfaces) and
// returns the number of hits. Planes are half-spaces {x : n·x <= offset}.
#pragma once

#include "neuralsim/spatial/types.hpp"

namespace neuralsim {

template <class S>
struct Hit {
  Vec3<S> point;
  Vec3<S> normal;
  S distance;
};

// A shape placed in the world: centre c, rotation R (shape axes -> world).
// Capsules and cylinders have their axis along the shape's z.
template <class S>
struct ShapePose {
  Mat3<S> R = Mat3<S>::Identity();
  Vec3<S> c = Vec3<S>::Zero();
};

namespace internal {
template <class S>
S clamp_scalar(const S& x, double lo, double hi) {
  if (x < S(lo)) return S(lo);
  if (x > S(hi)) return S(hi);
  return x;
}
// Unit vector of d, or `fallback` when |d| is too small to define one.
template <class S>
Vec3<S> safe_direction(const Vec3<S>& d, const Vec3<S>& fallback) {
  using std::sqrt;
  const S n2 = d.squaredNorm();
  if (to_double(n2) < 1e-24) return fallback;
  return d / sqrt(n2);
}
}  // namespace internal

// Sphere (centre c, radius r) against the plane n·x = offset.
template <class S>
int sphere_plane(const Vec3<S>& c, double r, const Vec3<S>& n, const S& offset, Hit<S>* out) {
  const S d = n.dot(c) - offset - S(r);
  out[0] = {Vec3<S>(c - n * (S(r) + d / S(2))), n, d};
  return 1;
}

// Box (half extents h) against a plane: one hit per corner (8), deepest
// first is not needed; callers drop corners farther than their margin.
template <class S>
int box_plane(const ShapePose<S>& box, const Eigen::Vector3d& h, const Vec3<S>& n, const S& offset,
              Hit<S>* out) {
  int k = 0;
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2)
      for (int sz = -1; sz <= 1; sz += 2) {
        const Vec3<S> local(S(sx * h.x()), S(sy * h.y()), S(sz * h.z()));
        const Vec3<S> v = box.c + box.R * local;
        const S d = n.dot(v) - offset;
        out[k++] = {Vec3<S>(v - n * (d / S(2))), n, d};
      }
  return k;
}

// Capsule (radius r, half-length hl along its z) against a plane: the two
// end spheres, which is exact for a flat-lying or tilted capsule.
template <class S>
int capsule_plane(const ShapePose<S>& cap, double r, double hl, const Vec3<S>& n, const S& offset,
                  Hit<S>* out) {
  const Vec3<S> axis = cap.R.col(2);
  sphere_plane<S>(Vec3<S>(cap.c + S(hl) * axis), r, n, offset, out);
  sphere_plane<S>(Vec3<S>(cap.c - S(hl) * axis), r, n, offset, out + 1);
  return 2;
}

// Cylinder (radius r, half-length hl along its z) against a plane: per end
// cap, the deepest point of its rim, e - r·u with u the in-cap direction of
// the plane normal (exact for a tilted or rolling cylinder); when the cap is
// parallel to the plane that direction vanishes and three rim points 120°
// apart stand in for the flat face. Up to 6 hits.
template <class S>
int cylinder_plane(const ShapePose<S>& cyl, double r, double hl, const Vec3<S>& n, const S& offset, Hit<S>* out) {
  using std::sqrt;
  const Vec3<S> axis = cyl.R.col(2);
  const Vec3<S> in_cap = n - n.dot(axis) * axis;
  const S len2 = in_cap.squaredNorm();
  int k = 0;
  for (int end = -1; end <= 1; end += 2) {
    const Vec3<S> e = cyl.c + S(end * hl) * axis;
    if (to_double(len2) > 1e-12) {
      k += sphere_plane<S>(Vec3<S>(e - S(r) * in_cap / sqrt(len2)), 0.0, n, offset, out + k);
    } else {
      for (int i = 0; i < 3; ++i) {
        const double a = 2 * M_PI * i / 3;
        const Vec3<S> rim = e + S(r * std::cos(a)) * Vec3<S>(cyl.R.col(0)) + S(r * std::sin(a)) * Vec3<S>(cyl.R.col(1));
        k += sphere_plane<S>(rim, 0.0, n, offset, out + k);
      }
    }
  }
  return k;
}

// Sphere a against sphere b.
template <class S>
int sphere_sphere(const Vec3<S>& ca, double ra, const Vec3<S>& cb, double rb, Hit<S>* out) {
  using std::sqrt;
  const Vec3<S> d = ca - cb;
  const Vec3<S> n = internal::safe_direction<S>(d, Vec3<S>::UnitZ());
  const S dist = n.dot(d) - S(ra + rb);
  // Midpoint of the two surface points cb + rb n and ca - ra n.
  out[0] = {Vec3<S>((cb + S(rb) * n + ca - S(ra) * n) / S(2)), n, dist};
  return 1;
}

// Closest point of a box (pose, half extents h) to a world point p, and
// whether p is inside. Inside, `outward` is the normal of the nearest face.
template <class S>
Vec3<S> closest_point_on_box(const ShapePose<S>& box, const Eigen::Vector3d& h, const Vec3<S>& p,
                             bool& inside, Vec3<S>& outward_local, S& depth) {
  const Vec3<S> local = box.R.transpose() * (p - box.c);
  Vec3<S> q;
  inside = true;
  for (int k = 0; k < 3; ++k) {
    q[k] = internal::clamp_scalar<S>(local[k], -h[k], h[k]);
    if (to_double(local[k]) < -h[k] || to_double(local[k]) > h[k]) inside = false;
  }
  if (inside) {
    // Nearest face: smallest h_k - |p_k| (Ericson §5.1.3 for the depth).
    int best = 0;
    S best_gap = S(1e30);
    for (int k = 0; k < 3; ++k) {
      using std::abs;
      const S gap = S(h[k]) - abs(local[k]);
      if (gap < best_gap) {
        best_gap = gap;
        best = k;
      }
    }
    outward_local = Vec3<S>::Zero();
    outward_local[best] = local[best] >= S(0) ? S(1) : S(-1);
    depth = best_gap;
    q[best] = outward_local[best] * S(h[best]);
  }
  return box.c + box.R * q;
}

// Sphere a against box b.
template <class S>
int sphere_box(const Vec3<S>& c, double r, const ShapePose<S>& box, const Eigen::Vector3d& h, Hit<S>* out) {
  bool inside;
  Vec3<S> outward;
  S depth = S(0);
  const Vec3<S> q = closest_point_on_box<S>(box, h, c, inside, outward, depth);
  Vec3<S> n;
  S dist;
  if (inside) {
    n = box.R * outward;
    dist = -depth - S(r);
  } else {
    const Vec3<S> d = c - q;
    n = internal::safe_direction<S>(d, Vec3<S>::UnitZ());
    dist = n.dot(d) - S(r);
  }
  out[0] = {Vec3<S>((q + c - S(r) * n) / S(2)), n, dist};
  return 1;
}

// Closest point to p on the segment c ± hl·axis.
template <class S>
Vec3<S> closest_point_on_segment(const Vec3<S>& c, const Vec3<S>& axis, double hl, const Vec3<S>& p) {
  const S t = internal::clamp_scalar<S>(axis.dot(p - c), -hl, hl);
  return c + t * axis;
}

// Sphere a against capsule b: sphere against the closest point of b's axis.
template <class S>
int sphere_capsule(const Vec3<S>& c, double r, const ShapePose<S>& cap, double rc, double hl, Hit<S>* out) {
  const Vec3<S> s = closest_point_on_segment<S>(cap.c, Vec3<S>(cap.R.col(2)), hl, c);
  return sphere_sphere<S>(c, r, s, rc, out);
}

// Capsule a (radius r, half-length hl) against box b. The closest pair of
// points of a segment and a box is found by alternating projections, which
// converge for two convex sets (von Neumann / Cheney–Goldstein 1959); a few
// sweeps are exact when the closest box feature is a face, as for a pusher
// tip against a box side. A segment point inside the box falls back to the
// sphere–box rule for that point.
template <class S>
int capsule_box(const ShapePose<S>& cap, double r, double hl, const ShapePose<S>& box,
                const Eigen::Vector3d& h, Hit<S>* out) {
  const Vec3<S> axis = cap.R.col(2);
  Vec3<S> x = cap.c;
  bool inside = false;
  Vec3<S> outward;
  S depth = S(0);
  for (int it = 0; it < 8; ++it) {
    const Vec3<S> y = closest_point_on_box<S>(box, h, x, inside, outward, depth);
    if (inside) break;
    x = closest_point_on_segment<S>(cap.c, axis, hl, y);
  }
  return sphere_box<S>(x, r, box, h, out);
}

}  // namespace neuralsim
