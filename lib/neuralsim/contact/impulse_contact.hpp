// Impulse-level contact: NeuralSim's multibody constraint solver. Runs as a
// VelocityHook of semi-implicit Euler on the unconstrained velocity
// q̇⁺ = q̇ + h q̈ (Stewart & Trinkle 1996 time stepping; Catto 2005):
//   1. contacts at q (with a speculative margin),
//   2. contact Jacobians J (rows n, t1, t2 per contact, relative velocity of
//      a's point w.r.t. b's, in the contact frame),
//   3. M from CRBA, factored once (LDLT); Delassus A = J M⁻¹ Jᵀ,
//   4. velocity targets b per normal row (below), friction targets 0,
//   5. impulses λ by projected Gauss–Seidel (pgs.hpp),
//   6. q̇⁺ += M⁻¹ Jᵀ λ.
// Normal target (u_n⁺ >= b_n), for gap g and approach velocity u_n:
//   restitution (Newton's law): b_n = -e u_n when -u_n exceeds the threshold
//     and the gap closes within the step (g + h u_n < 0);
//   stabilization: b_n = -g / h for a positive gap (speculative: close it
//     exactly, never overshoot) and b_n = erp · (-g) / h for a penetration
//     (Baumgarte, Comput. Methods Appl. Mech. Eng. 1, 1972; as ODE's ERP);
//   b_n is the larger of the two, so position correction never adds to a
//   bounce (no energy gain from Baumgarte at impacts).
// All matrices are sized for the largest possible contact count at
// construction; a step only writes into them (no heap allocation once warm;
// see bench/contact_bench.cpp, which counts allocations).
#pragma once

#include <Eigen/Cholesky>

#include "neuralsim/contact/collision_detection.hpp"
#include "neuralsim/contact/pgs.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/dynamics/jacobian.hpp"

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
      : ldlt_(model.nv) {
    const int m = 3 * max_contacts, nv = model.nv;
    J_ = MatX<S>::Zero(m, nv);
    MinvJt_ = MatX<S>::Zero(nv, m);
    A_ = MatX<S>::Zero(m, m);
    r_ = VecX<S>::Zero(m);
    lambda_ = VecX<S>::Zero(m);
    mu_ = VecX<S>::Zero(max_contacts);
    dqd_ = VecX<S>::Zero(nv);
    Jp_ = MatX<S>::Zero(6, nv);
    warm_.assign(static_cast<size_t>(num_pairs) * 8, Vec3<S>::Zero());
    warm_stamp_.assign(warm_.size(), -2);
  }

  const ImpulseStats& stats() const { return stats_; }

  void solve(const Model<S>& model, Data<S>& data, const VecX<S>& q, VecX<S>& qd, double h,
             ContactGeometry<S>& geometry, const ContactParameters<S>& p, const ContactSettings& settings) {
    ++step_;
    const int nc = geometry.detect(model, data, false, settings.margin);
    stats_.last_contacts = nc;
    if (nc == 0) return;
    Contact<S>* contacts = geometry.contacts().data();
    const int m = 3 * nc, nv = model.nv;

    crba(model, data, q);
    ldlt_.compute(data.M);

    for (int c = 0; c < nc; ++c) {
      const Contact<S>& ct = contacts[c];
      auto rows = J_.block(3 * c, 0, 3, nv);
      rows.setZero();
      for (int side = 0; side < 2; ++side) {
        const int body = side == 0 ? ct.body_a : ct.body_b;
        if (body < 0) continue;
        const Transform<S>& X = data.X_world[body];
        point_jacobian(model, data, body, Vec3<S>(X.E * (ct.point - X.r)), Jp_);
        if (side == 0)
          rows.noalias() += ct.frame.transpose() * Jp_.bottomRows(3);
        else
          rows.noalias() -= ct.frame.transpose() * Jp_.bottomRows(3);
      }
    }
    auto MinvJt = MinvJt_.leftCols(m);
    MinvJt = J_.topRows(m).transpose();
    ldlt_.solveInPlace(MinvJt);
    A_.topLeftCorner(m, m).noalias() = J_.topRows(m) * MinvJt;
    r_.head(m).noalias() = J_.topRows(m) * qd;  // contact-frame velocities at q̇⁺

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

    const PgsResult res = solve_pgs<S>(A_, r_, mu_, nc, p.cfm, settings.friction_cone, settings.pgs, lambda_);
    ++stats_.solves;
    stats_.total_iterations += res.iterations;
    stats_.last_iterations = res.iterations;
    stats_.max_iterations = std::max(stats_.max_iterations, res.iterations);
    stats_.last_max_delta = res.max_delta;
    if (!res.converged) ++stats_.unconverged;

    dqd_.noalias() = MinvJt * lambda_.head(m);
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

  // Impulses of the last solve, (n, t1, t2) per contact.
  const VecX<S>& impulses() const { return lambda_; }

 private:
  Eigen::LDLT<MatX<S>> ldlt_;
  MatX<S> J_, MinvJt_, A_, Jp_;
  VecX<S> r_, lambda_, mu_, dqd_;
  std::vector<Vec3<S>> warm_;
  std::vector<long long> warm_stamp_;
  long long step_ = 0;
  ImpulseStats stats_;
};

}  // namespace neuralsim
