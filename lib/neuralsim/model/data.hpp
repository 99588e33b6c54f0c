// Data: the per-call workspace of the algorithms for one Model.
//
// Sized once at construction; the algorithms only overwrite it, so a
// simulation step performs no heap allocation (checked by a test).
#pragma once

#include <vector>

#include "neuralsim/model/model.hpp"

namespace neuralsim {

template <class S>
struct Data {
  using Vec6S = Vec6<S>;
  using Mat6S = Mat6<S>;

  // Kinematics (per body).
  std::vector<Transform<S>> X_up;     // parent -> body  (RBDA: ^iX_λ(i))
  std::vector<Transform<S>> X_world;  // world -> body; E = Rᵀ (body->world R), r = position
  std::vector<Vec6S> v, a, c;         // body velocity, acceleration, velocity-product term
                                      // (body coordinates; world coordinates after aba())

  // Inputs: external forces on bodies, body coordinates (see external_force.hpp).
  std::vector<Vec6S> f_ext;

  // RNEA / ABA / CRBA workspace. RNEA works in body coordinates; ABA in
  // world coordinates (aba.hpp), so after aba() v, a, c, f and IA are
  // world-frame, and U, u of multi-DoF joints body-frame.
  std::vector<Vec6S> f;               // RNEA body forces; ABA bias forces pA
  std::vector<Mat6S> IA;              // articulated inertias
  std::vector<Vec6S> S_world;         // ABA: motion subspace of a 1-DoF joint, world coordinates
  std::vector<Mat6S> U;               // IA·S, first nv columns used
  std::vector<Mat6S> Dinv;            // (SᵀIA S + armature)⁻¹, top-left nv×nv used
                                      // (floating base: see complete_articulated_factorization)
  std::vector<Vec6S> u;               // τ - SᵀpA, first nv entries used
  // False after aba() solved a floating base directly (its U, Dinv unformed)
  // until complete_articulated_factorization(); inverse_inertia.hpp checks it.
  bool factorization_complete = true;
  std::vector<Inertia<S>> Ic;         // composite inertias (CRBA)

  // Generalized quantities.
  VecX<S> tau;      // total generalized force fed to the dynamics
  VecX<S> qdd;      // ABA output
  MatX<S> M;        // CRBA output (upper and lower triangles filled)
  VecX<S> bias;     // C(q, q̇) q̇ + g(q) - J ᵀf_ext, from RNEA with q̈ = 0
  VecX<S> tau_passive;

  Data() = default;
  explicit Data(const Model<S>& model) { resize(model); }

  void resize(const Model<S>& model) {
    const size_t n = model.bodies.size();
    X_up.assign(n, Transform<S>());
    X_world.assign(n, Transform<S>());
    v.assign(n, Vec6S::Zero());
    a.assign(n, Vec6S::Zero());
    c.assign(n, Vec6S::Zero());
    f_ext.assign(n, Vec6S::Zero());
    f.assign(n, Vec6S::Zero());
    IA.assign(n, Mat6S::Zero());
    S_world.assign(n, Vec6S::Zero());
    U.assign(n, Mat6S::Zero());
    Dinv.assign(n, Mat6S::Zero());
    u.assign(n, Vec6S::Zero());
    Ic.assign(n, Inertia<S>());
    tau = VecX<S>::Zero(model.nv);
    qdd = VecX<S>::Zero(model.nv);
    M = MatX<S>::Zero(model.nv, model.nv);
    bias = VecX<S>::Zero(model.nv);
    tau_passive = VecX<S>::Zero(model.nv);
  }

  void clear_external_forces() {
    for (auto& fe : f_ext) fe.setZero();
  }
};

}  // namespace neuralsim
