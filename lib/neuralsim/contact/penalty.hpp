// Smooth penalty normal force after Liang & Lin ("Differentiable physics
// simulation", ICLR DeepDiffEq workshop 2020): λ_n = k · max(0, -g)², a
// complementarity relaxation whose force and its first derivative are
// continuous at g = 0, so gradients exist through touchdown. A damping term
// d · max(0, -g) · ġ⁻ (ġ⁻ = -ġ, penetration rate) keeps that continuity while
// dissipating impact energy; the sum is clamped at zero (never pulls).
#pragma once

#include "neuralsim/contact/contact_parameters.hpp"

namespace neuralsim {

template <class S>
S penalty_normal_force(const ContactParameters<S>& p, const S& depth, const S& depth_rate) {
  if (!(depth > S(0))) return S(0);
  const S f = depth * (p.stiffness * depth + p.damping * depth_rate);
  return f > S(0) ? f : S(0);
}

}  // namespace neuralsim
