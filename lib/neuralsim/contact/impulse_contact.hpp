// Impulse-level contact: NeuralSim's multibody constraint solver. Runs as a
// VelocityHook of semi-implicit Euler on the unconstrained velocity
// q̇⁺ = q̇ + h q̈ (Stewart & Trinkle 1996 time stepping; Catto 2005):
//   1. contacts at q (with a speculative margin),
//   2. one row per contact direction (n, t1, t2): the relative velocity of
//      a's point w.r.t. b's along d is J_r q̇ = w_rᵀ(V_a - V_b), with V the
//      bodies' world spatial velocities and w_r = [p × d; d] the unit force
//      along d at the contact point p (world coordinates),
//   3. the Delassus matrix A = J M⁻¹ Jᵀ from the articulated-body
//      factorization M⁻¹ = Kᵀ D⁻¹ K of the step's aba() call
//      (inverse_inertia.hpp): one backward sweep along the contact bodies'
//      paths to the root per row gives u_r = K Jᵀ e_r, and A(r, s) is the sum
//      of u_rᵀ D⁻¹ u_s over the joints both paths share. No M, no
//      factorization and no Jacobian matrix are formed,
//   4. velocity targets b per normal row (below), friction targets 0,
//   5. impulses λ by projected Gauss–Seidel (pgs.hpp),
//   6. q̇⁺ += M⁻¹ Jᵀ λ = Kᵀ D⁻¹ (Σ λ_r u_r): one forward sweep.
// Normal target (u_n⁺ >= b_n), for gap g and approach velocity u_n:
//   restitution (Newton's law): b_n = -e u_n when -u_n exceeds the threshold
//     and the gap closes within the step (g + h u_n < 0);
//   stabilization: b_n = -g / h for a positive gap (speculative: close it
//     exactly, never overshoot) and b_n = erp · (-g) / h for a penetration
//     (Baumgarte, Comput. Methods Appl. Mech. Eng. 1, 1972; as ODE's ERP);
//   b_n is the larger of the two, so position correction never adds to a
//   bounce (no energy gain from Baumgarte at impacts).
// Precondition of solve(): `data` holds aba() at q (X_world, the
// articulated-body factorization), as in a Stepper velocity hook, which
// runs right after the step's aba().
// All matrices are sized for the largest possible contact count at
// construction; a step only writes into them (no heap allocation once warm;
// see bench/contact_bench.cpp, which counts allocations).
#pragma once

#include "neuralsim/contact/collision_detection.hpp"
#include "neuralsim/contact/pgs.hpp"
#include "neuralsim/dynamics/inverse_inertia.hpp"

namespace neuralsim {

struct ImpulseStats {
  long long solves = 0;            // steps with at least one contact
  long long total_iterations = 0;  // PGS sweeps over all solves
  long long unconverged = 0;       // solves that hit the iteration limit
  int last_iterations = 0;
  int max_iterations = 0;
  int last_contacts = 0;
  double last_max_delta = 0;
  double mean_iterations() const { return solves ? double(total_iterations) / solves : 0.0; }
};

template <class S>
class ImpulseSolver {
 public:
  ImpulseSolver(const Model<S>& model, int max_contacts, int num_pairs)
      : n_(model.num_bodies()), response_(model.num_bodies()) {
    const int m = 3 * max_contacts;
    A_ = MatX<S>::Zero(m, m);
    r_ = VecX<S>::Zero(m);
    lambda_ = VecX<S>::Zero(m);
    mu_ = VecX<S>::Zero(max_contacts);
    dqd_ = VecX<S>::Zero(model.nv);
    w_.assign(m, Vec6<S>::Zero());
    V_.assign(n_, Vec6<S>::Zero());
    Y_.assign(static_cast<size_t>(m) * n_, Vec6<S>::Zero());
    Z_.assign(Y_.size(), Vec6<S>::Zero());
    on_path_.assign(static_cast<size_t>(max_contacts) * n_, 0);
    path_.assign(static_cast<size_t>(max_contacts) * n_, 0);
    path_length_.assign(max_contacts, 0);
    common_.assign(n_, 0);
    warm_.assign(static_cast<size_t>(num_pairs) * 8, Vec3<S>::Zero());
    warm_stamp_.assign(warm_.size(), -2);
  }

  const ImpulseStats& stats() const { return stats_; }
  // solve_pgs is replaced by `o` while o.solve is set (pgs.hpp).
  void set_pgs_override(PgsOverride<S> o) { pgs_override_ = o; }

  void solve(const Model<S>& model, Data<S>& data, const VecX<S>& q, VecX<S>& qd, double h,
             ContactGeometry<S>& geometry, const ContactParameters<S>& p, const ContactSettings& settings) {
    ++step_;
    const int nc = geometry.detect(model, data, false, settings.margin);
    stats_.last_contacts = nc;
    if (nc == 0) return;
    Contact<S>* contacts = geometry.contacts().data();
    const int m = 3 * nc;

    (void)q;  // the kinematics and inertias of q are in `data` (precondition)
    complete_articulated_factorization(model, data);  // D⁻¹, U of a floating base

    // Unit row forces w_r = [p × d; d], d = frame column (n, t1, t2), and
    // their innovations u_r = K Jᵀ e_r along the contact bodies' paths.
    for (int c = 0; c < nc; ++c) {
      const Contact<S>& ct = contacts[c];
      mark_path(c, ct.body_a, ct.body_b, model);
      for (int k = 0; k < 3; ++k) {
        const int r = 3 * c + k;
        const Vec3<S> d = ct.frame.col(k);
        w_[r] << ct.point.cross(d), d;
        Vec6<S>* Y = &Y_[static_cast<size_t>(r) * n_];
        for (int l = 0; l < path_length_[c]; ++l) Y[path_[c * n_ + l]].setZero();
        if (ct.body_a >= 0) inverse_inertia_path(model, data, ct.body_a, w_[r], Y);
        if (ct.body_b >= 0) inverse_inertia_path(model, data, ct.body_b, Vec6<S>(-w_[r]), Y);
        Vec6<S>* Z = &Z_[static_cast<size_t>(r) * n_];  // D⁻¹ u_r
        for (int l = 0; l < path_length_[c]; ++l) {
          const int i = path_[c * n_ + l];
          const int nv = model.joints[i].nv;
          if (nv == 1)
            Z[i][0] = data.Dinv[i](0, 0) * Y[i][0];
          else if (nv > 1)
            Z[i] = data.Dinv[i] * Y[i];  // Dinv and Y are zero beyond nv
        }
      }
    }
    // A(r, s) = Σ over the joints on both paths of u_rᵀ D⁻¹ u_s.
    for (int c1 = 0; c1 < nc; ++c1)
      for (int c2 = c1; c2 < nc; ++c2) {
        int nc12 = 0;
        for (int l = 0; l < path_length_[c1]; ++l) {
          const int i = path_[c1 * n_ + l];
          if (on_path_[c2 * n_ + i]) common_[nc12++] = i;
        }
        for (int k1 = 0; k1 < 3; ++k1)
          for (int k2 = c1 == c2 ? k1 : 0; k2 < 3; ++k2) {
            const int r1 = 3 * c1 + k1, r2 = 3 * c2 + k2;
            const Vec6<S>* Y = &Y_[static_cast<size_t>(r1) * n_];
            const Vec6<S>* Z = &Z_[static_cast<size_t>(r2) * n_];
            S sum = S(0);
            for (int l = 0; l < nc12; ++l) {
              const int i = common_[l];
              sum += model.joints[i].nv == 1 ? S(Y[i][0] * Z[i][0]) : S(Y[i].dot(Z[i]));
            }
            A_(r1, r2) = sum;
            A_(r2, r1) = sum;
          }
      }
    // Contact-frame velocities at q̇⁺: J q̇⁺ from the bodies' world velocities.
    world_velocities(model, data, qd, V_);
    for (int r = 0; r < m; ++r) r_[r] = w_[r].dot(relative(contacts[r / 3], V_));

    using std::max;
    for (int c = 0; c < nc; ++c) {
      const Contact<S>& ct = contacts[c];
      const S un = r_[3 * c], g = ct.distance;
      S b = g > S(0) ? S(-g / h) : S(p.erp * (-g) / h);
      if (-un > p.restitution_threshold && g + S(h) * un < S(0)) {
        const S bounce = -p.restitution * un;
        if (bounce > b) b = bounce;
      }
      r_[3 * c] = un - b;
      mu_[c] = p.friction;
      const int key = ct.pair * 8 + ct.feature;
      if (settings.pgs.warm_start && warm_stamp_[key] == step_ - 1)
        lambda_.template segment<3>(3 * c) = warm_[key];
      else
        lambda_.template segment<3>(3 * c).setZero();
    }

    const PgsResult res =
        pgs_override_.solve
            ? pgs_override_.solve(pgs_override_.context, A_, r_, mu_, nc, p.cfm, settings.friction_cone, settings.pgs,
                                  lambda_)
            : solve_pgs<S>(A_, r_, mu_, nc, p.cfm, settings.friction_cone, settings.pgs, lambda_);
    ++stats_.solves;
    stats_.total_iterations += res.iterations;
    stats_.last_iterations = res.iterations;
    stats_.max_iterations = std::max(stats_.max_iterations, res.iterations);
    stats_.last_max_delta = res.max_delta;
    if (!res.converged) ++stats_.unconverged;

    // Δq̇ = M⁻¹Jᵀλ = Kᵀ D⁻¹ Σ λ_r u_r: the innovations are summed, then one
    // forward sweep.
    for (auto& u : response_.u) u.setZero();
    for (int r = 0; r < m; ++r) {
      const int c = r / 3;
      const Vec6<S>* Y = &Y_[static_cast<size_t>(r) * n_];
      for (int l = 0; l < path_length_[c]; ++l) {
        const int i = path_[c * n_ + l];
        response_.u[i] += lambda_[r] * Y[i];
      }
    }
    inverse_inertia_forward(model, data, response_, &dqd_);
    qd += dqd_;
    for (int c = 0; c < nc; ++c) {
      Contact<S>& ct = contacts[c];
      const Vec3<S> l = lambda_.template segment<3>(3 * c);
      ct.normal_force = l[0] / S(h);
      ct.force = ct.frame * l / S(h);
      const int key = ct.pair * 8 + ct.feature;
      warm_[key] = l;
      warm_stamp_[key] = step_;
    }
  }


 private:
  // V_a - V_b for a contact's two bodies (the world has V = 0).
  static Vec6<S> relative(const Contact<S>& ct, const std::vector<Vec6<S>>& V) {
    Vec6<S> d = Vec6<S>::Zero();
    if (ct.body_a >= 0) d += V[ct.body_a];
    if (ct.body_b >= 0) d -= V[ct.body_b];
    return d;
  }

  // Marks the joints on the paths of bodies a and b to the root as contact
  // c's (on_path_, and their list in path_).
  void mark_path(int c, int a, int b, const Model<S>& model) {
    char* on = &on_path_[static_cast<size_t>(c) * n_];
    int* list = &path_[static_cast<size_t>(c) * n_];
    for (int i = 0; i < n_; ++i) on[i] = 0;
    int len = 0;
    for (int body : {a, b})
      for (int i = body; i >= 0 && !on[i]; i = model.joints[i].parent) {
        on[i] = 1;
        list[len++] = i;
      }
    path_length_[c] = len;
  }

  int n_;  // bodies
  InverseInertiaWorkspace<S> response_;
  MatX<S> A_;
  VecX<S> r_, lambda_, mu_, dqd_;
  std::vector<Vec6<S>> w_, V_;
  std::vector<Vec6<S>> Y_, Z_;  // per row and body: u_r = K Jᵀ e_r and D⁻¹ u_r
  std::vector<char> on_path_;   // per contact and body
  std::vector<int> path_, path_length_, common_;
  std::vector<Vec3<S>> warm_;
  std::vector<long long> warm_stamp_;
  long long step_ = 0;
  ImpulseStats stats_;
  PgsOverride<S> pgs_override_;
};

}  // namespace neuralsim
