// Periodic gait scheduler for a quadruped: every leg follows the same cycle
// of period T, shifted by its phase offset; a leg is in stance during the
// first duty-factor fraction of its cycle and in swing for the rest
// (the "event-free" periodic schedule of the MIT Cheetah controllers,
// Di Carlo et al., IROS 2018, §IV). The scheduler gives the contact flags
// now, the swing/stance phase fractions the leg controller interpolates with,
// and the table of contact flags over an MPC horizon.
//
// Leg order everywhere in the control layer: 0 FR, 1 FL, 2 RR, 3 RL (front
// right, front left, rear right, rear left), the order of the Laikago URDF.
#pragma once

#include <Eigen/Dense>

#include <array>
#include <string>

namespace neuralsim {

constexpr int kNumLegs = 4;

struct GaitParameters {
  std::string name = "trot";
  double period = 0.3;                            // T [s], > 0
  double duty_factor = 0.5;                       // stance fraction of the cycle, in (0, 1]
  std::array<double, kNumLegs> offsets{0.0, 0.5, 0.5, 0.0};  // phase offsets, in [0, 1)

  // Diagonal pairs (FR+RL, FL+RR) in antiphase, half the cycle on the ground each.
  static GaitParameters trot(double period = 0.3, double duty_factor = 0.5);
  // All feet on the ground at all times (duty factor 1).
  static GaitParameters stand();
  // Throws InvalidArgument (core/errors.hpp) naming the field when a value
  // is not finite or out of range.
  void check() const;
};

class GaitScheduler {
 public:
  explicit GaitScheduler(const GaitParameters& parameters);  // checks the parameters

  const GaitParameters& parameters() const { return p_; }
  // Phase of leg `leg` in its own cycle at time t, in [0, 1).
  double phase(int leg, double t) const;
  bool in_stance(int leg, double t) const;
  std::array<bool, kNumLegs> contacts(double t) const;
  // Fraction of the current stance (in stance) or swing (in swing) that has
  // elapsed at time t, in [0, 1).
  double stance_fraction(int leg, double t) const;
  double swing_fraction(int leg, double t) const;
  // Durations of one stance and one swing, T·d and T·(1 - d).
  double stance_duration() const { return p_.period * p_.duty_factor; }
  double swing_duration() const { return p_.period * (1.0 - p_.duty_factor); }
  // Time left in the current stance or swing of the leg.
  double time_left_in_phase(int leg, double t) const;

  // Contact table of an MPC horizon: table(leg, k) = 1 when the leg is in
  // stance at t + k·dt (the start of MPC interval k), 0 otherwise.
  // `table` must be 4 x horizon (checked); no allocation.
  void horizon(double t, double dt, Eigen::Ref<Eigen::MatrixXd> table) const;

 private:
  GaitParameters p_;
};

}  // namespace neuralsim
