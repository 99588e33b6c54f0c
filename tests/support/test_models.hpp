// Models shared by the tests: every shipped YAML model plus hand-built trees
// that exercise each joint type (spherical, prismatic, free, fixed).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "neuralsim/model/configuration.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "support/files.hpp"

namespace neuralsim::testing {


// A random rigid body inertia that is physically valid (positive definite,
// triangle inequality holds since it comes from point masses).
inline Inertia<double> random_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-0.3, 0.3), m(0.2, 2.0);
  Inertia<double> I;
  for (int k = 0; k < 4; ++k) {
    const Eigen::Vector3d p(u(rng), u(rng), u(rng));
    I = I + Inertia<double>::from_com(m(rng), p, Eigen::Matrix3d::Zero());
  }
  return I;
}

// A floating base with a spherical shoulder, a revolute elbow, a prismatic
// slider and a fixed tool: every joint type in one tree, with branching.
inline Model<double> mixed_joint_model() {
  std::mt19937 rng(7);
  Model<double> m;
  m.name = "mixed";
  auto joint = [](JointType t, Eigen::Vector3d axis, Eigen::Vector3d xyz, Eigen::Vector3d rpy) {
    Joint<double> j;
    j.type = t;
    j.axis = axis.normalized();
    j.origin = Transform<double>(rpy_rotation<double>(rpy[0], rpy[1], rpy[2]).transpose(), xyz);
    return j;
  };
  m.add_body("base", -1, joint(JointType::kFree, {0, 0, 1}, {0, 0, 0}, {0, 0, 0}), random_inertia(rng));
  m.add_body("shoulder", 0, joint(JointType::kSpherical, {0, 0, 1}, {0.2, 0.1, 0}, {0.1, 0.2, 0.3}), random_inertia(rng));
  m.add_body("elbow", 1, joint(JointType::kRevolute, {1, 1, 0}, {0, 0, -0.3}, {0.3, 0, 0}), random_inertia(rng));
  m.add_body("tool", 2, joint(JointType::kFixed, {0, 0, 1}, {0, 0.1, -0.2}, {0, 0.5, 0}), random_inertia(rng));
  m.add_body("slider", 3, joint(JointType::kPrismatic, {0, 1, 1}, {0.05, 0, 0}, {0, 0, 0.4}), random_inertia(rng));
  m.add_body("leg", 0, joint(JointType::kRevolute, {0, 1, 0}, {-0.2, 0, 0}, {0, 0, 0}), random_inertia(rng));
  m.joints[2].dynamics.armature = 0.05;
  m.joints[4].dynamics.armature = 0.02;
  m.gravity = Eigen::Vector3d(0.1, -0.2, -9.81);
  return m;
}

inline bool has_rotors(const Model<double>& m) {
  for (const Joint<double>& j : m.joints)
    if (j.has_rotor) return true;
  return false;
}

inline std::vector<std::string> shipped_yaml_models() {
  return {"configs/models/pendulum.yaml", "configs/models/double_pendulum.yaml",
          "configs/models/chain5.yaml", "configs/models/cartpole.yaml",
          "configs/models/swimmer5.yaml"};
}

// Random valid state: unit quaternions, moderate velocities.
inline void random_state(const Model<double>& model, std::mt19937& rng, Eigen::VectorXd& q,
                         Eigen::VectorXd& qd) {
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  q = Eigen::VectorXd(model.nq);
  for (int i = 0; i < model.nq; ++i) q[i] = u(rng);
  normalize_configuration(model, q);
  qd = Eigen::VectorXd(model.nv);
  for (int i = 0; i < model.nv; ++i) qd[i] = u(rng);
}

// One revolute joint, a 1 kg point mass at 1 m (q = 0 hangs down), whose
// joint has `dynamics` (the friction-law tests).
inline Model<double> pendulum_with_dynamics(const JointDynamics<double>& dynamics) {
  static const Model<double> base = parse_yaml_model("generator: pendulum\nlength: 1.0\nmass: 1.0\n", "inline");
  Model<double> m = base;
  m.joints[0].dynamics = dynamics;
  return m;
}

// τ_passive of a one-joint model at velocity v (q = 0).
template <class S>
S one_joint_passive_torque(const Model<S>& m, const S& v) {
  Data<S> data(m);
  VecX<S> q = VecX<S>::Zero(1), qd(1);
  qd[0] = v;
  passive_forces(m, data, q, qd);
  return data.tau_passive[0];
}

}  // namespace neuralsim::testing
