// The contact system of one simulation: collision geometry, the selected
// contact model, its named parameters and workspace, installed into a
// Stepper as hooks. Model/Data split: the settings are constant, the
// workspace (contacts, Jacobians, Delassus matrix, impulses) is sized once.
//
//   force models (hunt_crossley, penalty): one ForceHook per step that
//     detects contacts with relative velocities and adds their forces;
//   impulse: a VelocityHook running the PGS solver (impulse_contact.hpp);
//   joint limits (any model): spring-dampers added in the ForceHook.
#pragma once

#include <memory>
#include <optional>

#include "neuralsim/contact/force_contact.hpp"
#include "neuralsim/contact/impulse_contact.hpp"
#include "neuralsim/contact/joint_limits.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

template <class S>
class ContactSystem {
 public:
  // `model` must outlive the system (it is the stepper's model). The
  // settings' geometry is read from model.geometries.
  ContactSystem(const Model<S>& model, const Model<double>& model_double, const ContactSettings& settings)
      : settings_(settings), parameters_(settings.parameters.template cast<S>()), geometry_(model_double, settings) {
    for (const Joint<double>& j : model_double.joints) limits_ = limits_ || has_joint_limits(j);
    limits_ = limits_ && settings.joint_limits;
    if (settings.model == ContactModelType::kImpulse)
      impulse_.emplace(model, geometry_.max_contacts(), static_cast<int>(geometry_.pairs().size()));
  }

  const ContactSettings& settings() const { return settings_; }
  // Named parameters (contact_parameters.hpp), writable between steps.
  ContactParameters<S>& parameters() { return parameters_; }
  const ContactParameters<S>& parameters() const { return parameters_; }
  ContactGeometry<S>& geometry() { return geometry_; }
  // Contacts of the last hook call with their forces (first num_contacts()).
  const Contact<S>* contacts() const { return geometry_.contacts().data(); }
  int num_contacts() const { return geometry_.num_contacts(); }
  // PGS statistics (impulse model only; zeros otherwise).
  ImpulseStats impulse_stats() const { return impulse_ ? impulse_->stats() : ImpulseStats{}; }

  bool is_impulse() const { return settings_.model == ContactModelType::kImpulse; }

  // ForceHook body: contact forces (force models) and joint limits.
  void add_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd) {
    if (!is_impulse()) {
      const int n = geometry_.detect(model, data, true, settings_.margin);
      apply_contact_forces<S>(settings_.model, settings_.friction_model, parameters_, geometry_.contacts().data(),
                              n, data);
    }
    if (limits_) apply_joint_limits(model, parameters_, q, qd, data);
  }

  // VelocityHook body (impulse model).
  void solve_velocities(const Model<S>& model, Data<S>& data, const VecX<S>& q, VecX<S>& qd_next, double h) {
    impulse_->solve(model, data, q, qd_next, h, geometry_, parameters_, settings_);
  }

  // Registers the hooks on `stepper`, which must not outlive this system
  // (install_contact below ties the lifetimes instead).
  void install(Stepper<S>& stepper) { install_hooks(stepper, this, nullptr); }

  // Registers hooks that own `system`, so it lives as long as the stepper.
  static void install_shared(Stepper<S>& stepper, const std::shared_ptr<ContactSystem>& system) {
    system->install_hooks(stepper, system.get(), system);
  }

 private:
  void install_hooks(Stepper<S>& stepper, ContactSystem* self, std::shared_ptr<ContactSystem> owner) {
    if (is_impulse() && stepper.options().integrator != Integrator::kSemiImplicitEuler)
      throw ConfigError("contact model 'impulse' needs sim.integrator: semi_implicit_euler (it acts on velocities)");
    if (!is_impulse() || limits_)
      stepper.hooks().push_back([self, owner](const Model<S>& m, Data<S>& d, const VecX<S>& q, const VecX<S>& qd,
                                              double) { self->add_forces(m, d, q, qd); });
    if (is_impulse()) {
      stepper.velocity_hooks().push_back([self, owner](const Model<S>& m, Data<S>& d, const VecX<S>& q,
                                                       VecX<S>& qd, double h, double) {
        self->solve_velocities(m, d, q, qd, h);
      });
    }
  }

  ContactSettings settings_;
  ContactParameters<S> parameters_;
  ContactGeometry<S> geometry_;
  std::optional<ImpulseSolver<S>> impulse_;
  bool limits_ = false;
};

// Builds a contact system for `stepper` from settings and installs it. The
// hooks own the system; the returned pointer is for reading contacts,
// statistics and parameters.
std::shared_ptr<ContactSystem<double>> install_contact(const ContactSettings& settings, const Model<double>& model,
                                                       Stepper<double>& stepper);
// Same from a `contact:` config section (parses it each call: parse once
// with read_contact_settings when installing into many steppers).
std::shared_ptr<ContactSystem<double>> install_contact(const Config& contact_section, const Model<double>& model,
                                                       Stepper<double>& stepper);

}  // namespace neuralsim

namespace neuralsim {

// For apps: the settings of the config's top-level `contact:` section, or
// nothing when absent. Logs the number of contact pairs and warns once about
// pairs the narrow phase does not support.
std::optional<ContactSettings> contact_settings_from(const Config& root, const Model<double>& model);

}  // namespace neuralsim
