// Seeded push perturbations: a horizontal force on a body for a short
// random interval, the disturbance under which a distilled controller is
// trained and tested (issue 14; as in the push-recovery evaluations of
// legged controllers, e.g. Di Carlo et al. 2018 §VI).
//
// Schedule. Time is cut into windows of `every` seconds starting at `start`.
// Window s of trajectory i holds one push with probability `probability`:
// its duration uniform in [duration_min, duration_max], its start uniform
// in the window (such that the push ends inside it), its magnitude uniform
// in [force_min, force_max] and its direction uniform on the horizontal
// circle (a point drawn uniformly in the unit disc by rejection, then
// normalized: IEEE +, −, ×, ÷, √ only, no sin/cos, so the same on every
// platform). Each window is drawn from a Mersenne Twister seeded by
// SplitMix64 of (seed, i, s), with nn::random's portable uniform draw
// (the 53 high bits of a draw): the
// schedule of a trajectory does not depend on the others, on the thread
// count or on the order in which windows are queried.
//
// Numeric only (no YAML): the distill config section builds the options.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <vector>

#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

struct Push {
  double t_start = 0, duration = 0;  // [s]
  Eigen::Vector3d force = Eigen::Vector3d::Zero();  // world axes [N], horizontal (z = 0)
  bool active(double t) const { return t >= t_start && t < t_start + duration; }
};

struct PushOptions {
  double start = 1.0;          // first window [s], ≥ 0
  double every = 2.0;          // window length [s], > 0
  double probability = 1.0;    // of a push in a window, [0, 1]
  double duration_min = 0.05, duration_max = 0.15;  // [s], 0 < min ≤ max ≤ every
  double force_min = 0.0, force_max = 0.0;          // [N], 0 ≤ min ≤ max
  std::uint64_t seed = 0;
  // InvalidArgument naming the field.
  void check() const;
};

class PushSchedule {
 public:
  // The pushes of trajectory `trajectory_index` over [0, duration].
  PushSchedule(const PushOptions& options, int trajectory_index, double duration);

  const std::vector<Push>& pushes() const { return pushes_; }
  // The total force at time t (zero between pushes). No allocation.
  Eigen::Vector3d force_at(double t) const;
  // Window s's push (if any) of trajectory i: pure, the building block above.
  static bool draw(const PushOptions& options, int trajectory_index, long long window, Push* push);

 private:
  std::vector<Push> pushes_;
};

// A force hook that applies `schedule`'s force at the CoM of `body` (world
// axes), for Stepper<double>::hooks(). The hook shares the schedule.
ForceHook<double> push_force_hook(std::shared_ptr<const PushSchedule> schedule, int body);

}  // namespace neuralsim
