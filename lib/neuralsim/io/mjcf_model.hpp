// Models described in MJCF, MuJoCo's XML format (parsed with tinyxml2), into
// the same Model as YAML and URDF. The supported subset, element by element,
// and what each unsupported element does are documented in docs/models.md,
// section "MJCF"; MuJoCo 2.2 is the reference (and the tests' oracle,
// tests/io/mjcf_model_test.cpp).
//
// Mapping (MuJoCo XML reference, "MJCF modeling" chapter):
//  - every <body> is a body; a body with no joint is welded to its parent
//    (kFixed); a body with several joints becomes a chain of massless bodies
//    "<body>/<joint>", one per joint, the last one carrying the body's
//    inertia, geoms and children (our joints have no anchor: a joint `pos`
//    becomes the origin of its body frame, so that body's frame sits at the
//    last joint's anchor, not at MuJoCo's body frame);
//  - hinge -> kRevolute, slide -> kPrismatic, ball -> kSpherical, free /
//    <freejoint> -> kFree. A joint's `ref` is folded into its origin, so our
//    q equals MuJoCo's qpos coordinate for coordinate, except quaternions
//    (ours x y z w, MuJoCo's w x y z); velocities equal MuJoCo's qvel except
//    a free joint's linear part (ours in the body frame, MuJoCo's in the
//    world frame);
//  - damping, armature, stiffness/springref, range/limited map to the
//    joint's dynamics and limits; frictionloss (a constraint in MuJoCo)
//    becomes the smooth Coulomb level (tanh law);
//  - inertia: <inertial>, or from geoms as MuJoCo's compiler computes it
//    (inertiafromgeom; sphere, box, capsule, cylinder, ellipsoid);
//  - sphere, box, capsule, cylinder and plane geoms become Geometry entries
//    (contype = conaffinity = 0: visual only); meshes and height fields are
//    skipped with a warning;
//  - <motor> actuators become MjcfActuator control channels.
// Elements and attributes that change the dynamics and have no counterpart
// (tendons, equality constraints, other actuators, the ellipsoid fluid
// model, wind) are refused; <option density/viscosity> with MuJoCo's default
// inertia-box fluid model becomes each body's drag (BodyDrag), exactly; those that do not (sites, sensors, cameras,
// contact softness solref/solimp, per-geom friction) are listed in one
// warning naming each element and its line, and refused under
// MjcfOptions::strict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/model/model.hpp"

namespace neuralsim {

// An MJCF file (and each included file) is read whole, at most this big.
inline constexpr unsigned long long kMaxMjcfBytes = 64ULL << 20;
// Nesting depth of <include> (a file including itself is refused sooner).
inline constexpr int kMaxMjcfIncludeDepth = 16;

struct MjcfOptions {
  // Refuse every element or attribute that has no counterpart, instead of
  // listing it in a warning.
  bool strict = false;
  // Replace <option density> / <option viscosity> (kg/m³, Pa·s; finite,
  // >= 0): the same model in another medium.
  std::optional<double> density, viscosity;
};

// One <motor>: a control channel u acting on one 1-DoF joint as the
// generalized force gear·u (MuJoCo: qfrc_actuator = gear·ctrl). The joint's
// gear_ratio is set to gear, so u is the control of the joint's coordinate
// (Stepper::forward_dynamics applies gear_ratio·control), and its effort
// limit to max|ctrlrange|·|gear| when ctrllimited.
struct MjcfActuator {
  std::string name;
  int joint = -1;  // index into Model::joints
  double gear = 1;
  bool ctrl_limited = false;
  double ctrl_lower = -1e30, ctrl_upper = 1e30;
};

// <option>: what MuJoCo would simulate with. The experiment's `sim:` keys
// take precedence (a config overrides them).
struct MjcfSimDefaults {
  double timestep = 0.002;
  std::string integrator = "Euler";  // as written: Euler, RK4, implicit, implicitfast
  bool contact_disabled = false;     // <flag contact="disable"/>
};

struct MjcfModel {
  Model<double> model;  // gravity is <option gravity> (zero with <flag gravity="disable"/>)
  std::vector<MjcfActuator> actuators;
  MjcfSimDefaults sim;
};

// Loads an MJCF file. Includes are resolved relative to the including file.
// Errors are ConfigError "file:line: <element ...>: expected X, got Y" (and
// ModelError for a path that is not a readable regular file of at most
// kMaxMjcfBytes, or a tree that is not physical). Warnings are appended to
// `warnings` when not null.
MjcfModel load_mjcf_model(const std::string& path, const MjcfOptions& options = {},
                          std::vector<std::string>* warnings = nullptr);

// Builds a model from MJCF text; `source` names it in messages, and its
// directory is where included files are looked up.
MjcfModel parse_mjcf_model(const std::string& xml, const std::string& source, const MjcfOptions& options = {},
                           std::vector<std::string>* warnings = nullptr);

}  // namespace neuralsim
