// Force-level contact (Hunt–Crossley or smooth penalty normal force, smooth
// friction): each contact's force is computed independently from its depth
// and relative velocity and applied to both bodies as an external force, so
// the whole step stays a smooth function of state and parameters and runs on
// ceres::Jet. Used as a Stepper ForceHook (any integrator).
#pragma once

#include "neuralsim/contact/collision_detection.hpp"
#include "neuralsim/contact/hunt_crossley.hpp"
#include "neuralsim/contact/penalty.hpp"
#include "neuralsim/step/external_force.hpp"

namespace neuralsim {

// Fills force/normal_force of the detected contacts (they must carry
// relative velocities) and adds the forces to data.f_ext.
template <class S>
void apply_contact_forces(ContactModelType model, FrictionModel friction, const ContactParameters<S>& p,
                          Contact<S>* contacts, int n, Data<S>& data) {
  for (int k = 0; k < n; ++k) {
    Contact<S>& c = contacts[k];
    const S depth = -c.distance, depth_rate = -c.normal_velocity;
    const S f_n = model == ContactModelType::kPenalty ? penalty_normal_force(p, depth, depth_rate)
                                                      : hunt_crossley_normal_force(p, depth, depth_rate);
    c.normal_force = f_n;
    if (!(f_n > S(0))) {
      c.force.setZero();
      continue;
    }
    c.force = f_n * c.normal + friction_force(friction, p, f_n, c.tangential_velocity);
    if (c.body_a >= 0) add_world_force_at_point<S>(data, c.body_a, c.point, c.force);
    if (c.body_b >= 0) add_world_force_at_point<S>(data, c.body_b, c.point, Vec3<S>(-c.force));
  }
}

}  // namespace neuralsim
