// Kinetic and potential energy (RBDA §9.2 / eq. 2.65):
//   T = ½ Σ vᵢᵀ Iᵢ vᵢ + ½ Σ armature·q̇² + ½ Σ Ir (aᵀω_parent + gr q̇)²,
//   V = -Σ mᵢ g·cᵢ + ½ Σ k (q - q_rest)²,
// the third term for motor rotors (Joint::has_rotor; rnea.hpp).
#pragma once

#include "neuralsim/dynamics/rnea.hpp"

namespace neuralsim {

// Requires forward_kinematics(model, data, q, qd).
template <class S>
S kinetic_energy(const Model<S>& model, const Data<S>& data, const VecX<S>& qd) {
  S T = S(0);
  for (int i = 0; i < model.num_bodies(); ++i) {
    T += S(0.5) * data.v[i].dot(model.bodies[i].inertia * data.v[i]);
    const Joint<S>& j = model.joints[i];
    for (int k = 0; k < j.nv; ++k)
      T += S(0.5) * j.dynamics.armature * qd[j.idx_v + k] * qd[j.idx_v + k];
    if (j.has_rotor) {
      const S spin = internal::rotor_spin_rate(j, data.v[i], qd[j.idx_v]);
      T += S(0.5) * j.dynamics.rotor_inertia * spin * spin;
    }
  }
  return T;
}

// Gravitational plus spring energy. Requires forward_kinematics(model, data, q).
template <class S>
S potential_energy(const Model<S>& model, const Data<S>& data, const VecX<S>& q) {
  S V = S(0);
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Inertia<S>& I = model.bodies[i].inertia;
    const Vec3<S> mc_world = I.mass * data.X_world[i].r + data.X_world[i].E.transpose() * I.h;
    V -= model.gravity.dot(mc_world);
    const Joint<S>& j = model.joints[i];
    if (j.nq == 1) {
      const S dq = q[j.idx_q] - j.dynamics.spring_rest;
      V += S(0.5) * j.dynamics.spring_stiffness * dq * dq;
    }
  }
  return V;
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_ENERGY_TEMPLATES(PREFIX, S) \
  PREFIX template S kinetic_energy<S>(const Model<S>&, const Data<S>&, const VecX<S>&); \
  PREFIX template S potential_energy<S>(const Model<S>&, const Data<S>&, const VecX<S>&);
NEURALSIM_ENERGY_TEMPLATES(extern, double)  // Jets instantiate on use: identification does not need energy

}  // namespace neuralsim
