// Model: the constant description of a kinematic tree (bodies, joints,
// inertias, frames, gravity). Per-call workspace lives in Data (data.hpp),
// as in Pinocchio, so the per-step hot path never allocates.
//
// Numbering follows RBDA §4.1.2: body i (0-based here) is connected to its
// parent by joint i, and parent(i) < i. Body -1 is the fixed world.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/model/inertia_check.hpp"
#include "neuralsim/model/joint.hpp"
#include "neuralsim/spatial/inertia.hpp"

namespace neuralsim {

// A link's "length": the distance along a fixed body axis to where its child
// joints attach and, optionally, to its centre of mass. Setting the named
// parameter "link.<name>.length" moves both, as a real link would.
struct LinkLength {
  bool enabled = false;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // unit, body frame
  double com_fraction = -1;  // COM at com_fraction·L·axis; < 0: COM not tied
};

// Primitive collision/visual geometry attached to a body. Meshes are not
// loaded (only their file name is kept); contact uses the primitives.
struct Geometry {
  enum class Type { kSphere, kBox, kCapsule, kCylinder, kPlane, kMesh };
  Type type = Type::kSphere;
  int body = -1;  // -1 = world
  std::string name;
  Eigen::Isometry3d placement = Eigen::Isometry3d::Identity();  // body -> geometry
  Eigen::Vector3d size = Eigen::Vector3d::Zero();  // sphere r; box half-extents; capsule/cylinder (r, half-length); plane normal
  std::string mesh_file;
  bool collision = true;  // false: visual only
};

// A named frame rigidly attached to a body (end effector, toe, sensor).
template <class S>
struct Frame {
  std::string name;
  int body = -1;
  Transform<S> placement;  // X from body frame to this frame

  template <class T>
  Frame<T> cast() const { return Frame<T>{name, body, placement.template cast<T>()}; }
};

// Hydrodynamic (or aerodynamic) damping of a body moving through a fluid:
// the diagonal damping D(ν)ν of marine craft (Fossen 2011, "Handbook of
// Marine Craft Hydrodynamics and Motion Control", §6.4), linear plus
// quadratic in the body-frame velocity ν = [v; ω] of the body's centre of
// mass (v the COM's linear velocity, ω the angular velocity, both in body
// axes). Coefficient k of each 6-vector belongs to body axis k in the order
// x, y, z, rx, ry, rz:
//   F = -D_l,lin ∘ v - D_q,lin ∘ |v| ∘ v,   τ = -D_l,rot ∘ ω - D_q,rot ∘ |ω| ∘ ω
// (|·| and ∘ component-wise), a wrench at the COM (step/body_drag.hpp).
// Every coefficient is ≥ 0 and a named parameter (link.<body>.drag.linear.x,
// ...). `enabled` is structural, like Joint::has_rotor: a body that declares
// drag is dragged even while its coefficients are 0, so a coefficient fitted
// from 0 keeps its derivative.
template <class S>
struct BodyDrag {
  bool enabled = false;
  Vec6<S> linear = Vec6<S>::Zero();     // D_l: N·s/m (x, y, z), N·m·s/rad (rx, ry, rz)
  Vec6<S> quadratic = Vec6<S>::Zero();  // D_q: N·s²/m² (x, y, z), N·m·s²/rad² (rx, ry, rz)

  template <class T>
  BodyDrag<T> cast() const {
    BodyDrag<T> d;
    d.enabled = enabled;
    d.linear = linear.template cast<T>();
    d.quadratic = quadratic.template cast<T>();
    return d;
  }
};

template <class S>
struct Body {
  std::string name;
  Inertia<S> inertia;  // in the body frame
  S length = S(0);     // used when length_spec.enabled
  LinkLength length_spec;
  BodyDrag<S> drag;    // fluid damping at the COM (disabled by default)

  template <class T>
  Body<T> cast() const {
    Body<T> b;
    b.name = name;
    b.inertia = inertia.template cast<T>();
    b.length = T(length);
    b.length_spec = length_spec;
    b.drag = drag.template cast<T>();
    return b;
  }
};

template <class S>
class Model {
 public:
  std::string name;
  std::vector<Body<S>> bodies;
  std::vector<Joint<S>> joints;  // joints[i] connects bodies[i] to its parent
  std::vector<Frame<S>> frames;
  std::vector<Geometry> geometries;
  Vec3<S> gravity = Vec3<S>(S(0), S(0), S(-9.81));
  int nq = 0, nv = 0;
  // Joints whose origin translation follows the parent's length (see LinkLength).
  std::vector<bool> origin_follows_parent_length;

  int num_bodies() const { return static_cast<int>(bodies.size()); }

  // Appends a body connected to `parent` (-1 = world) and returns its index.
  int add_body(const std::string& body_name, int parent, const Joint<S>& joint,
               const Inertia<S>& inertia);
  int add_frame(const std::string& frame_name, int body, const Transform<S>& placement);

  int body_index(const std::string& n) const;   // -1 if absent
  int joint_index(const std::string& n) const;  // -1 if absent
  int frame_index(const std::string& n) const;  // -1 if absent

  // Names of the nv velocity coordinates ("joint" or "joint.wx", ...) and of
  // the nq position coordinates ("joint", "joint.qx", "base.x", ...).
  std::vector<std::string> velocity_names() const;
  std::vector<std::string> position_names() const;

  // q at rest: zeros, identity quaternions.
  VecX<S> neutral_configuration() const;
  S total_mass() const;

  // Sets link lengths consistently (COM and child joint origins).
  void set_link_length(int body, const S& length);

  template <class T>
  Model<T> cast() const;

  // Throws ModelError if the tree is not usable or not physical: parent
  // order, unit axes, and for every link a finite non-negative mass and a
  // rotational inertia about the COM that is symmetric positive
  // semidefinite and satisfies the triangle inequality (inertia_check.hpp).
  // kJointSpace accepts, in a planar chain, links that are physical only as
  // part of it: the returned warnings name each one.
  std::vector<std::string> validate(InertiaCheck check = InertiaCheck::kPhysical) const;
};

}  // namespace neuralsim

#include "neuralsim/model/model_impl.hpp"
