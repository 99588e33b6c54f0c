// Force-level contact (Hunt–Crossley, penalty; any friction law) against
// world planes on the reverse-mode tape as ONE external node per step
// (grad/tape.hpp), with a hand-written vector–Jacobian product.
//
// WHY. Taped, each contact of a force model records its narrow phase, the
// point velocity, the normal and friction laws and the wrench on its body
// operation by operation: ~250 nodes per contact, more than the rest of a
// Laikago step once ABA and the kinematics are nodes (docs/gradients.md has
// the profile). As one node the forward pass is the same arithmetic in
// double and the reverse pass one short sweep per contact.
//
// WHAT. The pairs whose hits are points fixed in the body up to a constant
// world offset, against a world plane (sphere, box, capsule and contact
// points: ContactGeometry::plane_witnesses); cylinders, shape–shape pairs and
// systems with a ContactForceModifier (neural contact sites) stay taped.
// Inputs: the 8 parameters of the force laws (stiffness, damping, exponent,
// friction, friction_velocity, viscous_friction, static_friction,
// stribeck_velocity), then per body that owns such a pair its world pose
// (X_world: E column-major, r) and body velocity v (as the KinematicsNode
// leaves them in Data<Rev>): 8 + 18 per body. Outputs: per body the contact
// wrench in body coordinates (6), added to data.f_ext. No contact within the
// margin: nothing is recorded.
//
// VJP. Per contact with vertex v = r + Eᵀℓ + o, plane (n, c): gap
// d = n·v - c, point p = v - n d/2, arm a = p - r, relative velocity
// u = Eᵀν + (Eᵀω) × a, depth δ = -d, rate δ̇ = -n·u, slip u_t = u - (n·u) n,
// force F = f_n(δ, δ̇) n + f_t(f_n, u_t), wrench E[a × F; F]; the sweep runs
// these backwards (y = E x ⇒ Ē += ȳ xᵀ, x̄ = Eᵀȳ; (a × F)·τ̄ ⇒ ā = F × τ̄,
// F̄ = τ̄ × a). The branches (gap within the margin, δ > 0, f_n > 0) are
// decided on values, as the taped laws decide them: a contact exactly at
// touchdown has the derivative of the side the forward pass took (none).
// Nothing is cached per call: the inputs determine every intermediate.
//
// The node holds a workspace: one node per thread, outliving every
// reverse() of a tape that recorded it.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "neuralsim/grad/rev_engine.hpp"

namespace neuralsim {

class ForceContactNode final : public ExternalFunction {
 public:
  static constexpr int kParameters = 8;
  static constexpr int kInputsPerBody = 18;

  explicit ForceContactNode(const ContactSystem<Rev>& system) : settings_(system.settings()) {
    const ContactGeometry<Rev>& g = system.geometry();
    handled_.assign(g.pairs().size(), 0);
    for (int pi = 0; pi < static_cast<int>(g.pairs().size()); ++pi)
      if (g.plane_witnesses(pi, witnesses_)) handled_[static_cast<std::size_t>(pi)] = 1;
    for (const PlaneWitness& w : witnesses_)
      if (std::find(bodies_.begin(), bodies_.end(), w.body) == bodies_.end()) bodies_.push_back(w.body);
    std::sort(bodies_.begin(), bodies_.end());
    for (PlaneWitness& w : witnesses_)
      slot_.push_back(static_cast<int>(std::lower_bound(bodies_.begin(), bodies_.end(), w.body) - bodies_.begin()));
    const int nb = static_cast<int>(bodies_.size());
    x_.assign(static_cast<std::size_t>(kParameters + kInputsPerBody * nb), Rev(0.0));
    xv_.assign(x_.size(), 0.0);
    yv_.assign(static_cast<std::size_t>(6 * nb), 0.0);
    y_.assign(yv_.size(), Rev(0.0));
    active_.assign(static_cast<std::size_t>(nb), 0);
  }

  // The pairs the node computes (1) in ContactGeometry::pairs() order.
  const std::vector<char>& handled_pairs() const { return handled_; }
  bool handles_any() const { return !witnesses_.empty(); }

  // Adds the contact wrenches of the handled pairs at the kinematics in
  // `data` to data.f_ext; false (nothing done) when the system has a force
  // modifier, whose per-contact hooks only the taped path runs.
  bool record(Tape& tape, const ContactSystem<Rev>& system, Data<Rev>& data) {
    if (system.force_modifier() != nullptr) return false;
    const ContactParameters<Rev>& p = system.parameters();
    const Rev params[kParameters] = {p.stiffness,         p.damping,          p.exponent,        p.friction,
                                     p.friction_velocity, p.viscous_friction, p.static_friction, p.stribeck_velocity};
    Rev* x = x_.data();
    for (const Rev& v : params) *x++ = v;
    for (int b : bodies_) {
      const Transform<Rev>& X = data.X_world[static_cast<std::size_t>(b)];
      for (int c = 0; c < 9; ++c) *x++ = X.E(c % 3, c / 3);
      for (int c = 0; c < 3; ++c) *x++ = X.r[c];
      for (int c = 0; c < 6; ++c) *x++ = data.v[static_cast<std::size_t>(b)][c];
    }
    for (std::size_t k = 0; k < x_.size(); ++k) xv_[k] = x_[k].value();
    std::fill(yv_.begin(), yv_.end(), 0.0);
    std::fill(active_.begin(), active_.end(), 0);
    bool any = false;
    for (std::size_t w = 0; w < witnesses_.size(); ++w)
      if (contact(xv_.data(), w, yv_.data(), nullptr, nullptr)) {
        active_[static_cast<std::size_t>(slot_[w])] = 1;
        any = true;
      }
    if (!any) return true;
    tape.external(*this, x_.data(), static_cast<int>(x_.size()), yv_.data(), y_.data(), static_cast<int>(y_.size()));
    for (std::size_t k = 0; k < bodies_.size(); ++k) {
      if (!active_[k]) continue;
      Vec6<Rev>& f = data.f_ext[static_cast<std::size_t>(bodies_[k])];
      for (int c = 0; c < 6; ++c) f[c] += y_[6 * k + static_cast<std::size_t>(c)];
    }
    return true;
  }

  void vjp(const ExternalCall& call, const double* out_adj, double* in_adj) override {
    if (call.n_in != static_cast<int>(x_.size()) || call.n_out != static_cast<int>(y_.size()))
      throw std::logic_error("ForceContactNode::vjp: a call recorded by another node");
    for (std::size_t w = 0; w < witnesses_.size(); ++w) contact(call.x, w, nullptr, out_adj, in_adj);
  }

 private:
  // Contact of witness w at inputs x: forward (y != nullptr: adds its wrench
  // to y) or backward (adds (∂wrench/∂x)ᵀ ȳ to x̄). Returns whether it is
  // active (within the margin, with a positive normal force).
  bool contact(const double* x, std::size_t wi, double* y, const double* ybar, double* xbar) const {
    using V3 = Eigen::Vector3d;
    const PlaneWitness& w = witnesses_[wi];
    const int k = slot_[wi];
    const double* xb = x + kParameters + kInputsPerBody * k;
    const Eigen::Map<const Eigen::Matrix3d> E(xb);
    const Eigen::Map<const V3> r(xb + 9), om(xb + 12), nu(xb + 15);
    const V3& n = w.normal;
    const V3 vtx = r + E.transpose() * w.local + w.offset;
    const double d = n.dot(vtx) - w.plane_offset;
    if (d > settings_.margin) return false;
    const double depth = -d;
    if (!(depth > 0)) return false;  // both laws give no force (and no derivative)
    const V3 p = vtx - n * (d / 2);
    const V3 a = p - r;
    const V3 omw = E.transpose() * om, nuw = E.transpose() * nu;
    const V3 u = nuw + omw.cross(a);
    const double un = n.dot(u), rate = -un;
    const V3 ut = u - un * n;
    const double ks = x[0], cd = x[1], ex = x[2];
    const bool penalty = settings_.model == ContactModelType::kPenalty;
    const double P = penalty ? depth : std::pow(depth, ex);
    const double fn = penalty ? depth * (ks * depth + cd * rate) : P * (ks + cd * rate);
    if (!(fn > 0)) return false;
    // Friction (friction.hpp): f_t = -c u_t, c = μ f_n / s (+ μ_v f_n).
    const double mk = x[3], eps = x[4], mv = x[5], ms = x[6], vs = x[7];
    const FrictionModel fm = settings_.friction_model;
    const double v2 = ut.squaredNorm();
    const double s = std::sqrt(v2 + eps * eps);
    const double ee = fm == FrictionModel::kStribeck ? std::exp(-v2 / (vs * vs)) : 0.0;
    const double mu = fm == FrictionModel::kStribeck ? mk + (ms - mk) * ee : mk;
    double coef = mu * fn / s;
    if (fm != FrictionModel::kCoulomb) coef += mv * fn;
    const V3 F = fn * n - coef * ut;
    const V3 tw = a.cross(F);
    if (y != nullptr) {
      double* yk = y + 6 * k;
      const V3 tb = E * tw, fb = E * F;
      for (int c = 0; c < 3; ++c) {
        yk[c] += tb[c];
        yk[3 + c] += fb[c];
      }
      return true;
    }
    // ---- backward ----
    const Eigen::Map<const V3> tbar(ybar + 6 * k), fbar(ybar + 6 * k + 3);
    double* gb = xbar + kParameters + kInputsPerBody * k;
    Eigen::Map<Eigen::Matrix3d> Ebar(gb);
    Eigen::Map<V3> rbar(gb + 9), ombar(gb + 12), nubar(gb + 15);
    const V3 tw_bar = E.transpose() * tbar;
    V3 F_bar = E.transpose() * fbar;
    Ebar.noalias() += tbar * tw.transpose() + fbar * F.transpose();
    V3 a_bar = F.cross(tw_bar);
    F_bar += tw_bar.cross(a);
    // F = f_n n - coef u_t
    double fn_bar = n.dot(F_bar);
    const double coef_bar = -ut.dot(F_bar);
    V3 ut_bar = -coef * F_bar;
    const double mu_bar = coef_bar * fn / s;
    fn_bar += coef_bar * mu / s;
    const double s_bar = -coef_bar * mu * fn / (s * s);
    if (fm != FrictionModel::kCoulomb) {
      xbar[5] += coef_bar * fn;
      fn_bar += coef_bar * mv;
    }
    double v2_bar = s_bar / (2 * s);
    xbar[4] += s_bar * eps / s;
    if (fm == FrictionModel::kStribeck) {
      xbar[3] += mu_bar * (1 - ee);
      xbar[6] += mu_bar * ee;
      const double ee_bar = mu_bar * (ms - mk);
      v2_bar -= ee_bar * ee / (vs * vs);
      xbar[7] += ee_bar * ee * 2 * v2 / (vs * vs * vs);
    } else {
      xbar[3] += mu_bar;
    }
    ut_bar += 2 * v2_bar * ut;
    // Normal law.
    double depth_bar, rate_bar;
    if (penalty) {
      depth_bar = fn_bar * (2 * ks * depth + cd * rate);
      xbar[0] += fn_bar * depth * depth;
      xbar[1] += fn_bar * depth * rate;
      rate_bar = fn_bar * cd * depth;
    } else {
      depth_bar = fn_bar * ex * std::pow(depth, ex - 1) * (ks + cd * rate);
      xbar[0] += fn_bar * P;
      xbar[1] += fn_bar * P * rate;
      rate_bar = fn_bar * P * cd;
      xbar[2] += fn_bar * fn * std::log(depth);
    }
    // u_t = u - (n·u) n, rate = -n·u.
    const V3 u_bar = ut_bar - n * (n.dot(ut_bar) + rate_bar);
    // u = Eᵀν + (Eᵀω) × a
    const V3 omw_bar = a.cross(u_bar);
    a_bar += u_bar.cross(omw);
    nubar += E * u_bar;
    ombar += E * omw_bar;
    Ebar.noalias() += nu * u_bar.transpose() + om * omw_bar.transpose();
    // a = p - r, p = v - n d/2, d = n·v - c, δ = -d, v = r + Eᵀℓ + o
    rbar -= a_bar;
    const double d_bar = -depth_bar - 0.5 * n.dot(a_bar);
    const V3 v_bar = a_bar + d_bar * n;
    rbar += v_bar;
    Ebar.noalias() += w.local * v_bar.transpose();
    return true;
  }

  ContactSettings settings_;
  std::vector<PlaneWitness> witnesses_;
  std::vector<int> slot_;    // per witness: its body's position in bodies_
  std::vector<int> bodies_;  // bodies owning witnesses, ascending
  std::vector<char> handled_;
  std::vector<Rev> x_, y_;
  std::vector<double> xv_, yv_;
  std::vector<char> active_;
};

}  // namespace neuralsim
