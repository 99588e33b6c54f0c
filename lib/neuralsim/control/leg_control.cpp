#include "neuralsim/control/leg_control.hpp"

#include <algorithm>
#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/jacobian.hpp"

namespace neuralsim {

Eigen::Vector3d raibert_foothold(const Eigen::Vector3d& p_hip, const Eigen::Vector3d& r_hip,
                                 const Eigen::Vector3d& velocity, const Eigen::Vector3d& velocity_command,
                                 double yaw_rate_command, double stance_duration, double feedback_gain,
                                 double ground_z) {
  const Eigen::Vector3d v(velocity.x(), velocity.y(), 0.0);
  const Eigen::Vector3d v_cmd(velocity_command.x(), velocity_command.y(), 0.0);
  const Eigen::Vector3d r(r_hip.x(), r_hip.y(), 0.0);
  // Velocity of the hip while the body turns at the commanded rate.
  const Eigen::Vector3d v_hip = v + Eigen::Vector3d(0, 0, yaw_rate_command).cross(r);
  Eigen::Vector3d p = p_hip + v_hip * (0.5 * stance_duration) + feedback_gain * (v - v_cmd);
  p.z() = ground_z;
  return p;
}

void swing_reference(const Eigen::Vector3d& start, const Eigen::Vector3d& end, double height, double s,
                     double duration, Eigen::Vector3d* position, Eigen::Vector3d* velocity) {
  s = std::clamp(s, 0.0, 1.0);
  // b(s) = 3s² - 2s³: the cubic Bézier with control points 0, 0, 1, 1.
  auto blend = [](double x) { return x * x * (3.0 - 2.0 * x); };
  auto blend_rate = [](double x) { return 6.0 * x * (1.0 - x); };
  const Eigen::Vector3d d = end - start;
  *position = start + d * blend(s);
  *velocity = d * (blend_rate(s) / duration);
  const double apex = std::max(start.z(), end.z()) + height;
  if (s < 0.5) {
    const double x = 2.0 * s;
    position->z() = start.z() + (apex - start.z()) * blend(x);
    velocity->z() = (apex - start.z()) * blend_rate(x) * 2.0 / duration;
  } else {
    const double x = 2.0 * s - 1.0;
    position->z() = apex + (end.z() - apex) * blend(x);
    velocity->z() = (end.z() - apex) * blend_rate(x) * 2.0 / duration;
  }
}

QuadrupedLegs::QuadrupedLegs(const Model<double>& model, const std::array<std::string, kNumLegs>& foot_frames)
    : J6_(6, model.nv) {
  if (model.num_bodies() == 0 || model.joints[0].type != JointType::kFree)
    throw ModelError("QuadrupedLegs: model '" + model.name + "' has no floating base (body 0 must have a free joint)");
  for (int i = 0; i < kNumLegs; ++i) {
    frame_[i] = model.frame_index(foot_frames[i]);
    if (frame_[i] < 0)
      throw ModelError("QuadrupedLegs: model '" + model.name + "' has no foot frame '" + foot_frames[i] + "'");
    const Frame<double>& f = model.frames[frame_[i]];
    for (int b = f.body; b > 0; b = model.joints[b].parent) {
      const Joint<double>& j = model.joints[b];
      links_[i].push_back(b);
      for (int k = 0; k < j.nv; ++k) joints_[i].push_back(j.idx_v + k);
    }
    if (joints_[i].size() > 3)
      throw ModelError("QuadrupedLegs: foot frame '" + foot_frames[i] + "' has " + std::to_string(joints_[i].size()) +
                       " joint coordinates between it and the base, expected at most 3");
    if (joints_[i].empty())
      throw ModelError("QuadrupedLegs: foot frame '" + foot_frames[i] + "' has no joint between it and the base");
    std::reverse(joints_[i].begin(), joints_[i].end());  // hip to knee
    radius_[i] = 0.0;
    for (const Geometry& g : model.geometries)
      if (g.collision && g.type == Geometry::Type::kSphere && g.body == f.body &&
          (g.placement.translation() - f.placement.r).norm() < 1e-9)
        radius_[i] = g.size[0];
    position_[i].setZero();
    velocity_[i].setZero();
    gravity_[i].setZero();
    J_[i].setZero(3, model.nv);
  }
}

void QuadrupedLegs::update(const Model<double>& model, const Data<double>& data, const Eigen::VectorXd& qd) {
  for (int i = 0; i < kNumLegs; ++i) {
    const Frame<double>& f = model.frames[frame_[i]];
    position_[i] = body_point_world(data, f.body, f.placement.r);
    point_jacobian(model, data, f.body, f.placement.r, J6_);
    J_[i] = J6_.bottomRows<3>();
    velocity_[i].noalias() = J_[i] * qd;
    gravity_[i].setZero();
    for (int b : links_[i]) {
      const Inertia<double>& I = model.bodies[b].inertia;
      if (I.mass <= 0) continue;
      point_jacobian(model, data, b, I.com(), J6_);
      const Eigen::Vector3d F = -I.mass * model.gravity;
      for (size_t c = 0; c < joints_[i].size(); ++c) gravity_[i][c] += J6_.col(joints_[i][c]).tail<3>().dot(F);
    }
  }
}

void QuadrupedLegs::apply_foot_force(int leg, const Eigen::Vector3d& F, Eigen::VectorXd& u) const {
  for (int idx : joints_[leg]) u[idx] = J_[leg].col(idx).dot(F);
}

void QuadrupedLegs::add_gravity_compensation(int leg, Eigen::VectorXd& u) const {
  for (size_t c = 0; c < joints_[leg].size(); ++c) u[joints_[leg][c]] += gravity_[leg][c];
}

void QuadrupedLegs::stance_torque(int leg, const Eigen::Vector3d& force, Eigen::VectorXd& u) const {
  apply_foot_force(leg, -force, u);
}

void QuadrupedLegs::swing_torque(int leg, const Eigen::Vector3d& p_des, const Eigen::Vector3d& v_des,
                                 const Eigen::Vector3d& kp, const Eigen::Vector3d& kd, Eigen::VectorXd& u) const {
  const Eigen::Vector3d F =
      kp.cwiseProduct(p_des - position_[leg]) + kd.cwiseProduct(v_des - velocity_[leg]);
  apply_foot_force(leg, F, u);
}

}  // namespace neuralsim
