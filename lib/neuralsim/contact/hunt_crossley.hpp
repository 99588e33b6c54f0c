// Hunt–Crossley nonlinear spring-damper normal force (K. H. Hunt and
// F. R. E. Crossley, "Coefficient of restitution interpreted as damping in
// vibroimpact", J. Appl. Mech. 42(2), 1975, eq. 13):
//   f_n = k δ^n + d δ^n δ̇,   δ = penetration depth, δ̇ = its rate,
// clamped at zero so that contact never pulls. The damping term scales with
// δ^n, so the force is continuous at touchdown (no impact spike) and its
// effective restitution depends on the impact speed as observed
// (e ≈ 1 - (2/3) d v for small d v, Hunt & Crossley eq. 15; Marhefka & Orin 1999).
#pragma once

#include "neuralsim/contact/contact_parameters.hpp"

namespace neuralsim {

template <class S>
S hunt_crossley_normal_force(const ContactParameters<S>& p, const S& depth, const S& depth_rate) {
  using std::pow;
  if (!(depth > S(0))) return S(0);
  const S f = pow(depth, p.exponent) * (p.stiffness + p.damping * depth_rate);
  return f > S(0) ? f : S(0);
}

}  // namespace neuralsim
