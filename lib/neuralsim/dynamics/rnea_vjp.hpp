// Vector–Jacobian product (reverse-mode derivative) of recursive
// Newton–Euler inverse dynamics, by hand, in plain double code.
//
// For τ = RNEA(q, q̇, q̈, f_ext; θ) as rnea.hpp computes it (RBDA algorithm
// 5.1, armature included) and a cotangent w of τ, rnea_vjp() returns the
// row vector wᵀ ∂τ/∂(q, q̇, q̈, f_ext, θ) — the gradient of the scalar
// L = wᵀτ — in one forward and one backward sweep over the bodies, O(n),
// with fixed-size Eigen types, no tape, no allocation, no virtual call.
// θ are the physical parameters: every body's 10 inertial parameters, every
// joint's armature and origin translation, and gravity. These are the
// derivatives of Carpentier & Mansard, "Analytical derivatives of rigid body
// dynamics algorithms" (RSS 2018), contracted with w from the start so that
// no Jacobian is ever formed (what reverse mode needs).
//
// CONVENTIONS
//  * Spatial vectors are [angular; linear] in body coordinates, as in
//    rnea.hpp; ⟨f, m⟩ = fᵀm pairs a force with a motion. Gradients w.r.t.
//    a motion-type quantity are force-type and vice versa.
//  * Tangent coordinates of q (out.q has nv entries, not nq): revolute and
//    prismatic joints, the ordinary partial ∂L/∂q_i; spherical and free
//    joints, the derivative w.r.t. the body-frame increment δ of
//    integrate_configuration (model/configuration.hpp): L(q ⊕ δ) with
//        rotation   R ← R·exp(δ_ω)            (δ_ω = δ[0..2], body frame)
//        position   p ← p + R·δ_lin           (free joint, δ_lin = δ[3..5])
//    i.e. out.q = ∂/∂δ L(q ⊕ δ) at δ = 0. Multiply by dδ/dq of your own
//    parameterization to get quaternion partials if you need them.
//  * Inertial parameters of Inertia<S> (spatial/inertia.hpp), per body, in
//    the body frame (InertiaParameters, 10 entries):
//        [ m, h_x, h_y, h_z, Ī_xx, Ī_yy, Ī_zz, Ī_xy, Ī_xz, Ī_yz ]
//    with h = m·c and Ī the rotational inertia about the body origin. The
//    order of the Ī entries is that of the named parameters
//    (model/parameters.cpp: xx yy zz xy xz yz). An off-diagonal entry is the
//    symmetric pair: ∂L/∂Ī_xy moves Ī(0,1) and Ī(1,0) together.
//  * out.f_ext[i] = ∂L/∂data.f_ext[i] (body coordinates, as rnea() reads it).
//  * out.origin[i] = ∂L/∂joints[i].origin.r (translation of X_T, parent
//    coordinates); out.armature[i] per joint (0 for a fixed joint);
//    out.gravity = ∂L/∂model.gravity.
//
// DERIVATION. RNEA in body coordinates, with X_i = ^iX_λ(i) = X_J(q_i) X_T,i
// (RBDA table 5.1, c_J = 0 since S_i is constant in body coordinates):
//   (1) v_i = X_i v_λ + S_i q̇_i                      v_λ(root) = 0
//   (2) a_i = X_i a_λ + S_i q̈_i + v_i × S_i q̇_i      a_λ(root) = a₀ = (0, -g)
//   (3) f_i = I_i a_i + v_i ×* I_i v_i - f_ext,i
//   (4) F_i = f_i + Σ_{c: λ(c) = i} X_cᵀ F_c
//   (5) τ_i = S_iᵀ F_i + armature_i q̈_i
// Step A (the adjoint of (4)-(5)). ∂L/∂F_i = S_i w_i + X_i ∂L/∂F_λ: a
// recursion from the root, the body velocities for joint rates w,
//   (6) ν_i = X_i ν_λ + S_i w_i = J_i w,     so   L = Σ_i ⟨f_i, ν_i⟩ + Σ_i armature_i w_iᵀ q̈_i.
// Step B (the adjoint of (1)-(3)). With ⟨ν, v ×* h⟩ = ⟨ν × v, h⟩ and
// z_i = ν_i × v_i, body i's term is ⟨ν_i, I_i a_i⟩ + ⟨z_i, I_i v_i⟩ - ⟨ν_i, f_ext,i⟩.
// The adjoints Ā_i = ∂L/∂a_i and V̄_i = ∂L/∂v_i (force-type) are sums over
// the subtree, accumulated from the leaves:
//   (7) Ā_i = I_i ν_i + Σ_c X_cᵀ Ā_c
//   (8) V̄_i = I_i z_i - ν_i ×* I_i v_i + (S_i q̇_i) ×* Ā_i + Σ_c X_cᵀ V̄_c
// (the third term is the adjoint of v_i × S_i q̇_i in (2), using
// ⟨f, m × y⟩ = -⟨m ×* f, y⟩). Then, joint by joint:
//   (9)  ∂L/∂q̈_i = S_iᵀ Ā_i + armature_i w_i               (= (M w)_i)
//   (10) ∂L/∂q̇_i = S_iᵀ (V̄_i - v_i ×* Ā_i)
//   (11) ∂L/∂f_ext,i = -ν_i,   ∂L/∂armature_i = w_iᵀ q̈_i
//   (12) ∂L/∂π_i = G(ν_i, a_i) + G(z_i, v_i),   G(x, y) = ∂⟨x, I y⟩/∂π:
//          ∂/∂m = x_lin·y_lin,   ∂/∂h = y_lin × x_ang + x_lin × y_ang,
//          ∂/∂Ī = x_ang y_angᵀ (symmetrized as above).
//   (13) ∂L/∂g = -Σ_roots lin(X_iᵀ Ā_i)                        (a₀ = (0, -g))
// Step C (configuration and joint origins). X_i enters (1), (2) and (4),
// paired with V̄_i, Ā_i and F_i:  δL = ⟨V̄_i, δX_i v_λ⟩ + ⟨Ā_i, δX_i a_λ⟩ +
// ⟨F_i, δX_i ν_λ⟩. A tangent step of the joint (above) is X_J ← (1 - (S_i δ)×) X_J
// to first order for every joint type (for spherical and free joints
// X_J(q ⊕ δ) = Y(δ) X_J(q) exactly, with Y(δ) = (E, r) = (exp(δ_ω)ᵀ, δ_lin)
// = 1 - δ× + O(|δ|²); for 1-DoF joints the same holds with S_i δ), so with
// y_v = X_i v_λ = v_i - S_i q̇_i,
// y_a = X_i a_λ, y_ν = X_i ν_λ = ν_i - S_i w_i:
//   (14) ∂L/∂δ_i = -S_iᵀ (y_v ×* V̄_i + y_a ×* Ā_i + y_ν ×* F_i).
// A change δr of the origin translation changes X_T y by (0, -E_T(δr × y_ang)),
// which gives, with the parent-coordinate forces X_iᵀB that (7), (8), (4)
// hand to the parent anyway,
//   (15) ∂L/∂r_T,i = lin(X_iᵀV̄_i) × ang(v_λ) + lin(X_iᵀĀ_i) × ang(a_λ) + lin(X_iᵀF_i) × ang(ν_λ)
//        (zero for a root: v_λ = ν_λ = 0 and a₀ has no angular part).
// Cost: the forward sweep (1)-(3), (6) is RNEA's plus one motion transform
// and two rigid-inertia products per body; the backward sweep carries three
// forces to the parent instead of one. Measured (bench_dynamics_vjp): 1.9-2.0x
// an rnea() call on the double pendulum, swimmer5, Panda and Laikago, for all
// the outputs above. tests/dynamics/rnea_vjp_test.cpp checks every output
// against forward-mode Jacobians (ceres::Jet) and central differences.
#pragma once

#include <vector>

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

// The 10 inertial parameters of one body (order above).
template <class S>
using InertiaParameters = Eigen::Matrix<S, 10, 1>;

// Output of rnea_vjp (and, extended, of forward_dynamics_vjp), with the
// workspace of the sweeps. Sized once for a model; calls allocate nothing.
template <class S>
struct RneaVjp {
  VecX<S> q;                                  // nv: ∂L/∂δ (tangent coordinates, see above)
  VecX<S> v;                                  // nv: ∂L/∂q̇
  VecX<S> a;                                  // nv: ∂L/∂q̈ = M w (armature included)
  std::vector<Vec6<S>> f_ext;                 // per body: ∂L/∂data.f_ext[i]
  std::vector<InertiaParameters<S>> inertia;  // per body: ∂L/∂(m, h, Ī)
  VecX<S> armature;                           // per joint (num_bodies): ∂L/∂armature
  Vec3<S> gravity = Vec3<S>::Zero();          // ∂L/∂model.gravity
  std::vector<Vec3<S>> origin;                // per joint: ∂L/∂joints[i].origin.r

  // Workspace: body velocities v, accelerations a, ν = J w, y_a = X a_λ,
  // the adjoints Ā, V̄ and the joint forces F (body coordinates).
  struct Workspace {
    std::vector<Vec6<S>> v, a, nu, ya, Abar, Vbar, F;
  } work;

  RneaVjp() = default;
  explicit RneaVjp(const Model<S>& model) { resize(model); }

  void resize(const Model<S>& model) {
    const size_t n = model.bodies.size();
    q = VecX<S>::Zero(model.nv);
    v = VecX<S>::Zero(model.nv);
    a = VecX<S>::Zero(model.nv);
    f_ext.assign(n, Vec6<S>::Zero());
    inertia.assign(n, InertiaParameters<S>::Zero());
    armature = VecX<S>::Zero(static_cast<Eigen::Index>(n));
    gravity.setZero();
    origin.assign(n, Vec3<S>::Zero());
    for (auto* w : {&work.v, &work.a, &work.nu, &work.ya, &work.Abar, &work.Vbar, &work.F})
      w->assign(n, Vec6<S>::Zero());
  }
};

namespace internal {

// out = Sᵀ B for joint j's motion subspace (nv entries; see motion_subspace).
template <class S>
inline void motion_subspace_transpose(const Joint<S>& j, const Vec6<S>& B, S* out) {
  switch (j.type) {
    case JointType::kFixed: break;
    case JointType::kRevolute: out[0] = j.axis[0] * B[0] + j.axis[1] * B[1] + j.axis[2] * B[2]; break;
    case JointType::kPrismatic: out[0] = j.axis[0] * B[3] + j.axis[1] * B[4] + j.axis[2] * B[5]; break;
    case JointType::kSpherical:
      for (int k = 0; k < 3; ++k) out[k] = B[k];
      break;
    case JointType::kFree:
      for (int k = 0; k < 6; ++k) out[k] = B[k];
      break;
  }
}

// g += G(x, y) = ∂⟨x, I y⟩/∂π (eq. 12), from
// I y = (Ī y_ang + h × y_lin, m y_lin - h × y_ang) (RBDA eq. 2.63).
template <class S>
inline void add_inertia_bilinear_gradient(const Vec6<S>& x, const Vec6<S>& y, InertiaParameters<S>& g) {
  g[0] += x[3] * y[3] + x[4] * y[4] + x[5] * y[5];
  g[1] += y[4] * x[2] - y[5] * x[1] + x[4] * y[2] - x[5] * y[1];  // y_lin × x_ang + x_lin × y_ang
  g[2] += y[5] * x[0] - y[3] * x[2] + x[5] * y[0] - x[3] * y[2];
  g[3] += y[3] * x[1] - y[4] * x[0] + x[3] * y[1] - x[4] * y[0];
  g[4] += x[0] * y[0];
  g[5] += x[1] * y[1];
  g[6] += x[2] * y[2];
  g[7] += x[0] * y[1] + x[1] * y[0];
  g[8] += x[0] * y[2] + x[2] * y[0];
  g[9] += x[1] * y[2] + x[2] * y[1];
}

// The two sweeps, given data.X_up at the configuration (and data.f_ext).
// Reads `data` only. When tau is not null, also writes τ = RNEA(q, q̇, q̈).
template <class S>
void rnea_vjp_sweeps(const Model<S>& model, const Data<S>& data, const VecX<S>& qd, const VecX<S>& qdd,
                     const VecX<S>& w, RneaVjp<S>& out, VecX<S>* tau) {
  // The adjoint has no motor-rotor terms (Joint::has_rotor, rnea.hpp): refuse
  // rather than return a gradient without them.
  for (const Joint<S>& jt : model.joints)
    if (jt.has_rotor)
      throw ModelError("rnea_vjp / forward_dynamics_vjp do not support motor rotors yet (joint '" + jt.name + "')");
  const int n = model.num_bodies();
  auto& ws = out.work;
  // Raw pointers: stores through Eigen's double* would otherwise force
  // reloading each std::vector's data pointer (as in aba.hpp).
  Vec6<S>* const v_ = ws.v.data();
  Vec6<S>* const a_ = ws.a.data();
  Vec6<S>* const nu_ = ws.nu.data();
  Vec6<S>* const ya_ = ws.ya.data();
  Vec6<S>* const Ab_ = ws.Abar.data();
  Vec6<S>* const Vb_ = ws.Vbar.data();
  Vec6<S>* const F_ = ws.F.data();
  const Vec6<S> a0 = spatial<S>(Vec3<S>::Zero(), Vec3<S>(-model.gravity));

  // Forward sweep: (1), (2), (3), (6), and the local terms of (7), (8), (11), (12).
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    const Transform<S>& X = data.X_up[i];
    const Vec6<S> vJ = joint_velocity(j, qd), aJ = joint_velocity(j, qdd), wJ = joint_velocity(j, w);
    Vec6<S> v, nu;
    if (j.parent < 0) {
      v = vJ;
      nu = wJ;
      ya_[i] = X.apply_motion(a0);
    } else {
      const int p = j.parent;
      v = X.apply_motion(v_[p]) + vJ;
      nu = X.apply_motion(nu_[p]) + wJ;
      ya_[i] = X.apply_motion(a_[p]);
    }
    const Vec6<S> a = ya_[i] + aJ + cross_motion(v, vJ);
    const Inertia<S>& I = model.bodies[i].inertia;
    const Vec6<S> Iv = I * v;
    const Vec6<S> z = cross_motion(nu, v);
    F_[i] = I * a + cross_force(v, Iv) - data.f_ext[i];
    Ab_[i] = I * nu;
    Vb_[i] = I * z - cross_force(nu, Iv);
    InertiaParameters<S>& g = out.inertia[i];
    g.setZero();
    add_inertia_bilinear_gradient(nu, a, g);
    add_inertia_bilinear_gradient(z, v, g);
    out.f_ext[i] = -nu;
    v_[i] = v;
    a_[i] = a;
    nu_[i] = nu;
  }

  // Backward sweep: (4), (7), (8) into the parent; (9), (10), (13), (14), (15).
  out.gravity.setZero();
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    const Transform<S>& X = data.X_up[i];
    const Vec6<S>& Ab = Ab_[i];
    Vec6<S>& Vb = Vb_[i];
    const Vec6<S>& F = F_[i];
    if (j.nv > 0) {
      const Vec6<S> vJ = joint_velocity(j, qd);
      Vb += cross_force(vJ, Ab);  // (8), third term
      const Vec6<S> yv = v_[i] - vJ;
      const Vec6<S> yn = nu_[i] - joint_velocity(j, w);
      const Vec6<S> Q = cross_force(yv, Vb) + cross_force(ya_[i], Ab) + cross_force(yn, F);
      const Vec6<S> Vq = Vb - cross_force(v_[i], Ab);
      S sa[6], sv[6], sq[6];
      motion_subspace_transpose(j, Ab, sa);
      motion_subspace_transpose(j, Vq, sv);
      motion_subspace_transpose(j, Q, sq);
      const S& arm = j.dynamics.armature;
      S wa = S(0);
      for (int k = 0; k < j.nv; ++k) {
        const int c = j.idx_v + k;
        out.a[c] = sa[k] + arm * w[c];
        out.v[c] = sv[k];
        out.q[c] = -sq[k];
        wa += w[c] * qdd[c];
      }
      out.armature[i] = wa;
      if (tau) {
        S sf[6];
        motion_subspace_transpose(j, F, sf);
        for (int k = 0; k < j.nv; ++k) (*tau)[j.idx_v + k] = sf[k] + arm * qdd[j.idx_v + k];
      }
    } else {
      out.armature[i] = S(0);
    }
    const Vec6<S> Ap = X.apply_force_inverse(Ab);
    if (j.parent < 0) {
      out.gravity -= lin(Ap);  // (13)
      out.origin[i].setZero();  // (15) for a root
      continue;
    }
    const int p = j.parent;
    const Vec6<S> Vp = X.apply_force_inverse(Vb);
    const Vec6<S> Fp = X.apply_force_inverse(F);
    out.origin[i] = lin(Vp).cross(ang(v_[p])) + lin(Ap).cross(ang(a_[p])) + lin(Fp).cross(ang(nu_[p]));
    Ab_[p] += Ap;
    Vb_[p] += Vp;
    F_[p] += Fp;
  }
}

}  // namespace internal

// Gradient of L = wᵀ RNEA(q, q̇, q̈, data.f_ext; θ) into `out` (sized for the
// model). Runs forward kinematics (data.X_up, data.X_world) and, as rnea()
// does, writes τ into data.tau; the body-frame fields data.v, a, f and the
// world-frame ABA fields are not touched.
template <class S>
void rnea_vjp(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd, const VecX<S>& qdd,
              const VecX<S>& w, RneaVjp<S>& out) {
  check_argument_size("rnea_vjp", "q̇", qd.size(), model.nv);
  check_argument_size("rnea_vjp", "q̈", qdd.size(), model.nv);
  check_argument_size("rnea_vjp", "w", w.size(), model.nv);
  check_argument_size("rnea_vjp", "out (RneaVjp sized for the model)", out.q.size(), model.nv);
  check_argument_size("rnea_vjp", "out.work (RneaVjp sized for the model)", static_cast<long>(out.work.v.size()),
                      model.num_bodies());
  forward_kinematics(model, data, q);
  internal::rnea_vjp_sweeps(model, data, qd, qdd, w, out, &data.tau);
}

// Explicit instantiation for double (dynamics/instantiate_double.cpp); other
// scalars (ceres::Jet, ...) instantiate the template on use.
#define NEURALSIM_RNEA_VJP_TEMPLATES(PREFIX, S)                                                              \
  PREFIX template void rnea_vjp<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&, const VecX<S>&, \
                                   const VecX<S>&, RneaVjp<S>&);                                             \
  PREFIX template void internal::rnea_vjp_sweeps<S>(const Model<S>&, const Data<S>&, const VecX<S>&,          \
                                                    const VecX<S>&, const VecX<S>&, RneaVjp<S>&, VecX<S>*);
NEURALSIM_RNEA_VJP_TEMPLATES(extern, double)

}  // namespace neuralsim
