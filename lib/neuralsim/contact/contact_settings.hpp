// The contact settings of an experiment, resolved against a model (body
// indices). experiment/contact_config.hpp reads them from the `contact:`
// config section (reference: docs/contact.md).
#pragma once

#include <string>
#include <vector>

#include "neuralsim/contact/contact_parameters.hpp"
#include "neuralsim/contact/friction.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

enum class ContactModelType { kHuntCrossley, kPenalty, kImpulse };
enum class FrictionCone { kPyramid, kCone };

const char* contact_model_name(ContactModelType t);

// The half-space {x : normal·x <= height}, normal unit in world coordinates.
struct GroundPlane {
  bool enabled = true;
  double height = 0;
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
};

// User-defined contact points fixed in a body (e.g. a 2 cm grid on an
// object's underside, as in NeuralSim's planar pushing): each point is a
// zero-radius sphere against the ground and world planes. A body with a
// point set does not also collide with the ground through its shapes.
struct PointSet {
  std::string name;
  int body = -1;
  std::vector<Eigen::Vector3d> points;  // body coordinates
};

struct PgsOptions {
  int max_iterations = 100;
  double tolerance = 1e-6;  // stop when max |Δλ| <= tolerance · max |λ|
  bool warm_start = true;   // start from the last step's impulses (Catto 2005)
};

// How reverse mode (grad/) differentiates contact. Force models: kNodes
// records their laws against world planes as one node per step (grad/
// force_contact_node.hpp), kTaped every operation. Impulse contact: kNodes
// and kTaped tape the PGS iterations; kImplicit records each step's solve as
// one node differentiated implicitly at its solution (grad/pgs_node.hpp;
// docs/gradients.md), as RolloutProblem::implicit_impulse does. Forward
// simulation is the same either way. Config: contact.gradient.
enum class ContactGradient { kNodes, kTaped, kImplicit };

struct ContactSettings {
  ContactModelType model = ContactModelType::kHuntCrossley;
  FrictionModel friction_model = FrictionModel::kCoulomb;
  FrictionCone friction_cone = FrictionCone::kPyramid;
  GroundPlane ground;
  ContactParameters<double> parameters;
  PgsOptions pgs;
  // Contacts whose gap exceeds the margin are dropped. Force models need 0;
  // the impulse model uses a positive (speculative) margin so that a contact
  // about to close within the step is constrained not to overshoot.
  double margin = 0;
  bool self_collision = false;  // shape–shape contacts between non-adjacent bodies
  bool joint_limits = true;     // spring-damper at joints with finite limits
  std::vector<PointSet> point_sets;
  ContactGradient gradient = ContactGradient::kNodes;
};

// "" when every contact parameter is usable (finite, non-negative where it
// must be, exponent and friction_velocity > 0, erp in [0, 1]); otherwise one
// line naming the first bad parameter and its value.
std::string contact_parameters_problem(const ContactParameters<double>& p);

}  // namespace neuralsim
