// Neural augmentation blueprints ("neural scalars", NeuralSim paper §III-A):
// which quantity of a step a network augments (the site), how its output is
// combined with the analytical value (the mode), which named physical
// quantities it reads (the inputs) and the network itself. Resolved against
// a model: every name is an index here, so the step does no string work.
// experiment/augment_config.hpp reads blueprints from a config; code may
// build them directly.
//
// ---------------------------------------------------------------- sites
//   joint.<joint>.torque            passive torque of the joint (its nv coordinates);
//                                   analytical value: data.tau_passive
//   joint.<joint>.damping           a joint's passive parameter made state-dependent:
//   joint.<joint>.friction          d in -d·q̇, Fc in -Fc·φ_law(q̇) (tanh(q̇/v_s) by default), k in -k·(q-q_rest)
//   joint.<joint>.spring.stiffness  (1-coordinate joints), c in -c (torque_offset);
//   joint.<joint>.torque_offset     one output, the parameter's value θ(inputs); the
//                                   torque changes by -(θ - θ_model)·φ(q, q̇)
//   link.<link>.force / .torque     external force/torque on the link at its origin,
//                                   frame world | body (3 outputs); analytical value 0
//                                   (scale mode is refused)
//   link.<link>.drag_force          drag at the link's centre of mass, frame world |
//                                   body (3 outputs); analytical value the DragLaw below
//   link.<link>.drag_coefficient    the linear drag coefficient c of the DragLaw made
//                                   state-dependent (1 output)
//   link.<link>.drag_wrench         drag_force plus a couple: outputs 0-2 the force as
//                                   drag_force, 3-5 a torque in the site's frame
//                                   (analytical value 0: residual or replace, as
//                                   link.torque; fluid moments, Fossen 2011 §6.4)
//   contact.normal_force            force-level contact models only (Hunt–Crossley,
//   contact.friction_force          penalty): per contact in penetration, for every
//   contact.friction_coefficient    contact or only those touching one link. Normal
//                                   force 1 output; friction force 2 outputs, its
//                                   components along the contact tangents t1, t2
//                                   (Contact::frame columns 1, 2); friction
//                                   coefficient 1 output (μ of the friction law)
//
// ---------------------------------------------------------------- modes
// With a the analytical value and y the network output (componentwise, in
// the site's frame):
//   residual  a + y          scale  a ⊙ (1 + y)          replace  y
// A change that is exactly zero (exactly_zero(): a zero carrying no
// derivative) is skipped, so a network whose output is multiplied by zero
// leaves the step bit-identical to the analytical model (residual and scale).
//
// ---------------------------------------------------------------- inputs
//   time                                  t (1)
//   noise.<k>                             a distractor with no physical meaning (k in 0..99):
//                                         a hash of the bits of t, q, q̇ and k, uniform with
//                                         mean 0 and variance 1, no derivative (1): any change
//                                         of the state gives an unrelated value. discover
//                                         offers it to show that an input the data does not
//                                         need is not selected
//   joint.<joint>.q | .qd                 the joint's coordinates (nq | nv values)
//   joint.<joint>.u                       its controls (nv), read as (τ - τ_passive)/gear
//                                         at the start of the augmentation hook
//   link.<link>.position                  origin, world (3)
//   link.<link>.orientation               body->world rotation matrix, row-major (9), world
//   link.<link>.linear_velocity[.world|.body]   velocity of the link origin (3)
//   link.<link>.angular_velocity[.world|.body]  (3); world is the default frame
//   link.<link>.angle_of_attack           signed angle from the link axis to the velocity
//                                         of its centre of mass, both projected on the
//                                         world xy plane (planar swimmers), in (-π, π] (1)
//   link.<link>.speed                     |velocity of the centre of mass| (1)
//   contact.normal                        unit normal, world (3)     } contact sites only:
//   contact.depth                         penetration depth (1)      } the contact being
//   contact.depth_rate                    its rate -ṅ·v (1)          } augmented
//   contact.sliding_velocity              tangential relative velocity, world (3)
//   contact.normal_force                  the normal force so far (analytical, or as
//                                         augmented by an earlier normal-force site) (1)
// The link axis is the link's length axis when it declares a length (the
// swimmer's segments: +x), else its body x axis. At zero velocity the angle
// of attack and the speed are 0 with no derivative (both are non-smooth there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/model/model.hpp"
#include "neuralsim/nn/mlp.hpp"

namespace neuralsim {

enum class AugmentMode { kResidual, kScale, kReplace };
enum class AugmentFrame { kWorld, kBody };

enum class SiteQuantity {
  kJointTorque,
  kJointDamping,
  kJointFriction,
  kJointSpringStiffness,
  kJointTorqueOffset,
  kLinkForce,
  kLinkTorque,
  kDragForce,
  kDragCoefficient,
  kDragWrench,
  kContactNormalForce,
  kContactFrictionForce,
  kContactFrictionCoefficient,
};

// Analytical drag at a link's centre of mass, v its world velocity, v_⊥ the
// part normal to the link axis:  F = -c·v - c_n·v_⊥ - c_q·|v|·v.
struct DragLaw {
  double linear = 0;     // c   (N·s/m), the coefficient a drag_coefficient site augments
  double normal = 0;     // c_n (N·s/m), extra resistance across the link (anisotropic drag)
  double quadratic = 0;  // c_q (N·s²/m²)
};

struct AugmentSite {
  SiteQuantity quantity = SiteQuantity::kJointTorque;
  int joint = -1;  // joint sites
  int body = -1;   // link and drag sites; contact sites: -1 = every contact, else contacts touching this body
  AugmentFrame frame = AugmentFrame::kWorld;  // link force/torque, drag force
  DragLaw drag;                               // drag sites
};

enum class InputKind {
  kTime,
  kJointQ,
  kJointQd,
  kJointU,
  kLinkPosition,
  kLinkOrientation,
  kLinkLinearVelocity,
  kLinkAngularVelocity,
  kLinkAngleOfAttack,
  kLinkSpeed,
  kContactNormal,
  kContactDepth,
  kContactDepthRate,
  kContactSlidingVelocity,
  kContactNormalForce,
  kNoise,  // index = k
};

// Input noise.<k>: `hash` folds the bits of each value into h (splitmix64),
// starting from the bits of t; noise_input_value maps (h, k) to [−√3, √3).
std::uint64_t noise_hash(std::uint64_t h, double value);
double noise_input_value(std::uint64_t h, int k);

struct AugmentInput {
  std::string name;  // as written, e.g. "link.segment0.linear_velocity.body"
  InputKind kind = InputKind::kTime;
  int index = -1;    // joint or body index
  AugmentFrame frame = AugmentFrame::kWorld;
  int size = 1;      // number of network inputs it fills
};

struct AugmentBlueprint {
  std::string name;  // unique; network name in weight files, parameter prefix augment.<name>.
  AugmentSite site;
  AugmentMode mode = AugmentMode::kResidual;
  std::vector<AugmentInput> inputs;  // concatenated in order: the network input
  nn::Mlp network;                   // input_dim = Σ sizes, output_dim = site_output_dim
  // How the network started (recorded in weights files; neither changes a
  // forward pass): its output layer at zero, so that a residual or scale
  // site leaves the hybrid exactly the analytical model before training;
  // and whether its input normalization is still to be computed from the
  // training data (no input_mean/input_std and no weights were given).
  bool zero_init_outputs = false;
  bool normalize_from_data = false;
};

// ---------------------------------------------------------------- names

// "residual", "scale", "replace".
const std::vector<std::string>& augment_mode_names();
const char* augment_mode_name(AugmentMode mode);
// "torque", "damping", "friction", "spring.stiffness", "torque_offset" (joint sites).
const std::vector<std::string>& joint_site_quantity_names();
// "force", "torque", "drag_force", "drag_coefficient", "drag_wrench" (link sites).
const std::vector<std::string>& link_site_quantity_names();
// "normal_force", "friction_force", "friction_coefficient" (contact sites).
const std::vector<std::string>& contact_site_quantity_names();
// The quantity's name as above (without joint./link./contact.).
const char* site_quantity_name(SiteQuantity q);
// Nothing for an unknown name (of that family).
std::optional<SiteQuantity> find_joint_site_quantity(const std::string& name);
std::optional<SiteQuantity> find_link_site_quantity(const std::string& name);
std::optional<SiteQuantity> find_contact_site_quantity(const std::string& name);

bool is_joint_site(SiteQuantity q);
bool is_link_site(SiteQuantity q);  // force, torque, drag
// drag_force, drag_coefficient, drag_wrench: the sites of a DragLaw.
bool is_drag_site(SiteQuantity q);
bool is_contact_site(SiteQuantity q);
// Vector sites with a frame: link force/torque, drag force and wrench.
bool site_has_frame(SiteQuantity q);

// "joint.elbow.torque", "link.segment0.drag_force (world)", "contact.friction_force (contacts of box)".
std::string describe_site(const AugmentSite& site, const Model<double>& model);

// Number of network outputs the site takes.
int site_output_dim(const AugmentSite& site, const Model<double>& model);

// "" when the site is usable on the model (indices in range, a joint that
// has the quantity, a mode that has a meaning there), else why not.
std::string site_problem(const AugmentSite& site, AugmentMode mode, const Model<double>& model);

// The input called `name`, or nothing when there is none; contact.* names
// exist only for contact sites.
std::optional<AugmentInput> find_augment_input(const std::string& name, const Model<double>& model,
                                               bool contact_site);
// Every valid input name of the model (frame suffixes included), for
// "did you mean".
std::vector<std::string> augment_input_names(const Model<double>& model, bool contact_site);
// "unknown input 'x'; did you mean 'y'? valid inputs: time, joint.<joint>.q|qd|u (joints: ...), ..."
std::string unknown_input_message(const std::string& name, const Model<double>& model, bool contact_site);

// Σ input sizes.
int total_input_size(const std::vector<AugmentInput>& inputs);

// Throws InvalidArgument naming the blueprint if it cannot run on the model:
// site_problem, an input that is not valid at its site, or a network whose
// input/output sizes do not match. The config reader checks the same with
// file and line first.
void check_blueprint(const AugmentBlueprint& blueprint, const Model<double>& model);

}  // namespace neuralsim
