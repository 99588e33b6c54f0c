// What the external nodes of grad/ (AbaNode, KinematicsNode) share: the
// values of a Model<Rev> as a Model<double>, and the adjoint of a raw
// quaternion from the adjoint of its body-frame rotation.
#pragma once

#include <cmath>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/grad/tape.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// The structure and current values of a Model<Rev> in double (Model::cast
// converts with T(x), which a Rev deliberately does not offer): every field,
// passive forces and body drag included, so that the copy is the model
// whatever algorithm later reads it.
inline Model<double> model_values(const Model<Rev>& m) {
  Model<double> d;
  d.name = m.name;
  for (const Body<Rev>& b : m.bodies) {
    Body<double> bd;
    bd.name = b.name;
    bd.inertia = b.inertia.values();
    bd.length = to_double(b.length);
    bd.length_spec = b.length_spec;
    bd.drag.enabled = b.drag.enabled;
    for (int k = 0; k < 6; ++k) {
      bd.drag.linear[k] = to_double(b.drag.linear[k]);
      bd.drag.quadratic[k] = to_double(b.drag.quadratic[k]);
    }
    d.bodies.push_back(bd);
  }
  auto vec = [](const Vec3<Rev>& v) { return Vec3<double>(to_double(v[0]), to_double(v[1]), to_double(v[2])); };
  for (const Joint<Rev>& j : m.joints) {
    Joint<double> jd;
    jd.name = j.name;
    jd.type = j.type;
    jd.axis = vec(j.axis);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) jd.origin.E(r, c) = to_double(j.origin.E(r, c));
    jd.origin.r = vec(j.origin.r);
    jd.parent = j.parent;
    jd.idx_q = j.idx_q;
    jd.idx_v = j.idx_v;
    jd.nq = j.nq;
    jd.nv = j.nv;
    const JointDynamics<Rev>& a = j.dynamics;
    JointDynamics<double>& b = jd.dynamics;
    b.damping = to_double(a.damping);
    b.coulomb_friction = to_double(a.coulomb_friction);
    b.friction_velocity = to_double(a.friction_velocity);
    b.friction_law = a.friction_law;
    b.friction_static = to_double(a.friction_static);
    b.stribeck_velocity = to_double(a.stribeck_velocity);
    b.friction_slope = to_double(a.friction_slope);
    b.friction_shift = to_double(a.friction_shift);
    b.spring_stiffness = to_double(a.spring_stiffness);
    b.spring_rest = to_double(a.spring_rest);
    b.armature = to_double(a.armature);
    b.gear_ratio = to_double(a.gear_ratio);
    b.torque_offset = to_double(a.torque_offset);
    b.rotor_inertia = to_double(a.rotor_inertia);
    jd.has_rotor = j.has_rotor;
    jd.coordinate_axis = j.coordinate_axis;
    jd.axis_negative = j.axis_negative;
    jd.lower = j.lower;
    jd.upper = j.upper;
    jd.effort = j.effort;
    jd.velocity = j.velocity;
    d.joints.push_back(jd);
  }
  for (const Frame<Rev>& f : m.frames) {
    Frame<double> fd;
    fd.name = f.name;
    fd.body = f.body;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) fd.placement.E(r, c) = to_double(f.placement.E(r, c));
    fd.placement.r = vec(f.placement.r);
    d.frames.push_back(fd);
  }
  d.geometries = m.geometries;
  d.gravity = vec(m.gravity);
  d.nq = m.nq;
  d.nv = m.nv;
  d.origin_follows_parent_length = m.origin_follows_parent_length;
  return d;
}

// Raw quaternion q = (x, y, z, w) at q[0..4), stored unnormalized, q = n·q̂
// with q̂ = (u, w). The engine normalizes it (joint_transform) and perturbs
// rotations on the right, R(q ⊕ δ) = R(q) exp([δ]×), so
//   δ = (2/n) Im(q̂* ⊗ dq)  ⇒  ∂L/∂u = (2/n)(w ḡ + u × ḡ),  ∂L/∂w = -(2/n) u·ḡ
// with ḡ = ∂L/∂δ (a change of n alone changes nothing). Writes g[0..4).
inline void quaternion_adjoint(const double* q, const Vec3<double>& g_delta, double* g) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const Vec3<double> u(q[0] / n, q[1] / n, q[2] / n);
  const double w = q[3] / n;
  const Vec3<double> gu = (2.0 / n) * (w * g_delta + u.cross(g_delta));
  for (int c = 0; c < 3; ++c) g[c] = gu[c];
  g[3] = -(2.0 / n) * u.dot(g_delta);
}

}  // namespace neuralsim
