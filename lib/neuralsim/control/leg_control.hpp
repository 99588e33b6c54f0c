// Leg-level control of a quadruped (Di Carlo et al., IROS 2018, §III and
// §V; the MIT Cheetah controllers):
//  * foot placement by the Raibert heuristic (M. H. Raibert, "Legged Robots
//    That Balance", MIT Press 1986, ch. 2): the swing foot lands where the
//    hip will be halfway through the next stance, plus a velocity-error
//    feedback term;
//  * a swing trajectory from the lift-off point to that foothold: smooth
//    cubic Bézier interpolation in the horizontal plane and a two-segment
//    cubic Bézier in height up to an apex;
//  * stance legs apply the MPC's ground reaction force f through the foot's
//    translational Jacobian, τ = -Jᵀ f (f acts on the robot, so the leg
//    pushes on the ground with -f);
//  * swing legs follow the trajectory with a Cartesian PD,
//    τ = Jᵀ (Kp (p_des - p) + Kd (v_des - v)).
//
// The foot point is the centre of the toe's collision sphere (the toe
// frame's origin); it sits one radius above the ground in stance.
#pragma once

#include <Eigen/Dense>

#include <array>
#include <string>
#include <vector>

#include "neuralsim/control/gait.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// Raibert foothold (world frame, z = ground_z):
//   p = p_hip + (v + ω_cmd e_z × r_hip) T_stance / 2 + k (v - v_cmd)
// with p_hip the hip's (predicted) horizontal position at touchdown, r_hip
// its horizontal offset from the CoM (the yaw-rate term: the hip moves with
// v + ω × r_hip while the body turns), v the CoM velocity and v_cmd the
// commanded one (horizontal parts only). For v = v_cmd and ω_cmd = 0 the
// foot lands where the hip is at mid-stance: the stance is symmetric.
Eigen::Vector3d raibert_foothold(const Eigen::Vector3d& p_hip, const Eigen::Vector3d& r_hip,
                                 const Eigen::Vector3d& velocity, const Eigen::Vector3d& velocity_command,
                                 double yaw_rate_command, double stance_duration, double feedback_gain,
                                 double ground_z);

// Swing-foot reference at swing fraction s ∈ [0, 1] of a swing of `duration`
// seconds from `start` to `end`: horizontal b(s) = 3s² - 2s³ blend (cubic
// Bézier with zero end velocities); height rises to max(start_z, end_z) +
// `height` at s = 1/2 and descends, each half a cubic Bézier with zero end
// velocities. Writes position and velocity (d/dt).
void swing_reference(const Eigen::Vector3d& start, const Eigen::Vector3d& end, double height, double s,
                     double duration, Eigen::Vector3d* position, Eigen::Vector3d* velocity);

// The four legs of a floating-base quadruped: foot frames, the velocity
// indices of each leg's joints (the actuated joints between the base and
// the foot), and per-step foot positions, velocities and translational
// Jacobians. Sized at construction; update() does not allocate.
class QuadrupedLegs {
 public:
  // Throws ModelError when a frame is missing, when the model has no free
  // root joint, or when a foot has no actuated joint between it and the base.
  QuadrupedLegs(const Model<double>& model, const std::array<std::string, kNumLegs>& foot_frames);

  // Requires forward_kinematics(model, data, q, qd) (positions; qd is used
  // for the foot velocities v = J q̇).
  void update(const Model<double>& model, const Data<double>& data, const Eigen::VectorXd& qd);

  const Eigen::Vector3d& foot_position(int leg) const { return position_[leg]; }
  const Eigen::Vector3d& foot_velocity(int leg) const { return velocity_[leg]; }
  // 3 x nv: ṗ_foot (world) = J q̇ (base columns in the free joint's body-frame velocity).
  const Eigen::MatrixXd& jacobian(int leg) const { return J_[leg]; }
  const std::vector<int>& joint_velocity_indices(int leg) const { return joints_[leg]; }
  int frame(int leg) const { return frame_[leg]; }
  // Joint torques (aligned with joint_velocity_indices) that hold the leg's
  // own links against gravity, -Σ_l J_lᵀ m_l g over the leg's links l (J_l
  // the translational Jacobian of link l's CoM): added to stance and swing
  // torques, since the MPC's forces only carry the body.
  const Eigen::Vector3d& gravity_torque(int leg) const { return gravity_[leg]; }
  // Radius of the toe's collision sphere (0 when the frame has none).
  double foot_radius(int leg) const { return radius_[leg]; }

  // u[leg joints] = -J_legᵀ f (f: ground reaction force on the robot, world).
  void stance_torque(int leg, const Eigen::Vector3d& force, Eigen::VectorXd& u) const;
  // u[leg joints] = J_legᵀ (Kp (p_des - p) + Kd (v_des - v)), gains per world axis.
  void swing_torque(int leg, const Eigen::Vector3d& p_des, const Eigen::Vector3d& v_des, const Eigen::Vector3d& kp,
                    const Eigen::Vector3d& kd, Eigen::VectorXd& u) const;
  // u[leg joints] += gravity_torque(leg).
  void add_gravity_compensation(int leg, Eigen::VectorXd& u) const;
  // u[leg joints] = J_legᵀ F for a Cartesian force F at the foot.
  void apply_foot_force(int leg, const Eigen::Vector3d& F, Eigen::VectorXd& u) const;

 private:
  std::array<int, kNumLegs> frame_{};
  std::array<std::vector<int>, kNumLegs> joints_;
  std::array<std::vector<int>, kNumLegs> links_;  // bodies of the leg (below the base)
  std::array<Eigen::Vector3d, kNumLegs> gravity_;
  std::array<double, kNumLegs> radius_{};
  std::array<Eigen::Vector3d, kNumLegs> position_, velocity_;
  std::array<Eigen::MatrixXd, kNumLegs> J_;
  Eigen::Matrix<double, 6, Eigen::Dynamic> J6_;
};

}  // namespace neuralsim
