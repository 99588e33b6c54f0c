// Force-level contact (Hunt–Crossley or smooth penalty normal force, smooth
// friction): each contact's force is computed independently from its depth
// and relative velocity and applied to both bodies as an external force, so
// the whole step stays a smooth function of state and parameters and runs on
// ceres::Jet. Used as a Stepper ForceHook (any integrator).
#pragma once

#include "neuralsim/contact/collision_detection.hpp"
#include "neuralsim/contact/contact_force_modifier.hpp"
#include "neuralsim/contact/hunt_crossley.hpp"
#include "neuralsim/contact/penalty.hpp"
#include "neuralsim/step/external_force.hpp"

namespace neuralsim {

// Fills force/normal_force of the detected contacts (they must carry
// relative velocities) and adds the forces to data.f_ext. A non-null
// `modifier` may change each contact's normal force, friction coefficient
// and friction force (contact_force_modifier.hpp); null (the default) is
// the analytical model.
template <class S>
void apply_contact_forces(ContactModelType model, FrictionModel friction, const ContactParameters<S>& p,
                          Contact<S>* contacts, int n, Data<S>& data, ContactForceModifier<S>* modifier = nullptr) {
  for (int k = 0; k < n; ++k) {
    Contact<S>& c = contacts[k];
    const S depth = -c.distance, depth_rate = -c.normal_velocity;
    S f_n = model == ContactModelType::kPenalty ? penalty_normal_force(p, depth, depth_rate)
                                                : hunt_crossley_normal_force(p, depth, depth_rate);
    S mu = p.friction;
    if (modifier != nullptr && depth > S(0)) modifier->modify_normal(c, f_n, mu);
    c.normal_force = f_n;
    if (!(f_n > S(0))) {
      c.force.setZero();
      continue;
    }
    Vec3<S> f_t = friction_force(friction, p, mu, f_n, c.tangential_velocity);
    if (modifier != nullptr) modifier->modify_friction(c, f_n, f_t);
    c.force = f_n * c.normal + f_t;
    if (c.body_a >= 0) add_world_force_at_point<S>(data, c.body_a, c.point, c.force);
    if (c.body_b >= 0) add_world_force_at_point<S>(data, c.body_b, c.point, Vec3<S>(-c.force));
  }
}

}  // namespace neuralsim
