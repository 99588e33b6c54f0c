// Data: the per-call workspace of the algorithms for one Model.
//
// Sized once at construction; the algorithms only overwrite it, so a
// simulation step performs no heap allocation (checked by a test).
#pragma once

#include <type_traits>
#include <vector>

#include "neuralsim/core/scalar.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

template <class S>
struct Data {
  using Vec6S = Vec6<S>;
  using Mat6S = Mat6<S>;

  // Kinematics (per body), from forward_kinematics, rnea, crba and aba.
  std::vector<Transform<S>> X_up;     // parent -> body  (RBDA: ^iX_λ(i))
  std::vector<Transform<S>> X_world;  // world -> body; E = Rᵀ (body->world R), r = position

  // Body coordinates, from forward_kinematics (v) and rnea (v, a, f).
  std::vector<Vec6S> v, a;            // body velocity and acceleration
  std::vector<Vec6S> f;               // RNEA: net body forces, then joint forces

  // Inputs: external forces on bodies, body coordinates (see external_force.hpp).
  std::vector<Vec6S> f_ext;

  // World coordinates, from aba() only (Pinocchio's o-prefixed fields; ABA
  // works in world coordinates, aba.hpp). The articulated-body
  // factorization U, D⁻¹, u: world coordinates for 1-DoF joints, body
  // coordinates for spherical and free joints (fixed by the joint type).
  std::vector<Vec6S> ov, oa, oc;      // velocity, acceleration, velocity-product term
  std::vector<Vec6S> of;              // articulated bias forces pᴬ
  std::vector<Mat6S> oYaba;           // articulated-body inertias Iᴬ
  std::vector<Vec6S> oS;              // motion subspace of a 1-DoF joint
  std::vector<Mat6S> U;               // Iᴬ S (+ a rotor's I_r s_r), first nv columns used
  std::vector<Mat6S> Dinv;            // (SᵀIᴬS + armature + gr²Ir)⁻¹, top-left nv×nv used
                                      // (floating base: see complete_articulated_factorization)
  std::vector<Vec6S> u;               // τ - SᵀpA, first nv entries used
  // False after aba() solved a floating base directly (its U, Dinv unformed)
  // until complete_articulated_factorization(); inverse_inertia.hpp checks it.
  bool factorization_complete = true;

  std::vector<Inertia<S>> Ic;         // CRBA: composite inertias (body coordinates)

  // rnea_derivatives() (also run by aba_derivatives()), world coordinates,
  // sized for Data<double> only (the constructor),
  // named as in Pinocchio; see rnea_derivatives.hpp for the formulas.
  // Per joint column s (6 x nv, the columns of joint i at idx_v .. idx_v+nv):
  Eigen::Matrix<S, 6, Eigen::Dynamic> oJ;    // s: the joint's motion subspace (world Jacobian columns)
  Eigen::Matrix<S, 6, Eigen::Dynamic> dVdq;  // v_λ × s
  Eigen::Matrix<S, 6, Eigen::Dynamic> dAdq;  // a_λ × s + v_λ × (v_λ × s)
  Eigen::Matrix<S, 6, Eigen::Dynamic> dAdv;  // (v_i + v_λ) × s
  // Per body:
  std::vector<Vec6S> ov_rnea, oa_rnea;  // velocity; acceleration with a₀ = -g
  std::vector<Vec6S> of_rnea;           // net force, then the force across the joint (subtree sum)
  std::vector<Mat6S> oYcrb;             // composite rigid-body inertia of the subtree
  std::vector<Mat6S> doYcrb;            // subtree sum of v ×* I - I v× + (·) ×* (I v)
  MatX<S> dtau_dq, dtau_dv;             // ∂τ/∂q (tangent coordinates), ∂τ/∂q̇; ∂τ/∂q̈ = M in `M`
  // aba_derivatives(): ∂q̈/∂q (tangent), ∂q̈/∂q̇ and M⁻¹ = ∂q̈/∂τ (both triangles).
  MatX<S> dqdd_dq, dqdd_dv, Minv;
  // inverse_inertia_matrix() workspace: per body, the force sums (6 x nv) of
  // the backward sweep, then the accelerations of the forward sweep.
  std::vector<Eigen::Matrix<S, 6, Eigen::Dynamic>> minv_F;
  std::vector<int> minv_end;  // one past the last velocity index of the body's subtree

  // Generalized quantities.
  VecX<S> tau;      // total generalized force fed to the dynamics
  VecX<S> qdd;      // ABA output
  MatX<S> M;        // joint-space inertia matrix at the last q, both triangles: written by crba and by rnea_derivatives (= ∂τ/∂q̈)
  VecX<S> bias;     // C(q, q̇) q̇ + g(q) - J ᵀf_ext, from RNEA with q̈ = 0
  VecX<S> tau_passive;

  Data() = default;
  explicit Data(const Model<S>& model) { resize(model); }

  void resize(const Model<S>& model);

  void clear_external_forces() {
    for (auto& fe : f_ext) fe.setZero();
  }
};

template <class S>
void Data<S>::resize(const Model<S>& model) {
  const size_t n = model.bodies.size();
  X_up.assign(n, Transform<S>());
  X_world.assign(n, Transform<S>());
  for (auto* vec : {&v, &a, &f, &f_ext, &ov, &oa, &oc, &of, &oS, &u}) vec->assign(n, Vec6S::Zero());
  for (auto* mat : {&oYaba, &U, &Dinv}) mat->assign(n, Mat6S::Zero());
  Ic.assign(n, Inertia<S>());
  tau = VecX<S>::Zero(model.nv);
  qdd = VecX<S>::Zero(model.nv);
  M = MatX<S>::Zero(model.nv, model.nv);
  // The analytical derivatives are instantiated for double only: a Data of
  // another scalar (built per residual evaluation by some estimators) does
  // not carry their workspace, and the algorithms refuse it at entry.
  if constexpr (std::is_same_v<S, double>) {
    for (auto* cols : {&oJ, &dVdq, &dAdq, &dAdv}) cols->setZero(6, model.nv);
    for (auto* vec : {&ov_rnea, &oa_rnea, &of_rnea}) vec->assign(n, Vec6S::Zero());
    for (auto* mat : {&oYcrb, &doYcrb}) mat->assign(n, Mat6S::Zero());
    for (auto* mat : {&dtau_dq, &dtau_dv, &dqdd_dq, &dqdd_dv, &Minv}) mat->setZero(model.nv, model.nv);
    minv_F.assign(n, Eigen::Matrix<S, 6, Eigen::Dynamic>::Zero(6, model.nv));
    minv_end.assign(n, 0);
  }
  bias = VecX<S>::Zero(model.nv);
  tau_passive = VecX<S>::Zero(model.nv);
}

// Explicit instantiations (model/instantiate_*.cpp).
#define NEURALSIM_DATA_TEMPLATES(PREFIX, S) PREFIX template struct Data<S>;
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_DATA_TEMPLATES, extern)

}  // namespace neuralsim
