// The contact system of one simulation: collision geometry, the selected
// contact model, its named parameters and workspace, installed into a
// Stepper as hooks. Model/Data split: the settings are constant, the
// workspace (contacts, Delassus matrix, impulses) is sized once.
//
//   force models (hunt_crossley, penalty): one ForceHook per step that
//     detects contacts with relative velocities and adds their forces;
//   impulse: a VelocityHook running the PGS solver (impulse_contact.hpp);
//   joint limits (any model): spring-dampers added in the ForceHook.
//
// install_contact() is the one way to attach contact to a stepper.
#pragma once

#include <memory>
#include <optional>

#include "neuralsim/contact/force_contact.hpp"
#include "neuralsim/contact/impulse_contact.hpp"
#include "neuralsim/contact/joint_limits.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

template <class S>
class ContactSystem;

// A replacement of the force models' law for the pairs marked 1 in `pairs`
// (size geometry().pairs().size()): `apply` adds their contact forces to
// data.f_ext at the kinematics in `data` and returns true, or returns false
// to decline for this call (then every pair is computed as usual).
// grad/force_contact_node.hpp records them as one reverse-mode node. Not owned.
template <class S>
struct ContactForceOverride {
  void* context = nullptr;
  bool (*apply)(void* context, const ContactSystem<S>& system, Data<S>& data) = nullptr;
  const std::vector<char>* pairs = nullptr;
};

template <class S>
class ContactSystem {
 public:
  // `model` must outlive the system (it is the stepper's model); its
  // geometry is read from `model_double` (the same model in double).
  ContactSystem(const Model<S>& model, const Model<double>& model_double, const ContactSettings& settings);

  const ContactSettings& settings() const { return settings_; }
  // Named parameters (contact_parameters.hpp), writable between steps.
  ContactParameters<S>& parameters() { return parameters_; }
  const ContactParameters<S>& parameters() const { return parameters_; }
  const ContactGeometry<S>& geometry() const { return geometry_; }
  // Contacts of the last hook call with their forces (first num_contacts()).
  const Contact<S>* contacts() const { return geometry_.contacts().data(); }
  int num_contacts() const { return geometry_.num_contacts(); }
  // PGS statistics (impulse model only; zeros otherwise).
  ImpulseStats impulse_stats() const { return impulse_ ? impulse_->stats() : ImpulseStats{}; }
  bool is_impulse() const { return settings_.model == ContactModelType::kImpulse; }
  // Force models and joint limits act through a ForceHook.
  bool needs_force_hook() const { return !is_impulse() || limits_; }
  // Optional per-contact modifier of the force models (neural augmentation,
  // contact_force_modifier.hpp); null by default. Not owned: it must outlive
  // every step with it set. InvalidArgument for the impulse model.
  void set_force_modifier(ContactForceModifier<S>* modifier) {
    if (modifier != nullptr && is_impulse())
      throw InvalidArgument("ContactSystem::set_force_modifier: the impulse contact model has no force law to modify");
    modifier_ = modifier;
  }
  ContactForceModifier<S>* force_modifier() const { return modifier_; }

  // Overrides used by reverse mode (grad/): the force law of some pairs
  // (force models) and the PGS solve (impulse model). A default-constructed
  // value removes the override.
  void set_force_override(ContactForceOverride<S> o) { force_override_ = o; }
  void set_pgs_override(PgsOverride<S> o) {
    if (impulse_) impulse_->set_pgs_override(o);
  }

  // ForceHook body: contact forces (force models) and joint limits.
  void add_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd);
  // VelocityHook body (impulse model).
  void solve_velocities(const Model<S>& model, Data<S>& data, const VecX<S>& q, VecX<S>& qd_next, double h);

 private:
  ContactSettings settings_;
  ContactParameters<S> parameters_;
  ContactGeometry<S> geometry_;
  std::optional<ImpulseSolver<S>> impulse_;
  bool limits_ = false;
  ContactForceModifier<S>* modifier_ = nullptr;
  ContactForceOverride<S> force_override_;
};

// Builds a contact system for `stepper` (whose model is the system's model;
// `model_double` is the same model in double, for the geometry) and
// registers its hooks, which own it: it lives as long as the stepper. The
// returned pointer reads contacts and statistics and writes parameters.
// InvalidArgument when the impulse model meets an integrator other than
// semi-implicit Euler (the experiment layer reports that as a config error).
template <class S>
std::shared_ptr<ContactSystem<S>> install_contact(const ContactSettings& settings, const Model<double>& model_double,
                                                  Stepper<S>& stepper);

// ---------------------------------------------------------------------------

template <class S>
ContactSystem<S>::ContactSystem(const Model<S>& model, const Model<double>& model_double,
                                const ContactSettings& settings)
    : settings_(settings), parameters_(settings.parameters.template cast<S>()), geometry_(model_double, settings) {
  for (const Joint<double>& j : model_double.joints) limits_ = limits_ || has_joint_limits(j);
  limits_ = limits_ && settings.joint_limits;
  if (settings.model == ContactModelType::kImpulse)
    impulse_.emplace(model, geometry_.max_contacts(), static_cast<int>(geometry_.pairs().size()));
}

template <class S>
void ContactSystem<S>::add_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd) {
  if (!is_impulse()) {
    const bool overridden = force_override_.apply && force_override_.apply(force_override_.context, *this, data);
    const int n = geometry_.detect(model, data, true, settings_.margin, overridden ? force_override_.pairs : nullptr);
    apply_contact_forces<S>(settings_.model, settings_.friction_model, parameters_, geometry_.contacts().data(), n,
                            data, modifier_);
  }
  if (limits_) apply_joint_limits(model, parameters_, q, qd, data);
}

template <class S>
void ContactSystem<S>::solve_velocities(const Model<S>& model, Data<S>& data, const VecX<S>& q, VecX<S>& qd_next,
                                        double h) {
  impulse_->solve(model, data, q, qd_next, h, geometry_, parameters_, settings_);
}

template <class S>
std::shared_ptr<ContactSystem<S>> install_contact(const ContactSettings& settings, const Model<double>& model_double,
                                                  Stepper<S>& stepper) {
  if (settings.model == ContactModelType::kImpulse && stepper.options().integrator != Integrator::kSemiImplicitEuler)
    throw InvalidArgument("install_contact: the impulse contact model needs the semi-implicit Euler integrator");
  auto system = std::make_shared<ContactSystem<S>>(stepper.model(), model_double, settings);
  ContactSystem<S>* self = system.get();
  if (system->needs_force_hook())
    stepper.hooks().push_back([self, system](const Model<S>& m, Data<S>& d, const VecX<S>& q, const VecX<S>& qd,
                                             double) { self->add_forces(m, d, q, qd); });
  if (system->is_impulse())
    stepper.velocity_hooks().push_back([self, system](const Model<S>& m, Data<S>& d, const VecX<S>& q, VecX<S>& qd,
                                                      double h, double) { self->solve_velocities(m, d, q, qd, h); });
  return system;
}

// Explicit instantiations (contact/instantiate_*.cpp).
#define NEURALSIM_CONTACT_TEMPLATES(PREFIX, S) \
  PREFIX template class ContactSystem<S>;      \
  PREFIX template std::shared_ptr<ContactSystem<S>> install_contact<S>(const ContactSettings&, const Model<double>&, \
                                                                       Stepper<S>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_CONTACT_TEMPLATES, extern)

}  // namespace neuralsim
