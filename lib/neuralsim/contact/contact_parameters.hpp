// Named, identifiable parameters of the contact models.
//
// They live in the contact system, not in the Model: contact is a property of
// a pair of surfaces (and of the solver), not of a body. Estimators resolve a
// name once and then read or write the value in any scalar type, exactly as
// for model parameters (model/parameters.hpp); simid calls both.
//
// Names (stable; contact_parameter_names() lists them all):
//   contact.stiffness             k   normal stiffness (N/m^n; penalty: N/m^2)
//   contact.damping               d   normal damping (Hunt–Crossley: s/m; penalty: N·s/m^2)
//   contact.exponent              n   Hunt–Crossley exponent (3/2 = Hertz)
//   contact.friction              μ   Coulomb (kinetic) friction coefficient
//   contact.friction_velocity     ε   regularization speed of smooth Coulomb friction (m/s)
//   contact.viscous_friction      μ_v viscous friction per unit normal force (s/m)
//   contact.static_friction       μ_s Stribeck static friction coefficient
//   contact.stribeck_velocity     v_s Stribeck velocity (m/s)
//   contact.restitution           e   impulse model: coefficient of restitution
//   contact.restitution_threshold     impulse model: approach speed below which e = 0 (m/s)
//   contact.erp                       impulse model: Baumgarte error-reduction parameter
//   contact.cfm                       impulse model: constraint force mixing (regularization)
//   contact.limit_stiffness           joint-limit spring stiffness (N·m/rad or N/m)
//   contact.limit_damping             joint-limit damping (N·m·s/rad or N·s/m)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/spatial/types.hpp"

namespace neuralsim {

template <class S>
struct ContactParameters {
  S stiffness = S(1e5);
  S damping = S(1e4);  // d/k = 0.1 s/m: e ≈ 1 - (2/3)(d/k) v at impact speed v
  S exponent = S(1.5);
  S friction = S(0.5);
  // Explicit integration of the stiff static branch (slope μ f_n/ε) is
  // stable for ε > μ g h (h the time step): 0.01 m/s covers h <= 2 ms.
  S friction_velocity = S(0.01);
  S viscous_friction = S(0);
  S static_friction = S(0.5);
  S stribeck_velocity = S(0.01);
  S restitution = S(0);
  S restitution_threshold = S(0.05);
  S erp = S(0.2);
  S cfm = S(1e-9);
  S limit_stiffness = S(1e4);
  S limit_damping = S(10);

  template <class T>
  ContactParameters<T> cast() const {
    ContactParameters<T> r;
    r.stiffness = T(stiffness);
    r.damping = T(damping);
    r.exponent = T(exponent);
    r.friction = T(friction);
    r.friction_velocity = T(friction_velocity);
    r.viscous_friction = T(viscous_friction);
    r.static_friction = T(static_friction);
    r.stribeck_velocity = T(stribeck_velocity);
    r.restitution = T(restitution);
    r.restitution_threshold = T(restitution_threshold);
    r.erp = T(erp);
    r.cfm = T(cfm);
    r.limit_stiffness = T(limit_stiffness);
    r.limit_damping = T(limit_damping);
    return r;
  }
};

enum class ContactParameterId {
  kStiffness, kDamping, kExponent, kFriction, kFrictionVelocity, kViscousFriction, kStaticFriction,
  kStribeckVelocity, kRestitution, kRestitutionThreshold, kErp, kCfm, kLimitStiffness, kLimitDamping
};

// Every name, "contact.stiffness", ... in ContactParameterId order.
std::vector<std::string> contact_parameter_names();
// The parameter "contact.<key>" (or the bare "<key>", as written in the
// config's `contact.parameters:` map); nothing for an unknown name.
std::optional<ContactParameterId> find_contact_parameter(const std::string& name);
// The same for a name known to exist; InvalidArgument listing the names otherwise.
ContactParameterId resolve_contact_parameter(const std::string& name);

template <class S>
S& contact_parameter(ContactParameters<S>& p, ContactParameterId id) {
  using I = ContactParameterId;
  switch (id) {
    case I::kStiffness: return p.stiffness;
    case I::kDamping: return p.damping;
    case I::kExponent: return p.exponent;
    case I::kFriction: return p.friction;
    case I::kFrictionVelocity: return p.friction_velocity;
    case I::kViscousFriction: return p.viscous_friction;
    case I::kStaticFriction: return p.static_friction;
    case I::kStribeckVelocity: return p.stribeck_velocity;
    case I::kRestitution: return p.restitution;
    case I::kRestitutionThreshold: return p.restitution_threshold;
    case I::kErp: return p.erp;
    case I::kCfm: return p.cfm;
    case I::kLimitStiffness: return p.limit_stiffness;
    case I::kLimitDamping: return p.limit_damping;
  }
  return p.stiffness;
}

template <class S>
S get_contact_parameter(const ContactParameters<S>& p, ContactParameterId id) {
  return contact_parameter(const_cast<ContactParameters<S>&>(p), id);
}
template <class S>
void set_contact_parameter(ContactParameters<S>& p, ContactParameterId id, const S& value) {
  contact_parameter(p, id) = value;
}

}  // namespace neuralsim
