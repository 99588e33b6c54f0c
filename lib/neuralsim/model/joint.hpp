// Joint types and their kinematics (RBDA table 4.1).
//
// Dispatch is a switch on JointType per joint per pass, never a virtual call
// per scalar op. Motion subspaces S are constant in the child (joint) frame
// for every type here, so they live in the Model.
#pragma once

#include <string>

#include "neuralsim/spatial/transform.hpp"

namespace neuralsim {

enum class JointType {
  kFixed,      // nq = nv = 0
  kRevolute,   // nq = nv = 1, rotation about `axis`
  kPrismatic,  // nq = nv = 1, translation along `axis`
  kSpherical,  // nq = 4 (quaternion x y z w), nv = 3 (body-frame angular velocity)
  kFree,       // nq = 7 (position, quaternion x y z w), nv = 6 (body-frame [ω; v])
};

inline int joint_nq(JointType t) {
  switch (t) {
    case JointType::kFixed: return 0;
    case JointType::kRevolute:
    case JointType::kPrismatic: return 1;
    case JointType::kSpherical: return 4;
    case JointType::kFree: return 7;
  }
  return 0;
}

inline int joint_nv(JointType t) {
  switch (t) {
    case JointType::kFixed: return 0;
    case JointType::kRevolute:
    case JointType::kPrismatic: return 1;
    case JointType::kSpherical: return 3;
    case JointType::kFree: return 6;
  }
  return 0;
}

const char* joint_type_name(JointType t);
JointType joint_type_from_name(const std::string& name);  // throws ModelError

// The smooth friction law of a joint (step/passive_forces.hpp has the
// formulas). A structural choice, not a scalar: switching on it never drops
// a derivative.
enum class FrictionLaw {
  kTanh,      // -Fc·tanh(q̇/v_s) (the default)
  kAtan,      // -Fc·(2/π)·atan(q̇/v_s)
  kStribeck,  // -[Fc + (Fs - Fc)·exp(-(q̇/v_st)²)]·tanh(q̇/v_s)
  kSigmoid,   // -Fc·[σ(φ2(q̇+φ3)) - σ(φ2φ3)], σ the logistic (Gaz et al. 2019)
};

// Passive effects acting at a joint, in joint coordinates. All are named
// parameters ("joint.<name>.damping", ...), so they can be identified.
template <class S>
struct JointDynamics {
  S damping = S(0);           // viscous: τ = -d·q̇ (with any friction law)
  S coulomb_friction = S(0);  // Fc: Coulomb level of the friction law
  S friction_velocity = S(0.01);  // v_s: velocity scale of the smoothing
  FrictionLaw friction_law = FrictionLaw::kTanh;
  S friction_static = S(0);       // Fs: static (breakaway) level, Stribeck law only
  S stribeck_velocity = S(0.1);   // v_st: Stribeck velocity, Stribeck law only
  S friction_slope = S(1);        // φ2 > 0 (s/rad): logistic slope, sigmoid law only
  S friction_shift = S(0);        // φ3 (rad/s): velocity shift, sigmoid law only
  S spring_stiffness = S(0);  // τ = -k·(q - q_rest)
  S spring_rest = S(0);
  S armature = S(0);          // constant inertia added to M_ii only (no coupling)
  S gear_ratio = S(1);        // τ_joint = gear_ratio · control; rotor speed = gear_ratio · q̇
  S rotor_inertia = S(0);     // Ir: spin inertia of the joint's motor rotor (Joint::has_rotor)
  S torque_offset = S(0);     // constant bias: τ = -offset (e.g. a motor's torque-sensor offset)

  template <class T>
  JointDynamics<T> cast() const {
    JointDynamics<T> r;
    r.damping = T(damping);
    r.coulomb_friction = T(coulomb_friction);
    r.friction_velocity = T(friction_velocity);
    r.friction_law = friction_law;
    r.friction_static = T(friction_static);
    r.stribeck_velocity = T(stribeck_velocity);
    r.friction_slope = T(friction_slope);
    r.friction_shift = T(friction_shift);
    r.spring_stiffness = T(spring_stiffness);
    r.spring_rest = T(spring_rest);
    r.armature = T(armature);
    r.gear_ratio = T(gear_ratio);
    r.rotor_inertia = T(rotor_inertia);
    r.torque_offset = T(torque_offset);
    return r;
  }
};

template <class S>
struct Joint {
  std::string name;
  JointType type = JointType::kFixed;
  Vec3<S> axis = Vec3<S>::UnitZ();  // unit, in the joint (child) frame
  Transform<S> origin;              // X_T: parent body frame -> joint frame at q = 0
  int parent = -1;                  // parent body index, -1 = world
  int idx_q = 0, idx_v = 0;         // first coordinate in q and in v
  int nq = 0, nv = 0;
  JointDynamics<S> dynamics;
  // A motor rotor on a 1-DoF joint: a massless, axisymmetric body riding on
  // the parent link (the carrier), spinning about the joint axis at
  // gear_ratio·q̇ relative to it, with spin inertia dynamics.rotor_inertia
  // (Featherstone, RBDA §9.6 "gears"; the rotor's transverse inertia and mass
  // belong to the carrier link). Its kinetic energy ½·Ir·(aᵀω_parent + gr·q̇)²
  // adds gr²·Ir to M_ii and gr·Ir·aᵀJ_parent,ω to row i: the coupling of a
  // two-link arm whose second motor sits on the first link. A structural flag,
  // so the rotor terms keep their derivatives at Ir = 0.
  bool has_rotor = false;
  // k when `axis` is ±e_k (set by Model::add_body from the axis values),
  // else -1. A structural flag, so that kinematics can take the short path
  // of coordinate axes without branching on a scalar's value.
  int coordinate_axis = -1;
  bool axis_negative = false;
  // Limits, used by contact (joint-limit springs) and for sampling.
  double lower = -1e30, upper = 1e30, effort = 1e30, velocity = 1e30;

  template <class T>
  Joint<T> cast() const {
    Joint<T> j;
    j.name = name;
    j.type = type;
    j.axis = axis.template cast<T>();
    j.origin = origin.template cast<T>();
    j.parent = parent;
    j.idx_q = idx_q;
    j.idx_v = idx_v;
    j.nq = nq;
    j.nv = nv;
    j.dynamics = dynamics.template cast<T>();
    j.has_rotor = has_rotor;
    j.coordinate_axis = coordinate_axis;
    j.axis_negative = axis_negative;
    j.lower = lower;
    j.upper = upper;
    j.effort = effort;
    j.velocity = velocity;
    return j;
  }
};

// Sets j.coordinate_axis / j.axis_negative from the values of j.axis.
template <class S>
void set_coordinate_axis(Joint<S>& j) {
  j.coordinate_axis = -1;
  j.axis_negative = false;
  if (j.type != JointType::kRevolute) return;
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    if (to_double(j.axis[a]) == 0.0 && to_double(j.axis[b]) == 0.0 && to_double(j.axis[k]) != 0.0) {
      j.coordinate_axis = k;
      j.axis_negative = to_double(j.axis[k]) < 0;
    }
  }
}

}  // namespace neuralsim
