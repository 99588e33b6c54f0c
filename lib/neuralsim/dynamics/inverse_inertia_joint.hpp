// x = M(q)⁻¹ μ for a joint-space vector μ, from the articulated-body
// factorization of the last aba() call (RBDA table 7.1, its τ part only).
//
// The articulated-body algorithm solves M q̈ = τ - b(q, q̇, f_ext). With
// q̇ = 0, gravity 0 and f_ext = 0 the bias b vanishes and ABA returns exactly
// M⁻¹ τ; the articulated inertias Iᴬ, U = IᴬS and D⁻¹ depend on q only, so
// they are taken from `data` as aba() left them (aba.hpp) and only two
// vector sweeps remain (no 6x6 work), the joint-space counterpart of the
// body-force sweeps in inverse_inertia.hpp:
//
//   backward (leaves to root), pᴬ_i = Σ_children pᵃ_c, starting at 0:
//     u_i = μ_i - S_iᵀ pᴬ_i,      pᵃ_i = pᴬ_i + U_i D_i⁻¹ u_i   (table 7.1, c = 0)
//   forward (root to leaves), a_root's parent = 0 (no gravity):
//     x_i = D_i⁻¹ (u_i - U_iᵀ a_λ(i)),   a_i = a_λ(i) + S_i x_i
//
// As in aba(), 1-DoF joints are done in world coordinates (S, U world) and
// spherical and free joints in body coordinates (S = [1; 0] or 1). A
// floating base (a free root without armature, internal::is_free_root) is
// solved as aba() solves it: Iᴬ a = Xᵀμ_base - pᴬ by one 6x6 Cholesky solve
// of its world articulated inertia, so complete_articulated_factorization()
// is NOT needed here and `data` is only read. The articulated inertia of the
// base is then Cholesky-factored on every call (~0.1 µs); a caller that
// applies M⁻¹ many times at one q can call complete_articulated_factorization
// once — the result is the same either way.
//
// Precondition: aba(model, data, q, ...) was the last call that wrote the
// kinematics and factorization fields of `data` (X_world, oS, oYaba, U,
// Dinv), at the configuration q of interest. Cost: O(n), about a third of
// an aba() call.
#pragma once

#include <algorithm>

#include "neuralsim/dynamics/inverse_inertia.hpp"

namespace neuralsim {

namespace internal {

// Backward step of a spherical (NV = 3) or non-root / armatured free (NV = 6)
// joint, in body coordinates: u = μ - (X p)_head, and pᵃ = p + U D⁻¹ u back
// in world coordinates into `p` (for the parent).
template <int NV, class S>
void inverse_inertia_joint_backward_multi(const Joint<S>& j, const Data<S>& data, int i, const VecX<S>& mu,
                                          Vec6<S>& p, Vec6<S>& u) {
  const Transform<S>& Xw = data.X_world[i];
  Vec6<S> pb = Xw.apply_force(p);
  Eigen::Matrix<S, NV, 1> ui;
  for (int k = 0; k < NV; ++k) ui[k] = mu[j.idx_v + k] - pb[k];
  u.template head<NV>() = ui;
  if (j.parent < 0) return;
  pb += data.U[i].template leftCols<NV>() * (data.Dinv[i].template topLeftCorner<NV, NV>() * ui);
  p = Xw.apply_force_inverse(pb);
}

}  // namespace internal

// x = M(q)⁻¹ μ (armature included, as in aba()). `ws` is sized for the
// model's bodies (ws.p, ws.u, ws.a are overwritten; ws.a holds the world
// spatial accelerations of the bodies for the joint accelerations x). x must
// have size nv and must not alias mu. No allocation.
template <class S>
void apply_inverse_inertia_joint(const Model<S>& model, const Data<S>& data, const VecX<S>& mu,
                                 InverseInertiaWorkspace<S>& ws, VecX<S>& x) {
  check_argument_size("apply_inverse_inertia_joint", "μ", mu.size(), model.nv);
  check_argument_size("apply_inverse_inertia_joint", "x", x.size(), model.nv);
  const int n = model.num_bodies();
  for (int i = 0; i < n; ++i) ws.p[i].setZero();
  // Backward sweep: innovations u_i and the bias forces pᴬ handed to parents.
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    Vec6<S>& p = ws.p[i];
    switch (j.nv) {
      case 0: break;
      case 1: {
        const S u = mu[j.idx_v] - data.oS[i].dot(p);
        ws.u[i][0] = u;
        p += data.U[i].col(0) * (data.Dinv[i](0, 0) * u);
        break;
      }
      case 3: internal::inverse_inertia_joint_backward_multi<3>(j, data, i, mu, p, ws.u[i]); break;
      case 6:
        if (internal::is_free_root(j)) {
          // Iᴬ a = Xᵀ μ_base - pᴬ (world), as internal::aba_free_root.
          Vec6<S> mu_body;
          for (int k = 0; k < 6; ++k) mu_body[k] = mu[j.idx_v + k];
          ws.a[i] = internal::spd_solve<6>(data.oYaba[i], Vec6<S>(data.X_world[i].apply_force_inverse(mu_body) - p));
        } else {  // aba() factored it (internal::aba_backward_multi)
          internal::inverse_inertia_joint_backward_multi<6>(j, data, i, mu, p, ws.u[i]);
        }
        break;
    }
    if (j.parent >= 0) ws.p[j.parent] += p;
  }
  // Forward sweep: x and the world accelerations a_i.
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    Vec6<S> a = j.parent < 0 ? Vec6<S>::Zero() : Vec6<S>(ws.a[j.parent]);
    switch (j.nv) {
      case 0: break;
      case 1: {
        const S xi = data.Dinv[i](0, 0) * (ws.u[i][0] - data.U[i].col(0).dot(a));
        x[j.idx_v] = xi;
        a += data.oS[i] * xi;
        break;
      }
      case 3: a = internal::inverse_inertia_forward_multi<3>(j, data, i, a, ws.u[i], &x); break;
      case 6:
        if (internal::is_free_root(j)) {  // solved in the backward sweep: x = X a (a₀ = 0)
          a = ws.a[i];
          x.template segment<6>(j.idx_v) = data.X_world[i].apply_motion(a);
        } else {
          a = internal::inverse_inertia_forward_multi<6>(j, data, i, a, ws.u[i], &x);
        }
        break;
    }
    ws.a[i] = a;
  }
}

// The whole matrix M⁻¹ (both triangles, armature included) into data.Minv:
// the two sweeps above with the nv columns of the identity as μ at once
// (Carpentier & Mansard, RSS 2018, the M⁻¹ of their ABA derivatives). Row r
// of M⁻¹ (joint i) is D⁻¹u - D⁻¹U_iᵀ A_λ: the backward sweep forms D⁻¹u, which
// is non-zero only in the columns of i's subtree, within [idx_v(i), e_i)
// (children come after their parent, Model::add_body), and the forward
// sweep subtracts the parent's accelerations A_λ (one column per unit μ).
// Only the upper triangle (columns ≥ idx_v(i)) is formed, then mirrored.
// Rows are formed in the columns of data.Minv (contiguous). Workspace:
// data.minv_F (per body 6 × nv: force sums, then accelerations) and
// data.minv_end (e_i). Same precondition as apply_inverse_inertia_joint; no
// allocation.
template <class S>
void inverse_inertia_matrix(const Model<S>& model, Data<S>& data) {
  check_argument_size("inverse_inertia_matrix", "data.Minv (Data built for the model)", data.Minv.rows(), model.nv);
  const int n = model.num_bodies();
  const int nv = model.nv;
  MatX<S>& X = data.Minv;  // X(col, r) = M⁻¹(r, col), col ≥ r
  auto* const F = data.minv_F.data();
  int* const end = data.minv_end.data();
  for (int i = 0; i < n; ++i) end[i] = model.joints[i].idx_v + model.joints[i].nv;
  for (int i = n - 1; i >= 0; --i) {
    const int p = model.joints[i].parent;
    if (p >= 0) end[p] = std::max(end[p], end[i]);
  }
  for (int i = 0; i < n; ++i) {
    const int c0 = model.joints[i].idx_v;
    F[i].middleCols(c0, end[i] - c0).setZero();
  }
  // Backward sweep over the subtree columns [c0, e): u = E - SᵀF, X rows
  // D⁻¹u; F ← F + U D⁻¹u, summed into the parent.
  for (int i = n - 1; i >= 0; --i) {
    const Joint<S>& j = model.joints[i];
    const int c0 = j.idx_v, w = end[i] - c0;
    auto Fi = F[i].middleCols(c0, w);
    switch (j.nv) {
      case 0: break;
      case 1: {
        const Vec6<S>& s = data.oS[i];
        const S dinv = data.Dinv[i](0, 0);
        auto x = X.col(c0).segment(c0, w);
        x.noalias() = Fi.transpose() * (-dinv * s);
        x[0] += dinv;
        if (j.parent >= 0) Fi.noalias() += data.U[i].col(0) * x.transpose();
        break;
      }
      case 3:
      case 6: {
        if (internal::is_free_root(j)) break;  // solved with all columns in the forward sweep
        const Transform<S>& Xw = data.X_world[i];
        const int nvj = j.nv;
        const auto U = data.U[i].leftCols(nvj);
        const auto Dinv = data.Dinv[i].topLeftCorner(nvj, nvj);
        for (int col = 0; col < w; ++col) {
          Vec6<S> pb = Xw.apply_force(Vec6<S>(Fi.col(col)));
          Vec6<S> u = Vec6<S>::Zero();
          for (int k = 0; k < nvj; ++k) u[k] = (col == k ? S(1) : S(0)) - pb[k];
          Vec6<S> y = Vec6<S>::Zero();
          y.head(nvj).noalias() = Dinv * u.head(nvj);
          for (int k = 0; k < nvj; ++k) X(c0 + col, c0 + k) = y[k];
          if (j.parent >= 0) {
            pb.noalias() += U * y.head(nvj);
            Fi.col(col) = Xw.apply_force_inverse(pb);
          }
        }
        break;
      }
    }
    if (j.parent >= 0) F[j.parent].middleCols(c0, w) += Fi;
  }
  // Forward sweep over the columns [c0, nv): X rows -= D⁻¹UᵀA_λ; A_i = A_λ +
  // S X rows (into F[i]).
  for (int i = 0; i < n; ++i) {
    const Joint<S>& j = model.joints[i];
    const int c0 = j.idx_v, w = nv - c0;
    const bool root = j.parent < 0;
    auto Ai = F[i].middleCols(c0, w);
    const auto Ap = F[root ? i : j.parent].middleCols(c0, w);  // unused for a root
    switch (j.nv) {
      case 0:
        if (root) Ai.setZero();
        else Ai = Ap;
        break;
      case 1: {
        auto x = X.col(c0).segment(c0, w);
        if (end[i] < nv) x.tail(nv - end[i]).setZero();  // D⁻¹u is zero past the subtree
        if (root) {
          Ai.noalias() = data.oS[i] * x.transpose();
        } else {
          x.noalias() -= Ap.transpose() * (data.Dinv[i](0, 0) * data.U[i].col(0));
          Ai = Ap;
          Ai.noalias() += data.oS[i] * x.transpose();
        }
        break;
      }
      case 3:
      case 6: {
        const Transform<S>& Xw = data.X_world[i];
        if (internal::is_free_root(j)) {
          // Iᴬ A = Xᵀ E_base - F by one Cholesky of the world Iᴬ (as
          // aba_free_root); the rows are X A (a₀ = 0).
          Mat6<S> L;
          S inv_diag[6];
          internal::cholesky_lower<6>(data.oYaba[i], L, inv_diag);
          for (int col = 0; col < w; ++col) {
            Vec6<S> rhs = col < end[i] - c0 ? Vec6<S>(-Ai.col(col)) : Vec6<S>::Zero();
            if (col < 6) {
              Vec6<S> e = Vec6<S>::Zero();
              e[col] = S(1);
              rhs += Xw.apply_force_inverse(e);
            }
            for (int r = 0; r < 6; ++r) {  // L y = rhs, then Lᵀ a = y
              S acc = rhs[r];
              for (int m = 0; m < r; ++m) acc -= L(r, m) * rhs[m];
              rhs[r] = acc * inv_diag[r];
            }
            for (int r = 5; r >= 0; --r) {
              S acc = rhs[r];
              for (int m = r + 1; m < 6; ++m) acc -= L(m, r) * rhs[m];
              rhs[r] = acc * inv_diag[r];
            }
            Ai.col(col) = rhs;
            const Vec6<S> rows = Xw.apply_motion(rhs);
            for (int k = 0; k < 6; ++k) X(c0 + col, c0 + k) = rows[k];
          }
          break;
        }
        const int nvj = j.nv;
        const auto U = data.U[i].leftCols(nvj);
        const auto Dinv = data.Dinv[i].topLeftCorner(nvj, nvj);
        for (int col = 0; col < w; ++col) {
          Vec6<S> ab = root ? Vec6<S>::Zero() : Xw.apply_motion(Vec6<S>(Ap.col(col)));
          Vec6<S> y = Vec6<S>::Zero();
          if (!root) y.head(nvj).noalias() = Dinv * (U.transpose() * ab);
          for (int k = 0; k < nvj; ++k) {
            const S stored = c0 + col < end[i] ? X(c0 + col, c0 + k) : S(0);
            const S xk = stored - y[k];
            X(c0 + col, c0 + k) = xk;
            ab[k] += xk;
          }
          Ai.col(col) = Xw.apply_motion_inverse(ab);
        }
        break;
      }
    }
  }
  for (int c = 1; c < nv; ++c)
    for (int r = 0; r < c; ++r) X(r, c) = X(c, r);
}

// Explicit instantiation for double (dynamics/instantiate_double.cpp); other
// scalars instantiate the template on use.
#define NEURALSIM_INVERSE_INERTIA_JOINT_TEMPLATES(PREFIX, S)                                         \
  PREFIX template void apply_inverse_inertia_joint<S>(const Model<S>&, const Data<S>&, const VecX<S>&, \
                                                      InverseInertiaWorkspace<S>&, VecX<S>&);        \
  PREFIX template void inverse_inertia_matrix<S>(const Model<S>&, Data<S>&);
NEURALSIM_INVERSE_INERTIA_JOINT_TEMPLATES(extern, double)

}  // namespace neuralsim
