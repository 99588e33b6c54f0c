// Open- and closed-loop controls for rollouts. A controller is evaluated once
// per step (one virtual call per step, never per scalar op) and writes a
// generalized control vector u (length nv) that the Stepper scales by each
// joint's gear ratio.
#pragma once

#include <memory>
#include <vector>

#include "neuralsim/spatial/types.hpp"

namespace neuralsim {

template <class S>
class Controller {
 public:
  virtual ~Controller() = default;
  // `k` is the step index, `t` the time at the start of the step.
  virtual void compute(long long k, double t, const VecX<S>& q, const VecX<S>& qd, VecX<S>& u) = 0;
};

template <class S>
class ZeroControl : public Controller<S> {
 public:
  void compute(long long, double, const VecX<S>&, const VecX<S>&, VecX<S>& u) override { u.setZero(); }
};

template <class S>
class ConstantControl : public Controller<S> {
 public:
  explicit ConstantControl(Eigen::VectorXd value) : value_(std::move(value)) {}
  void compute(long long, double, const VecX<S>&, const VecX<S>&, VecX<S>& u) override {
    for (int i = 0; i < u.size(); ++i) u[i] = S(value_[i]);
  }
 private:
  Eigen::VectorXd value_;
};

// u_i(t) = offset_i + amplitude_i · sin(2π f_i t + phase_i).
struct Sinusoid {
  Eigen::VectorXd offset, amplitude, frequency_hz, phase;
  double value(int i, double t) const {
    return offset[i] + amplitude[i] * std::sin(2.0 * M_PI * frequency_hz[i] * t + phase[i]);
  }
  double rate(int i, double t) const {
    return amplitude[i] * 2.0 * M_PI * frequency_hz[i] * std::cos(2.0 * M_PI * frequency_hz[i] * t + phase[i]);
  }
};

template <class S>
class SinusoidControl : public Controller<S> {
 public:
  explicit SinusoidControl(Sinusoid s) : s_(std::move(s)) {}
  void compute(long long, double t, const VecX<S>&, const VecX<S>&, VecX<S>& u) override {
    for (int i = 0; i < u.size(); ++i) u[i] = S(s_.value(i, t));
  }
 private:
  Sinusoid s_;
};

// Replays recorded samples (rows = steps), zero-order hold; the last row is
// held past the end of the recording.
template <class S>
class RecordedControl : public Controller<S> {
 public:
  explicit RecordedControl(Eigen::MatrixXd samples) : samples_(std::move(samples)) {}
  void compute(long long k, double, const VecX<S>&, const VecX<S>&, VecX<S>& u) override {
    const long long row = std::min<long long>(k, samples_.rows() - 1);
    for (int i = 0; i < u.size(); ++i) u[i] = S(samples_(row, i));
  }
 private:
  Eigen::MatrixXd samples_;
};

// PD tracking of a sinusoidal reference per velocity coordinate:
// u_i = kp_i (q*_i - q_i) + kd_i (q̇*_i - q̇_i). Coordinates of spherical and
// free joints (position_index = -1) get only the damping term. With
// hold_initial, the reference offset is the state at the first call.
template <class S>
class PdControl : public Controller<S> {
 public:
  PdControl(std::vector<int> position_index, Eigen::VectorXd kp, Eigen::VectorXd kd, Sinusoid reference,
            bool hold_initial = false)
      : position_index_(std::move(position_index)), kp_(std::move(kp)), kd_(std::move(kd)),
        ref_(std::move(reference)), hold_initial_(hold_initial) {}
  void compute(long long k, double t, const VecX<S>& q, const VecX<S>& qd, VecX<S>& u) override {
    if (hold_initial_ && k == 0)
      for (int i = 0; i < u.size(); ++i)
        if (position_index_[i] >= 0) ref_.offset[i] = to_double(q[position_index_[i]]);
    for (int i = 0; i < u.size(); ++i) {
      u[i] = S(kd_[i]) * (S(ref_.rate(i, t)) - qd[i]);
      if (position_index_[i] >= 0) u[i] += S(kp_[i]) * (S(ref_.value(i, t)) - q[position_index_[i]]);
    }
  }
 private:
  std::vector<int> position_index_;
  Eigen::VectorXd kp_, kd_;
  Sinusoid ref_;
  bool hold_initial_;
};

}  // namespace neuralsim
