// In-memory trajectory data, the form every tool reads and writes.
//
// The on-disk layout (HDF5) is documented in docs/data-format.md.
#pragma once

#include <Eigen/Core>
#include <map>
#include <string>
#include <vector>

namespace neuralsim {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One recorded or simulated trajectory of T samples.
struct Trajectory {
  std::string name;
  Eigen::VectorXd time;  // T, strictly increasing, seconds (may be non-uniform)
  RowMatrixXd q;         // T x nq generalized positions
  RowMatrixXd qd;        // T x nv generalized velocities
  RowMatrixXd tau;       // T x nv applied joint forces; empty (0 x 0) when absent
  // Optional observed link poses: link name -> T x 7 (x, y, z, qx, qy, qz, qw),
  // world frame.
  std::map<std::string, RowMatrixXd> link_poses;
  // Optional IMU readings: sensor name -> T x 6 (gyro x y z in rad/s,
  // accelerometer x y z in m/s², sensor frame; estimate/imu.hpp). NaN is a
  // missing entry where the reader allows it (simid).
  std::map<std::string, RowMatrixXd> imus;
  // Optional joint-torque-sensor readings T x nv (N·m or N, the link-side
  // torque at each joint: estimate/observation.hpp, JointTorqueChannel) and
  // motor currents T x nv (A); empty (0 x 0) when absent. NaN is a missing
  // entry where the reader allows it (simid).
  RowMatrixXd tau_measured;
  RowMatrixXd current;

  Eigen::Index size() const { return time.size(); }
  bool has_tau() const { return tau.size() > 0; }
};

// Attributes that say what the data is and where it came from.
struct TrajectoryMetadata {
  std::string model;                     // model name or source file
  std::vector<std::string> joint_names;  // one per degree of freedom (nv)
  std::vector<std::string> q_names;      // one per position coordinate (nq)
  std::string units = "SI (m, kg, s, rad, N, N*m)";
  std::string generator;                 // e.g. "rollout 0.1.0 (rev abc)" or "csv-import"
  std::string parameters_json = "{}";    // parameters used to produce the data
  long long seed = -1;                   // -1 when not applicable
};

struct TrajectorySet {
  TrajectoryMetadata meta;
  std::vector<Trajectory> trajectories;
};

}  // namespace neuralsim
