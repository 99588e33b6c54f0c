// The parameters an estimator optimizes: which named quantities, their
// starting values or ranges, bounds, scaling and transformation.
//
// Three kinds of names are estimable:
//   model parameters     link.*, joint.*, gravity.* (model/parameters.hpp)
//   contact parameters   contact.*  (contact/contact_parameters.hpp; needs
//                        the experiment's `contact:` section)
//   initial velocities   initial.qd.<velocity coordinate>, e.g.
//                        initial.qd.ball_free.vx: the state a trajectory
//                        starts from (Degrave's ball throw optimizes these)
//
// The optimizer sees x (unconstrained or bounded), the model sees
// p = to_physical(transformation, x · scale).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "neuralsim/contact/contact_parameters.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/model/parameters.hpp"

namespace neuralsim {

enum class ParameterKind { kModel, kContact, kInitialVelocity };

struct EstimatedParameter {
  std::string name;
  ParameterKind kind = ParameterKind::kModel;
  ParameterRef ref;                  // kModel
  ContactParameterId contact{};      // kContact
  int velocity_index = -1;           // kInitialVelocity: index into q̇
  double initial = 0;  // physical value
  // Range for random starts (physical); defaults to the bounds when finite.
  double range_low = std::numeric_limits<double>::quiet_NaN();
  double range_high = std::numeric_limits<double>::quiet_NaN();
  double lower = -std::numeric_limits<double>::infinity();  // physical bounds
  double upper = std::numeric_limits<double>::infinity();
  Transformation transformation = Transformation::kIdentity;
  double scale = 1;  // optimizer variable x = transformed(p) / scale
};

class ParameterSet {
 public:
  // `parameters:` list of {name, initial | range: [lo, hi], bounds: [lo, hi],
  // scale, transform: identity|log}. Unknown names → ConfigError listing the
  // valid ones; inverted or NaN bounds → ConfigError naming the parameter.
  // `contact` holds the experiment's contact parameters (their defaults are
  // the initial values); null when the experiment has no contact, which
  // makes contact.* names an error.
  static ParameterSet from_config(const Config& list_owner, const std::string& key, const Model<double>& model,
                                  const ContactParameters<double>* contact = nullptr);

  int size() const { return static_cast<int>(params_.size()); }
  const EstimatedParameter& operator[](int i) const { return params_[i]; }
  const std::vector<EstimatedParameter>& all() const { return params_; }
  std::vector<std::string> names() const;

  // Optimizer variables <-> physical values.
  template <class T>
  T physical(int i, const T& x) const {
    return to_physical(params_[i].transformation, T(x * params_[i].scale));
  }
  double variable(int i, double physical_value) const {
    return to_unconstrained(params_[i].transformation, physical_value) / params_[i].scale;
  }
  // Bounds in optimizer variables (±inf when absent).
  double variable_lower(int i) const;
  double variable_upper(int i) const;
  std::vector<double> initial_variables() const;

  bool has(ParameterKind kind) const {
    for (const auto& p : params_)
      if (p.kind == kind) return true;
    return false;
  }

  // Writes physical values for variables x into a model of any scalar type
  // (model parameters only).
  template <class T>
  void apply(const T* x, Model<T>& model) const {
    for (int i = 0; i < size(); ++i)
      if (params_[i].kind == ParameterKind::kModel) set_parameter(model, params_[i].ref, physical<T>(i, x[i]));
  }
  // Contact parameters only.
  template <class T>
  void apply_contact(const T* x, ContactParameters<T>& contact) const {
    for (int i = 0; i < size(); ++i)
      if (params_[i].kind == ParameterKind::kContact)
        set_contact_parameter(contact, params_[i].contact, physical<T>(i, x[i]));
  }
  // Initial velocities only: overwrites the estimated coordinates of q̇.
  template <class T>
  void apply_initial_velocity(const T* x, VecX<T>& qd) const {
    for (int i = 0; i < size(); ++i)
      if (params_[i].kind == ParameterKind::kInitialVelocity) qd[params_[i].velocity_index] = physical<T>(i, x[i]);
  }

 private:
  std::vector<EstimatedParameter> params_;
};

}  // namespace neuralsim
