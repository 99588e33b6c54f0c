// Body drag: the diagonal hydrodynamic damping of marine robotics, linear
// plus quadratic in the body-frame velocity (Fossen 2011, "Handbook of
// Marine Craft Hydrodynamics and Motion Control", §6.4, D(ν)ν with
// D(ν) = D_l + D_q·diag(|ν|)), one coefficient per body axis
// (model/model.hpp, BodyDrag).
//
// The reference point is the body's centre of mass c (body coordinates):
//   ν = [v_c; ω],  v_c = v_o + ω × c  (v_o, ω: data.v, the body origin's velocity)
//   F = -D_l,lin ∘ v_c - D_q,lin ∘ |v_c| ∘ v_c
//   τ = -D_l,rot ∘ ω  - D_q,rot ∘ |ω| ∘ ω
// The wrench (τ, F) acts at the COM; moved to the body origin, where
// data.f_ext is taken, it is [τ + c × F; F]. Its power is
//   ω·(τ + c × F) + v_o·F = ω·τ + v_c·F = -Σ_k (D_l,k + D_q,k |ν_k|) ν_k² ≤ 0
// for non-negative coefficients: drag only dissipates.
//
// |x|·x is C¹ (derivative 2|x|, 0 at x = 0), so the law needs no branch on
// a scalar's value: abs() of ceres::Jet and of the reverse-mode Rev carries
// the derivative sgn(x), which the product with x makes continuous. Which
// bodies are dragged is structural (BodyDrag::enabled), never read from a
// coefficient's value, so a coefficient fitted from 0 keeps ∂/∂D.
#pragma once

#include <cmath>

#include "neuralsim/model/data.hpp"

namespace neuralsim {

// The drag wrench [τ; F] of `drag` at the COM, in body axes, for the body
// velocity ν = [v_c; ω] of its centre of mass (note the order: linear
// first, as Fossen's ν; the returned wrench is [torque; force], as
// data.f_ext).
template <class S>
Vec6<S> body_drag_wrench_at_com(const BodyDrag<S>& drag, const Vec3<S>& v_com, const Vec3<S>& omega) {
  using std::abs;
  Vec6<S> w;
  for (int k = 0; k < 3; ++k) {
    w[3 + k] = -(drag.linear[k] * v_com[k] + drag.quadratic[k] * (abs(v_com[k]) * v_com[k]));
    w[k] = -(drag.linear[3 + k] * omega[k] + drag.quadratic[3 + k] * (abs(omega[k]) * omega[k]));
  }
  return w;
}

// The drag wrench of body i at its origin, body coordinates (as
// data.f_ext), from the body velocity data.v[i] = [ω; v_o].
template <class S>
Vec6<S> body_drag_wrench(const ::neuralsim::Body<S>& body, const Vec6<S>& v_body) {
  const Vec3<S> omega = v_body.template head<3>();
  const Vec3<S> c = body.inertia.com();
  const Vec3<S> v_com = v_body.template tail<3>() + omega.cross(c);
  Vec6<S> w = body_drag_wrench_at_com(body.drag, v_com, omega);
  w.template head<3>() += c.cross(Vec3<S>(w.template tail<3>()));
  return w;
}

// Adds the drag of every body that declares it to data.f_ext. Needs
// forward_kinematics with velocities (data.v). No allocation.
template <class S>
void add_body_drag(const Model<S>& model, Data<S>& data) {
  for (int i = 0; i < model.num_bodies(); ++i) {
    const ::neuralsim::Body<S>& b = model.bodies[i];
    if (b.drag.enabled) data.f_ext[i] += body_drag_wrench(b, data.v[i]);
  }
}

// Whether any body of `model` declares drag (a structural property: the
// stepper then runs forward kinematics before the forces every step).
template <class S>
bool has_body_drag(const Model<S>& model) {
  for (const ::neuralsim::Body<S>& b : model.bodies)
    if (b.drag.enabled) return true;
  return false;
}

}  // namespace neuralsim
