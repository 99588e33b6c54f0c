// Projected Gauss–Seidel for the contact mixed LCP at the velocity level
// (E. Catto, "Iterative dynamics with temporal coherence", GDC 2005;
// K. Erleben, "Velocity-based shock propagation for multibody dynamics
// animation", ACM TOG 26(2), 2007, §3). With A = J M⁻¹ Jᵀ + cfm·1 (the
// Delassus matrix, regularized by constraint force mixing) and
// r = J q̇⁺ - b (current contact velocity minus its target), find impulses
//   w = A λ + r,   0 <= λ_n ⊥ w_n >= 0,   λ_t in the friction set of μ λ_n
// with w_t = 0 while sticking. Rows are grouped per contact as (n, t1, t2).
// Each sweep solves one row at a time against the latest values of the
// others and projects it on its bounds: λ_n >= 0; pyramid |λ_ti| <= μ λ_n;
// cone |(λ_t1, λ_t2)| <= μ λ_n (the two tangent rows are updated, then
// projected jointly onto the disc).
#pragma once

#include <algorithm>

#include "neuralsim/contact/contact_settings.hpp"

namespace neuralsim {

struct PgsResult {
  int iterations = 0;
  double max_delta = 0;  // largest impulse change in the last sweep
  bool converged = false;
};

// A replacement of solve_pgs with the same arguments and result, e.g. one
// that records the solve as one reverse-mode node (grad/pgs_node.hpp);
// ImpulseSolver calls it instead when set. Not owned.
template <class S>
struct PgsOverride {
  void* context = nullptr;
  PgsResult (*solve)(void* context, const MatX<S>& A, const VecX<S>& r, const VecX<S>& mu, int nc, const S& cfm,
                     FrictionCone cone, const PgsOptions& options, VecX<S>& lambda) = nullptr;
};

// A (top-left 3nc x 3nc used, symmetric), r, mu (first nc used). `lambda`
// holds the initial guess (warm start) and receives the solution.
template <class S>
PgsResult solve_pgs(const MatX<S>& A, const VecX<S>& r, const VecX<S>& mu, int nc, const S& cfm,
                    FrictionCone cone, const PgsOptions& options, VecX<S>& lambda) {
  using std::abs;
  using std::sqrt;
  const int m = 3 * nc;
  PgsResult res;
  // Residual of row i: A is symmetric, so use its contiguous column.
  auto w = [&](int i) -> S { return A.col(i).head(m).dot(lambda.head(m)) + cfm * lambda[i] + r[i]; };
  auto update = [&](int i) -> S { return lambda[i] - w(i) / (A(i, i) + cfm); };
  for (int it = 0; it < options.max_iterations; ++it) {
    double max_delta = 0, max_lambda = 0;
    for (int c = 0; c < nc; ++c) {
      const int i = 3 * c;
      const S old_n = lambda[i], old_t1 = lambda[i + 1], old_t2 = lambda[i + 2];
      S ln = update(i);
      lambda[i] = ln > S(0) ? ln : S(0);
      const S bound = mu[c] * lambda[i];
      if (cone == FrictionCone::kPyramid) {
        for (int k = 1; k <= 2; ++k) {
          S lt = update(i + k);
          if (lt > bound) lt = bound;
          if (lt < -bound) lt = -bound;
          lambda[i + k] = lt;
        }
      } else {
        lambda[i + 1] = update(i + 1);
        lambda[i + 2] = update(i + 2);
        // Test the squared norm first: sqrt'(0) is infinite, and a Jet's
        // derivative of a zero tangential impulse would become NaN.
        const S norm2 = lambda[i + 1] * lambda[i + 1] + lambda[i + 2] * lambda[i + 2];
        if (norm2 > bound * bound) {
          const S scale = bound / sqrt(norm2);
          lambda[i + 1] *= scale;
          lambda[i + 2] *= scale;
        }
      }
      max_delta = std::max({max_delta, to_double(abs(lambda[i] - old_n)), to_double(abs(lambda[i + 1] - old_t1)),
                            to_double(abs(lambda[i + 2] - old_t2))});
      max_lambda = std::max({max_lambda, to_double(abs(lambda[i])), to_double(abs(lambda[i + 1])),
                             to_double(abs(lambda[i + 2]))});
    }
    res.iterations = it + 1;
    res.max_delta = max_delta;
    if (max_delta <= options.tolerance * max_lambda || max_lambda == 0) {
      res.converged = true;
      break;
    }
  }
  return res;
}

}  // namespace neuralsim
