// Seeded push perturbations; see push_perturbation.hpp.
#include "neuralsim/control/push_perturbation.hpp"

#include <cmath>
#include <random>
#include <string>

#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/step/external_force.hpp"

namespace neuralsim {

namespace push_detail {

// nn::random::uniform01's draw (the control layer does not link nn): the 53
// high bits of one draw, times 2^−53, exact.
double push_uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double push_uniform(double lo, double hi, std::mt19937_64& rng) { return lo + (hi - lo) * push_uniform01(rng); }

void push_require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("PushOptions: " + what);
}

}  // namespace push_detail

void PushOptions::check() const {
  using push_detail::push_require;
  push_require(start >= 0 && std::isfinite(start), "start must be finite and >= 0");
  push_require(every > 0 && std::isfinite(every), "every must be finite and > 0");
  push_require(probability >= 0 && probability <= 1, "probability must lie in [0, 1]");
  push_require(duration_min > 0 && duration_min <= duration_max && duration_max <= every,
               "durations must satisfy 0 < duration_min <= duration_max <= every");
  push_require(force_min >= 0 && force_min <= force_max && std::isfinite(force_max),
               "forces must satisfy 0 <= force_min <= force_max < inf");
}

bool PushSchedule::draw(const PushOptions& o, int trajectory_index, long long window, Push* push) {
  using namespace push_detail;
  const std::uint64_t per_trajectory =
      splitmix64(splitmix64(o.seed ^ 0x70757368ULL) ^ static_cast<std::uint64_t>(trajectory_index));
  std::mt19937_64 rng(splitmix64(per_trajectory ^ static_cast<std::uint64_t>(window)));
  // Every quantity is drawn, also when there is no push, so the streams never shift.
  const double u_push = push_uniform01(rng);
  const double duration = push_uniform(o.duration_min, o.duration_max, rng);
  const double offset = push_uniform(0.0, o.every - duration, rng);
  const double magnitude = push_uniform(o.force_min, o.force_max, rng);
  double x = 0, y = 0, r2 = 0;
  for (int tries = 0; tries < 1000; ++tries) {
    x = 2 * push_uniform01(rng) - 1;
    y = 2 * push_uniform01(rng) - 1;
    r2 = x * x + y * y;
    if (r2 > 1e-6 && r2 < 1) break;
  }
  if (!(r2 > 1e-6 && r2 < 1)) x = 1, y = 0, r2 = 1;  // never in practice (probability < 1e-600)
  if (!(u_push < o.probability)) return false;
  const double r = std::sqrt(r2);
  push->t_start = o.start + static_cast<double>(window) * o.every + offset;
  push->duration = duration;
  push->force = Eigen::Vector3d(magnitude * x / r, magnitude * y / r, 0.0);
  return true;
}

PushSchedule::PushSchedule(const PushOptions& options, int trajectory_index, double duration) {
  options.check();
  if (!(duration >= 0) || !std::isfinite(duration)) throw InvalidArgument("PushSchedule: duration must be >= 0");
  if (options.force_max <= 0) return;
  for (long long s = 0; options.start + static_cast<double>(s) * options.every < duration; ++s) {
    Push p;
    if (draw(options, trajectory_index, s, &p) && p.t_start < duration) pushes_.push_back(p);
  }
}

Eigen::Vector3d PushSchedule::force_at(double t) const {
  Eigen::Vector3d f = Eigen::Vector3d::Zero();
  for (const Push& p : pushes_)
    if (p.active(t)) f += p.force;
  return f;
}

ForceHook<double> push_force_hook(std::shared_ptr<const PushSchedule> schedule, int body) {
  if (!schedule) throw InvalidArgument("push_force_hook: no schedule");
  return [schedule, body](const Model<double>& model, Data<double>& data, const VecX<double>&, const VecX<double>&,
                          double t) {
    const Eigen::Vector3d f = schedule->force_at(t);
    if (f.isZero(0.0)) return;
    const Transform<double>& X = data.X_world[body];
    // The CoM in world coordinates: r + Eᵀ c (E maps world to body axes).
    const Eigen::Vector3d com = X.r + X.E.transpose() * model.bodies[body].inertia.com();
    add_world_force_at_point<double>(data, body, com, f);
  };
}

}  // namespace neuralsim
