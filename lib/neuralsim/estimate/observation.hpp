// What an estimator compares between simulation and data, with weights.
//
// Missing data: a NaN in an observed channel of the data (q, q̇, a link
// pose) is a missing entry (a gap, or a channel sampled at a lower rate:
// docs/data-format.md). Its residual is written as 0 (weight 0, whatever the
// parameters), so every residual block keeps its size; the states a
// simulation starts from must be complete (estimate/missing_data.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// A link's position (`observe: {link_positions: [{link, point, data,
// weight}]}`): the world position of `point`, a point fixed in the link's
// frame (a marker glued on it; default its origin), p = r + R·point with r
// the link origin and R its rotation to world coordinates
// (dynamics/kinematics.hpp, body_point_world), against the data's
// link_poses/<data> columns x y z (the quaternion columns are not read: a
// tracked marker may leave them NaN). `data` defaults to the link's name;
// two channels on one link need different data names. 3 residuals
// weight·(p_model − p_data) in metres.
struct LinkPositionChannel {
  std::string link;
  int body = -1;
  double weight = 1;
  std::string data;                                 // empty: the link's name
  Eigen::Vector3d point = Eigen::Vector3d::Zero();  // link coordinates, metres
  const std::string& data_name() const { return data.empty() ? link : data; }
};

// A link's orientation (`observe: {link_orientations: [{link, weight}]}`):
// the data's quaternion (link_poses/<link> columns qx qy qz qw, scalar last,
// the rotation from link to world coordinates; normalized before use)
// against the model's, compared as the rotation vector of the error
// log(R_dataᵀ R_model) in the measured link frame (radians; 3 residuals).
struct LinkOrientationChannel {
  std::string link;
  int body = -1;
  double weight = 1;
};

// An IMU (`observe: {imus: [{name, link, position, rpy, gyro_weight,
// accel_weight}]}`): the data's imu/<name> (T, 6: gyro xyz, accelerometer
// xyz, sensor frame) against the model's reading (imu.hpp) through a gain
// and a bias per sensor, measured = gain · reading + bias, each fixed at
// (1, 0) or fitted as imu.<name>.{gyro,accel}_gain and
// imu.<name>.{gyro,accel}_bias.{x,y,z}. 6 residuals per sample (rad/s and
// m/s² times the weights).
struct ImuChannel {
  std::string name;
  std::string link;
  ImuMount mount;
  double gyro_weight = 1;
  double accel_weight = 1;
  // The calibration when not fitted (params: / params_file: may set it):
  // index 0 gyro, 1 accelerometer.
  double gain[2] = {1, 1};
  Eigen::Vector3d bias[2] = {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()};
};

// A joint-force channel (issue #36), one residual per observed joint and
// sample (1-DoF joints only; `joints` in model order, every 1-DoF joint
// unless listed). Its model side is computed by RNEA at the simulated
// sample's (q, q̇, q̈) (q̈ from the forward dynamics in shooting, the
// filtered q̈ in inverse dynamics; estimate/joint_torque_residual.hpp):
//  - joint_torques (data tau_measured): a torque sensor between the drive
//    and the link, which sees the link-side torque Sᵀf of the joint's
//    subtree (inertia, Coriolis, gravity, external wrenches of the links
//    beyond it) and none of the drive's own terms (armature, rotor,
//    damping, friction, spring, offset). Residual weight·(τ_model − τ_data)
//    in N·m (N for a prismatic joint); weight = 1/σ of the sensor.
//  - motor_currents (data current): the motor current the model needs,
//    u / k_t with u = (RNEA − τ_passive) / gear the actuator input (the
//    quantity the data's tau holds) and k_t the joint's torque constant
//    (joint.<name>.torque_constant). Residual weight·(u/k_t − i_data) in
//    amperes; weight = 1/σ of the current measurement.
struct JointForceChannel {
  double weight = 0;        // 0: not observed
  std::vector<int> joints;  // joint indices
  bool observed() const { return weight > 0 && !joints.empty(); }
  int residuals() const { return observed() ? static_cast<int>(joints.size()) : 0; }
};

// The commanded-torque rows of inverse dynamics and of the combined
// objective (residual.torque_weight): RNEA − τ_passive − gear·τ_recorded
// per velocity coordinate, times `weight` (1/σ of the torque). `joints`
// (1-DoF joint indices) limits them to some joints, empty: every
// coordinate. Weight 0: none, a fit from the sensor channels alone (torque
// sensors, IMUs, currents), for a robot whose commanded torque is
// unrecorded or untrusted (estimate.observe.commanded_torques).
// `row_weights` (optional) multiplies each row's weight, one per row in
// row order: 1/σ per joint where the joints' torque noises differ (a
// joint's row is in joint-side units: gear·σ of its motor's command).
struct CommandedTorqueChannel {
  double weight = 1;
  std::vector<int> joints;
  std::vector<double> row_weights;
  bool is_default() const { return weight == 1 && joints.empty() && row_weights.empty(); }
  int rows(int nv) const { return weight > 0 ? (joints.empty() ? nv : static_cast<int>(joints.size())) : 0; }
  double row_weight(int row) const {
    return weight * (row_weights.empty() ? 1.0 : row_weights[static_cast<size_t>(row)]);
  }
};

struct ObservationSpec {
  double q_weight = 1;   // per joint-position residual (tangent space for quaternions)
  double qd_weight = 0;  // per joint-velocity residual
  // Sensor latency of the joint channels in seconds (finite, >= 0): the
  // sample at t_k holds the model's q (q̇) at t_k − delay, interpolated
  // between simulated samples by a cubic Hermite in (q, q̇) (residual
  // formulations: estimate/residual_common.hpp). A fitted observe.q.delay /
  // observe.qd.delay replaces it.
  double q_delay = 0, qd_delay = 0;
  // The joints a joint channel observes (`observe: {q: {joints: [names]}}`),
  // as joint indices in model order; empty = every joint. An unencoded or
  // passive joint is left out: its motion is still simulated and seen
  // through the joints that are observed.
  std::vector<int> q_joints, qd_joints;
  std::vector<LinkPositionChannel> link_positions;  // world position of a point on a link vs. data link_poses
  std::vector<LinkOrientationChannel> link_orientations;
  std::vector<ImuChannel> imus;
  JointForceChannel joint_torques, motor_currents;
  CommandedTorqueChannel commanded_torques;
  // Fixed torque constants per joint index (params: / params_file: set
  // them; fitted ones replace them); empty = 1 for every joint.
  std::vector<double> torque_constant;
  double torque_constant_of(int joint) const {
    return torque_constant.empty() ? 1.0 : torque_constant[static_cast<size_t>(joint)];
  }
  // Rows of the joint-force channels per sample (after the IMU rows).
  int joint_force_residuals() const { return joint_torques.residuals() + motor_currents.residuals(); }

  // Whether joint channel `channel` (0: q, 1: q̇) observes joint j.
  bool observes(int channel, int j) const {
    const std::vector<int>& joints = channel == 0 ? q_joints : qd_joints;
    if (joints.empty()) return true;
    for (const int i : joints)
      if (i == j) return true;
    return false;
  }
  // The velocity coordinates of a joint channel, in order.
  std::vector<int> coordinates(const Model<double>& model, int channel) const;

  int residuals_per_sample(const Model<double>& model) const {
    return (q_weight > 0 ? static_cast<int>(coordinates(model, 0).size()) : 0) +
           (qd_weight > 0 ? static_cast<int>(coordinates(model, 1).size()) : 0) +
           3 * static_cast<int>(link_positions.size()) + 3 * static_cast<int>(link_orientations.size()) +
           6 * static_cast<int>(imus.size()) + joint_force_residuals();
  }

  // Throws DataError when a trajectory lacks a channel this spec compares
  // (a link pose, an imu/<name> dataset, tau_measured, current), or an observed orientation is no quaternion (norm below 0.5 or above 2).
  void check_available(const TrajectorySet& data, const std::string& source) const;

  // The entries of the residuals this spec compares over `data` (a joint
  // position missing when any coordinate of its joint is NaN; a link
  // position per component), and those missing, per channel: "q", "qd",
  // "link_positions.<data name>", "imus.<name>", "joint_torques",
  // "motor_currents" (channels with none missing are left out).
  struct Missing {
    long long observed = 0, missing = 0;
    std::map<std::string, long long> per_channel;
    std::string summary() const;  // "123 of 4000 observed entries are missing (NaN): q 100, qd 23"
  };
  Missing count_missing(const Model<double>& model, const TrajectorySet& data) const;
};

// Throws DataError when the state (q, q̇) at sample `sample` of `tr` has a
// missing entry (NaN): a simulation starts there (`why`, e.g. "a
// single-shooting window starts there"), and a start cannot be skipped.
void check_complete_state(const Trajectory& tr, Eigen::Index sample, const std::string& source,
                          const std::string& why);
// The same at every `every`-th sample from 0 (the starts of windows of
// `every` samples), of every trajectory in `data`.
void check_complete_starts(const TrajectorySet& data, long long every, const std::string& source,
                           const std::string& why);

}  // namespace neuralsim
