// A model with neural augmentations: the networks of a list of blueprints
// (blueprint.hpp), their workspaces and their parameters, evaluated inside
// the step as a Stepper ForceHook (joint, link and drag sites) and as the
// contact system's force modifier (contact sites). An ordinary object: no
// registry, no global or thread-local state; each simulation (and thread)
// owns its own, so several run in parallel.
//
// Scalars. Templated on S like the engine:
//   double, ceres::Jet  the network runs as nn::Mlp::forward<S> with the
//                       stored (double) weights; after set_scalar_parameters()
//                       with derivative-carrying weights (Jet seeds) it runs
//                       forward_with_parameters<S>, so a rollout's derivative
//                       w.r.t. weights comes out of forward mode.
//   Rev (grad/tape.hpp) each network evaluation enters the tape as ONE
//                       external node (NetworkNode: forward in double, VJP =
//                       nn::Mlp::backward); ∂L/∂weights accumulates into
//                       gradient(), owned here, the weights never appear on
//                       the tape. So do a network's link inputs that need
//                       arithmetic (world velocities, angle of attack,
//                       speed: one LinkInputsNode per network) and each drag
//                       site's force (DragSiteNode), both in drag.hpp with
//                       hand-written VJPs. set_tape() names the tape to
//                       record on.
//
// Parameters. The weights of network i are a flat vector of
// network(i).num_parameters() values (nn/mlp.hpp layout), named
// augment.<name>.w<k>; all networks together are one block of
// num_parameters() values, network i at parameter_offset(i), in blueprint
// order (parameters/hybrid_parameters.hpp puts it beside the physical
// parameters for one optimizer).
//
// Order inside a step (Stepper::forward_dynamics): the augmentation hook is
// installed FIRST (install_augmentation inserts it at the front), so that it
// reads τ = gear·u + τ_passive before any other hook (joint limits) adds to
// it; it records q, q̇, t and the controls for the contact sites, which run
// later inside the contact hook. Sites of the hook apply in blueprint order.
//
// No heap allocation per step once constructed (tests/augment).
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/augment/drag.hpp"
#include "neuralsim/augment/network_node.hpp"
#include "neuralsim/contact/contact_force_modifier.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

template <class S>
class AugmentedDynamics final : public ContactForceModifier<S> {
 public:
  static constexpr bool kReverse = std::is_same_v<S, Rev>;

  // `model` (the stepper's) must outlive this object; `model_double` is the
  // same model in double (names, link axes). InvalidArgument (check_blueprint)
  // for a blueprint that cannot run on the model, or duplicate names.
  AugmentedDynamics(const Model<S>& model, const Model<double>& model_double, std::vector<AugmentBlueprint> blueprints);
  AugmentedDynamics(const AugmentedDynamics&) = delete;
  AugmentedDynamics& operator=(const AugmentedDynamics&) = delete;

  int num_networks() const { return static_cast<int>(slots_.size()); }
  const AugmentBlueprint& blueprint(int i) const { return slots_[i]->bp; }
  const nn::Mlp& network(int i) const { return slots_[i]->bp.network; }
  // Index of the network called `name`, -1 if none.
  int find(const std::string& name) const;
  bool has_contact_sites() const { return !normal_slots_.empty() || !friction_slots_.empty(); }

  // ---------------------------------------------- parameters (all networks)
  int num_parameters() const { return num_parameters_; }
  int parameter_offset(int i) const { return slots_[i]->offset; }
  // augment.<name>.w<k>, in block order.
  std::vector<std::string> parameter_names() const;
  void get_parameters(double* out) const;
  // Values for the whole block; InvalidArgument if one is not finite
  // (nothing changed then). Derivatives of earlier set_scalar_parameters()
  // are dropped.
  void set_parameters(const double* values);
  void get_network_parameters(int i, double* out) const { network(i).get_parameters(out); }
  void set_network_parameters(int i, const double* values);
  // The block in S (double, Jet): values go to the networks, derivatives
  // are kept for forward mode. Not for Rev (InvalidArgument): reverse mode
  // takes weight gradients from gradient().
  void set_scalar_parameters(const S* values);

  // ---------------------------------------------- reverse mode (S = Rev)
  // The tape network nodes are recorded on (it must outlive the object's
  // use); without one, the tape of the first variable input is used, and an
  // evaluation with constant inputs only is an InvalidArgument.
  void set_tape(Tape* tape) { tape_ = tape; }
  // ∂L/∂(block) accumulated by Tape::reverse() (num_parameters() values).
  const std::vector<double>& gradient() const { return gradient_; }
  void zero_gradient() { std::fill(gradient_.begin(), gradient_.end(), 0.0); }

  // ---------------------------------------------- the step
  // ForceHook body: records the state for the contact sites and applies the
  // joint, link and drag sites.
  void add_forces(const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd, double t);
  // The input vector network i (a step site, not a contact site) reads at a
  // state whose kinematics `data` holds (forward_kinematics with q and q̇),
  // with joint forces `actuation` = τ − τ_passive at time t; `out` takes
  // network(i).input_dim() values. For input statistics (tools/discover).
  // Not in a step: it resets the step's state.
  void network_input(int i, const Data<S>& data, const VecX<S>& q, const VecX<S>& qd, const VecX<S>& actuation,
                     double t, S* out);
  // ContactForceModifier: the contact sites.
  void modify_normal(const Contact<S>& contact, S& normal_force, S& friction_coefficient) override;
  void modify_friction(const Contact<S>& contact, const S& normal_force, Vec3<S>& friction_force) override;

 private:
  struct Slot {
    AugmentBlueprint bp;
    int index = 0;
    int offset = 0;
    std::vector<Eigen::Vector3d> input_axes;  // link axis per input (angle of attack)
    Eigen::Vector3d site_axis = Eigen::Vector3d::UnitX();
    nn::Workspace<S> ws;
    std::vector<S> x, y;
    std::vector<S> weights;  // set_scalar_parameters()
    bool scalar_weights = false;
    std::unique_ptr<NetworkNode> node;  // Rev
    // Rev: the link inputs with arithmetic as one node (inputs marked in
    // from_link_node, links_of_node[k] = the body of its link slot k), and
    // a drag site as one node; their Rev argument buffers.
    std::unique_ptr<LinkInputsNode> link_node;
    std::vector<char> from_link_node;
    std::vector<int> links_of_node;
    std::vector<S> link_in, link_out;
    std::unique_ptr<DragSiteNode> drag_node;
    std::vector<S> drag_in;
  };

  void gather(Slot& s, const Contact<S>* contact, const S* normal_force);
  void evaluate(Slot& s);
  void apply_step_site(Slot& s, Data<S>& data);
  bool touches(const Slot& s, const Contact<S>& c) const {
    return s.bp.site.body < 0 || c.body_a == s.bp.site.body || c.body_b == s.bp.site.body;
  }
  void require_state(const char* function) const;
  // Rev: the tape to record a node on (set_tape's, else that of the first
  // variable among x[0..n)); nullptr if there is none.
  Tape* tape_for(const S* x, std::size_t n) const;
  void record_link_inputs(Slot& s, const Data<S>& data);

  const Model<S>& model_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<int> step_slots_, normal_slots_, friction_slots_;
  int num_parameters_ = 0;
  bool needs_controls_ = false;
  VecX<S> actuation_;  // gear·u of the current evaluation
  // State of the current dynamics evaluation (set by add_forces).
  const VecX<S>* q_ = nullptr;
  const VecX<S>* qd_ = nullptr;
  const Data<S>* data_ = nullptr;
  double t_ = 0;
  Tape* tape_ = nullptr;
  std::vector<double> gradient_;
};

// Builds the augmentations for `stepper` and installs them: the hook at the
// front of stepper.hooks() (it owns the object: it lives as long as the
// stepper) and, when a blueprint has a contact site, the force modifier of
// `contact` (required then, with a force-level model: InvalidArgument
// otherwise). The returned pointer reads and writes parameters.
template <class S>
std::shared_ptr<AugmentedDynamics<S>> install_augmentation(std::vector<AugmentBlueprint> blueprints,
                                                           const Model<double>& model_double, Stepper<S>& stepper,
                                                           ContactSystem<S>* contact = nullptr);

// Explicit instantiations (augment/instantiate_*.cpp), for the engine's
// scalars and Rev.
#define NEURALSIM_AUGMENT_TEMPLATES(PREFIX, S)                                                                \
  PREFIX template class AugmentedDynamics<S>;                                                                 \
  PREFIX template std::shared_ptr<AugmentedDynamics<S>> install_augmentation<S>(                              \
      std::vector<AugmentBlueprint>, const Model<double>&, Stepper<S>&, ContactSystem<S>*);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_AUGMENT_TEMPLATES, extern)
NEURALSIM_AUGMENT_TEMPLATES(extern, ::neuralsim::Rev)

}  // namespace neuralsim

#include "neuralsim/augment/augmented_dynamics.hxx"
