// Gradient check: a derivative the tools compute (reverse mode, or Ceres'
// forward-mode Jets) against central differences of the same cost, per
// coordinate, with an error estimate for the differences themselves.
//
//   GradientCheckSummary s = check_gradient(cost, x, names, {{"reverse_mode", g}}, options);
//   if (!s.passed) std::cerr << s.report();
//
// The central difference D(h) = (f(x + h e_i) − f(x − h e_i)) / 2h has a
// truncation error c·h² + O(h⁴); Richardson's extrapolation
// R = (4 D(h/2) − D(h)) / 3 removes the h² term (Press et al., Numerical
// Recipes §5.7). The differences' own error is estimated as |R − D(h/2)|
// (truncation) plus |Δ⁴f| / h, the fourth difference of the five values
// f(x), f(x ± h/2), f(x ± h) (noise: an inner solver's tolerance), plus
// 4 ε max|f| / h (the values' own rounding). With a truncation error O(h⁴) and a rounding error
// O(ε f / h), the step h = ε^(1/5)·max(|x_i|, 1) balances the two.
//
// A coordinate fails when |g − R| exceeds `tolerance` times
// max(|g|, |R|, 1e-6·‖R‖∞) (a relative error; the floor keeps coordinates
// with no effect from dividing zero by zero) AND the difference is more than
// four times the differences' own error estimate (otherwise the check cannot
// tell: the row says "unresolved" and does not fail).
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

namespace neuralsim {

struct GradientCheckOptions {
  double tolerance = 1e-5;  // relative error past which a coordinate fails
  // Coordinates to check (indices into x); empty: all of them.
  std::vector<int> coordinates;
};

// A derivative under check, e.g. {"reverse_mode", g} or {"forward_mode", g}.
struct CheckedGradient {
  std::string method;
  Eigen::VectorXd gradient;  // size of x
};

enum class GradientCheckVerdict { kAgrees, kDisagrees, kUnresolved };
const char* gradient_check_verdict_name(GradientCheckVerdict v);  // "agrees", "DISAGREES", "unresolved"

struct GradientCheckRow {
  int index = 0;
  std::string name;
  double value = 0;                  // x_i
  double step = 0;                   // h
  double central_difference = 0;     // Richardson-extrapolated
  double difference_error = 0;       // its error estimate: |R − D(h/2)| + |Δ⁴f| / h + 4ε max|f| / h
  std::vector<double> gradient;      // one per CheckedGradient, in order
  std::vector<double> relative_error;
  GradientCheckVerdict verdict = GradientCheckVerdict::kAgrees;  // the worst over the gradients
};

struct GradientCheckSummary {
  std::vector<std::string> methods;  // the checked gradients' names
  std::vector<GradientCheckRow> rows;
  double tolerance = 0;
  double max_relative_error = 0;  // over resolved rows and every method
  int disagreeing = 0, unresolved = 0;
  int cost_evaluations = 0;
  double cost = 0;  // f(x)
  bool passed = true;  // no row disagrees

  // A table: name, value, each gradient, the central difference, the
  // relative errors and the verdict, one row per coordinate.
  std::string report() const;
};

// Checks each gradient in `gradients` against central differences of `cost`
// at x. `names` has one entry per coordinate of x. `cost` returns false
// when the cost cannot be evaluated there (the row is then unresolved).
// Throws InvalidArgument on mismatched sizes, a coordinate out of range, a
// non-finite x or a tolerance that is not positive.
GradientCheckSummary check_gradient(const std::function<bool(const Eigen::VectorXd&, double*)>& cost,
                                    const Eigen::VectorXd& x, const std::vector<std::string>& names,
                                    const std::vector<CheckedGradient>& gradients,
                                    const GradientCheckOptions& options = {});

}  // namespace neuralsim
