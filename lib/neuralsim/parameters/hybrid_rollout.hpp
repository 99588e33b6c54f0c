// Gradients of a trajectory loss through a whole rollout w.r.t. named
// physical parameters and network weights together (the HybridParameters
// vector), the initial state and the controls: builds the double and Rev
// systems of grad/rollout_gradient.hpp (model, contact of any model,
// augmentations) from one description and runs its checkpointed reverse
// mode. The physical variables are recorded on the tape first (the prefix
// every segment rewinds to), with their transformations and scales, so
// ∂L/∂x is in optimizer variables, as HybridParameters::apply maps them.
//
// An ordinary object, no global state: one per thread.
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/grad/rollout_gradient.hpp"
#include "neuralsim/parameters/hybrid_parameters.hpp"
#include "neuralsim/parameters/rollout_problem.hpp"

namespace neuralsim {

struct HybridRolloutGradient {
  double loss = 0;
  Eigen::VectorXd x;         // ∂L/∂x: physical variables, then network weights
  Eigen::VectorXd q0, qd0;   // ∂L/∂q0, ∂L/∂q̇0 (q̇0 entries replaced by initial.qd.* get no derivative there)
  Eigen::MatrixXd controls;  // ∂L/∂u, nv × T
};

class HybridRollout {
 public:
  explicit HybridRollout(RolloutProblem problem);
  HybridRollout(const HybridRollout&) = delete;
  HybridRollout& operator=(const HybridRollout&) = delete;

  const HybridParameters& parameters() const { return params_; }
  const Model<double>& model() const { return p_.model; }
  RolloutGradient& driver() { return *driver_; }
  Tape& tape() { return tape_; }

  // Recorded controls interpolated between samples for the next calls
  // (RolloutGradient::set_recorded_controls; nullptr: the held columns).
  void set_recorded_controls(const Trajectory* recording, int first_interval) {
    driver_->set_recorded_controls(recording, first_interval);
  }

  // The loss at x (HybridParameters order), from (q0, q̇0) under controls (nv × T).
  double value(const std::vector<double>& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
               const Eigen::MatrixXd& controls, const TrajectoryLoss& loss);

  double gradient(const std::vector<double>& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                  const Eigen::MatrixXd& controls, const TrajectoryLoss& loss, HybridRolloutGradient& out,
                  int checkpoint_interval = 0);

 private:
  // Writes x into both systems; the physical part becomes the tape prefix.
  void prepare(const std::vector<double>& x, Eigen::VectorXd& qd0);

  RolloutProblem p_;
  HybridParameters params_;
  Model<double> model_d_;
  Stepper<double> stepper_d_;
  std::shared_ptr<ContactSystem<double>> contact_d_;
  std::shared_ptr<AugmentedDynamics<double>> aug_d_;
  ContactParameters<double> contact_base_;
  Tape tape_;
  Model<Rev> model_r_;
  Stepper<Rev> stepper_r_;
  std::shared_ptr<ContactSystem<Rev>> contact_r_;
  std::shared_ptr<AugmentedDynamics<Rev>> aug_r_;
  std::unique_ptr<RolloutGradient> driver_;
  std::vector<Rev> xr_;
  RolloutGradientResult result_;  // swapped with the caller's buffers: no O(T) allocation per call
};

}  // namespace neuralsim
