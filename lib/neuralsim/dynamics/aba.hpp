// Articulated-body algorithm for forward dynamics (RBDA algorithm 7.1,
// table 7.1): q̈ = M⁻¹(τ - C q̇ - g + Jᵀf_ext) in O(n).
//
// Joint armature adds to D = SᵀIᴬS, matching crba.hpp and rnea.hpp; motor
// rotors are handled as clusters (internal::add_rotor_to_cluster).
//
// Coordinates. Table 7.1 is written in body coordinates, where the backward
// pass transforms every articulated inertia to its parent, Iᴬ_λ += Xᵀ Iᵃ X.
// That congruence transform was ~30% of the time. Every equation of table
// 7.1 holds in any one coordinate system (spatial vectors are coordinate-
// free objects, RBDA ch. 2), so here the body quantities are expressed in
// world coordinates instead, as Pinocchio's ABA does (its derivatives are
// likewise derived in the world frame: Carpentier & Mansard, "Analytical
// derivatives of rigid body dynamics algorithms", RSS 2018): each body's
// rigid inertia is transformed once (a cheap 10-parameter transform, RBDA
// table 2.5, Inertia::to_parent_matrix), the joint's motion subspace S is
// mapped to world coordinates, and articulated inertias and bias forces are
// then summed into the parent with no transform at all.
// With S constant in the body frame (configuration.hpp), Ṡ = v × S in any
// frame, so c = v × S q̇ as in body coordinates (table 7.1 with c_J = 0),
// and gravity is still the base acceleration a₀ = -g (RBDA §5.3).
//
// 1-DoF joints: S (world) is a 6-vector, D a scalar. Spherical and free
// joints are rare and have matrix-valued D; their step is done in body
// coordinates (S = [1; 0] or 1), moving Iᴬ there and Iᵃ back, with D
// inverted by a fixed-size Cholesky (spd_inverse). The exception is a
// floating base (a free root joint without armature), by far the common
// case: the whole articulated inertia acts on it, so its world acceleration
// comes from one 6x6 Cholesky solve, Iᴬ a = f - pᴬ, with no transform of
// Iᴬ and no inverse (aba_free_root; ~10% of the Laikago call before).
// Nothing is dynamically sized or allocated.
//
// Outputs: data.qdd, and for the configuration q: X_up, X_world (as
// forward_kinematics computes them), and the world-coordinate fields ov,
// oc, oa, of, oYaba, oS and the factorization U, D⁻¹, u (data.hpp). Body-
// frame fields (v, a, f) are not touched. The factorization of a floating
// base is left unformed; code that applies M⁻¹ through it calls
// complete_articulated_factorization() first.
#pragma once

#include <cstdint>
#include <cstring>

#include "neuralsim/dynamics/kinematics.hpp"

// Full unrolling of the fixed-trip-count loops below (GCC and Clang).
#if defined(__clang__)
#define NEURALSIM_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define NEURALSIM_UNROLL _Pragma("GCC unroll 8")
#else
#define NEURALSIM_UNROLL
#endif

namespace neuralsim {
namespace internal {

// Cholesky factor A = L Lᵀ of a symmetric positive definite N x N matrix
// (Golub & Van Loan, Matrix Computations, alg. 4.2.1); lower triangle of L,
// and the reciprocals of its diagonal. Fixed-size loops that the compiler
// unrolls; Eigen's LLT goes through its blocked dynamic-size code paths and
// costs several times more for N = 6.
template <int N, class S>
void cholesky_lower(const Eigen::Matrix<S, N, N>& A, Eigen::Matrix<S, N, N>& L, S* inv_diag) {
  using std::sqrt;
  NEURALSIM_UNROLL
  for (int j = 0; j < N; ++j) {
    S d = A(j, j);
    NEURALSIM_UNROLL
    for (int k = 0; k < j; ++k) d -= L(j, k) * L(j, k);
    L(j, j) = sqrt(d);
    inv_diag[j] = S(1) / L(j, j);
    NEURALSIM_UNROLL
    for (int i = j + 1; i < N; ++i) {
      S s = A(i, j);
      NEURALSIM_UNROLL
      for (int k = 0; k < j; ++k) s -= L(i, k) * L(j, k);
      L(i, j) = s * inv_diag[j];
    }
  }
}

// A⁻¹ = L⁻ᵀ L⁻¹ for symmetric positive definite A.
template <int N, class S>
Eigen::Matrix<S, N, N> spd_inverse(const Eigen::Matrix<S, N, N>& A) {
  Eigen::Matrix<S, N, N> L, W;  // lower triangles used: L, and W = L⁻¹
  S inv_diag[N];
  cholesky_lower<N>(A, L, inv_diag);
  NEURALSIM_UNROLL
  for (int j = 0; j < N; ++j) {
    W(j, j) = inv_diag[j];
    NEURALSIM_UNROLL
    for (int i = j + 1; i < N; ++i) {
      S s = S(0);
      NEURALSIM_UNROLL
      for (int k = j; k < i; ++k) s -= L(i, k) * W(k, j);
      W(i, j) = s * inv_diag[i];
    }
  }
  Eigen::Matrix<S, N, N> out;
  NEURALSIM_UNROLL
  for (int j = 0; j < N; ++j)
    NEURALSIM_UNROLL
    for (int i = 0; i <= j; ++i) {
      S s = S(0);
      NEURALSIM_UNROLL
      for (int k = j; k < N; ++k) s += W(k, i) * W(k, j);  // (Wᵀ W)(i, j), W lower
      out(i, j) = s;
      out(j, i) = s;
    }
  return out;
}

// x = A⁻¹ b for symmetric positive definite A: L y = b, then Lᵀ x = y.
template <int N, class S>
Eigen::Matrix<S, N, 1> spd_solve(const Eigen::Matrix<S, N, N>& A, const Eigen::Matrix<S, N, 1>& b) {
  Eigen::Matrix<S, N, N> L;
  S inv_diag[N];
  cholesky_lower<N>(A, L, inv_diag);
  Eigen::Matrix<S, N, 1> x;
  NEURALSIM_UNROLL
  for (int i = 0; i < N; ++i) {
    S s = b[i];
    NEURALSIM_UNROLL
    for (int k = 0; k < i; ++k) s -= L(i, k) * x[k];
    x[i] = s * inv_diag[i];
  }
  NEURALSIM_UNROLL
  for (int i = N - 1; i >= 0; --i) {
    S s = x[i];
    NEURALSIM_UNROLL
    for (int k = i + 1; k < N; ++k) s -= L(k, i) * x[k];
    x[i] = s * inv_diag[i];
  }
  return x;
}

// A free joint at the root with no armature (a floating base) is solved
// directly in world coordinates (see aba()); its D⁻¹ and U are then left to
// complete_articulated_factorization().
template <class S>
inline bool is_free_root(const Joint<S>& j) {
  return j.type == JointType::kFree && j.parent < 0 && neuralsim::exactly_zero(j.dynamics.armature);
}

// Body-frame factorization of a joint with NV > 1 degrees of freedom, whose
// S is [1; 0] (spherical, NV = 3) or 1 (free, NV = 6) in body coordinates:
// Iᴬ (returned in body coordinates), U = Iᴬ S and D⁻¹ = (SᵀIᴬS + armature)⁻¹
// into data. data.oYaba[i] is in world coordinates; Xw = data.X_world[i].
template <int NV, class S>
Mat6<S> factor_multi_dof_joint(const Joint<S>& j, Data<S>& data, int i) {
  using MatNV = Eigen::Matrix<S, NV, NV>;
  const Transform<S>& Xw = data.X_world[i];
  // Body-frame Iᴬ = X⁻ᵀ Iᴬ_world X⁻¹.
  Mat6<S> IA = Mat6<S>::Zero();
  add_inertia_to_parent(Xw.inverse(), data.oYaba[i], IA);
  MatNV D = IA.template topLeftCorner<NV, NV>();  // SᵀIᴬS, S = [1; 0]
  for (int k = 0; k < NV; ++k) D(k, k) += j.dynamics.armature;
  data.U[i].template leftCols<NV>() = IA.template leftCols<NV>();
  data.Dinv[i].template topLeftCorner<NV, NV>() = spd_inverse<NV>(D);
  return IA;
}

// Backward-pass step of a multi-DoF joint (see factor_multi_dof_joint). Iᴬ,
// pᴬ and c arrive in world coordinates.
template <int NV, class S>
void aba_backward_multi(const Joint<S>& j, Data<S>& data, int i, const VecX<S>& tau) {
  using VecNV = Eigen::Matrix<S, NV, 1>;
  const Transform<S>& Xw = data.X_world[i];
  const Mat6<S> IA = factor_multi_dof_joint<NV>(j, data, i);
  const Vec6<S> f = Xw.apply_force(data.of[i]);  // pᴬ in body coordinates
  VecNV u;
  for (int k = 0; k < NV; ++k) u[k] = tau[j.idx_v + k] - f[k];
  data.u[i].template head<NV>() = u;
  if (j.parent < 0) return;
  const Eigen::Matrix<S, 6, NV> U = data.U[i].template leftCols<NV>();
  const Eigen::Matrix<S, 6, NV> UDinv = U * data.Dinv[i].template topLeftCorner<NV, NV>();
  Mat6<S> Ia = IA;
  Ia.noalias() -= UDinv * U.transpose();
  const Vec6<S> pa = f + Ia * Xw.apply_motion(data.oc[i]) + UDinv * u;
  add_inertia_to_parent(Xw, Ia, data.oYaba[j.parent]);
  data.of[j.parent] += Xw.apply_force_inverse(pa);
}

// Free root joint: the whole tree's articulated inertia Iᴬ acts on the
// base, so Iᴬ a + pᴬ = f, with f the joint force in world coordinates, gives
// the base's world acceleration a = (Iᴬ)⁻¹ (f - pᴬ) by one 6x6 Cholesky
// solve (RBDA table 7.1 with S = X⁻¹, the body-to-world motion transform,
// for which Iᵃ = 0; the body-frame D = X⁻ᵀIᴬX⁻¹ and its inverse are not
// needed). a includes a₀ = -g; pass 3 reads it from data.oa.
template <class S>
void aba_free_root(const Joint<S>& j, Data<S>& data, int i, const VecX<S>& tau) {
  Vec6<S> tau_body;
  for (int k = 0; k < 6; ++k) tau_body[k] = tau[j.idx_v + k];
  const Vec6<S> rhs = data.X_world[i].apply_force_inverse(tau_body) - data.of[i];
  data.oa[i] = spd_solve<6>(data.oYaba[i], rhs);
}

// Motor rotors (Joint::has_rotor, RBDA §9.6). The rotor of joint i rides on
// its parent p and spins about the joint's world axis a at gr·q̇ relative to
// it, so body i and the rotor form one cluster with the single coordinate q_i
// and the parent's motion in common (Chignoli, Adrian, Kim & Wensing,
// "Recursive rigid-body dynamics algorithms for systems with kinematic
// loops", 2023): the cluster's motion subspace stacks S_i and s_r = gr [a; 0],
// and table 7.1 applies with the stacked quantities. The rotor is massless
// and axisymmetric, I_r = [Ir a aᵀ, 0; 0, 0] about any point, which makes
//   U = Iᴬ S + I_r s_r = Iᴬ S + [gr Ir a; 0],    D = SᵀIᴬS + armature + gr² Ir,
// leaves u unchanged (s_rᵀ p_r = 0), and makes the rotor's own Iᵃc term and
// its share of Uᵀc vanish (c_r = ω_p × gr q̇ a ⟂ a). The parent receives I_r
// and the rotor's gyroscopic bias p_r = [ω_r × Ir a (aᵀω_r); 0] =
// [Ir (aᵀω_p + gr q̇) ω_p × a; 0]. Pass 3 needs nothing more: q̈ = D⁻¹(u - Uᵀ
// (a_p + c)) with the cluster's U, because s_rᵀ I_r c = 0. Consumers of the
// factorization (inverse_inertia.hpp) read the cluster's U and D⁻¹.
template <class S>
inline Vec3<S> world_joint_axis(const Joint<S>& j, const Vec6<S>& Sw) {
  return j.type == JointType::kRevolute ? Vec3<S>(Sw.template head<3>()) : Vec3<S>(Sw.template tail<3>());
}

template <class S>
void add_rotor_to_cluster(const Joint<S>& j, const Vec6<S>& Sw, Vec6<S>& U, S& D) {
  const S& gr = j.dynamics.gear_ratio;
  const S& Ir = j.dynamics.rotor_inertia;
  D += gr * gr * Ir;
  U.template head<3>() += (gr * Ir) * world_joint_axis(j, Sw);
}

template <class S>
void add_rotor_to_carrier(const Joint<S>& j, const Vec6<S>& Sw, const S& qd, const Vec6<S>& v_parent,
                          Mat6<S>& IA_parent, Vec6<S>& f_parent) {
  const S& gr = j.dynamics.gear_ratio;
  const S& Ir = j.dynamics.rotor_inertia;
  const Vec3<S> a = world_joint_axis(j, Sw);
  const Vec3<S> w_p = v_parent.template head<3>();
  IA_parent.template topLeftCorner<3, 3>() += Ir * a * a.transpose();
  f_parent.template head<3>() += (Ir * (a.dot(w_p) + gr * qd)) * w_p.cross(a);
}

// World motion subspace S of a 1-DoF joint (6 entries into out), from the
// child body's world pose Xw: S = [a; p × a] (revolute about the world axis
// a through the body origin p) or [0; a] (prismatic), a = R·axis, R = Eᵀ.
// Per component: Eigen's 3-vector expressions cost ~2x here.
template <class S>
inline void world_motion_subspace_1dof(const Joint<S>& j, const Transform<S>& Xw, S* Sw) {
  const Mat3<S>& E = Xw.E;
  const Vec3<S>& p = Xw.r;
  S a[3];
  for (int k = 0; k < 3; ++k) a[k] = E(0, k) * j.axis[0] + E(1, k) * j.axis[1] + E(2, k) * j.axis[2];
  if (j.type == JointType::kRevolute) {
    Sw[0] = a[0], Sw[1] = a[1], Sw[2] = a[2];
    Sw[3] = p[1] * a[2] - p[2] * a[1];
    Sw[4] = p[2] * a[0] - p[0] * a[2];
    Sw[5] = p[0] * a[1] - p[1] * a[0];
  } else {
    Sw[0] = Sw[1] = Sw[2] = S(0);
    Sw[3] = a[0], Sw[4] = a[1], Sw[5] = a[2];
  }
}

// Skips transforming external forces that are all zero (most bodies, most
// steps). Only for double: a Jet's zero value may carry derivatives.
inline bool all_zero(const Vec6<double>& f) {
  // Bitwise: no branch per component. -0.0 counts as non-zero (then the
  // transform is merely wasted) and NaN too (it must reach q̈).
  std::uint64_t bits = 0;
  for (int k = 0; k < 6; ++k) {
    std::uint64_t b;
    std::memcpy(&b, &f[k], sizeof b);
    bits |= b;
  }
  return bits == 0;
}
template <class S>
inline bool all_zero(const Vec6<S>&) { return false; }

}  // namespace internal

// Writes q̈ into data.qdd. `tau` is the total generalized force (controls and
// passive forces); external body forces are read from data.f_ext (body
// coordinates).
template <class S>
void aba(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
         const VecX<S>& tau) {
  check_argument_size("aba", "q", q.size(), model.nq);
  check_argument_size("aba", "q̇", qd.size(), model.nv);
  check_argument_size("aba", "τ", tau.size(), model.nv);
  const int n = model.num_bodies();
  // Raw pointers to the per-body arrays: stores through Eigen's double*
  // would otherwise force reloading each std::vector's data pointer.
  auto* const IA_ = data.oYaba.data();
  auto* const S_world_ = data.oS.data();
  auto* const U_ = data.U.data();
  auto* const Dinv_ = data.Dinv.data();
  auto* const u_ = data.u.data();
  auto* const v_ = data.ov.data();
  auto* const a_ = data.oa.data();
  auto* const c_ = data.oc.data();
  auto* const f_ = data.of.data();
  auto* const f_ext_ = data.f_ext.data();
  auto* const X_world_ = data.X_world.data();
  // Pass 1: kinematics, velocity-product terms, rigid-body bias forces.
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    update_body_kinematics(model, data, i, q);
    const Transform<S>& Xw = X_world_[i];
    Vec6<S> vj;  // S q̇, world coordinates
    if (j.nv == 1) {
      Vec6<S>& Sw = S_world_[i];
      internal::world_motion_subspace_1dof(j, Xw, Sw.data());
      vj = Sw * qd[j.idx_v];
    } else if (j.nv > 1) {
      vj = Xw.apply_motion_inverse(joint_velocity(j, qd));
    } else {
      vj.setZero();
    }
    if (j.parent < 0) {
      v_[i] = vj;
      c_[i].setZero();
    } else {
      v_[i] = v_[j.parent] + vj;
      c_[i] = cross_motion(v_[i], vj);
    }
    Inertia<S>::to_parent_matrix(Xw, model.bodies[i].inertia, IA_[i]);
    f_[i] = cross_force(v_[i], Vec6<S>(IA_[i] * v_[i]));  // pA
    if (!internal::all_zero(f_ext_[i])) f_[i] -= Xw.apply_force_inverse(f_ext_[i]);
  }
  data.factorization_complete = true;
  // Pass 2: articulated inertias and bias forces, leaves to root. In world
  // coordinates the parent's sums need no transform.
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    switch (j.nv) {
      case 0:
        if (j.parent >= 0) {
          IA_[j.parent] += IA_[i];
          f_[j.parent] += f_[i] + IA_[i] * c_[i];
        }
        break;
      case 1: {
        const Mat6<S>& IA = IA_[i];
        const Vec6<S>& Sw = S_world_[i];
        const Vec6<S>& c = c_[i];
        // U = Iᴬ S and Iᴬ c in one sweep over Iᴬ's columns (column axpys
        // vectorize; Eigen's 6x6 * 6x2 lazy product is ~2.5x the
        // instructions here).
        Vec6<S> U = IA.col(0) * Sw[0];
        Vec6<S> Ic = IA.col(0) * c[0];
        for (int k = 1; k < 6; ++k) {
          U += IA.col(k) * Sw[k];
          Ic += IA.col(k) * c[k];
        }
        S D = Sw.dot(U) + j.dynamics.armature;
        const S u = tau[j.idx_v] - Sw.dot(f_[i]);
        if (j.has_rotor) internal::add_rotor_to_cluster(j, Sw, U, D);
        const S Dinv = S(1) / D;
        U_[i].col(0) = U;
        Dinv_[i](0, 0) = Dinv;
        u_[i][0] = u;
        if (j.parent >= 0) {
          // Iᵃ = Iᴬ - U D⁻¹ Uᵀ,  pᵃ = pᴬ + Iᵃ c + U D⁻¹ u  (RBDA table 7.1),
          // with Iᵃ c = Iᴬ c - U D⁻¹ (Uᵀc); both summed into the parent in
          // one sweep over its columns.
          const Vec6<S> UDinv = U * Dinv;
          Mat6<S>& IAp = IA_[j.parent];
          for (int k = 0; k < 6; ++k) IAp.col(k) += IA.col(k) - UDinv * U[k];
          f_[j.parent] += f_[i] + Ic + UDinv * (u - U.dot(c));
          if (j.has_rotor) internal::add_rotor_to_carrier(j, Sw, qd[j.idx_v], v_[j.parent], IAp, f_[j.parent]);
        }
        break;
      }
      case 3: internal::aba_backward_multi<3>(j, data, i, tau); break;
      case 6:
        if (internal::is_free_root(j)) {
          internal::aba_free_root(j, data, i, tau);
          data.factorization_complete = false;
        } else
          internal::aba_backward_multi<6>(j, data, i, tau);
        break;
    }
  }
  // Pass 3: accelerations, root to leaves. Gravity as base acceleration -g.
  const Vec6<S> a0 = spatial<S>(Vec3<S>::Zero(), Vec3<S>(-model.gravity));
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    Vec6<S> a = (j.parent < 0 ? a0 : a_[j.parent]) + c_[i];
    switch (j.nv) {
      case 0: break;
      case 1: {
        const S qdd = Dinv_[i](0, 0) * (u_[i][0] - U_[i].col(0).dot(a));
        data.qdd[j.idx_v] = qdd;
        a += S_world_[i] * qdd;
        break;
      }
      case 3: {
        const Transform<S>& Xw = X_world_[i];
        Vec6<S> ab = Xw.apply_motion(a);
        const Vec3<S> qdd = Dinv_[i].template topLeftCorner<3, 3>() *
                            (u_[i].template head<3>() - U_[i].template leftCols<3>().transpose() * ab);
        data.qdd.template segment<3>(j.idx_v) = qdd;
        ab.template head<3>() += qdd;
        a = Xw.apply_motion_inverse(ab);
        break;
      }
      case 6: {
        const Transform<S>& Xw = X_world_[i];
        if (internal::is_free_root(j)) {  // a solved in pass 2: q̈ = X (a - a₀)
          a = a_[i];
          data.qdd.template segment<6>(j.idx_v) = Xw.apply_motion(Vec6<S>(a - a0));
          break;
        }
        Vec6<S> ab = Xw.apply_motion(a);
        const Vec6<S> qdd = Dinv_[i] * (u_[i] - U_[i].transpose() * ab);
        data.qdd.template segment<6>(j.idx_v) = qdd;
        ab += qdd;
        a = Xw.apply_motion_inverse(ab);
        break;
      }
    }
    a_[i] = a;
  }
}

// U and D⁻¹ of free root joints, which aba() does not form (it solves the
// base acceleration directly). Call after aba() and before anything that
// reads the factorization for every joint (inverse_inertia.hpp).
template <class S>
void complete_articulated_factorization(const Model<S>& model, Data<S>& data) {
  if (data.factorization_complete) return;
  for (int i = 0; i < model.num_bodies(); ++i)
    if (internal::is_free_root(model.joints[i])) internal::factor_multi_dof_joint<6>(model.joints[i], data, i);
  data.factorization_complete = true;
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_ABA_TEMPLATES(PREFIX, S) \
  PREFIX template void aba<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&, const VecX<S>&); \
  PREFIX template void complete_articulated_factorization<S>(const Model<S>&, Data<S>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_ABA_TEMPLATES, extern)

}  // namespace neuralsim
