#include "neuralsim/control/gait.hpp"

#include <cmath>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace {
[[noreturn]] void fail_gait(const std::string& what) { throw InvalidArgument("GaitParameters: " + what); }

// Phases are compared with a small tolerance so that t = k·T/2 computed in
// floating point does not flip a leg a rounding error early.
constexpr double kPhaseEps = 1e-9;
}  // namespace

GaitParameters GaitParameters::trot(double period, double duty_factor) {
  GaitParameters g;
  g.name = "trot";
  g.period = period;
  g.duty_factor = duty_factor;
  g.offsets = {0.0, 0.5, 0.5, 0.0};  // FR & RL together, FL & RR half a cycle later
  return g;
}

GaitParameters GaitParameters::stand() {
  GaitParameters g;
  g.name = "stand";
  g.period = 1.0;
  g.duty_factor = 1.0;
  g.offsets = {0.0, 0.0, 0.0, 0.0};
  return g;
}

void GaitParameters::check() const {
  if (!std::isfinite(period) || period <= 0) fail_gait("period must be finite and > 0, got " + std::to_string(period));
  if (!std::isfinite(duty_factor) || duty_factor <= 0 || duty_factor > 1)
    fail_gait("duty_factor must be in (0, 1], got " + std::to_string(duty_factor));
  for (int i = 0; i < kNumLegs; ++i)
    if (!std::isfinite(offsets[i]) || offsets[i] < 0 || offsets[i] >= 1)
      fail_gait("offsets[" + std::to_string(i) + "] must be in [0, 1), got " + std::to_string(offsets[i]));
}

GaitScheduler::GaitScheduler(const GaitParameters& parameters) : p_(parameters) { p_.check(); }

double GaitScheduler::phase(int leg, double t) const {
  double s = t / p_.period + p_.offsets[leg] + kPhaseEps;
  s -= std::floor(s);
  return s;
}

bool GaitScheduler::in_stance(int leg, double t) const {
  return p_.duty_factor >= 1.0 || phase(leg, t) < p_.duty_factor;
}

std::array<bool, kNumLegs> GaitScheduler::contacts(double t) const {
  std::array<bool, kNumLegs> c{};
  for (int i = 0; i < kNumLegs; ++i) c[i] = in_stance(i, t);
  return c;
}

double GaitScheduler::stance_fraction(int leg, double t) const {
  if (!in_stance(leg, t)) return 0.0;
  return phase(leg, t) / p_.duty_factor;
}

double GaitScheduler::swing_fraction(int leg, double t) const {
  if (in_stance(leg, t)) return 0.0;
  return (phase(leg, t) - p_.duty_factor) / (1.0 - p_.duty_factor);
}

double GaitScheduler::time_left_in_phase(int leg, double t) const {
  if (p_.duty_factor >= 1.0) return stance_duration();
  const double s = phase(leg, t);
  return in_stance(leg, t) ? (p_.duty_factor - s) * p_.period : (1.0 - s) * p_.period;
}

void GaitScheduler::horizon(double t, double dt, Eigen::Ref<Eigen::MatrixXd> table) const {
  if (table.rows() != kNumLegs)
    throw InvalidArgument("GaitScheduler::horizon: table has " + std::to_string(table.rows()) + " rows, expected 4");
  for (Eigen::Index k = 0; k < table.cols(); ++k)
    for (int i = 0; i < kNumLegs; ++i) table(i, k) = in_stance(i, t + static_cast<double>(k) * dt) ? 1.0 : 0.0;
}

}  // namespace neuralsim
