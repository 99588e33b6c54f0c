// An optional per-contact hook inside the force-level contact models
// (Hunt–Crossley, penalty): it may change a contact's normal force, its
// kinetic friction coefficient and its friction force between the analytical
// laws and the application of the force (neural augmentation of contact,
// augment/augmented_dynamics.hpp). Off by default: ContactSystem holds a
// null modifier and apply_contact_forces then runs exactly the analytical
// path (bit-identical to the code without the hook).
//
// Two virtual calls per contact in penetration when a modifier is set (no
// virtual call per scalar operation); a modifier must not allocate.
#pragma once

#include "neuralsim/contact/contact.hpp"

namespace neuralsim {

template <class S>
class ContactForceModifier {
 public:
  virtual ~ContactForceModifier() = default;

  // Called for every contact in penetration (depth = -distance > 0) after
  // the analytical normal law and before the friction law. On entry
  // `normal_force` is the analytical (clamped, >= 0) normal force and
  // `friction_coefficient` the kinetic coefficient μ = contact.friction; the
  // modifier may change either. A normal force that is not > 0 afterwards
  // makes the contact inactive (no force, as the analytical clamp does).
  virtual void modify_normal(const Contact<S>& contact, S& normal_force, S& friction_coefficient) = 0;

  // Called for every active contact (normal force > 0) after the friction
  // law with the friction force on body a (world coordinates); the modifier
  // may change it. The contact force is then normal_force·normal + friction.
  virtual void modify_friction(const Contact<S>& contact, const S& normal_force, Vec3<S>& friction_force) = 0;
};

}  // namespace neuralsim
