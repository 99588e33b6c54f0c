// Smooth friction laws for force-level contact: the tangential force on body
// a given the normal force f_n >= 0 and the tangential slip velocity v_t.
//
// Regularized Coulomb (as in NeuralSim / TDS and Brown & Kautz-style smooth
// friction): f_t = -μ f_n · v_t / sqrt(|v_t|² + ε²), a smooth stand-in for
// -μ f_n · v_t/|v_t| whose static phase is a stiff viscous law of slope
// μ f_n / ε: a body loaded below the friction limit F creeps at
// v = ε F / sqrt((μ f_n)² - F²) instead of sticking exactly.
// Viscous adds -μ_v f_n v_t (load-proportional, so it vanishes with contact).
// Stribeck replaces μ by μ(v) = μ + (μ_s - μ) exp(-(|v_t|/v_s)²)
// (Armstrong-Hélouvry, Dupont & Canudas de Wit, Automatica 1994).
#pragma once

#include "neuralsim/contact/contact_parameters.hpp"

namespace neuralsim {

enum class FrictionModel { kCoulomb, kViscous, kStribeck };

// With the kinetic coefficient μ given explicitly (`mu_kinetic`, in place of
// p.friction; a contact force modifier may make it state-dependent).
template <class S>
Vec3<S> friction_force(FrictionModel model, const ContactParameters<S>& p, const S& mu_kinetic, const S& f_n,
                       const Vec3<S>& v_t) {
  using std::exp;
  using std::sqrt;
  const S v2 = v_t.squaredNorm();
  const S speed = sqrt(v2 + p.friction_velocity * p.friction_velocity);
  S mu = mu_kinetic;
  if (model == FrictionModel::kStribeck)
    mu = mu_kinetic + (p.static_friction - mu_kinetic) * exp(-v2 / (p.stribeck_velocity * p.stribeck_velocity));
  S coefficient = mu * f_n / speed;
  if (model != FrictionModel::kCoulomb) coefficient += p.viscous_friction * f_n;
  return -coefficient * v_t;
}

template <class S>
Vec3<S> friction_force(FrictionModel model, const ContactParameters<S>& p, const S& f_n, const Vec3<S>& v_t) {
  return friction_force(model, p, p.friction, f_n, v_t);
}

}  // namespace neuralsim
