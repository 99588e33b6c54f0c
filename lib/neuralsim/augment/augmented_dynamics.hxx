// Implementation of augmented_dynamics.hpp (declarations and documentation there).
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/augment/drag.hpp"
#include "neuralsim/augment/network_node.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/step/external_force.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

namespace augment_detail {

// x += delta, skipped when delta is exactly zero (no value, no derivative).
template <class S>
inline void add_change(S& x, const S& delta) {
  if (!exactly_zero(delta)) x += delta;
}

template <class S>
inline bool all_exactly_zero(const Vec3<S>& v) {
  return exactly_zero(v[0]) && exactly_zero(v[1]) && exactly_zero(v[2]);
}

// The change of a scalar quantity a under mode and output y.
template <class S>
inline S change(AugmentMode mode, const S& a, const S& y) {
  switch (mode) {
    case AugmentMode::kResidual: return y;
    case AugmentMode::kScale: return a * y;
    case AugmentMode::kReplace: return y - a;
  }
  return y;
}

// a ← combine(mode, a, y) for a scalar.
template <class S>
inline void combine(AugmentMode mode, S& a, const S& y) {
  if (mode == AugmentMode::kReplace)
    a = y;
  else
    add_change(a, change(mode, a, y));
}

}  // namespace augment_detail

template <class S>
AugmentedDynamics<S>::AugmentedDynamics(const Model<S>& model, const Model<double>& model_double,
                                        std::vector<AugmentBlueprint> blueprints)
    : model_(model) {
  if (model.nv != model_double.nv || model.num_bodies() != model_double.num_bodies())
    throw InvalidArgument("AugmentedDynamics: the model and its double copy differ");
  for (std::size_t i = 0; i < blueprints.size(); ++i) {
    check_blueprint(blueprints[i], model_double);
    for (std::size_t k = 0; k < i; ++k)
      if (blueprints[k].name == blueprints[i].name)
        throw InvalidArgument("AugmentedDynamics: two augmentations are called '" + blueprints[i].name + "'");
  }
  actuation_ = VecX<S>::Zero(model.nv);
  for (std::size_t i = 0; i < blueprints.size(); ++i) {
    auto s = std::make_unique<Slot>();
    s->bp = std::move(blueprints[i]);
    s->index = static_cast<int>(i);
    s->offset = num_parameters_;
    num_parameters_ += static_cast<int>(s->bp.network.num_parameters());
    for (const AugmentInput& in : s->bp.inputs) {
      s->input_axes.push_back(in.index >= 0 && in.kind >= InputKind::kLinkPosition && in.kind <= InputKind::kLinkSpeed
                                  ? link_axis(model_double, in.index)
                                  : Eigen::Vector3d::UnitX());
      if (in.kind == InputKind::kJointU) {
        needs_controls_ = true;
        if (model_double.joints[in.index].dynamics.gear_ratio == 0.0)
          throw InvalidArgument("augmentation '" + s->bp.name + "': input '" + in.name +
                                "' needs a non-zero gear ratio (u = τ / gear)");
      }
    }
    if (s->bp.site.body >= 0 && is_link_site(s->bp.site.quantity)) s->site_axis = link_axis(model_double, s->bp.site.body);
    s->ws = nn::Workspace<S>(s->bp.network);
    s->x.assign(static_cast<std::size_t>(s->bp.network.input_dim()), S(0.0));
    s->y.assign(static_cast<std::size_t>(s->bp.network.output_dim()), S(0.0));
    const SiteQuantity q = s->bp.site.quantity;
    if (q == SiteQuantity::kContactNormalForce || q == SiteQuantity::kContactFrictionCoefficient)
      normal_slots_.push_back(static_cast<int>(i));
    else if (q == SiteQuantity::kContactFrictionForce)
      friction_slots_.push_back(static_cast<int>(i));
    else
      step_slots_.push_back(static_cast<int>(i));
    slots_.push_back(std::move(s));
  }
  gradient_.assign(static_cast<std::size_t>(num_parameters_), 0.0);
  if constexpr (kReverse)
    for (auto& s : slots_) {
      s->node = std::make_unique<NetworkNode>(s->bp.network, gradient_.data() + s->offset);
      s->from_link_node.assign(s->bp.inputs.size(), 0);
      auto link = std::make_unique<LinkInputsNode>();
      for (std::size_t k = 0; k < s->bp.inputs.size(); ++k) {
        const AugmentInput& in = s->bp.inputs[k];
        const bool world_velocity = (in.kind == InputKind::kLinkLinearVelocity ||
                                     in.kind == InputKind::kLinkAngularVelocity) &&
                                    in.frame != AugmentFrame::kBody;
        if (in.index < 0 ||
            !(world_velocity || in.kind == InputKind::kLinkAngleOfAttack || in.kind == InputKind::kLinkSpeed))
          continue;
        int slot = -1;
        for (std::size_t l = 0; l < s->links_of_node.size(); ++l)
          if (s->links_of_node[l] == in.index) slot = static_cast<int>(l);
        if (slot < 0) {
          slot = link->add_link();
          s->links_of_node.push_back(in.index);
        }
        link->add_quantity(in.kind, slot, s->input_axes[k]);
        s->from_link_node[k] = 1;
      }
      if (!link->empty()) {
        s->link_in.assign(static_cast<std::size_t>(link->num_inputs()), S(0.0));
        s->link_out.assign(static_cast<std::size_t>(link->num_outputs()), S(0.0));
        s->link_node = std::move(link);
      }
      const SiteQuantity q = s->bp.site.quantity;
      if (is_drag_site(q)) {
        s->drag_node = std::make_unique<DragSiteNode>(q, s->bp.mode, s->bp.site.frame, s->bp.site.drag, s->site_axis);
        s->drag_in.assign(static_cast<std::size_t>(s->drag_node->num_inputs()), S(0.0));
      }
    }
}

template <class S>
int AugmentedDynamics<S>::find(const std::string& name) const {
  for (const auto& s : slots_)
    if (s->bp.name == name) return s->index;
  return -1;
}

template <class S>
std::vector<std::string> AugmentedDynamics<S>::parameter_names() const {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(num_parameters_));
  for (const auto& s : slots_)
    for (nn::Index k = 0; k < s->bp.network.num_parameters(); ++k)
      names.push_back("augment." + s->bp.name + ".w" + std::to_string(k));
  return names;
}

template <class S>
void AugmentedDynamics<S>::get_parameters(double* out) const {
  for (const auto& s : slots_) s->bp.network.get_parameters(out + s->offset);
}

template <class S>
void AugmentedDynamics<S>::set_parameters(const double* values) {
  for (int i = 0; i < num_parameters_; ++i)
    if (!std::isfinite(values[i]))
      throw InvalidArgument("AugmentedDynamics::set_parameters: " + parameter_names()[i] + " is not finite");
  for (int i = 0; i < num_networks(); ++i) set_network_parameters(i, values + slots_[i]->offset);
}

template <class S>
void AugmentedDynamics<S>::set_network_parameters(int i, const double* values) {
  Slot& s = *slots_[i];
  s.bp.network.set_parameters(values);
  s.scalar_weights = false;
}

template <class S>
void AugmentedDynamics<S>::set_scalar_parameters(const S* values) {
  if constexpr (kReverse) {
    (void)values;
    throw InvalidArgument(
        "AugmentedDynamics<Rev>::set_scalar_parameters: network weights stay off the tape; use set_parameters "
        "and gradient()");
  } else if constexpr (std::is_same_v<S, double>) {
    set_parameters(values);
  } else {
    std::vector<double> v(static_cast<std::size_t>(num_parameters_));  // setup, not per step
    for (int i = 0; i < num_parameters_; ++i) v[i] = to_double(values[i]);
    set_parameters(v.data());
    for (auto& s : slots_) {
      const nn::Index n = s->bp.network.num_parameters();
      s->weights.assign(values + s->offset, values + s->offset + n);
      s->scalar_weights = true;
    }
  }
}

template <class S>
void AugmentedDynamics<S>::require_state(const char* function) const {
  if (q_ == nullptr)
    throw InvalidArgument(std::string("AugmentedDynamics::") + function +
                          ": the augmentation hook has not run in this step (install_augmentation installs it "
                          "before the contact hook)");
}

template <class S>
void AugmentedDynamics<S>::gather(Slot& s, const Contact<S>* contact, const S* normal_force) {
  const Data<S>& data = *data_;
  const VecX<S>& q = *q_;
  const VecX<S>& qd = *qd_;
  S* x = s.x.data();
  const S* from_node = nullptr;
  if constexpr (kReverse) {
    if (s.link_node) {
      record_link_inputs(s, data);
      from_node = s.link_out.data();
    }
  }
  for (std::size_t k = 0; k < s.bp.inputs.size(); ++k) {
    const AugmentInput& in = s.bp.inputs[k];
    if (from_node != nullptr && s.from_link_node[k]) {  // Rev: the LinkInputsNode's outputs
      const int n = in.kind == InputKind::kLinkLinearVelocity || in.kind == InputKind::kLinkAngularVelocity ? 3 : 1;
      for (int i = 0; i < n; ++i) *x++ = *from_node++;
      continue;
    }
    switch (in.kind) {
      case InputKind::kTime:
        *x++ = S(t_);
        break;
      case InputKind::kNoise: {
        std::uint64_t h = noise_hash(0, t_);
        for (Eigen::Index i = 0; i < q.size(); ++i) h = noise_hash(h, to_double(q[i]));
        for (Eigen::Index i = 0; i < qd.size(); ++i) h = noise_hash(h, to_double(qd[i]));
        *x++ = S(noise_input_value(h, in.index));
        break;
      }
      case InputKind::kJointQ: {
        const Joint<S>& j = model_.joints[in.index];
        for (int i = 0; i < j.nq; ++i) *x++ = q[j.idx_q + i];
        break;
      }
      case InputKind::kJointQd: {
        const Joint<S>& j = model_.joints[in.index];
        for (int i = 0; i < j.nv; ++i) *x++ = qd[j.idx_v + i];
        break;
      }
      case InputKind::kJointU: {
        const Joint<S>& j = model_.joints[in.index];
        for (int i = 0; i < j.nv; ++i) *x++ = actuation_[j.idx_v + i] / j.dynamics.gear_ratio;
        break;
      }
      case InputKind::kLinkPosition: {
        const Vec3<S>& r = data.X_world[in.index].r;
        for (int i = 0; i < 3; ++i) *x++ = r[i];
        break;
      }
      case InputKind::kLinkOrientation: {
        const Mat3<S>& E = data.X_world[in.index].E;  // R = Eᵀ, row-major R(r, c) = E(c, r)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) *x++ = E(c, r);
        break;
      }
      case InputKind::kLinkLinearVelocity:
      case InputKind::kLinkAngularVelocity: {
        const Vec6<S>& v = data.v[in.index];
        const Vec3<S> vb = in.kind == InputKind::kLinkLinearVelocity ? Vec3<S>(v.template tail<3>())
                                                                       : Vec3<S>(v.template head<3>());
        const Vec3<S> w = in.frame == AugmentFrame::kBody ? vb : Vec3<S>(data.X_world[in.index].E.transpose() * vb);
        for (int i = 0; i < 3; ++i) *x++ = w[i];
        break;
      }
      case InputKind::kLinkAngleOfAttack: {
        const Vec3<S> a = data.X_world[in.index].E.transpose() * s.input_axes[k].template cast<S>();
        *x++ = planar_angle(a, link_com_velocity_world(model_, data, in.index));
        break;
      }
      case InputKind::kLinkSpeed:
        *x++ = speed_of(link_com_velocity_world(model_, data, in.index));
        break;
      case InputKind::kContactNormal:
        for (int i = 0; i < 3; ++i) *x++ = contact->normal[i];
        break;
      case InputKind::kContactDepth:
        *x++ = -contact->distance;
        break;
      case InputKind::kContactDepthRate:
        *x++ = -contact->normal_velocity;
        break;
      case InputKind::kContactSlidingVelocity:
        for (int i = 0; i < 3; ++i) *x++ = contact->tangential_velocity[i];
        break;
      case InputKind::kContactNormalForce:
        *x++ = *normal_force;
        break;
    }
  }
}

template <class S>
Tape* AugmentedDynamics<S>::tape_for(const S* x, std::size_t n) const {
  if constexpr (kReverse) {
    Tape* tape = tape_;
    for (std::size_t i = 0; tape == nullptr && i < n; ++i) tape = x[i].tape();
    return tape;
  } else {
    (void)x;
    (void)n;
    return nullptr;
  }
}

template <class S>
void AugmentedDynamics<S>::record_link_inputs(Slot& s, const Data<S>& data) {
  if constexpr (kReverse) {
    for (std::size_t l = 0; l < s.links_of_node.size(); ++l)
      pack_link_state(model_, data, s.links_of_node[l], s.link_in.data() + l * kLinkStateSize);
    Tape* tape = tape_for(s.link_in.data(), s.link_in.size());
    if (tape != nullptr) {
      s.link_node->record(*tape, s.link_in.data(), s.link_out.data());
    } else {  // constants only: values, nothing to record
      double xv[8 * kLinkStateSize], yv[32];
      if (s.link_in.size() > 8 * kLinkStateSize || s.link_out.size() > 32) {
        std::vector<double> xs(s.link_in.size()), ys(s.link_out.size());  // rare: many links, constant inputs
        for (std::size_t k = 0; k < xs.size(); ++k) xs[k] = s.link_in[k].value();
        s.link_node->evaluate(xs.data(), ys.data());
        for (std::size_t k = 0; k < ys.size(); ++k) s.link_out[k] = Rev(ys[k]);
        return;
      }
      for (std::size_t k = 0; k < s.link_in.size(); ++k) xv[k] = s.link_in[k].value();
      s.link_node->evaluate(xv, yv);
      for (std::size_t k = 0; k < s.link_out.size(); ++k) s.link_out[k] = Rev(yv[k]);
    }
  } else {
    (void)s;
    (void)data;
  }
}

template <class S>
void AugmentedDynamics<S>::evaluate(Slot& s) {
  if constexpr (kReverse) {
    Tape* tape = tape_;
    for (std::size_t i = 0; tape == nullptr && i < s.x.size(); ++i) tape = s.x[i].tape();
    if (tape == nullptr)
      throw InvalidArgument("AugmentedDynamics<Rev>: augmentation '" + s.bp.name +
                            "' has only constant inputs and no tape was set (set_tape)");
    s.node->record(*tape, s.x.data(), s.y.data(), s.index);
  } else {
    if (s.scalar_weights)
      s.bp.network.forward_with_parameters(s.weights.data(), s.x.data(), s.y.data(), s.ws);
    else
      s.bp.network.forward(s.x.data(), s.y.data(), s.ws);
  }
}

template <class S>
void AugmentedDynamics<S>::apply_step_site(Slot& s, Data<S>& data) {
  using namespace augment_detail;
  using std::tanh;
  const AugmentSite& site = s.bp.site;
  const AugmentMode mode = s.bp.mode;
  switch (site.quantity) {
    case SiteQuantity::kJointTorque: {
      const Joint<S>& j = model_.joints[site.joint];
      for (int k = 0; k < j.nv; ++k) {
        const int i = j.idx_v + k;
        add_change(data.tau[i], change(mode, data.tau_passive[i], s.y[k]));
      }
      return;
    }
    case SiteQuantity::kJointDamping:
    case SiteQuantity::kJointFriction:
    case SiteQuantity::kJointSpringStiffness:
    case SiteQuantity::kJointTorqueOffset: {
      const Joint<S>& j = model_.joints[site.joint];
      const JointDynamics<S>& d = j.dynamics;
      const SiteQuantity q = site.quantity;
      const S& theta = q == SiteQuantity::kJointDamping    ? d.damping
                       : q == SiteQuantity::kJointFriction ? d.coulomb_friction
                       : q == SiteQuantity::kJointSpringStiffness ? d.spring_stiffness
                                                                  : d.torque_offset;
      const S delta = change(mode, theta, s.y[0]);
      if (exactly_zero(delta)) return;
      const VecX<S>& qv = *q_;
      const VecX<S>& qdv = *qd_;
      for (int k = 0; k < j.nv; ++k) {
        const int i = j.idx_v + k;
        if (q == SiteQuantity::kJointDamping)
          data.tau[i] -= delta * qdv[i];
        else if (q == SiteQuantity::kJointFriction)
          data.tau[i] -= delta * coulomb_friction_shape(d, qdv[i]);  // the joint's law (passive_forces.hpp)
        else if (q == SiteQuantity::kJointSpringStiffness)
          data.tau[i] -= delta * (qv[j.idx_q] - d.spring_rest);
        else
          data.tau[i] -= delta;
      }
      return;
    }
    case SiteQuantity::kLinkForce:
    case SiteQuantity::kLinkTorque: {
      const Vec3<S> y(s.y[0], s.y[1], s.y[2]);
      if (all_exactly_zero(y)) return;  // residual/replace of 0 add y; scale is refused
      const Vec3<S> f_body = site.frame == AugmentFrame::kBody ? y : Vec3<S>(data.X_world[site.body].E * y);
      if (site.quantity == SiteQuantity::kLinkForce)
        data.f_ext[site.body].template tail<3>() += f_body;
      else
        data.f_ext[site.body].template head<3>() += f_body;
      return;
    }
    case SiteQuantity::kDragForce:
    case SiteQuantity::kDragCoefficient:
    case SiteQuantity::kDragWrench: {
      const int b = site.body;
      if constexpr (kReverse) {  // one DragSiteNode: the same computation, its VJP by hand
        S* in = s.drag_in.data();
        pack_link_state(model_, data, b, in);
        const int ny = s.drag_node->num_network_outputs();
        for (int k = 0; k < ny; ++k) in[kLinkStateSize + k] = s.y[k];
        S w[6];
        Tape* tape = tape_for(in, s.drag_in.size());
        if (tape != nullptr) {
          s.drag_node->record(*tape, in, w);
        } else {
          double xv[DragSiteNode::kMaxInputs], wv[6];
          for (std::size_t k = 0; k < s.drag_in.size(); ++k) xv[k] = in[k].value();
          s.drag_node->evaluate(xv, wv);
          for (int k = 0; k < 6; ++k) w[k] = Rev(wv[k]);
        }
        for (int k = 0; k < 6; ++k) data.f_ext[b][k] += w[k];
        return;
      }
      // The same sequence as apply_drag (the analytical model), then the change.
      const Vec3<S> v = link_com_velocity_world(model_, data, b);
      const Vec3<S> a = data.X_world[b].E.transpose() * s.site_axis.template cast<S>();
      Vec3<S> f = drag_force_world(site.drag, a, v);
      if (site.quantity == SiteQuantity::kDragCoefficient) {
        const S delta = change(mode, S(site.drag.linear), s.y[0]);
        if (!exactly_zero(delta)) f -= delta * v;
      } else {
        const Vec3<S> y(s.y[0], s.y[1], s.y[2]);
        const bool body = site.frame == AugmentFrame::kBody;
        const Mat3<S>& E = data.X_world[b].E;
        if (mode == AugmentMode::kReplace) {
          f = body ? Vec3<S>(E.transpose() * y) : y;
        } else {
          Vec3<S> delta = y;
          if (mode == AugmentMode::kScale) {
            const Vec3<S> f_frame = body ? Vec3<S>(E * f) : f;
            delta = f_frame.cwiseProduct(y);
          }
          if (!all_exactly_zero(delta)) f += body ? Vec3<S>(E.transpose() * delta) : delta;
        }
      }
      add_world_force_at_point<S>(data, b, link_com_world(model_, data, b), f);
      if (site.quantity == SiteQuantity::kDragWrench) {  // the couple: residual or replace of 0 add y
        const Vec3<S> y(s.y[3], s.y[4], s.y[5]);
        if (!all_exactly_zero(y))
          data.f_ext[b].template head<3>() += site.frame == AugmentFrame::kBody ? y : Vec3<S>(data.X_world[b].E * y);
      }
      return;
    }
    default:
      return;  // contact sites run in the contact hook
  }
}

template <class S>
void AugmentedDynamics<S>::add_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                                      double t) {
  (void)model;
  q_ = &q;
  qd_ = &qd;
  data_ = &data;
  t_ = t;
  if (needs_controls_) actuation_ = data.tau - data.tau_passive;
  for (int i : step_slots_) {
    Slot& s = *slots_[i];
    gather(s, nullptr, nullptr);
    evaluate(s);
    apply_step_site(s, data);
  }
}

template <class S>
void AugmentedDynamics<S>::network_input(int i, const Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                                         const VecX<S>& actuation, double t, S* out) {
  if (i < 0 || i >= num_networks()) throw InvalidArgument("AugmentedDynamics::network_input: no augmentation " + std::to_string(i));
  Slot& s = *slots_[i];
  if (is_contact_site(s.bp.site.quantity))
    throw InvalidArgument("AugmentedDynamics::network_input: '" + s.bp.name + "' is a contact site");
  check_argument_size("AugmentedDynamics::network_input", "actuation", actuation.size(), model_.nv);
  q_ = &q;
  qd_ = &qd;
  data_ = &data;
  t_ = t;
  actuation_ = actuation;
  gather(s, nullptr, nullptr);
  std::copy(s.x.begin(), s.x.end(), out);
  q_ = qd_ = nullptr;
  data_ = nullptr;
}

template <class S>
void AugmentedDynamics<S>::modify_normal(const Contact<S>& contact, S& normal_force, S& friction_coefficient) {
  if (normal_slots_.empty()) return;
  require_state("modify_normal");
  for (int i : normal_slots_) {
    Slot& s = *slots_[i];
    if (!touches(s, contact)) continue;
    gather(s, &contact, &normal_force);
    evaluate(s);
    if (s.bp.site.quantity == SiteQuantity::kContactNormalForce)
      augment_detail::combine(s.bp.mode, normal_force, s.y[0]);
    else
      augment_detail::combine(s.bp.mode, friction_coefficient, s.y[0]);
  }
}

template <class S>
void AugmentedDynamics<S>::modify_friction(const Contact<S>& contact, const S& normal_force,
                                           Vec3<S>& friction_force) {
  if (friction_slots_.empty()) return;
  require_state("modify_friction");
  for (int i : friction_slots_) {
    Slot& s = *slots_[i];
    if (!touches(s, contact)) continue;
    gather(s, &contact, &normal_force);
    evaluate(s);
    const Vec3<S> t1 = contact.frame.col(1), t2 = contact.frame.col(2);
    const S& y0 = s.y[0];
    const S& y1 = s.y[1];
    switch (s.bp.mode) {
      case AugmentMode::kReplace:
        friction_force = y0 * t1 + y1 * t2;
        break;
      case AugmentMode::kResidual:
        if (!(exactly_zero(y0) && exactly_zero(y1))) friction_force += y0 * t1 + y1 * t2;
        break;
      case AugmentMode::kScale:
        if (!(exactly_zero(y0) && exactly_zero(y1))) {
          const S a1 = t1.dot(friction_force), a2 = t2.dot(friction_force);
          friction_force += (y0 * a1) * t1 + (y1 * a2) * t2;
        }
        break;
    }
  }
}

template <class S>
std::shared_ptr<AugmentedDynamics<S>> install_augmentation(std::vector<AugmentBlueprint> blueprints,
                                                           const Model<double>& model_double, Stepper<S>& stepper,
                                                           ContactSystem<S>* contact) {
  auto aug = std::make_shared<AugmentedDynamics<S>>(stepper.model(), model_double, std::move(blueprints));
  if (aug->has_contact_sites()) {
    if (contact == nullptr)
      throw InvalidArgument("install_augmentation: contact sites need the simulation's contact system");
    if (contact->is_impulse())
      throw InvalidArgument(
          "install_augmentation: contact sites need a force-level contact model (hunt_crossley or penalty), not "
          "impulse");
    contact->set_force_modifier(aug.get());
  }
  AugmentedDynamics<S>* self = aug.get();
  auto& hooks = stepper.hooks();
  hooks.insert(hooks.begin(), [self, aug](const Model<S>& m, Data<S>& d, const VecX<S>& q, const VecX<S>& qd,
                                          double t) { self->add_forces(m, d, q, qd, t); });
  return aug;
}

}  // namespace neuralsim
