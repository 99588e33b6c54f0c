// Passive joint forces: viscous damping, smooth friction, springs and a
// constant torque offset.
//
// Friction follows the joint's FrictionLaw (model/joint.hpp), with Fc the
// Coulomb level, v_s the smoothing velocity (friction_velocity), Fs the
// static level, v_st the Stribeck velocity, and φ2, φ3 the slope and shift
// of the sigmoid law (friction_slope, friction_shift):
//   tanh:     τ_f = -Fc·tanh(q̇/v_s)                         (the default)
//   atan:     τ_f = -Fc·(2/π)·atan(q̇/v_s)
//   stribeck: τ_f = -[Fc + (Fs - Fc)·exp(-(q̇/v_st)²)]·tanh(q̇/v_s)
//   sigmoid:  τ_f = -Fc·[σ(φ2(q̇+φ3)) - σ(φ2φ3)],  σ(x) = 1/(1+e^(-x))
// tanh and atan are differentiable regularizations of -Fc·sign(q̇) (v_s → 0
// recovers it; atan approaches ±Fc more slowly, as 1 - 2v_s/(π|q̇|)). The
// Stribeck curve (Armstrong-Hélouvry, Dupont & Canudas de Wit 1994; Olsson,
// Åström, Canudas de Wit, Gäfvert & Lischinsky 1998, "Friction models and
// friction compensation", eq. 7 with a Gaussian shape) rises to about Fs
// just after breakaway and decays to Fc for |q̇| ≫ v_st. The sigmoid law is
// the friction of the Franka Emika Panda's published dynamic model (Gaz,
// Cognetti, Oliva, Robuffo Giordano & De Luca 2019, "Dynamic identification
// of the Franka Emika Panda robot with retrieval of feasible parameters
// using penalty-based optimization", IEEE RA-L 4(4), with φ1 = Fc):
// there φ1·σ(φ2(q̇+φ3)) - φ1·σ(φ2φ3) is the torque the motor supplies against
// friction, so the passive torque is its negative; the offset term makes it
// vanish at q̇ = 0 (no holding torque), and φ3 ≠ 0 makes it asymmetric, the
// levels tending to -Fc·(1 - σ(φ2φ3)) and +Fc·σ(φ2φ3). Viscous damping
// -b·q̇ is added with every law. Every law but the shifted sigmoid is odd in
// q̇, and every law dissipates: q̇·τ_f ≤ 0 for Fc, Fs ≥ 0 and φ2 > 0.
//
// Terms are skipped only when their coefficient is exactly zero with no
// derivative (exactly_zero), so a coefficient estimated from 0 keeps ∂τ/∂Fc.
// The law is an enum, so switching on it never drops a derivative.
#pragma once

#include "neuralsim/model/data.hpp"

namespace neuralsim {

namespace passive_detail {
constexpr double kTwoOverPi = 0.63661977236758134308;  // 2/π

// σ(φ2(v+φ3)) - σ(φ2φ3), the sigmoid law's shape. With σ(x) = (1 + tanh(x/2))/2
// and tanh a - tanh b = tanh(a - b)·(1 - tanh a·tanh b), it is
//   ½·tanh(φ2v/2)·(1 - tanh(φ2(v+φ3)/2)·tanh(φ2φ3/2)):
// no exponential that could overflow for large |φ2v| (the logistic written
// with e^(-x) overflows at x < -709), no branch on a value, exactly 0 at
// v = 0 with the sign of v everywhere (the second factor lies in [0, 2]), and
// no cancellation between two nearly equal logistics at small |v|.
template <class S>
S sigmoid_friction_shape(const S& v, const S& slope, const S& shift) {
  using std::tanh;
  const S half_slope = S(0.5) * slope;
  return S(0.5) * tanh(half_slope * v) * (S(1) - tanh(half_slope * (v + shift)) * tanh(half_slope * shift));
}
}  // namespace passive_detail

// φ(q̇) = -∂τ_f/∂Fc, the velocity shape that multiplies the Coulomb level
// (τ_f is linear in Fc under every law). Augmentation sites that change Fc
// use it, so a changed Fc acts exactly as the joint's law would.
template <class S>
S coulomb_friction_shape(const JointDynamics<S>& d, const S& v) {
  using std::atan;
  using std::exp;
  using std::tanh;
  switch (d.friction_law) {
    case FrictionLaw::kTanh: return tanh(v / d.friction_velocity);
    case FrictionLaw::kAtan: return passive_detail::kTwoOverPi * atan(v / d.friction_velocity);
    case FrictionLaw::kStribeck: {
      const S s = v / d.stribeck_velocity;
      return (S(1) - exp(-(s * s))) * tanh(v / d.friction_velocity);
    }
    case FrictionLaw::kSigmoid: return passive_detail::sigmoid_friction_shape(v, d.friction_slope, d.friction_shift);
  }
  return S(0);
}

// The friction torque τ_f of the joint's law at velocity v (no damping).
template <class S>
S friction_torque(const JointDynamics<S>& d, const S& v) {
  using std::atan;
  using std::exp;
  using std::tanh;
  switch (d.friction_law) {
    case FrictionLaw::kTanh: return -(d.coulomb_friction * tanh(v / d.friction_velocity));
    case FrictionLaw::kAtan:
      return -(d.coulomb_friction * (passive_detail::kTwoOverPi * atan(v / d.friction_velocity)));
    case FrictionLaw::kStribeck: {
      const S s = v / d.stribeck_velocity;
      return -((d.coulomb_friction + (d.friction_static - d.coulomb_friction) * exp(-(s * s))) *
               tanh(v / d.friction_velocity));
    }
    case FrictionLaw::kSigmoid:
      return -(d.coulomb_friction * passive_detail::sigmoid_friction_shape(v, d.friction_slope, d.friction_shift));
  }
  return S(0);
}

// Writes the passive generalized force into data.tau_passive.
template <class S>
void passive_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd) {
  using std::tanh;
  for (const Joint<S>& j : model.joints) {
    const JointDynamics<S>& d = j.dynamics;
    // Whether the friction term can be nonzero; a per-joint structural
    // decision, made once for the joint's coordinates.
    const bool friction = d.friction_law == FrictionLaw::kStribeck
                              ? !(exactly_zero(d.coulomb_friction) && exactly_zero(d.friction_static))
                              : !exactly_zero(d.coulomb_friction);
    for (int k = 0; k < j.nv; ++k) {
      const S v = qd[j.idx_v + k];
      S t = -d.damping * v - d.torque_offset;
      if (friction) {
        // The default law written out as it always was: bit-identical results.
        if (d.friction_law == FrictionLaw::kTanh)
          t -= d.coulomb_friction * tanh(v / d.friction_velocity);
        else
          t += friction_torque(d, v);
      }
      data.tau_passive[j.idx_v + k] = t;
    }
    if (j.nq == 1 && !exactly_zero(d.spring_stiffness))
      data.tau_passive[j.idx_v] -= d.spring_stiffness * (q[j.idx_q] - d.spring_rest);
  }
}

}  // namespace neuralsim
