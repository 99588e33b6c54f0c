// Convex-MPC gait controller for a floating-base quadruped; see
// quadruped_controller.hpp for the architecture, the frames and the
// feature layout.
#include "neuralsim/control/quadruped_controller.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

namespace {

[[noreturn]] void fail_opts(const std::string& what) { throw InvalidArgument("QuadrupedControllerOptions: " + what); }

void check_command(const QuadrupedCommand& c, const std::string& where) {
  if (!std::isfinite(c.forward_speed) || !std::isfinite(c.lateral_speed) || !std::isfinite(c.yaw_rate))
    throw InvalidArgument(where + ": the speeds and the yaw rate must be finite");
  if (!std::isfinite(c.height) || c.height <= 0)
    throw InvalidArgument(where + ": height must be finite and > 0, got " + std::to_string(c.height));
}

Eigen::VectorXd nominal_or_default(const Model<double>& model, const Eigen::VectorXd& nominal) {
  if (nominal.size() > 0) {
    if (nominal.size() != model.nq - 7)
      throw InvalidArgument("QuadrupedControllerOptions: nominal_joint_positions has " +
                            std::to_string(nominal.size()) + " entries, the model has " +
                            std::to_string(model.nq - 7) + " joint coordinates");
    return nominal;
  }
  Eigen::VectorXd v = Eigen::VectorXd::Zero(std::max(0, model.nq - 7));
  if (v.size() == 12)
    for (int i = 0; i < 4; ++i) v.segment<3>(3 * i) << 0.0, 0.67, -1.25;
  return v;
}

// The model at its nominal pose: base at the origin, identity orientation.
Eigen::VectorXd nominal_configuration(const Model<double>& model, const Eigen::VectorXd& joints) {
  Eigen::VectorXd q = model.neutral_configuration();
  q.tail(joints.size()) = joints;
  return q;
}

}  // namespace

void QuadrupedControllerOptions::check() const {
  gait.check();
  mpc.check();
  if (!std::isfinite(gait_start_time) || gait_start_time < 0) fail_opts("gait_start_time must be finite and >= 0");
  if (mpc_every < 1) fail_opts("mpc_every must be >= 1, got " + std::to_string(mpc_every));
  if (!std::isfinite(ground_height)) fail_opts("ground_height must be finite");
  if (!std::isfinite(swing_height) || swing_height < 0) fail_opts("swing_height must be finite and >= 0");
  if (!swing_kp.allFinite() || (swing_kp.array() < 0).any()) fail_opts("swing_kp must be finite and >= 0");
  if (!swing_kd.allFinite() || (swing_kd.array() < 0).any()) fail_opts("swing_kd must be finite and >= 0");
  if (!std::isfinite(raibert_gain) || raibert_gain < 0) fail_opts("raibert_gain must be finite and >= 0");
  if (!std::isfinite(max_step) || max_step <= 0) fail_opts("max_step must be finite and > 0");
  if (!std::isfinite(torque_limit)) fail_opts("torque_limit must be finite");
  if (!nominal_joint_positions.allFinite()) fail_opts("nominal_joint_positions must be finite");
}

void QuadrupedController::composite_inertia(const Model<double>& model, const Eigen::VectorXd& nominal_joint_positions,
                                            double* mass, Eigen::Matrix3d* inertia) {
  Data<double> data(model);
  const Eigen::VectorXd q = nominal_configuration(model, nominal_or_default(model, nominal_joint_positions));
  forward_kinematics(model, data, q);
  double m = 0;
  Eigen::Vector3d mc = Eigen::Vector3d::Zero();
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Inertia<double>& I = model.bodies[i].inertia;
    m += I.mass;
    mc += I.mass * body_point_world(data, i, I.com());
  }
  const Eigen::Vector3d c = mc / m;
  Eigen::Matrix3d Ic = Eigen::Matrix3d::Zero();
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Inertia<double>& I = model.bodies[i].inertia;
    const Eigen::Matrix3d R = body_rotation(data, i);
    const Eigen::Vector3d d = body_point_world(data, i, I.com()) - c;
    // Parallel-axis theorem (Steiner): I_c = R I_com Rᵀ + m (|d|² 1 - d dᵀ).
    Ic += R * I.inertia_about_com() * R.transpose() +
          I.mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
  }
  *mass = m;
  *inertia = 0.5 * (Ic + Ic.transpose());
}

std::vector<std::string> QuadrupedFeatures::names(int horizon) {
  std::vector<std::string> n{"roll", "pitch", "com_height", "omega_x", "omega_y", "omega_z", "com_vx", "com_vy",
                             "com_vz", "cmd_forward_speed", "cmd_lateral_speed", "cmd_yaw_rate", "cmd_height"};
  const char* legs[kNumLegs] = {"FR", "FL", "RR", "RL"};
  for (const char* l : legs)
    for (const char* a : {"x", "y", "z"}) n.push_back(std::string("foot_") + l + "_" + a);
  for (int k = 0; k < horizon; ++k)
    for (const char* l : legs) n.push_back("stance_" + std::to_string(k) + "_" + l);
  return n;
}

QuadrupedController::QuadrupedController(const Model<double>& model, const QuadrupedControllerOptions& options)
    : model_(model),
      options_((options.check(), options)),
      data_(model),
      legs_(model, options.foot_frames),
      gait_(options.gait),
      mpc_([&] {
        CentroidalMpcParameters p = options.mpc;
        if (options.mpc_mass_from_model) composite_inertia(model, options.nominal_joint_positions, &p.mass, &p.inertia);
        return p;
      }()),
      input_(options.mpc.horizon),
      features_(Eigen::VectorXd::Zero(QuadrupedFeatures::size(options.mpc.horizon))),
      forces_yaw_(Eigen::VectorXd::Zero(3 * kNumLegs)),
      tau_(Eigen::VectorXd::Zero(model.nv)),
      forces_world_(Eigen::Matrix<double, 3, kNumLegs>::Zero()),
      table_(Eigen::MatrixXd::Ones(kNumLegs, options.mpc.horizon)) {
  schedule_.push_back(CommandSegment{0.0, QuadrupedCommand{}});
  // The hips' reference footholds: the nominal feet relative to the base.
  Data<double> data(model);
  const Eigen::VectorXd qn = nominal_configuration(model, nominal_or_default(model, options.nominal_joint_positions));
  forward_kinematics(model, data, qn);
  QuadrupedLegs legs(model, options.foot_frames);
  legs.update(model, data, Eigen::VectorXd::Zero(model.nv));
  for (int i = 0; i < kNumLegs; ++i) {
    hip_offset_[i] = legs.foot_position(i);
    liftoff_[i].setZero();
    foothold_[i].setZero();
  }
  R_.setIdentity();
  Rz_.setIdentity();
  com_.setZero();
  com_velocity_.setZero();
  omega_world_.setZero();
}

void QuadrupedController::set_command(const QuadrupedCommand& command) {
  check_command(command, "QuadrupedController::set_command");
  schedule_.assign(1, CommandSegment{0.0, command});
}

void QuadrupedController::set_schedule(std::vector<CommandSegment> schedule) {
  if (schedule.empty()) throw InvalidArgument("QuadrupedController::set_schedule: the schedule is empty");
  for (size_t i = 0; i < schedule.size(); ++i) {
    check_command(schedule[i].command, "QuadrupedController::set_schedule: segment " + std::to_string(i));
    if (!std::isfinite(schedule[i].t_start) || (i > 0 && schedule[i].t_start <= schedule[i - 1].t_start))
      throw InvalidArgument("QuadrupedController::set_schedule: t_start must be finite and increasing (segment " +
                            std::to_string(i) + ")");
  }
  schedule_ = std::move(schedule);
}

QuadrupedCommand QuadrupedController::command_at(double t) const {
  size_t i = 0;
  while (i + 1 < schedule_.size() && schedule_[i + 1].t_start <= t) ++i;
  return schedule_[i].command;
}

bool QuadrupedController::stance(int leg, double t) const {
  return t < options_.gait_start_time || gait_.in_stance(leg, t - options_.gait_start_time);
}

void QuadrupedController::compute(long long k, double t, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  Eigen::VectorXd& u) {
  check_argument_size("QuadrupedController::compute", "q", q.size(), model_.nq);
  check_argument_size("QuadrupedController::compute", "q̇", qd.size(), model_.nv);
  check_argument_size("QuadrupedController::compute", "u", u.size(), model_.nv);
  forward_kinematics(model_, data_, q, qd);
  legs_.update(model_, data_, qd);
  const Centroidal<double> c = centroidal(model_, data_);
  com_ = c.com;
  com_velocity_ = c.com_velocity();
  R_ = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
  // ZYX Euler angles, R = Rz(ψ) Ry(θ) Rx(φ).
  yaw_ = std::atan2(R_(1, 0), R_(0, 0));
  pitch_ = std::asin(std::clamp(-R_(2, 0), -1.0, 1.0));
  roll_ = std::atan2(R_(2, 1), R_(2, 2));
  omega_world_.noalias() = R_ * qd.head<3>();
  Rz_ = yaw_rotation(yaw_);
  const QuadrupedCommand cmd = command_at(t);

  std::array<bool, kNumLegs> now{};
  bool changed = first_;
  for (int i = 0; i < kNumLegs; ++i) {
    now[i] = stance(i, t);
    if (first_ || (was_stance_[i] && !now[i])) liftoff_[i] = legs_.foot_position(i);
    if (!first_ && now[i] != was_stance_[i]) changed = true;
  }

  // Footholds (Raibert) of the swing legs, from the hip predicted at touchdown.
  const Eigen::Vector3d v(com_velocity_.x(), com_velocity_.y(), 0.0);
  const Eigen::Vector3d v_cmd = Rz_ * Eigen::Vector3d(cmd.forward_speed, cmd.lateral_speed, 0.0);
  const Eigen::Vector3d w_cmd(0, 0, cmd.yaw_rate);
  const double t_gait = t - options_.gait_start_time;
  for (int i = 0; i < kNumLegs; ++i) {
    if (now[i]) continue;
    Eigen::Vector3d hip = q.head<3>() + Rz_ * Eigen::Vector3d(hip_offset_[i].x(), hip_offset_[i].y(), 0.0);
    hip.z() = options_.ground_height;
    const Eigen::Vector3d r_hip(hip.x() - com_.x(), hip.y() - com_.y(), 0.0);
    const double t_left = gait_.time_left_in_phase(i, t_gait);
    const Eigen::Vector3d hip_td = hip + (v + w_cmd.cross(r_hip)) * t_left;
    Eigen::Vector3d p = raibert_foothold(hip_td, r_hip, v, v_cmd, cmd.yaw_rate, gait_.stance_duration(),
                                         options_.raibert_gain, options_.ground_height + legs_.foot_radius(i));
    Eigen::Vector2d step = p.head<2>() - hip_td.head<2>();
    if (step.norm() > options_.max_step) p.head<2>() = hip_td.head<2>() + step * (options_.max_step / step.norm());
    foothold_[i] = p;
  }

  mpc_updated_ = false;
  if (changed || k % options_.mpc_every == 0) {
    run_mpc(t, cmd);
    mpc_updated_ = true;
  }
  for (int i = 0; i < kNumLegs; ++i) was_stance_[i] = now[i];
  first_ = false;

  u.setZero();
  for (int i = 0; i < kNumLegs; ++i) {
    if (now[i]) {
      legs_.stance_torque(i, forces_world_.col(i), u);
    } else {
      Eigen::Vector3d p_des, v_des;
      swing_reference(liftoff_[i], foothold_[i], options_.swing_height, gait_.swing_fraction(i, t_gait),
                      gait_.swing_duration(), &p_des, &v_des);
      legs_.swing_torque(i, p_des, v_des, options_.swing_kp, options_.swing_kd, u);
    }
    if (options_.leg_gravity_compensation) legs_.add_gravity_compensation(i, u);
  }
  if (options_.torque_limit > 0)
    for (int i = 6; i < u.size(); ++i) u[i] = std::clamp(u[i], -options_.torque_limit, options_.torque_limit);
  tau_ = u;
}

void QuadrupedController::run_mpc(double t, const QuadrupedCommand& cmd) {
  const CentroidalMpcParameters& p = mpc_.parameters();
  const int N = p.horizon;
  const double dt = p.dt;
  using I = MpcIndex;
  const Eigen::Vector3d origin(com_.x(), com_.y(), options_.ground_height);
  // Current state in the yaw frame (yaw = 0 there).
  MpcState& x0 = input_.x0;
  x0.setZero();
  x0[0] = roll_;
  x0[1] = pitch_;
  x0[I::kPosition + 2] = com_.z() - options_.ground_height;
  x0.segment<3>(I::kOmega).noalias() = Rz_.transpose() * omega_world_;
  x0.segment<3>(I::kVelocity).noalias() = Rz_.transpose() * com_velocity_;
  x0[I::kGravity] = -p.gravity;
  // Reference: level body at the commanded height, turning at the commanded
  // rate, moving at the commanded (body-yaw-frame) velocity from where it is.
  Eigen::Vector2d pxy = Eigen::Vector2d::Zero();
  for (int k = 0; k < N; ++k) {
    const double psi = cmd.yaw_rate * (k + 1) * dt;
    const Eigen::Vector3d vk = yaw_rotation(psi) * Eigen::Vector3d(cmd.forward_speed, cmd.lateral_speed, 0.0);
    pxy += vk.head<2>() * dt;
    auto col = input_.x_ref.col(k);
    col.setZero();
    col[2] = psi;
    col[I::kPosition] = pxy.x();
    col[I::kPosition + 1] = pxy.y();
    col[I::kPosition + 2] = cmd.height;
    col[I::kOmega + 2] = cmd.yaw_rate;
    col.segment<3>(I::kVelocity) = vk;
    col[I::kGravity] = -p.gravity;
  }
  for (int i = 0; i < kNumLegs; ++i) {
    const bool st = stance(i, t);
    Eigen::Vector3d foot = st ? legs_.foot_position(i) : foothold_[i];
    foot.z() -= legs_.foot_radius(i);  // the contact point
    input_.feet.col(i).noalias() = Rz_.transpose() * (foot - origin);
  }
  for (int k = 0; k < N; ++k)
    for (int i = 0; i < kNumLegs; ++i) input_.contact(i, k) = stance(i, t + k * dt) ? 1.0 : 0.0;

  // Features (layout: QuadrupedFeatures).
  using F = QuadrupedFeatures;
  features_[F::kRoll] = roll_;
  features_[F::kPitch] = pitch_;
  features_[F::kComHeight] = x0[I::kPosition + 2];
  features_.segment<3>(F::kOmega) = x0.segment<3>(I::kOmega);
  features_.segment<3>(F::kComVelocity) = x0.segment<3>(I::kVelocity);
  features_[F::kCommandForward] = cmd.forward_speed;
  features_[F::kCommandLateral] = cmd.lateral_speed;
  features_[F::kCommandYawRate] = cmd.yaw_rate;
  features_[F::kCommandHeight] = cmd.height;
  for (int i = 0; i < kNumLegs; ++i) features_.segment<3>(F::kFeet + 3 * i) = input_.feet.col(i);
  for (int k = 0; k < N; ++k)
    for (int i = 0; i < kNumLegs; ++i) features_[F::kStance + kNumLegs * k + i] = input_.contact(i, k);

  ++num_solves_;
  if (policy_) {
    policy_(features_, forces_yaw_);
    qp_status_ = QpStatus::kOptimal;
  } else {
    qp_status_ = mpc_.solve(input_);
    if (qp_status_ == QpStatus::kOptimal)
      forces_yaw_ = mpc_.forces().head<3 * kNumLegs>();
    else
      ++num_failures_;  // keep the previous forces
  }
  for (int i = 0; i < kNumLegs; ++i) forces_world_.col(i).noalias() = Rz_ * forces_yaw_.segment<3>(3 * i);
}

}  // namespace neuralsim
