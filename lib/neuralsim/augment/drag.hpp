// The analytical drag law of the drag sites (blueprint.hpp, DragLaw) and the
// link quantities the drag sites and inputs read: the link axis, the world
// velocity of the centre of mass, the angle of attack and the speed.
// Requires forward_kinematics with velocities (a ForceHook has it).
//
// Reverse mode (bottom of the file): a drag site's whole force computation
// (COM velocity, drag law, the network's change, the wrench at the COM) and
// the link quantities a network reads (world velocities, angle of attack,
// speed) enter the tape as ONE external node each, with hand-written VJPs,
// instead of ~70 elementary nodes per site (grad/tape.hpp, COST MODEL).
#pragma once

#include <Eigen/Core>

#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/grad/tape.hpp"
#include "neuralsim/model/data.hpp"

namespace neuralsim {

// The axis drag and the angle of attack refer to (body coordinates): the
// link's length axis when it declares a length, else its x axis.
inline Eigen::Vector3d link_axis(const Model<double>& model, int body);

// World velocity of the link's centre of mass.
template <class S>
Vec3<S> link_com_velocity_world(const Model<S>& model, const Data<S>& data, int body);

// World position of the link's centre of mass.
template <class S>
Vec3<S> link_com_world(const Model<S>& model, const Data<S>& data, int body);

// |v|, and 0 with no derivative at v = 0 exactly (|v| is not differentiable there).
template <class S>
S speed_of(const Vec3<S>& v);

// Signed angle from a to v after projecting both on the world xy plane,
// atan2((a × v)_z, a_x v_x + a_y v_y); 0 with no derivative when either
// projection vanishes.
template <class S>
S planar_angle(const Vec3<S>& a, const Vec3<S>& v);

// The analytical drag force (world) on a link moving with COM velocity v:
//   F = -c·v - c_n·v_⊥ - c_q·|v|·v,  v_⊥ = v - (a·v) a,  a the world link axis.
// Terms whose coefficient is 0 are skipped (exactly, as passive_forces does).
template <class S>
Vec3<S> drag_force_world(const DragLaw& law, const Vec3<S>& axis_world, const Vec3<S>& v);

// The drag of `law` on `body` applied at its centre of mass (the analytical
// model a drag site augments; usable as a plain ForceHook body).
template <class S>
void apply_drag(const Model<S>& model, Data<S>& data, int body, const Eigen::Vector3d& axis_body, const DragLaw& law);

// ============================================================ reverse mode
//
// A link's state as external-node inputs: the 21 values
//   E (9, column-major: world → body rotation, R = Eᵀ), r (3, world origin),
//   v (6, body coordinates [ω; v_o]), c (3, centre of mass, body coordinates)
// as the Revs of a Data<Rev> after forward_kinematics (and the model's
// inertia); constants are fine (their adjoints are dropped by the tape).
// The nodes compute their values in double with the same expressions as the
// double functions above and apply_step_site / gather (augmented_dynamics.hxx),
// and differentiate those expressions exactly (the chain rule through every
// intermediate, written out in drag.hxx), so the tape sees the same function.
constexpr int kLinkStateSize = 21;

template <class S>
void pack_link_state(const Model<S>& model, const Data<S>& data, int body, S* out);

// The link quantities a network reads that need arithmetic (world-frame
// linear and angular velocity, angle of attack, speed; InputKind) of one or
// more links, as ONE node: inputs kLinkStateSize per link (pack_link_state,
// links in the order add_link() returned them), outputs the quantities in
// the order of add_quantity() (3 for a velocity, 1 for an angle or a speed).
class LinkInputsNode final : public ExternalFunction {
 public:
  // Link slot k of the inputs (kLinkStateSize values from k·kLinkStateSize).
  int add_link() { return num_links_++; }
  // kind: kLinkLinearVelocity or kLinkAngularVelocity (world frame),
  // kLinkAngleOfAttack (axis: the link's body axis, link_axis) or kLinkSpeed.
  void add_quantity(InputKind kind, int link, const Eigen::Vector3d& axis);
  int num_inputs() const { return num_links_ * kLinkStateSize; }
  int num_outputs() const { return num_outputs_; }
  bool empty() const { return items_.empty(); }

  // The outputs for inputs x (double), as AugmentedDynamics<double>::gather.
  void evaluate(const double* x, double* y) const;

  // Records the node on `tape` (x: num_inputs() Revs; y: num_outputs()).
  void record(Tape& tape, const Rev* x, Rev* y);

  void vjp(const ExternalCall& call, const double* ybar, double* xbar) override;

 private:
  struct Item {
    InputKind kind;
    int link;
    Eigen::Vector3d axis;
  };
  static int width(InputKind k) {
    return k == InputKind::kLinkLinearVelocity || k == InputKind::kLinkAngularVelocity ? 3 : 1;
  }
  std::vector<Item> items_;
  int num_links_ = 0, num_outputs_ = 0;
  std::vector<double> xv_, yv_;
};

// A drag site (SiteQuantity kDragForce, kDragCoefficient or kDragWrench) as
// ONE node: inputs the link state (kLinkStateSize, pack_link_state) then the
// network's outputs (3 for a force, 1 for a coefficient, 6 for a wrench:
// the force's 3 then the couple's 3); outputs the increment of
// Data::f_ext[body] (6, body coordinates [torque; force]), the force of the
// drag law with the network's change applied at the centre of mass (plus,
// for a wrench, the couple in the site's frame, residual or replace: its
// analytical value is 0), exactly as AugmentedDynamics::apply_step_site
// computes it.
class DragSiteNode final : public ExternalFunction {
 public:
  DragSiteNode(SiteQuantity quantity, AugmentMode mode, AugmentFrame frame, const DragLaw& law,
               const Eigen::Vector3d& axis_body);
  int num_network_outputs() const {
    return quantity_ == SiteQuantity::kDragWrench ? 6 : quantity_ == SiteQuantity::kDragForce ? 3 : 1;
  }
  static constexpr int kMaxInputs = kLinkStateSize + 6;
  int num_inputs() const { return kLinkStateSize + num_network_outputs(); }
  static constexpr int num_outputs() { return 6; }

  // The wrench increment for inputs x (double).
  void evaluate(const double* x, double* out) const;

  void record(Tape& tape, const Rev* x, Rev* out);

  void vjp(const ExternalCall& call, const double* obar, double* xbar) override;

 private:
  SiteQuantity quantity_;
  AugmentMode mode_;
  AugmentFrame frame_;
  DragLaw law_;
  Eigen::Vector3d axis_;
};

}  // namespace neuralsim

#include "neuralsim/augment/drag.hxx"
