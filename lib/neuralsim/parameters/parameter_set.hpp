// The parameters an optimizer adjusts: which named quantities
// (named_parameter.hpp), their starting values or ranges, bounds, scaling
// and transformation. Shared by every tool that fits physical parameters
// (simid, train-augment); experiment/estimation_config.hpp reads it from a
// config.
//
// The optimizer sees one variable x per entry; the model sees the physical
// value p = to_physical(transformation, x · scale). A link's inertial block
// under the log-Cholesky transformation is ten consecutive entries
// (link.<body>.log_cholesky.<coordinate>), set together: every value of
// them is a physically consistent inertia (Rucker & Wensing, RA-L 2022).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "neuralsim/parameters/named_parameter.hpp"

namespace neuralsim {

struct EstimatedParameter {
  NamedParameter target;
  double initial = 0;  // physical value
  // Range for random starts (physical); defaults to the bounds when finite.
  double range_low = std::numeric_limits<double>::quiet_NaN();
  double range_high = std::numeric_limits<double>::quiet_NaN();
  double lower = -std::numeric_limits<double>::infinity();  // physical bounds
  double upper = std::numeric_limits<double>::infinity();
  Transformation transformation = Transformation::kIdentity;
  double scale = 1;  // optimizer variable x = transformed(p) / scale
  // Prior toward the model's value (estimate.prior; the entry's `prior`
  // key): NaN takes the problem's weight (ProblemOptions::prior_weight).
  double prior_weight = std::numeric_limits<double>::quiet_NaN();
  // The model's own value (physical; log-Cholesky: the coordinate of the
  // model's inertia), before `initial`: what a prior pulls toward.
  double nominal = std::numeric_limits<double>::quiet_NaN();

  const std::string& name() const { return target.name; }
  ParameterKind kind() const { return target.kind; }
};

class ParameterSet {
 public:
  ParameterSet() = default;
  // Checks the entries: names unique, finite scale > 0, bounds ordered,
  // initial values inside them, a log transform on positive values only,
  // log-Cholesky blocks complete (all ten coordinates of a link, in order,
  // consecutive). Throws InvalidArgument naming the parameter: callers
  // that read a config check these with file and line first.
  explicit ParameterSet(std::vector<EstimatedParameter> params);

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

  bool has(ParameterKind kind) const { return find(kind) >= 0; }
  // The index of the first entry of `kind`, or -1.
  int find(ParameterKind kind) const {
    for (int i = 0; i < size(); ++i)
      if (params_[i].kind() == kind) return i;
    return -1;
  }

  // Writes physical values for variables x into a model of any scalar type
  // (model parameters and log-Cholesky blocks).
  template <class T>
  void apply(const T* x, Model<T>& model) const;
  // Contact parameters only.
  template <class T>
  void apply_contact(const T* x, ContactParameters<T>& contact) const {
    for (int i = 0; i < size(); ++i)
      if (params_[i].kind() == ParameterKind::kContact)
        set_contact_parameter(contact, params_[i].target.contact, physical<T>(i, x[i]));
  }
  // Initial velocities only: overwrites the estimated coordinates of q̇.
  template <class T>
  void apply_initial_velocity(const T* x, VecX<T>& qd) const {
    for (int i = 0; i < size(); ++i)
      if (params_[i].kind() == ParameterKind::kInitialVelocity)
        qd[params_[i].target.velocity_index] = physical<T>(i, x[i]);
  }

 private:
  std::vector<EstimatedParameter> params_;
  std::vector<int> log_cholesky_blocks_;  // index of each block's first entry
};

template <class T>
void ParameterSet::apply(const T* x, Model<T>& model) const {
  for (int i = 0; i < size(); ++i)
    if (params_[i].kind() == ParameterKind::kModel) set_parameter(model, params_[i].target.model, physical<T>(i, x[i]));
  for (int first : log_cholesky_blocks_) {
    Eigen::Matrix<T, 10, 1> theta;
    for (int c = 0; c < 10; ++c) theta[c] = physical<T>(first + c, x[first + c]);
    model.bodies[params_[first].target.body].inertia = inertia_from_log_cholesky<T>(theta);
  }
}

// Explicit instantiations (parameter_set.cpp; Rev: hybrid_parameters.hpp).
#define NEURALSIM_PARAMETER_SET_TEMPLATES(PREFIX, S) \
  PREFIX template void ParameterSet::apply<S>(const S*, Model<S>&) const;
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_PARAMETER_SET_TEMPLATES, extern)

}  // namespace neuralsim
