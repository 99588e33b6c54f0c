// Analytical derivatives of recursive Newton–Euler inverse dynamics:
// ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M, as full nv × nv matrices, in one forward and
// one backward sweep over the bodies (Carpentier & Mansard, "Analytical
// derivatives of rigid body dynamics algorithms", RSS 2018, §IV; world-frame
// formulation as Pinocchio's rnea-derivatives).
//
// WHAT IS DIFFERENTIATED. τ = RNEA(q, q̇, q̈, f_ext) exactly as rnea.hpp
// computes it: M q̈ + C q̇ + g - Σ Jᵀ f_ext with joint armature (armature q̈
// on the diagonal). External forces are body-frame wrenches (data.f_ext, as
// rnea() reads them), so they turn with their body when q moves. Passive
// joint forces (damping, friction, springs: step/passive_forces.hpp) are not
// part of RNEA and not here. Motor rotors (Joint::has_rotor) are refused
// (InvalidArgument): their terms are not differentiated yet.
//
// TANGENT COORDINATES. Columns of ∂τ/∂q are derivatives w.r.t. the tangent
// increment δ of integrate_configuration (model/configuration.hpp), as in
// rnea_vjp.hpp and step/transition_jacobians.hpp: revolute and prismatic
// joints their angle or offset, a spherical joint R ← R exp(δ_ω), a free
// joint R ← R exp(δ_ω), p ← p + R δ_lin (3 + 3 columns, not 7).
//
// DERIVATION (world coordinates, o-prefixed in Data). Every joint's motion
// subspace S_i, every body's velocity v_i, acceleration a_i (gravity as the
// base acceleration a₀ = -g), inertia I_i and force f_i = I_i a_i + v_i ×*
// I_i v_i - f_ext,i are expressed in the world frame, so the subtree sums
// F_i = Σ_{k ⪰ i} f_k, Ic_i = Σ I_k need no transforms, and τ_i = S_iᵀ F_i.
// A tangent step δ of joint j moves its whole subtree rigidly by the world
// twist ξ = S_j δ: a motion m of the subtree changes by ξ × m, a force f by
// ξ ×* f, an inertia by ξ ×* I - I ξ× (also S_j itself: multi-DoF joints).
// Only what the subtree inherits from the parent λ = λ(j) does not move:
// for k ⪰ j,
//   δv_k = ξ × v_k + (v_λ × S_j) δ,
//   δa_k = ξ × a_k + (a_λ × S_j + v_λ × (v_λ × S_j)) δ + ((v_λ × S_j) δ) × v_k.
// Write dVdq_j = v_λ × S_j, dAdq_j = a_λ × S_j + v_λ × dVdq_j, and
//   dY_k w = v_k ×* (I_k w) - I_k (v_k × w) + w ×* (I_k v_k)
// for the derivative of f_k along a velocity change w (at fixed a_k, plus
// the I_k (w × v_k) that the acceleration carries). Then the non-rigid part
// of δF_i for i ⪰ j is (Ic_i dAdq_j + dYc_i dVdq_j) δ, with dYc_i = Σ_{k⪰i}
// dY_k. The rigid part cancels in τ_i = S_iᵀ F_i when S_i moves too (i ⪰ j,
// ⟨ξ × s, F⟩ + ⟨s, ξ ×* F⟩ = 0) and remains for the ancestors i ≺ j:
//   ∂τ_i/∂q_j = S_iᵀ (Ic_i dAdq_j + dYc_i dVdq_j)               i ⪰ j
//   ∂τ_i/∂q_j = S_iᵀ (Ic_j dAdq_j + dYc_j dVdq_j + S_j ×* F_j)   i ≺ j
// For q̇_j: δv_k = S_j δ and δa_k = (dAdv_j + S_j × v_k) δ for k ⪰ j, with
// dAdv_j = (v_j + v_λ) × S_j, so, with the composite of j or of i as above,
//   ∂τ_i/∂q̇_j = S_iᵀ (Ic dAdv_j + dYc S_j),
// and ∂τ_i/∂q̈_j = S_iᵀ Ic S_j = M_ij (plus armature on the diagonal). Rows of
// a joint's ancestors are filled when the joint's composites are complete
// (backward sweep, column j); the row of joint i against its ancestors' columns
// (i ≻ j) uses (Ic_i S_i)ᵀ and (dYc_iᵀ S_i)ᵀ with the ancestors' dAdq, dVdq,
// dAdv, S from the forward sweep. Entries of joints on different branches
// are zero. Cost: O(n d) 6-vector products (d the depth) and one 6 × 6
// dY per body; no allocation.
//
// DATA. rnea_derivatives() writes data.X_up, data.X_world (forward
// kinematics), data.tau (= rnea(q, q̇, q̈)), data.M (∂τ/∂q̈, both triangles,
// armature included), data.dtau_dq, data.dtau_dv, and its workspace data.oJ,
// dVdq, dAdq, dAdv (6 × nv), ov_rnea, oa_rnea, of_rnea, oYcrb, doYcrb (per
// body; data.hpp). ABA's fields (ov, oa, of, oYaba, U, Dinv, ...) are not
// touched. Tests: tests/dynamics/rnea_derivatives_test.cpp (central
// differences on the manifold, rnea_vjp, crba).
#pragma once

#include "neuralsim/dynamics/aba.hpp"

namespace neuralsim {

namespace internal {

// Motor rotors are not differentiated here: refuse them at entry.
template <class S>
void refuse_rotors(const Model<S>& model, const char* function) {
  for (const Joint<S>& j : model.joints)
    if (j.has_rotor)
      throw InvalidArgument(std::string(function) + ": motor rotors are not supported (joint '" + j.name + "')");
}

// Joint j's world motion subspace into its columns of oJ: a 1-DoF joint as
// aba() forms it; a spherical (S = [1; 0]) or free (S = 1) joint as the
// body-frame unit twists mapped to world coordinates.
template <class S>
inline void world_motion_subspace(const Joint<S>& j, const Transform<S>& Xw, Eigen::Matrix<S, 6, Eigen::Dynamic>& oJ) {
  if (j.nv == 1) {
    world_motion_subspace_1dof(j, Xw, oJ.col(j.idx_v).data());
    return;
  }
  for (int k = 0; k < j.nv; ++k) {
    Vec6<S> e = Vec6<S>::Zero();
    e[k] = S(1);
    oJ.col(j.idx_v + k) = Xw.apply_motion_inverse(e);
  }
}

// dY = C + Cᵀ + H for a world inertia I, velocity v and momentum h = I v:
// C = (v ×*) I gives v ×* (I w); -I (v ×) = Cᵀ since (v ×)ᵀ = -(v ×*) and I
// is symmetric; H w = w ×* h = -[[h_ang]× w_ang + [h_lin]× w_lin; [h_lin]× w_ang].
template <class S>
inline void inertia_velocity_variation(const Mat6<S>& I, const Vec6<S>& v, const Vec6<S>& h, Mat6<S>& out) {
  for (int k = 0; k < 6; ++k) out.col(k) = cross_force(v, Vec6<S>(I.col(k)));  // C
  for (int c = 0; c < 6; ++c) {  // C + Cᵀ in place
    out(c, c) += out(c, c);
    for (int r = 0; r < c; ++r) out(r, c) = out(c, r) = out(r, c) + out(c, r);
  }
  // -[x]× = [0 x2 -x1; -x2 0 x0; x1 -x0 0], into the blocks (0,0) with h_ang,
  // (0,1) and (1,0) with h_lin.
  auto add_neg_skew = [&out](int r0, int c0, const S& x0, const S& x1, const S& x2) {
    out(r0 + 0, c0 + 1) += x2;
    out(r0 + 0, c0 + 2) -= x1;
    out(r0 + 1, c0 + 0) -= x2;
    out(r0 + 1, c0 + 2) += x0;
    out(r0 + 2, c0 + 0) += x1;
    out(r0 + 2, c0 + 1) -= x0;
  };
  add_neg_skew(0, 0, h[0], h[1], h[2]);
  add_neg_skew(0, 3, h[3], h[4], h[5]);
  add_neg_skew(3, 0, h[3], h[4], h[5]);
}

// The two sweeps, given data.X_world at the configuration. When tau is not
// null, writes τ = RNEA(q, q̇, q̈) into it. Raw pointers throughout (as in
// aba.hpp): a store through a double* would otherwise make the compiler
// reload every std::vector's and Eigen matrix's data pointer.
template <class S>
void rnea_derivatives_sweeps(const Model<S>& model, Data<S>& data, const VecX<S>& qd, const VecX<S>& qdd,
                             VecX<S>* tau) {
  using CVec6 = Eigen::Map<const Vec6<S>>;
  using MVec6 = Eigen::Map<Vec6<S>>;
  const int n = model.num_bodies();
  const int nv = model.nv;
  const Joint<S>* const joints = model.joints.data();
  S* const oJ = data.oJ.data();  // column c at oJ + 6c
  S* const dVdq = data.dVdq.data();
  S* const dAdq = data.dAdq.data();
  S* const dAdv = data.dAdv.data();
  Vec6<S>* const ov = data.ov_rnea.data();
  Vec6<S>* const oa = data.oa_rnea.data();
  Vec6<S>* const of = data.of_rnea.data();
  Mat6<S>* const Yc = data.oYcrb.data();
  Mat6<S>* const dYc = data.doYcrb.data();
  const Transform<S>* const Xworld = data.X_world.data();
  const Vec6<S>* const f_ext = data.f_ext.data();
  const S* const qd_ = qd.data();
  const S* const qdd_ = qdd.data();
  const Vec6<S> a0 = spatial<S>(Vec3<S>::Zero(), Vec3<S>(-model.gravity));

  // Forward sweep: S, v, a, I, f, dY per body; dVdq, dAdq, dAdv per column.
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = joints[i];
    const Transform<S>& Xw = Xworld[i];
    const bool root = j.parent < 0;
    const Vec6<S> vp = root ? Vec6<S>::Zero() : ov[j.parent];
    const Vec6<S> ap = root ? a0 : oa[j.parent];
    Vec6<S> vJ = Vec6<S>::Zero(), aJ = Vec6<S>::Zero();
    if (j.nv > 0) {
      world_motion_subspace(j, Xw, data.oJ);
      for (int k = 0; k < j.nv; ++k) {
        const int c = j.idx_v + k;
        const CVec6 s(oJ + 6 * c);
        vJ += s * qd_[c];
        aJ += s * qdd_[c];
      }
    }
    const Vec6<S> v = vp + vJ;
    const Vec6<S> a = ap + aJ + cross_motion(v, vJ);
    ov[i] = v;
    oa[i] = a;
    Mat6<S>& I = Yc[i];
    Inertia<S>::to_parent_matrix(Xw, model.bodies[i].inertia, I);
    const Vec6<S> h = I * v;
    Vec6<S> f = I * a + cross_force(v, h);
    if (!all_zero(f_ext[i])) f -= Xw.apply_force_inverse(f_ext[i]);
    of[i] = f;
    inertia_velocity_variation(I, v, h, dYc[i]);
    const Vec6<S> vsum = v + vp;
    for (int k = 0; k < j.nv; ++k) {
      const int c = j.idx_v + k;
      const Vec6<S> s = CVec6(oJ + 6 * c);
      const Vec6<S> w = cross_motion(vp, s);
      MVec6(dVdq + 6 * c) = w;
      MVec6(dAdq + 6 * c) = cross_motion(ap, s) + cross_motion(vp, w);
      MVec6(dAdv + 6 * c) = cross_motion(vsum, s);
    }
  }

  // Backward sweep: composites complete at i; column i's rows (i and its
  // ancestors), row i's ancestor columns; then the sums into the parent.
  // Entries of joints on different branches stay zero.
  data.dtau_dq.setZero();
  data.dtau_dv.setZero();
  data.M.setZero();
  S* const Dq = data.dtau_dq.data();  // (r, c) at r + nv c
  S* const Dv = data.dtau_dv.data();
  S* const M = data.M.data();
  S* const tau_ = tau ? tau->data() : nullptr;
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = joints[i];
    const Mat6<S>& Ic = Yc[i];
    const Mat6<S>& dIc = dYc[i];
    const Vec6<S> F = of[i];
    // A root's dVdq is zero (v_λ = 0): its products are skipped (structure,
    // not a value).
    const bool root = j.parent < 0;
    const S arm = j.dynamics.armature;
    for (int k = 0; k < j.nv; ++k) {
      const int c = j.idx_v + k;
      const Vec6<S> s = CVec6(oJ + 6 * c);
      if (tau_) tau_[c] = s.dot(F) + arm * qdd_[c];
      const Vec6<S> Fa = Ic * s;
      const Vec6<S> Fv = Ic * CVec6(dAdv + 6 * c) + dIc * s;
      Vec6<S> Fq = Ic * CVec6(dAdq + 6 * c);
      if (!root) Fq.noalias() += dIc * CVec6(dVdq + 6 * c);
      for (int kk = 0; kk < j.nv; ++kk) {
        const int r = j.idx_v + kk;
        const CVec6 sr(oJ + 6 * r);
        M[r + nv * c] = sr.dot(Fa);
        Dv[r + nv * c] = sr.dot(Fv);
        Dq[r + nv * c] = sr.dot(Fq);
      }
      M[c + nv * c] += arm;
      Fq += cross_force(s, F);  // the rigid part, seen by the ancestors
      const Vec6<S> Rd = dIc.transpose() * s;  // row c: (dYc_iᵀ s)ᵀ; (Ic s)ᵀ = Faᵀ
      for (int a = j.parent; a >= 0; a = joints[a].parent) {
        const Joint<S>& ja = joints[a];
        const bool a_root = ja.parent < 0;
        for (int kk = 0; kk < ja.nv; ++kk) {
          const int r = ja.idx_v + kk;
          const CVec6 sr(oJ + 6 * r);
          const S m = sr.dot(Fa);
          M[r + nv * c] = m;
          M[c + nv * r] = m;
          Dv[r + nv * c] = sr.dot(Fv);
          Dq[r + nv * c] = sr.dot(Fq);
          S dq = Fa.dot(CVec6(dAdq + 6 * r));
          if (!a_root) dq += Rd.dot(CVec6(dVdq + 6 * r));
          Dq[c + nv * r] = dq;
          Dv[c + nv * r] = Fa.dot(CVec6(dAdv + 6 * r)) + Rd.dot(sr);
        }
      }
    }
    if (!root) {
      Yc[j.parent] += Ic;
      dYc[j.parent] += dIc;
      of[j.parent] += F;
    }
  }
}

}  // namespace internal

// ∂τ/∂q (tangent), ∂τ/∂q̇, M = ∂τ/∂q̈ and τ of RNEA(q, q̇, q̈, data.f_ext)
// into data.dtau_dq, data.dtau_dv, data.M, data.tau (see DATA above).
// InvalidArgument on wrong sizes or a model with motor rotors.
template <class S>
void rnea_derivatives(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                      const VecX<S>& qdd) {
  check_argument_size("rnea_derivatives", "q̇", qd.size(), model.nv);
  check_argument_size("rnea_derivatives", "q̈", qdd.size(), model.nv);
  check_argument_size("rnea_derivatives", "data.dtau_dq (Data built for the model)", data.dtau_dq.rows(), model.nv);
  internal::refuse_rotors(model, "rnea_derivatives");
  forward_kinematics(model, data, q);
  internal::rnea_derivatives_sweeps(model, data, qd, qdd, &data.tau);
}

// Explicit instantiation for double (dynamics/instantiate_double.cpp); other
// scalars instantiate the template on use.
#define NEURALSIM_RNEA_DERIVATIVES_TEMPLATES(PREFIX, S)                                                          \
  PREFIX template void rnea_derivatives<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&,           \
                                           const VecX<S>&);                                                     \
  PREFIX template void internal::rnea_derivatives_sweeps<S>(const Model<S>&, Data<S>&, const VecX<S>&,          \
                                                            const VecX<S>&, VecX<S>*);
NEURALSIM_RNEA_DERIVATIVES_TEMPLATES(extern, double)

}  // namespace neuralsim
