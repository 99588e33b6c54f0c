#include "neuralsim/estimate/solve_progress.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace neuralsim {

void SolveEta::update(int iteration, double elapsed_s, double cost, SolveProgress& p) {
  if (started_) {
    durations_.push_back(std::max(0.0, elapsed_s - last_elapsed_));
    if (durations_.size() > kRecent) durations_.pop_front();
    // A rejected step leaves the cost unchanged: no decrease to learn from.
    const double d = (last_cost_ - cost) / std::max(std::abs(cost), 1e-300);
    if (d > 0 && std::isfinite(d)) {
      previous_decrease_ = decrease_;
      decrease_ = d;
    }
  }
  started_ = true;
  last_elapsed_ = elapsed_s;
  last_cost_ = cost;
  // Before any iteration ends, the initial evaluation is the only measure.
  double per = elapsed_s;
  if (!durations_.empty()) {
    std::vector<double> v(durations_.begin(), durations_.end());
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    per = v[v.size() / 2];
  }
  const int cap = std::max(0, max_iterations_ - iteration);
  int left = cap;
  p.eta_extrapolated = false;
  if (tolerance_ > 0 && previous_decrease_ > 0 && decrease_ > 0) {
    const double rho = decrease_ / previous_decrease_;
    if (decrease_ <= tolerance_) {
      left = std::min(cap, 1);
      p.eta_extrapolated = true;
    } else if (rho < 1) {
      const double n = std::ceil(std::log(tolerance_ / decrease_) / std::log(rho));
      if (n < cap) {
        left = std::max(1, static_cast<int>(n));
        p.eta_extrapolated = true;
      }
    }
  }
  p.iteration_s = per;
  p.eta_s = per * left;
  p.eta_max_s = per * cap;
}

}  // namespace neuralsim
