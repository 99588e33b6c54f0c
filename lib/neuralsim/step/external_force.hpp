// Helpers that add external forces to data.f_ext (body coordinates), the one
// entry point through which contact, drag and neural augmentations act.
// Requires forward_kinematics for the world-frame variants.
#pragma once

#include "neuralsim/model/data.hpp"

namespace neuralsim {

// A force given in world coordinates acting at a world point.
template <class S>
void add_world_force_at_point(Data<S>& data, int body, const Vec3<S>& point_world,
                              const Vec3<S>& force_world) {
  const Transform<S>& X = data.X_world[body];
  const Vec3<S> f = X.E * force_world;
  const Vec3<S> p = X.E * (point_world - X.r);
  data.f_ext[body].template head<3>() += p.cross(f);
  data.f_ext[body].template tail<3>() += f;
}

// A wrench [torque; force] in world-aligned axes, acting at the body origin.
template <class S>
void add_world_wrench(Data<S>& data, int body, const Vec6<S>& wrench_world) {
  const Mat3<S>& E = data.X_world[body].E;
  data.f_ext[body].template head<3>() += E * wrench_world.template head<3>();
  data.f_ext[body].template tail<3>() += E * wrench_world.template tail<3>();
}

// A wrench [torque; force] in body coordinates, acting at the body origin.
template <class S>
void add_body_wrench(Data<S>& data, int body, const Vec6<S>& wrench_body) {
  data.f_ext[body] += wrench_body;
}

}  // namespace neuralsim
