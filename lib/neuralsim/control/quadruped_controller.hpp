// A convex-MPC gait controller for a floating-base quadruped (the MIT
// Cheetah 3 architecture, Di Carlo et al., IROS 2018): a periodic gait
// (gait.hpp), ground reaction forces from the convex MPC on the
// single-rigid-body model (centroidal_mpc.hpp), Raibert foot placement,
// swing trajectories and the leg torques (leg_control.hpp). It reads the
// floating-base state from (q, q̇) (perfect state estimation), so it is a
// Controller<double> that a rollout evaluates once per simulation step.
//
// State. q = [x y z qx qy qz qw | joints], q̇ = [ω_body; v_body | joints]
// (the free joint's velocity in the base frame, model/configuration.hpp).
// The MPC's body is the whole robot: its position and velocity are the
// whole-body CoM (dynamics/centroidal.hpp), its orientation and angular
// velocity the base's, its mass and inertia (by default) the composite
// rigid body at the nominal joint pose.
//
// Rates. The MPC runs every `mpc_every` simulation steps and whenever the
// gait's contact flags change; its first interval's forces are held in
// between. Legs are updated every step.
//
// The MPC's frame is the yaw frame: origin at the CoM's ground projection,
// axes rotated by the base yaw. In it the problem does not depend on the
// heading or the horizontal position, which is what a network replacing
// the QP needs. Its input, flattened, is "what the MPC sees" (features(),
// laid out by QuadrupedFeatures below). Its output, mpc_forces(): the first interval's ground
// reaction forces on the robot, 3 per foot (FR, FL, RR, RL), in the yaw
// frame. A ForcePolicy (e.g. a distilled network) may replace the QP: it
// maps features to those 12 forces.
#pragma once

#include <Eigen/Dense>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "neuralsim/control/centroidal_mpc.hpp"
#include "neuralsim/control/gait.hpp"
#include "neuralsim/control/leg_control.hpp"
#include "neuralsim/model/data.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/step/controllers.hpp"

namespace neuralsim {

// Velocities in the yaw frame (forward, left), yaw rate about world z, and
// the CoM height above the ground.
struct QuadrupedCommand {
  double forward_speed = 0.0;  // [m/s]
  double lateral_speed = 0.0;  // [m/s]
  double yaw_rate = 0.0;       // [rad/s]
  double height = 0.28;        // CoM height [m], > 0
};

// A piecewise-constant schedule: segment i holds from t_start_i until the next.
struct CommandSegment {
  double t_start = 0.0;
  QuadrupedCommand command;
};

struct QuadrupedControllerOptions {
  std::array<std::string, kNumLegs> foot_frames{"toeFR", "toeFL", "toeRR", "toeRL"};
  // Joint positions (12, legs in model order) of the nominal stance: the
  // hips' reference footholds and, with mpc_mass_from_model, the composite
  // inertia. Empty: 0, 0.67, -1.25 per leg (the Laikago's standing pose).
  Eigen::VectorXd nominal_joint_positions;
  CentroidalMpcParameters mpc;
  bool mpc_mass_from_model = true;  // mpc.mass and mpc.inertia from the model
  GaitParameters gait = GaitParameters::trot();
  double gait_start_time = 0.0;     // stand on all feet before this time [s]
  int mpc_every = 10;               // simulation steps between MPC solves, ≥ 1
  double ground_height = 0.0;       // flat ground at z = ground_height
  // Swing legs.
  double swing_height = 0.07;                           // apex above the foothold [m]
  Eigen::Vector3d swing_kp = Eigen::Vector3d(500, 500, 500);  // [N/m]
  Eigen::Vector3d swing_kd = Eigen::Vector3d(15, 15, 15);     // [N s/m]
  double raibert_gain = 0.05;                           // k of the velocity feedback [s]
  double max_step = 0.2;                                // foothold distance from the hip, capped [m]
  bool leg_gravity_compensation = true;                 // add the legs' own gravity torques
  double torque_limit = 100.0;                          // |τ| per joint [N m]; ≤ 0: none
  // Throws InvalidArgument naming the field when a value is out of range.
  void check() const;
};

// The layout of QuadrupedController::features(), the one place it is named:
//
//   [0] roll, [1] pitch                 (ZYX Euler angles of the base) [rad]
//   [2] CoM height above the ground     [m]
//   [3..5] ω, [6..8] CoM velocity       (yaw frame) [rad/s], [m/s]
//   [9] v_x, [10] v_y, [11] yaw-rate, [12] CoM-height command (yaw frame)
//   [13 + 3i .. 15 + 3i] foot i's contact point (yaw frame): the current
//        point for stance feet, the planned touchdown for swing feet
//   [25 + 4k + i] 1 if foot i is in stance in MPC interval k, else 0
//
// of size 25 + 4N for an MPC horizon of N intervals.
struct QuadrupedFeatures {
  static constexpr int kRoll = 0, kPitch = 1, kComHeight = 2;
  static constexpr int kOmega = 3, kComVelocity = 6;  // 3 each
  static constexpr int kCommandForward = 9, kCommandLateral = 10, kCommandYawRate = 11, kCommandHeight = 12;
  static constexpr int kFeet = 13;    // 3 per leg
  static constexpr int kStance = 25;  // kNumLegs per MPC interval
  static constexpr int size(int horizon) { return kStance + kNumLegs * horizon; }
  // "roll", ..., "foot_FR_x", ..., "stance_0_FR", ...
  static std::vector<std::string> names(int horizon);
};

// Features → the 12 first-interval forces (yaw frame), the QP's replacement.
using ForcePolicy =
    std::function<void(const Eigen::Ref<const Eigen::VectorXd>& features, Eigen::Ref<Eigen::VectorXd> forces)>;

class QuadrupedController : public Controller<double> {
 public:
  // `model` must outlive the controller. Throws ModelError (no floating base,
  // missing foot frames) or InvalidArgument (options).
  QuadrupedController(const Model<double>& model, const QuadrupedControllerOptions& options);

  void set_command(const QuadrupedCommand& command);
  void set_schedule(std::vector<CommandSegment> schedule);  // sorted by t_start (checked)
  QuadrupedCommand command_at(double t) const;
  // Replaces the QP (an empty function restores it).
  void set_force_policy(ForcePolicy policy) { policy_ = std::move(policy); }

  void compute(long long k, double t, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
               Eigen::VectorXd& u) override;

  // The last MPC evaluation: what it saw, what it returned (yaw frame), and
  // the same forces in world axes; the torques of the last step (nv).
  int num_features() const { return static_cast<int>(features_.size()); }
  const Eigen::VectorXd& features() const { return features_; }
  const Eigen::VectorXd& mpc_forces() const { return forces_yaw_; }
  const Eigen::Matrix<double, 3, kNumLegs>& mpc_forces_world() const { return forces_world_; }
  const Eigen::VectorXd& torques() const { return tau_; }
  // True when the last compute() ran the MPC (or its replacement).
  bool mpc_updated() const { return mpc_updated_; }
  QpStatus last_qp_status() const { return qp_status_; }
  long long num_mpc_solves() const { return num_solves_; }
  long long num_qp_failures() const { return num_failures_; }

  const CentroidalMpc& mpc() const { return mpc_; }
  // The MPC's last input (yaw frame), from which features() is flattened.
  const CentroidalMpcInput& mpc_input() const { return input_; }
  const GaitScheduler& gait() const { return gait_; }
  const QuadrupedLegs& legs() const { return legs_; }
  const QuadrupedControllerOptions& options() const { return options_; }
  // Where each swing foot is going to land (world), updated every step.
  const Eigen::Vector3d& foothold(int leg) const { return foothold_[leg]; }
  // Whole-body mass and composite inertia about the CoM in base axes at the
  // nominal pose (what the MPC uses by default).
  static void composite_inertia(const Model<double>& model, const Eigen::VectorXd& nominal_joint_positions,
                                double* mass, Eigen::Matrix3d* inertia);

 private:
  void run_mpc(double t, const QuadrupedCommand& cmd);
  bool stance(int leg, double t) const;

  const Model<double>& model_;
  QuadrupedControllerOptions options_;
  Data<double> data_;
  QuadrupedLegs legs_;
  GaitScheduler gait_;
  CentroidalMpc mpc_;
  CentroidalMpcInput input_;
  std::vector<CommandSegment> schedule_;
  ForcePolicy policy_;

  // Nominal foot positions relative to the base in base axes (the hips' footholds).
  std::array<Eigen::Vector3d, kNumLegs> hip_offset_;
  std::array<Eigen::Vector3d, kNumLegs> liftoff_, foothold_;
  std::array<bool, kNumLegs> was_stance_{};
  bool first_ = true;

  // State of the current step.
  Eigen::Matrix3d R_, Rz_;
  double roll_ = 0, pitch_ = 0, yaw_ = 0;
  Eigen::Vector3d com_, com_velocity_, omega_world_;

  Eigen::VectorXd features_, forces_yaw_, tau_;
  Eigen::Matrix<double, 3, kNumLegs> forces_world_;
  Eigen::MatrixXd table_;
  bool mpc_updated_ = false;
  QpStatus qp_status_ = QpStatus::kOptimal;
  long long num_solves_ = 0, num_failures_ = 0;
};

}  // namespace neuralsim
