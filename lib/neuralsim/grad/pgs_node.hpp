// The projected Gauss–Seidel contact solve (contact/pgs.hpp) on the
// reverse-mode tape as ONE external node per step, differentiated
// implicitly at its solution instead of through its iterations.
//
// WHY. Taped, every PGS sweep records ~m² nodes (m = 3 · contacts): the tape
// and the cost of the gradient grow with the iteration count, and the
// derivative is that of the last iterate, which depends on how many sweeps
// ran. The converged impulses λ* are a fixed point of one sweep, λ = Φ(λ; θ)
// with θ = (A, r, μ, cfm); by the implicit function theorem
//     (I - ∂Φ/∂λ) dλ* = ∂Φ/∂θ dθ,
// so the vector–Jacobian product is one linear solve per step,
//     (I - ∂Φ/∂λ)ᵀ u = λ̄,   θ̄ = (∂Φ/∂θ)ᵀ u,
// independent of the iteration count (de Avila Belbute-Peres et al.,
// "End-to-end differentiable physics for learning and control", NeurIPS
// 2018, differentiate the LCP's optimality conditions the same way; Werling
// et al., "Fast and feature-complete differentiable physics for articulated
// rigid bodies with contact", RSS 2021 (Nimble), on the active set).
//
// THE ACTIVE SET. Φ is one sweep of the solver itself, per contact
// (rows n, t1, t2, with Â = A + cfm·1, w = Âλ + r, D = diag Â):
//   λn' = max(0, λn - wn/Dn), then the tangent rows against λn' with the
//   within-contact coupling of the sweep (Â_tn Δλn, Â_t2t1 Δλt1), projected
//   on |λt| <= μ λn' (pyramid: per row; cone: the disc, both rows updated
//   first, as pgs.hpp does).
// Its Jacobian is that of the branch taken at the solution, which makes the
// linear system the active-set system: a separating contact (λn' = 0) has
// rows λ = 0 (zero derivative), a sticking one the equality rows w_n = w_t = 0
// (I - ∂Φ/∂λ = D⁻¹Â on them), a sliding one w_n = 0 and λt on the cone
// boundary in the direction the sweep projects. Each contact's 3×3 block of
// ∂Φ is computed by forward mode (ceres::Jet over the 13 local inputs:
// λ_c, w_c, D_c, Â_tn, Â_t2t1, μ_c) from the same code path as the sweep.
// MODE BOUNDARIES. The branch conditions are those of pgs.hpp, on values:
// λn - wn/Dn > 0 is contact (= 0 exactly: separating), |z_t|² > (μλn)² is
// sliding (= exactly: sticking), a pyramid row beyond its bound strictly is
// at the bound. So at a boundary the returned derivative is the one-sided
// derivative of the separating side for the normal and of the sticking side
// for friction (docs/gradients.md).
// An unconverged solve (iteration limit) is differentiated the same way at
// the impulses it returned: the derivative of the fixed point, not of the
// iterate.
//
// Inputs: A's upper triangle (row-major, i <= j; A is symmetric and each
// pair of entries is one value in ImpulseSolver), r (m), μ (nc), cfm.
// Outputs: λ (m). The forward pass is solve_pgs<double> on the values (from
// the values of `lambda` on entry, a warm start). Nothing is cached per call.
#pragma once

#include <ceres/jet.h>

#include <Eigen/LU>
#include <stdexcept>
#include <vector>

#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {

namespace pgs_node_detail {
// One sweep's update of a contact block: in = (λn, λt1, λt2, wn, wt1, wt2,
// Dn, Dt1, Dt2, Â_t1n, Â_t2n, Â_t2t1, μ), out = (λn', λt1', λt2'), with the
// branches of solve_pgs.
template <class T>
void block_update(const T* in, FrictionCone cone, T* out) {
  using std::sqrt;
  const T &ln = in[0], &l1 = in[1], &l2 = in[2], &wn = in[3], &w1 = in[4], &w2 = in[5];
  const T &Dn = in[6], &D1 = in[7], &D2 = in[8], &A1n = in[9], &A2n = in[10], &A21 = in[11], &mu = in[12];
  const T zn = ln - wn / Dn;
  const T n = zn > T(0) ? zn : T(0);
  const T dn = n - ln;
  const T bound = mu * n;
  T t1 = l1 - (w1 + A1n * dn) / D1;
  if (cone == FrictionCone::kPyramid) {
    if (t1 > bound) t1 = bound;
    if (t1 < -bound) t1 = -bound;
    T t2 = l2 - (w2 + A2n * dn + A21 * (t1 - l1)) / D2;
    if (t2 > bound) t2 = bound;
    if (t2 < -bound) t2 = -bound;
    out[0] = n;
    out[1] = t1;
    out[2] = t2;
    return;
  }
  T t2 = l2 - (w2 + A2n * dn + A21 * (t1 - l1)) / D2;
  const T norm2 = t1 * t1 + t2 * t2;
  if (norm2 > bound * bound) {
    const T scale = bound / sqrt(norm2);
    t1 *= scale;
    t2 *= scale;
  }
  out[0] = n;
  out[1] = t1;
  out[2] = t2;
}
}  // namespace pgs_node_detail

class PgsNode final : public ExternalFunction {
 public:
  static constexpr int kLocal = 13;

  // Sized for up to `max_contacts` contacts.
  explicit PgsNode(int max_contacts) { reserve(max_contacts); }

  // solve_pgs's signature and result; lambda's entries become the outputs.
  PgsResult solve(Tape& tape, const MatX<Rev>& A, const VecX<Rev>& r, const VecX<Rev>& mu, int nc, const Rev& cfm,
                  FrictionCone cone, const PgsOptions& options, VecX<Rev>& lambda) {
    reserve(nc);
    cone_ = cone;
    const int m = 3 * nc;
    Rev* x = x_.data();
    for (int i = 0; i < m; ++i)
      for (int j = i; j < m; ++j) *x++ = A(i, j);
    for (int i = 0; i < m; ++i) *x++ = r[i];
    for (int c = 0; c < nc; ++c) *x++ = mu[c];
    *x++ = cfm;
    const int n_in = static_cast<int>(x - x_.data());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) Ad_(i, j) = A(i, j).value();
    for (int i = 0; i < m; ++i) rd_[i] = r[i].value();
    for (int c = 0; c < nc; ++c) mud_[c] = mu[c].value();
    for (int i = 0; i < m; ++i) ld_[i] = lambda[i].value();
    const PgsResult res = solve_pgs<double>(Ad_, rd_, mud_, nc, cfm.value(), cone, options, ld_);
    tape.external(*this, x_.data(), n_in, ld_.data(), y_.data(), m, static_cast<std::int64_t>(cone));
    for (int i = 0; i < m; ++i) lambda[i] = y_[static_cast<std::size_t>(i)];
    return res;
  }

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    const int m = call.n_out, nc = m / 3;
    if (m % 3 != 0 || call.n_in != m * (m + 1) / 2 + m + nc + 1)
      throw std::logic_error("PgsNode::vjp: a call recorded by another node");
    reserve(nc);
    const auto cone = static_cast<FrictionCone>(call.tag);
    // Â = A + cfm·1, r, μ, λ from the call.
    const double* x = call.x;
    for (int i = 0; i < m; ++i)
      for (int j = i; j < m; ++j) Ad_(i, j) = Ad_(j, i) = *x++;
    for (int i = 0; i < m; ++i) rd_[i] = *x++;
    for (int c = 0; c < nc; ++c) mud_[c] = *x++;
    const double cfm = *x;
    for (int i = 0; i < m; ++i) Ad_(i, i) += cfm;
    const Eigen::Map<const VecX<double>> lambda(call.y, m);
    wd_.head(m).noalias() = Ad_.topLeftCorner(m, m) * lambda + rd_.head(m);
    // Local Jacobians per contact, and I - ∂Φ/∂λ.
    using J = ceres::Jet<double, kLocal>;
    MatX<double>& M = M_;
    M.topLeftCorner(m, m).setIdentity();
    for (int c = 0; c < nc; ++c) {
      const int i = 3 * c;
      const double local[kLocal] = {lambda[i],      lambda[i + 1],      lambda[i + 2],      wd_[i],
                                    wd_[i + 1],     wd_[i + 2],         Ad_(i, i),          Ad_(i + 1, i + 1),
                                    Ad_(i + 2, i + 2), Ad_(i + 1, i),   Ad_(i + 2, i),      Ad_(i + 2, i + 1),
                                    mud_[c]};
      J in[kLocal], out[3];
      for (int k = 0; k < kLocal; ++k) in[k] = J(local[k], k);
      pgs_node_detail::block_update<J>(in, cone, out);
      for (int a = 0; a < 3; ++a)
        for (int k = 0; k < kLocal; ++k) G_(i + a, k) = out[a].v[k];
      // ∂Φ_c/∂λ = L_c (direct) + W_c Â(rows of c, :)
      M.block(i, 0, 3, m).noalias() -= G_.block(i, 3, 3, 3) * Ad_.block(i, 0, 3, m);
      M.block(i, i, 3, 3) -= G_.block(i, 0, 3, 3);
    }
    lu_.compute(M.topLeftCorner(m, m).transpose());
    const Eigen::Map<const VecX<double>> lbar(out_adj, m);
    u_.head(m) = lu_.solve(lbar);
    // θ̄ = (∂Φ/∂θ)ᵀ u through the local inputs.
    Abar_.topLeftCorner(m, m).setZero();
    double* rbar = in_adj + m * (m + 1) / 2;
    double* mubar = rbar + m;
    double& cfmbar = mubar[nc];
    for (int c = 0; c < nc; ++c) {
      const int i = 3 * c;
      const Eigen::Matrix<double, kLocal, 1> g = G_.block(i, 0, 3, kLocal).transpose() * u_.segment<3>(i);
      for (int a = 0; a < 3; ++a) {
        const double wbar = g[3 + a];
        rbar[i + a] += wbar;  // w = Âλ + r
        Abar_.row(i + a).head(m) += wbar * lambda.transpose();
        Abar_(i + a, i + a) += g[6 + a];  // D = diag Â
      }
      Abar_(i + 1, i) += g[9];
      Abar_(i + 2, i) += g[10];
      Abar_(i + 2, i + 1) += g[11];
      mubar[c] += g[12];
    }
    double* Ab = in_adj;
    for (int i = 0; i < m; ++i) {
      cfmbar += Abar_(i, i);
      *Ab++ += Abar_(i, i);
      for (int j = i + 1; j < m; ++j) *Ab++ += Abar_(i, j) + Abar_(j, i);
    }
  }

 private:
  void reserve(int nc) {
    const int m = 3 * nc;
    if (static_cast<int>(rd_.size()) >= m) return;
    Ad_ = MatX<double>::Zero(m, m);
    M_ = MatX<double>::Zero(m, m);
    Abar_ = MatX<double>::Zero(m, m);
    G_ = MatX<double>::Zero(m, kLocal);
    rd_ = VecX<double>::Zero(m);
    mud_ = VecX<double>::Zero(nc);
    ld_ = VecX<double>::Zero(m);
    wd_ = VecX<double>::Zero(m);
    u_ = VecX<double>::Zero(m);
    x_.assign(static_cast<std::size_t>(m * (m + 1) / 2 + m + nc + 1), Rev(0.0));
    y_.assign(static_cast<std::size_t>(m), Rev(0.0));
  }

  FrictionCone cone_ = FrictionCone::kPyramid;
  MatX<double> Ad_, M_, Abar_, G_;
  VecX<double> rd_, mud_, ld_, wd_, u_;
  Eigen::PartialPivLU<MatX<double>> lu_;
  std::vector<Rev> x_, y_;
};

}  // namespace neuralsim
