// One flat vector for an optimizer that adjusts physical parameters and
// network weights together (NeuralSim's hybrid simulation): the variables of
// a ParameterSet (model, log-Cholesky, contact, initial-velocity entries,
// with their bounds, scale and transformation) followed by the weight block
// of the augmentations (augment/augmented_dynamics.hpp): every network's
// flat weights in blueprint order, named augment.<name>.w<k>, identity
// transformation, unit scale, unbounded.
//
//   x = [ physical variables (physical().size()) | weights (num_weights()) ]
//
// Gradients in reverse mode: the weight part of ∂L/∂x is
// AugmentedDynamics<Rev>::gradient() (same order), the physical part the
// tape adjoints of the physical variables.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/parameters/parameter_set.hpp"

namespace neuralsim {

class HybridParameters {
 public:
  HybridParameters() = default;
  // The weight block of `blueprints` (names and the current weights as the
  // initial values). InvalidArgument if a weight name collides with a
  // physical name.
  HybridParameters(ParameterSet physical, const std::vector<AugmentBlueprint>& blueprints);

  int size() const { return physical_.size() + num_weights(); }
  int num_weights() const { return static_cast<int>(weight_names_.size()); }
  int weights_offset() const { return physical_.size(); }
  const ParameterSet& physical() const { return physical_; }
  // Physical names, then augment.<name>.w<k>.
  std::vector<std::string> names() const;
  // Physical initial variables, then the initial weights.
  std::vector<double> initial_variables() const;
  // Bounds of variable i (±inf for weights).
  double variable_lower(int i) const;
  double variable_upper(int i) const;

  // Writes x into whichever targets are given (null: skipped): the model,
  // contact and initial-velocity entries of the ParameterSet, and the
  // weights of `augmented` (which must have been built from the same
  // blueprints: same number of weights, else InvalidArgument). For T a Jet
  // the weights keep their derivatives (set_scalar_parameters); for Rev
  // they are set by value (their gradient comes from gradient()).
  template <class T>
  void apply(const T* x, Model<T>* model, ContactParameters<T>* contact, VecX<T>* qd0,
             AugmentedDynamics<T>* augmented) const;

 private:
  ParameterSet physical_;
  std::vector<std::string> weight_names_;
  std::vector<double> initial_weights_;
};

template <class T>
void HybridParameters::apply(const T* x, Model<T>* model, ContactParameters<T>* contact, VecX<T>* qd0,
                             AugmentedDynamics<T>* augmented) const {
  if (model) physical_.apply(x, *model);
  if (contact) physical_.apply_contact(x, *contact);
  if (qd0) physical_.apply_initial_velocity(x, *qd0);
  if (augmented) {
    if (augmented->num_parameters() != num_weights())
      throw InvalidArgument("HybridParameters::apply: the augmentations have " +
                            std::to_string(augmented->num_parameters()) + " weights, the parameter vector " +
                            std::to_string(num_weights()));
    const T* w = x + weights_offset();
    if constexpr (std::is_same_v<T, double>) {
      augmented->set_parameters(w);
    } else if constexpr (std::is_same_v<T, Rev>) {
      std::vector<double> v(static_cast<std::size_t>(num_weights()));
      for (int i = 0; i < num_weights(); ++i) v[i] = w[i].value();
      augmented->set_parameters(v.data());
    } else {
      augmented->set_scalar_parameters(w);
    }
  }
}

// Explicit instantiations (hybrid_parameters.cpp), with ParameterSet's for Rev.
#define NEURALSIM_HYBRID_PARAMETERS_TEMPLATES(PREFIX, S)                                                    \
  PREFIX template void HybridParameters::apply<S>(const S*, Model<S>*, ContactParameters<S>*, VecX<S>*, \
                                                  AugmentedDynamics<S>*) const;
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_HYBRID_PARAMETERS_TEMPLATES, extern)
NEURALSIM_HYBRID_PARAMETERS_TEMPLATES(extern, ::neuralsim::Rev)
NEURALSIM_PARAMETER_SET_TEMPLATES(extern, ::neuralsim::Rev)

// (network index, weight index) of "augment.<name>.w<k>" among `blueprints`;
// nothing for any other name.
std::optional<std::pair<int, int>> find_weight_parameter(const std::string& name,
                                                         const std::vector<AugmentBlueprint>& blueprints);

}  // namespace neuralsim
