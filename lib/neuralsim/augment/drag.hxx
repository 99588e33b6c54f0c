// Implementation of drag.hpp (declarations and documentation there).
#pragma once

#include <cmath>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/grad/tape.hpp"
#include "neuralsim/step/external_force.hpp"

namespace neuralsim {

inline Eigen::Vector3d link_axis(const Model<double>& model, int body) {
  const LinkLength& l = model.bodies[body].length_spec;
  return l.enabled ? l.axis : Eigen::Vector3d::UnitX();
}

template <class S>
Vec3<S> link_com_velocity_world(const Model<S>& model, const Data<S>& data, int body) {
  return body_point_velocity_world(data, body, model.bodies[body].inertia.com());
}

template <class S>
Vec3<S> link_com_world(const Model<S>& model, const Data<S>& data, int body) {
  return body_point_world(data, body, model.bodies[body].inertia.com());
}

template <class S>
S speed_of(const Vec3<S>& v) {
  using std::sqrt;
  const S v2 = v.squaredNorm();
  if (!(to_double(v2) > 0.0)) return S(0.0);
  return sqrt(v2);
}

template <class S>
S planar_angle(const Vec3<S>& a, const Vec3<S>& v) {
  using std::atan2;
  const S cross = a.x() * v.y() - a.y() * v.x();
  const S dot = a.x() * v.x() + a.y() * v.y();
  if (!(to_double(cross) != 0.0 || to_double(dot) != 0.0)) return S(0.0);
  return atan2(cross, dot);
}

template <class S>
Vec3<S> drag_force_world(const DragLaw& law, const Vec3<S>& axis_world, const Vec3<S>& v) {
  Vec3<S> f = Vec3<S>::Zero();
  if (law.linear != 0.0) f -= S(law.linear) * v;
  if (law.normal != 0.0) {
    const Vec3<S> v_perp = v - axis_world.dot(v) * axis_world;
    f -= S(law.normal) * v_perp;
  }
  if (law.quadratic != 0.0) f -= (S(law.quadratic) * speed_of(v)) * v;
  return f;
}

template <class S>
void apply_drag(const Model<S>& model, Data<S>& data, int body, const Eigen::Vector3d& axis_body, const DragLaw& law) {
  const Vec3<S> v = link_com_velocity_world(model, data, body);
  const Vec3<S> a = data.X_world[body].E.transpose() * axis_body.template cast<S>();
  const Vec3<S> f = drag_force_world(law, a, v);
  add_world_force_at_point<S>(data, body, link_com_world(model, data, body), f);
}

// ============================================================ reverse mode

template <class S>
void pack_link_state(const Model<S>& model, const Data<S>& data, int body, S* out) {
  const Transform<S>& X = data.X_world[body];
  for (int k = 0; k < 9; ++k) out[k] = X.E.data()[k];
  for (int k = 0; k < 3; ++k) out[9 + k] = X.r[k];
  for (int k = 0; k < 6; ++k) out[12 + k] = data.v[body][k];
  const Vec3<S> c = model.bodies[body].inertia.com();
  for (int k = 0; k < 3; ++k) out[18 + k] = c[k];
}

namespace drag_detail {

using Mat3d = Eigen::Matrix3d;
using Vec3d = Eigen::Vector3d;

// A packed link state, unpacked.
struct LinkState {
  Mat3d E;
  Vec3d r, w, vo, c;
  explicit LinkState(const double* x) {
    E = Eigen::Map<const Mat3d>(x);
    r = Vec3d(x[9], x[10], x[11]);
    w = Vec3d(x[12], x[13], x[14]);
    vo = Vec3d(x[15], x[16], x[17]);
    c = Vec3d(x[18], x[19], x[20]);
  }
  // The COM velocity in body coordinates (link_com_velocity_world before its rotation).
  Vec3d com_velocity_body() const { return vo + w.cross(c); }
};

// Adjoint of a packed link state.
struct LinkStateAdjoint {
  Mat3d E = Mat3d::Zero();
  Vec3d r = Vec3d::Zero(), w = Vec3d::Zero(), vo = Vec3d::Zero(), c = Vec3d::Zero();
  // Through u = v_o + ω × c: ⟨ū, ω × c⟩ = ⟨ω, c × ū⟩ = ⟨c, ū × ω⟩.
  void add_com_velocity_body(const LinkState& s, const Vec3d& ubar) {
    vo += ubar;
    w += s.c.cross(ubar);
    c += ubar.cross(s.w);
  }
  // Through y = Eᵀ x (x a body vector): Ē += x ȳᵀ, x̄ = E ȳ (returned).
  Vec3d add_rotate_to_world(const LinkState& s, const Vec3d& x, const Vec3d& ybar) {
    E += x * ybar.transpose();
    return s.E * ybar;
  }
  void write(double* g) const {
    for (int k = 0; k < 9; ++k) g[k] += E.data()[k];
    for (int k = 0; k < 3; ++k) {
      g[9 + k] += r[k];
      g[12 + k] += w[k];
      g[15 + k] += vo[k];
      g[18 + k] += c[k];
    }
  }
};

inline double change_value(AugmentMode mode, double a, double y) {
  switch (mode) {
    case AugmentMode::kResidual: return y;
    case AugmentMode::kScale: return a * y;
    case AugmentMode::kReplace: return y - a;
  }
  return y;
}
inline double change_derivative(AugmentMode mode, double a) { return mode == AugmentMode::kScale ? a : 1.0; }

}  // namespace drag_detail

inline void LinkInputsNode::add_quantity(InputKind kind, int link, const Eigen::Vector3d& axis) {
  if (link < 0 || link >= num_links_) throw InvalidArgument("LinkInputsNode: no such link slot");
  if (kind != InputKind::kLinkLinearVelocity && kind != InputKind::kLinkAngularVelocity &&
      kind != InputKind::kLinkAngleOfAttack && kind != InputKind::kLinkSpeed)
    throw InvalidArgument("LinkInputsNode: not a link quantity with a VJP");
  items_.push_back({kind, link, axis});
  num_outputs_ += width(kind);
}

inline void LinkInputsNode::evaluate(const double* x, double* y) const {
  using namespace drag_detail;
  for (const Item& it : items_) {
    const LinkState s(x + it.link * kLinkStateSize);
    switch (it.kind) {
      case InputKind::kLinkLinearVelocity:
      case InputKind::kLinkAngularVelocity: {
        const Vec3d wv = s.E.transpose() * (it.kind == InputKind::kLinkLinearVelocity ? s.vo : s.w);
        for (int i = 0; i < 3; ++i) *y++ = wv[i];
        break;
      }
      case InputKind::kLinkAngleOfAttack: {
        const Vec3d a = s.E.transpose() * it.axis;
        *y++ = planar_angle(a, Vec3d(s.E.transpose() * s.com_velocity_body()));
        break;
      }
      default:
        *y++ = speed_of(Vec3d(s.E.transpose() * s.com_velocity_body()));
        break;
    }
  }
}

inline void LinkInputsNode::record(Tape& tape, const Rev* x, Rev* y) {
  xv_.resize(static_cast<std::size_t>(num_inputs()));
  yv_.resize(static_cast<std::size_t>(num_outputs()));
  for (int k = 0; k < num_inputs(); ++k) xv_[k] = x[k].value();
  evaluate(xv_.data(), yv_.data());
  tape.external(*this, x, num_inputs(), yv_.data(), y, num_outputs());
}

inline void LinkInputsNode::vjp(const ExternalCall& call, const double* ybar, double* xbar) {
  using namespace drag_detail;
  for (const Item& it : items_) {
    const double* x = call.x + it.link * kLinkStateSize;
    const LinkState s(x);
    LinkStateAdjoint g;
    switch (it.kind) {
      case InputKind::kLinkLinearVelocity:
      case InputKind::kLinkAngularVelocity: {
        const bool lin = it.kind == InputKind::kLinkLinearVelocity;
        const Vec3d b = g.add_rotate_to_world(s, lin ? s.vo : s.w, Vec3d(ybar[0], ybar[1], ybar[2]));
        (lin ? g.vo : g.w) += b;
        ybar += 3;
        break;
      }
      case InputKind::kLinkAngleOfAttack: {
        // α = atan2(a_x v_y - a_y v_x, a_x v_x + a_y v_y), a = Eᵀ axis, v = Eᵀ u.
        const Vec3d u = s.com_velocity_body();
        const Vec3d a = s.E.transpose() * it.axis, v = s.E.transpose() * u;
        const double cr = a.x() * v.y() - a.y() * v.x(), dt = a.x() * v.x() + a.y() * v.y();
        const double abar = *ybar++;
        if (!(cr != 0.0 || dt != 0.0)) break;  // planar_angle: constant 0 there
        const double r = 1.0 / (dt * dt + cr * cr);
        const double g1 = abar * dt * r, g2 = -abar * cr * r;  // ∂/∂cross, ∂/∂dot
        const Vec3d ab(g1 * v.y() + g2 * v.x(), -g1 * v.x() + g2 * v.y(), 0.0);
        const Vec3d vb(-g1 * a.y() + g2 * a.x(), g1 * a.x() + g2 * a.y(), 0.0);
        g.add_rotate_to_world(s, it.axis, ab);
        g.add_com_velocity_body(s, g.add_rotate_to_world(s, u, vb));
        break;
      }
      default: {
        const Vec3d u = s.com_velocity_body();
        const Vec3d v = s.E.transpose() * u;
        const double sbar = *ybar++;
        const double v2 = v.squaredNorm();
        if (!(v2 > 0.0)) break;  // speed_of: constant 0 there
        g.add_com_velocity_body(s, g.add_rotate_to_world(s, u, Vec3d(v * (sbar / std::sqrt(v2)))));
        break;
      }
    }
    g.write(xbar + it.link * kLinkStateSize);
  }
}

inline DragSiteNode::DragSiteNode(SiteQuantity quantity, AugmentMode mode, AugmentFrame frame, const DragLaw& law,
                                  const Eigen::Vector3d& axis_body)
    : quantity_(quantity), mode_(mode), frame_(frame), law_(law), axis_(axis_body) {
  if (!is_drag_site(quantity)) throw InvalidArgument("DragSiteNode: not a drag site");
  if (quantity == SiteQuantity::kDragWrench && mode == AugmentMode::kScale)
    throw InvalidArgument("DragSiteNode: a drag wrench's couple has no analytical value to scale");
}

inline void DragSiteNode::evaluate(const double* x, double* out) const {
  using namespace drag_detail;
  const LinkState s(x);
  const double* y = x + kLinkStateSize;
  const Vec3d v = s.E.transpose() * s.com_velocity_body();
  const Vec3d a = s.E.transpose() * axis_;
  Vec3d f = drag_force_world(law_, a, v);
  if (quantity_ == SiteQuantity::kDragCoefficient) {
    const double delta = change_value(mode_, law_.linear, y[0]);
    if (delta != 0.0) f -= delta * v;
  } else {
    const Vec3d yv(y[0], y[1], y[2]);
    const bool body = frame_ == AugmentFrame::kBody;
    if (mode_ == AugmentMode::kReplace) {
      f = body ? Vec3d(s.E.transpose() * yv) : yv;
    } else {
      Vec3d delta = yv;
      if (mode_ == AugmentMode::kScale) {
        const Vec3d f_frame = body ? Vec3d(s.E * f) : f;
        delta = f_frame.cwiseProduct(yv);
      }
      if (!(delta[0] == 0.0 && delta[1] == 0.0 && delta[2] == 0.0)) f += body ? Vec3d(s.E.transpose() * delta) : delta;
    }
  }
  // add_world_force_at_point at the COM (link_com_world).
  const Vec3d p = s.r + s.E.transpose() * s.c;
  const Vec3d fb = s.E * f;
  const Vec3d pb = s.E * (p - s.r);
  Vec3d t = pb.cross(fb);
  // A wrench's couple (residual or replace of 0: y itself), in the site's frame.
  if (quantity_ == SiteQuantity::kDragWrench) t += frame_ == AugmentFrame::kBody ? Vec3d(y[3], y[4], y[5])
                                                                               : Vec3d(s.E * Vec3d(y[3], y[4], y[5]));
  for (int k = 0; k < 3; ++k) {
    out[k] = t[k];
    out[3 + k] = fb[k];
  }
}

inline void DragSiteNode::record(Tape& tape, const Rev* x, Rev* out) {
  double xv[kMaxInputs], yv[6];
  for (int k = 0; k < num_inputs(); ++k) xv[k] = x[k].value();
  evaluate(xv, yv);
  tape.external(*this, x, num_inputs(), yv, out, 6);
}

inline void DragSiteNode::vjp(const ExternalCall& call, const double* obar, double* xbar) {
  using namespace drag_detail;
  const LinkState s(call.x);
  const double* y = call.x + kLinkStateSize;
  double* ybar = xbar + kLinkStateSize;
  LinkStateAdjoint g;
  // Forward values again (a few dozen flops).
  const Vec3d u = s.com_velocity_body();
  const Vec3d v = s.E.transpose() * u;
  const Vec3d a = s.E.transpose() * axis_;
  const Vec3d fd = drag_force_world(law_, a, v);
  Vec3d f = fd;
  const Vec3d yv = quantity_ != SiteQuantity::kDragCoefficient ? Vec3d(y[0], y[1], y[2]) : Vec3d(y[0], 0.0, 0.0);
  const bool body = frame_ == AugmentFrame::kBody;
  double delta_c = 0.0;
  Vec3d f_frame = Vec3d::Zero(), delta = Vec3d::Zero();
  if (quantity_ == SiteQuantity::kDragCoefficient) {
    delta_c = change_value(mode_, law_.linear, y[0]);
    if (delta_c != 0.0) f -= delta_c * v;
  } else if (mode_ == AugmentMode::kReplace) {
    f = body ? Vec3d(s.E.transpose() * yv) : yv;
  } else {
    delta = yv;
    if (mode_ == AugmentMode::kScale) {
      f_frame = body ? Vec3d(s.E * fd) : fd;
      delta = f_frame.cwiseProduct(yv);
    }
    if (!(delta[0] == 0.0 && delta[1] == 0.0 && delta[2] == 0.0)) f += body ? Vec3d(s.E.transpose() * delta) : delta;
  }
  const Vec3d p = s.r + s.E.transpose() * s.c;
  const Vec3d d = p - s.r;
  const Vec3d fb = s.E * f, pb = s.E * d;
  // out = [pb × fb; fb]: ⟨t̄, p × f⟩ = ⟨p, f × t̄⟩ = ⟨f, t̄ × p⟩.
  const Vec3d tbar(obar[0], obar[1], obar[2]);
  if (quantity_ == SiteQuantity::kDragWrench) {
    // t += y_τ (body) or E y_τ (world): ȳ_τ = t̄ or Eᵀ t̄, Ē += t̄ y_τᵀ.
    const Vec3d yt(y[3], y[4], y[5]);
    const Vec3d ytbar = frame_ == AugmentFrame::kBody ? tbar : Vec3d(s.E.transpose() * tbar);
    if (frame_ != AugmentFrame::kBody) g.E += tbar * yt.transpose();
    for (int k = 0; k < 3; ++k) ybar[3 + k] += ytbar[k];
  }
  const Vec3d fbbar = Vec3d(obar[3], obar[4], obar[5]) + tbar.cross(pb);
  const Vec3d pbbar = fb.cross(tbar);
  // fb = E f, pb = E d: Ē += x̄ xᵀ.
  g.E += fbbar * f.transpose() + pbbar * d.transpose();
  const Vec3d fbar = s.E.transpose() * fbbar;
  const Vec3d dbar = s.E.transpose() * pbbar;
  // d = p - r, p = r + Eᵀc: r̄ = p̄ - d̄ = 0; Ē += c p̄ᵀ, c̄ += E p̄ (p̄ = d̄).
  g.E += s.c * dbar.transpose();
  g.c += s.E * dbar;
  // The network's change.
  Vec3d fdbar = Vec3d::Zero(), vbar = Vec3d::Zero();
  if (quantity_ == SiteQuantity::kDragCoefficient) {
    // f = f_d - δ v (δ depends on the network output: differentiated even where it is 0).
    fdbar = fbar;
    vbar -= delta_c * fbar;
    ybar[0] += -v.dot(fbar) * change_derivative(mode_, law_.linear);
  } else if (mode_ == AugmentMode::kReplace) {
    // f = y (world) or Eᵀ y (body): the drag law's value is discarded.
    if (body) {
      const Vec3d yb = g.add_rotate_to_world(s, yv, fbar);
      for (int k = 0; k < 3; ++k) ybar[k] += yb[k];
    } else {
      for (int k = 0; k < 3; ++k) ybar[k] += fbar[k];
    }
  } else {
    fdbar = fbar;
    // f = f_d + δ (world) or f_d + Eᵀ δ (body).
    const Vec3d deltabar = body ? g.add_rotate_to_world(s, delta, fbar) : fbar;
    if (mode_ == AugmentMode::kScale) {
      // δ = f_frame ∘ y, f_frame = f_d (world) or E f_d (body).
      for (int k = 0; k < 3; ++k) ybar[k] += f_frame[k] * deltabar[k];
      const Vec3d ffbar = yv.cwiseProduct(deltabar);
      if (body) {
        g.E += ffbar * fd.transpose();
        fdbar += s.E.transpose() * ffbar;
      } else {
        fdbar += ffbar;
      }
    } else {
      for (int k = 0; k < 3; ++k) ybar[k] += deltabar[k];
    }
  }
  // The drag law f_d = -c v - c_n (v - (a·v) a) - c_q |v| v.
  Vec3d abar = Vec3d::Zero();
  if (law_.linear != 0.0) vbar -= law_.linear * fdbar;
  if (law_.normal != 0.0) {
    const Vec3d vpbar = -law_.normal * fdbar;
    const double av = a.dot(v), apb = a.dot(vpbar);
    vbar += vpbar - apb * a;
    abar -= av * vpbar + apb * v;
  }
  if (law_.quadratic != 0.0) {
    const double v2 = v.squaredNorm();
    if (v2 > 0.0) {  // speed_of: constant 0 at v = 0
      const double sp = std::sqrt(v2);
      vbar -= (law_.quadratic * sp) * fdbar;
      const double spbar = -law_.quadratic * v.dot(fdbar);
      vbar += (spbar / sp) * v;
    }
  }
  // a = Eᵀ axis, v = Eᵀ u.
  g.add_rotate_to_world(s, axis_, abar);
  g.add_com_velocity_body(s, g.add_rotate_to_world(s, u, vbar));
  g.write(xbar);
}

}  // namespace neuralsim
