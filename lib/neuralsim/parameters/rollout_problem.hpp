// What a differentiable rollout simulates: the model, the step, the contact,
// the augmentations and the named physical parameters (HybridRollout,
// parameters/hybrid_rollout.hpp, builds its double and Rev systems from it).
// Apart from that class so that code which only describes a problem (the
// tools' training setup, the apps) does not compile the reverse-mode engine.
#pragma once

#include <optional>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/parameters/parameter_set.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

struct RolloutProblem {
  Model<double> model;
  StepOptions step;
  // Force-level models, or impulse contact (taped: see rollout_gradient.hpp),
  // whose projected Gauss–Seidel solve then starts from zero impulses every
  // step (no warm start: the last step's impulses are state the checkpoints
  // do not hold, so a replayed segment would start from another guess).
  std::optional<ContactSettings> contact;
  // Impulse contact: differentiate each step's PGS solve implicitly at its
  // solution (grad/pgs_node.hpp: one node per step, independent of the
  // iteration count) instead of taping its iterations. Off by default: on a
  // contact set PGS does not solve to convergence within its iterations
  // (a box on four coplanar corners, whose Delassus matrix is singular) the
  // two differ, and finite differences of the rollout follow the iterations
  // (docs/gradients.md, "Contact gradients").
  bool implicit_impulse = false;
  std::vector<AugmentBlueprint> augment;
  ParameterSet physical;
};

}  // namespace neuralsim
