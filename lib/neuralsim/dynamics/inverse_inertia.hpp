// Joint-space response to body forces, q̈ = M(q)⁻¹ Σᵢ Jᵢᵀ Fᵢ, from the
// articulated-body inertias of the last aba() call (test-force propagation:
// B. Mirtich, "Impulse-based dynamic simulation of rigid body systems", PhD
// thesis, UC Berkeley 1996; V. Kokkevis, "Practical physics for articulated
// characters", GDC 2004).
//
// With zero velocity, zero gravity and τ = 0 the articulated-body algorithm
// (RBDA table 7.1) computes exactly M⁻¹ Σ JᵢᵀFᵢ. Its articulated inertias
// Iᴬ, and with them U = IᴬS and D⁻¹, depend on q only, so they are taken
// from `data` as aba() left them (world coordinates, see aba.hpp), and only
// the bias-force and acceleration sweeps run: vector operations, no 6x6 work.
//
// The two sweeps factor the inverse inertia (G. Rodriguez and K. Kreutz-
// Delgado, "Spatial operator factorization and inversion of the manipulator
// mass matrix", IEEE TRA 8(1), 1992): the backward sweep maps the forces to
// joint "innovations" u = K Jᵀ F (u_i = -S_iᵀ pᴬ_i), the forward sweep maps u
// to q̈ = Kᵀ D⁻¹ u, so M⁻¹ = Kᵀ D⁻¹ K. For a force on one body only the
// joints on its path to the root get a non-zero u; hence for two forces
//   F₁ᵀ J M⁻¹ Jᵀ F₂ = Σ_{i on both paths} u_i(F₁)ᵀ D_i⁻¹ u_i(F₂),
// which gives the contact Delassus matrix from one short sweep per contact
// row (inverse_inertia_path) and a few products per pair of rows.
//
// Precondition of everything here: aba(model, data, q, ...) followed by
// complete_articulated_factorization(model, data) were the last calls that
// wrote `data`, at the configuration q of interest (as inside a Stepper
// velocity hook).
#pragma once

#include <stdexcept>
#include <vector>

#include "neuralsim/dynamics/aba.hpp"

namespace neuralsim {

// Workspace for the sweeps (one vector per body), sized once.
template <class S>
struct InverseInertiaWorkspace {
  std::vector<Vec6<S>> p;  // bias forces pᴬ (world), consumed by the backward sweep
  std::vector<Vec6<S>> u;  // innovations u = -SᵀpA per joint (first nv entries)
  std::vector<Vec6<S>> a;  // body accelerations (world), from the forward sweep
  std::vector<char> loaded;  // the body's subtree carries a force
  explicit InverseInertiaWorkspace(int bodies = 0) { resize(bodies); }
  void resize(int bodies) {
    p.assign(bodies, Vec6<S>::Zero());
    u.assign(bodies, Vec6<S>::Zero());
    a.assign(bodies, Vec6<S>::Zero());
    loaded.assign(bodies, 0);
  }
  // Clears the forces before a new set is added with add_force().
  void clear() {
    for (auto& v : p) v.setZero();
    for (auto& l : loaded) l = 0;
  }
  // Adds the world-coordinate spatial force F acting on `body`.
  void add_force(int body, const Vec6<S>& F) {
    p[body] -= F;  // pᴬ = (velocity terms) - f_ext
    loaded[body] = 1;
  }
};

namespace internal {

// The precondition above, checked: a floating base's factorization is
// otherwise missing and the results would be silently wrong.
template <class S>
inline void require_complete_factorization(const Data<S>& data) {
  if (!data.factorization_complete)
    throw std::logic_error(
        "inverse_inertia: the floating base's factorization is incomplete; call "
        "complete_articulated_factorization(model, data) after aba()");
}

// Backward step of joint i: u_i = -S_iᵀ p, and p ← pᵃ = p + U D⁻¹ u (the
// parent's share). Multi-DoF joints (S = [1; 0] or 1) are factored in body
// coordinates by aba().
template <int NV, class S>
void inverse_inertia_backward_multi(const Joint<S>& j, const Data<S>& data, int i, Vec6<S>& p, Vec6<S>& u) {
  const Transform<S>& Xw = data.X_world[i];
  Vec6<S> pb = Xw.apply_force(p);
  const Eigen::Matrix<S, NV, 1> ui = -pb.template head<NV>();
  u.template head<NV>() += ui;
  if (j.parent < 0) return;
  pb += data.U[i].template leftCols<NV>() * (data.Dinv[i].template topLeftCorner<NV, NV>() * ui);
  p = Xw.apply_force_inverse(pb);
}

template <class S>
inline void inverse_inertia_backward_step(const Joint<S>& j, const Data<S>& data, int i, Vec6<S>& p, Vec6<S>& u) {
  switch (j.nv) {
    case 0: break;
    case 1: {
      const S ui = -data.oS[i].dot(p);
      u[0] += ui;
      p += data.U[i].col(0) * (data.Dinv[i](0, 0) * ui);
      break;
    }
    case 3: inverse_inertia_backward_multi<3>(j, data, i, p, u); break;
    case 6: inverse_inertia_backward_multi<6>(j, data, i, p, u); break;
  }
}

template <int NV, class S>
Vec6<S> inverse_inertia_forward_multi(const Joint<S>& j, const Data<S>& data, int i, const Vec6<S>& a_parent,
                                      const Vec6<S>& u, VecX<S>* qdd) {
  const Transform<S>& Xw = data.X_world[i];
  Vec6<S> ab = Xw.apply_motion(a_parent);
  const Eigen::Matrix<S, NV, 1> qddj = data.Dinv[i].template topLeftCorner<NV, NV>() *
                                      (u.template head<NV>() - data.U[i].template leftCols<NV>().transpose() * ab);
  if (qdd) qdd->template segment<NV>(j.idx_v) = qddj;
  ab.template head<NV>() += qddj;
  return Xw.apply_motion_inverse(ab);
}

}  // namespace internal

// Backward sweep: innovations ws.u from the forces in ws.p (add_force).
// Consumes ws.p.
template <class S>
void inverse_inertia_backward(const Model<S>& model, const Data<S>& data, InverseInertiaWorkspace<S>& ws) {
  internal::require_complete_factorization(data);
  for (int i = model.num_bodies() - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    ws.u[i].setZero();
    if (!ws.loaded[i]) continue;
    internal::inverse_inertia_backward_step(j, data, i, ws.p[i], ws.u[i]);
    if (j.parent >= 0) {
      ws.p[j.parent] += ws.p[i];
      ws.loaded[j.parent] = 1;
    }
  }
}

// Forward sweep: from the innovations ws.u, the world spatial accelerations
// ws.a of all bodies and, when qdd is not null, q̈ = Kᵀ D⁻¹ u into *qdd
// (table 7.1 pass 3 with a₀ = 0, c = 0).
template <class S>
void inverse_inertia_forward(const Model<S>& model, const Data<S>& data, InverseInertiaWorkspace<S>& ws,
                             VecX<S>* qdd) {
  internal::require_complete_factorization(data);
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<S>& j = model.joints[i];
    Vec6<S> a = j.parent < 0 ? Vec6<S>::Zero() : ws.a[j.parent];
    switch (j.nv) {
      case 0: break;
      case 1: {
        const S qddi = data.Dinv[i](0, 0) * (ws.u[i][0] - data.U[i].col(0).dot(a));
        if (qdd) (*qdd)[j.idx_v] = qddi;
        a += data.oS[i] * qddi;
        break;
      }
      case 3: a = internal::inverse_inertia_forward_multi<3>(j, data, i, a, ws.u[i], qdd); break;
      case 6: a = internal::inverse_inertia_forward_multi<6>(j, data, i, a, ws.u[i], qdd); break;
    }
    ws.a[i] = a;
  }
}

// Both sweeps: q̈ = M⁻¹ Σ JᵢᵀFᵢ for the forces in ws (add_force), and the
// bodies' accelerations in ws.a.
template <class S>
void apply_inverse_inertia(const Model<S>& model, const Data<S>& data, InverseInertiaWorkspace<S>& ws,
                           VecX<S>* qdd) {
  inverse_inertia_backward(model, data, ws);
  inverse_inertia_forward(model, data, ws, qdd);
}

// The backward sweep for one force F (world) on `body`, along its path to
// the root only: adds its innovations to Y[i] for every joint i on the path
// (Y: one vector per body; other entries untouched).
template <class S>
void inverse_inertia_path(const Model<S>& model, const Data<S>& data, int body, const Vec6<S>& F, Vec6<S>* Y) {
  internal::require_complete_factorization(data);
  Vec6<S> p = -F;
  for (int i = body; i >= 0; i = model.joints[i].parent)
    internal::inverse_inertia_backward_step(model.joints[i], data, i, p, Y[i]);
}

// u₁ᵀ D_i⁻¹ u₂ for joint i (its term of F₁ᵀ J M⁻¹ Jᵀ F₂, see above).
template <class S>
S inverse_inertia_term(const Joint<S>& j, const Data<S>& data, int i, const Vec6<S>& u1, const Vec6<S>& u2) {
  switch (j.nv) {
    case 1: return u1[0] * data.Dinv[i](0, 0) * u2[0];
    case 3: return u1.template head<3>().dot(data.Dinv[i].template topLeftCorner<3, 3>() * u2.template head<3>());
    case 6: return u1.dot(data.Dinv[i] * u2);
  }
  return S(0);
}

// World spatial velocities V of all bodies for joint velocities qd, at the
// configuration of the last aba() call (uses its X_world and oS).
// Contact rows read them as J q̇ = wᵀ(V_a - V_b).
template <class S>
void world_velocities(const Model<S>& model, const Data<S>& data, const VecX<S>& qd, std::vector<Vec6<S>>& V) {
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Joint<S>& j = model.joints[i];
    Vec6<S> v = j.parent < 0 ? Vec6<S>::Zero() : V[j.parent];
    if (j.nv == 1)
      v += data.oS[i] * qd[j.idx_v];
    else if (j.nv > 1)
      v += data.X_world[i].apply_motion_inverse(joint_velocity(j, qd));
    V[i] = v;
  }
}

// Explicit instantiations (dynamics/instantiate_*.cpp).
#define NEURALSIM_INVERSE_INERTIA_TEMPLATES(PREFIX, S) \
  PREFIX template void inverse_inertia_backward<S>(const Model<S>&, const Data<S>&, InverseInertiaWorkspace<S>&);  \
  PREFIX template void inverse_inertia_forward<S>(const Model<S>&, const Data<S>&, InverseInertiaWorkspace<S>&,     \
                                                  VecX<S>*);                                                       \
  PREFIX template void apply_inverse_inertia<S>(const Model<S>&, const Data<S>&, InverseInertiaWorkspace<S>&,       \
                                                VecX<S>*);                                                         \
  PREFIX template void inverse_inertia_path<S>(const Model<S>&, const Data<S>&, int, const Vec6<S>&, Vec6<S>*);     \
  PREFIX template void world_velocities<S>(const Model<S>&, const Data<S>&, const VecX<S>&, std::vector<Vec6<S>>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_INVERSE_INERTIA_TEMPLATES, extern)

}  // namespace neuralsim
