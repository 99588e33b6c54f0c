// The analytical drag law of the drag sites (blueprint.hpp, DragLaw) and the
// link quantities the drag sites and inputs read: the link axis, the world
// velocity of the centre of mass, the angle of attack and the speed.
// Requires forward_kinematics with velocities (a ForceHook has it).
#pragma once

#include <cmath>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/step/external_force.hpp"

namespace neuralsim {

// The axis drag and the angle of attack refer to (body coordinates): the
// link's length axis when it declares a length, else its x axis.
inline Eigen::Vector3d link_axis(const Model<double>& model, int body) {
  const LinkLength& l = model.bodies[body].length_spec;
  return l.enabled ? l.axis : Eigen::Vector3d::UnitX();
}

// World velocity of the link's centre of mass.
template <class S>
Vec3<S> link_com_velocity_world(const Model<S>& model, const Data<S>& data, int body) {
  return body_point_velocity_world(data, body, model.bodies[body].inertia.com());
}

// World position of the link's centre of mass.
template <class S>
Vec3<S> link_com_world(const Model<S>& model, const Data<S>& data, int body) {
  return body_point_world(data, body, model.bodies[body].inertia.com());
}

// |v|, and 0 with no derivative at v = 0 exactly (|v| is not differentiable there).
template <class S>
S speed_of(const Vec3<S>& v) {
  using std::sqrt;
  const S v2 = v.squaredNorm();
  if (!(to_double(v2) > 0.0)) return S(0.0);
  return sqrt(v2);
}

// Signed angle from a to v after projecting both on the world xy plane,
// atan2((a × v)_z, a_x v_x + a_y v_y); 0 with no derivative when either
// projection vanishes.
template <class S>
S planar_angle(const Vec3<S>& a, const Vec3<S>& v) {
  using std::atan2;
  const S cross = a.x() * v.y() - a.y() * v.x();
  const S dot = a.x() * v.x() + a.y() * v.y();
  if (!(to_double(cross) != 0.0 || to_double(dot) != 0.0)) return S(0.0);
  return atan2(cross, dot);
}

// The analytical drag force (world) on a link moving with COM velocity v:
//   F = -c·v - c_n·v_⊥ - c_q·|v|·v,  v_⊥ = v - (a·v) a,  a the world link axis.
// Terms whose coefficient is 0 are skipped (exactly, as passive_forces does).
template <class S>
Vec3<S> drag_force_world(const DragLaw& law, const Vec3<S>& axis_world, const Vec3<S>& v) {
  Vec3<S> f = Vec3<S>::Zero();
  if (law.linear != 0.0) f -= S(law.linear) * v;
  if (law.normal != 0.0) {
    const Vec3<S> v_perp = v - axis_world.dot(v) * axis_world;
    f -= S(law.normal) * v_perp;
  }
  if (law.quadratic != 0.0) f -= (S(law.quadratic) * speed_of(v)) * v;
  return f;
}

// The drag of `law` on `body` applied at its centre of mass (the analytical
// model a drag site augments; usable as a plain ForceHook body).
template <class S>
void apply_drag(const Model<S>& model, Data<S>& data, int body, const Eigen::Vector3d& axis_body, const DragLaw& law) {
  const Vec3<S> v = link_com_velocity_world(model, data, body);
  const Vec3<S> a = data.X_world[body].E.transpose() * axis_body.template cast<S>();
  const Vec3<S> f = drag_force_world(law, a, v);
  add_world_force_at_point<S>(data, body, link_com_world(model, data, body), f);
}

}  // namespace neuralsim
