#include "neuralsim/grad/gradient_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {

const char* gradient_check_verdict_name(GradientCheckVerdict v) {
  switch (v) {
    case GradientCheckVerdict::kAgrees: return "agrees";
    case GradientCheckVerdict::kDisagrees: return "DISAGREES";
    case GradientCheckVerdict::kUnresolved: return "unresolved";
  }
  return "?";
}

GradientCheckSummary check_gradient(const std::function<bool(const Eigen::VectorXd&, double*)>& cost,
                                    const Eigen::VectorXd& x, const std::vector<std::string>& names,
                                    const std::vector<CheckedGradient>& gradients,
                                    const GradientCheckOptions& options) {
  const Eigen::Index n = x.size();
  if (static_cast<Eigen::Index>(names.size()) != n)
    throw InvalidArgument("check_gradient: " + std::to_string(names.size()) + " names for " + std::to_string(n) +
                          " coordinates");
  if (!x.allFinite()) throw InvalidArgument("check_gradient: x is not finite");
  if (!(options.tolerance > 0) || !std::isfinite(options.tolerance))
    throw InvalidArgument("check_gradient: tolerance must be finite and > 0");
  for (const CheckedGradient& g : gradients)
    if (g.gradient.size() != n)
      throw InvalidArgument("check_gradient: gradient '" + g.method + "' has size " +
                            std::to_string(g.gradient.size()) + ", expected " + std::to_string(n));
  std::vector<int> coords = options.coordinates;
  if (coords.empty())
    for (Eigen::Index i = 0; i < n; ++i) coords.push_back(static_cast<int>(i));
  for (int i : coords)
    if (i < 0 || i >= n) throw InvalidArgument("check_gradient: coordinate " + std::to_string(i) + " out of range");

  GradientCheckSummary s;
  s.tolerance = options.tolerance;
  for (const CheckedGradient& g : gradients) s.methods.push_back(g.method);
  if (!cost(x, &s.cost)) s.cost = std::numeric_limits<double>::quiet_NaN();
  ++s.cost_evaluations;

  // Central differences, Richardson-extrapolated, per coordinate.
  const double step_factor = std::pow(std::numeric_limits<double>::epsilon(), 0.2);
  Eigen::VectorXd xp = x;
  auto at = [&](int i, double delta, double* f) {
    xp[i] = x[i] + delta;
    const bool ok = cost(xp, f) && std::isfinite(*f);
    xp[i] = x[i];
    ++s.cost_evaluations;
    return ok;
  };
  double scale = 0;  // ‖R‖∞ over the resolved rows: the floor of the relative errors
  for (int i : coords) {
    GradientCheckRow row;
    row.index = i;
    row.name = names[static_cast<size_t>(i)];
    row.value = x[i];
    row.step = step_factor * std::max(std::abs(x[i]), 1.0);
    const double h = row.step;
    double fp = 0, fm = 0, fp2 = 0, fm2 = 0;
    const bool ok =
        std::isfinite(s.cost) && at(i, h, &fp) && at(i, -h, &fm) && at(i, h / 2, &fp2) && at(i, -h / 2, &fm2);
    if (ok) {
      const double d1 = (fp - fm) / (2 * h), d2 = (fp2 - fm2) / h;
      row.central_difference = (4 * d2 - d1) / 3;
      // Truncation: what the extrapolation changed. Noise (rounding, a
      // solver's tolerance): the fourth difference of the five values is
      // (h/2)^4 times the fourth derivative for a smooth cost and ~8.4 sigma
      // for noise sigma per value, of which R carries ~1.9 sigma / h:
      // |fourth difference| / h is about four of R's standard deviations.
      const double fourth = fp - 4 * fp2 + 6 * s.cost - 4 * fm2 + fm;
      // Rounding of the values themselves, which identical roundings can
      // hide from the fourth difference: a few ε·|f| / h.
      const double largest = std::max({std::abs(fp), std::abs(fm), std::abs(fp2), std::abs(fm2), std::abs(s.cost)});
      row.difference_error = std::abs(row.central_difference - d2) + std::abs(fourth) / h +
                             4 * std::numeric_limits<double>::epsilon() * largest / h;
      scale = std::max(scale, std::abs(row.central_difference));
    } else {
      row.central_difference = row.difference_error = std::numeric_limits<double>::quiet_NaN();
      row.verdict = GradientCheckVerdict::kUnresolved;
    }
    for (const CheckedGradient& g : gradients) row.gradient.push_back(g.gradient[i]);
    s.rows.push_back(std::move(row));
  }

  const double floor = 1e-6 * scale;
  for (GradientCheckRow& row : s.rows) {
    const bool resolved = std::isfinite(row.central_difference);
    for (double g : row.gradient) {
      const double diff = std::abs(g - row.central_difference);
      const double denom = std::max({std::abs(g), std::abs(row.central_difference), floor});
      const double rel = !resolved || !std::isfinite(g) ? std::numeric_limits<double>::quiet_NaN()
                         : denom > 0                      ? diff / denom
                                                          : 0.0;
      row.relative_error.push_back(rel);
      if (!resolved) continue;
      GradientCheckVerdict v = GradientCheckVerdict::kAgrees;
      if (!std::isfinite(g)) v = GradientCheckVerdict::kDisagrees;
      else if (rel > options.tolerance)
        v = diff > 4 * row.difference_error ? GradientCheckVerdict::kDisagrees : GradientCheckVerdict::kUnresolved;
      else s.max_relative_error = std::max(s.max_relative_error, rel);
      if (v == GradientCheckVerdict::kDisagrees) s.max_relative_error = std::max(s.max_relative_error, rel);
      if (v == GradientCheckVerdict::kDisagrees || row.verdict == GradientCheckVerdict::kAgrees) row.verdict = v;
    }
    if (row.verdict == GradientCheckVerdict::kDisagrees) ++s.disagreeing;
    if (row.verdict == GradientCheckVerdict::kUnresolved) ++s.unresolved;
  }
  s.passed = s.disagreeing == 0;
  return s;
}

std::string GradientCheckSummary::report() const {
  std::ostringstream o;
  o << format_printf("gradient check at cost %.10g: %zu coordinate(s), tolerance %.1e (relative), %d cost evaluations\n",
                     cost, rows.size(), tolerance, cost_evaluations);
  size_t width = 9;
  for (const GradientCheckRow& r : rows) width = std::max(width, r.name.size());
  o << format_printf("%-*s %14s", static_cast<int>(width), "parameter", "value");
  for (const std::string& m : methods) o << format_printf(" %20s", m.c_str());
  o << format_printf(" %20s %10s", "central_difference", "fd_error");
  for (const std::string& m : methods) o << format_printf(" %12s", ("rel_err_" + m.substr(0, 4)).c_str());
  o << "  verdict\n";
  for (const GradientCheckRow& r : rows) {
    o << format_printf("%-*s %14.7g", static_cast<int>(width), r.name.c_str(), r.value);
    for (double g : r.gradient) o << format_printf(" %20.12g", g);
    o << format_printf(" %20.12g %10.2e", r.central_difference, r.difference_error);
    for (double e : r.relative_error) o << format_printf(" %12.2e", e);
    o << "  " << gradient_check_verdict_name(r.verdict) << "\n";
  }
  o << format_printf("%s: max relative error %.2e; %d disagree, %d unresolved (the differences' own error is too "
                     "large to tell)\n",
                     passed ? "PASSED" : "FAILED", max_relative_error, disagreeing, unresolved);
  return o.str();
}

}  // namespace neuralsim
