// The excitation-design tests' common settings for the geared two-link arm
// (configs/models/geared_arm.yaml): a short period, few harmonics, limits on
// every quantity, a different noise per joint.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "neuralsim/estimate/excitation_design.hpp"

namespace neuralsim::testing {

inline ExcitationDesignOptions two_link_excitation_options() {
  ExcitationDesignOptions o;
  o.period = 2;
  o.harmonics = 3;
  o.sample_rate = 25;
  o.limits.q_lower = Eigen::Vector2d(-1.5, -2.0);
  o.limits.q_upper = Eigen::Vector2d(1.0, 2.0);
  o.limits.qd = Eigen::Vector2d(3.0, 4.0);
  o.limits.qdd = Eigen::Vector2d(30.0, 40.0);
  o.limits.tau = Eigen::Vector2d(6.0, 3.0);
  o.noise = Eigen::Vector2d(0.05, 0.02);
  o.max_iterations = 60;
  o.seed = 7;
  return o;
}

// Central differences of criterion + penalty at z (step 1e-6·max(1, |z_i|));
// NaN where an evaluation fails.
inline Eigen::VectorXd excitation_central_differences(const ExcitationObjective& objective, const Eigen::VectorXd& z) {
  Eigen::VectorXd d(z.size());
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    const double h = 1e-6 * std::max(1.0, std::abs(z[i]));
    Eigen::VectorXd zp = z, zm = z;
    zp[i] += h;
    zm[i] -= h;
    double fp = 0, fm = 0;
    const bool ok = objective.evaluate(zp, &fp, nullptr) && objective.evaluate(zm, &fm, nullptr);
    d[i] = ok ? (fp - fm) / (2 * h) : std::numeric_limits<double>::quiet_NaN();
  }
  return d;
}

}  // namespace neuralsim::testing
