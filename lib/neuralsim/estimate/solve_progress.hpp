// Progress of one local solve, reported once per solver iteration.
//
// The estimate layer only calls a std::function; turning it into log lines,
// progress bars or rate limits is the tool's business (apps/simid), so the
// numeric layers never see a logger or a terminal.
#pragma once

#include <deque>
#include <functional>

namespace neuralsim {

struct SolveProgress {
  int round = -1;           // basin-hopping round (-1: a plain local solve)
  int start = -1;           // start within the round (-1: a plain local solve)
  int iteration = 0;        // solver iteration; 0 is the initial point
  int max_iterations = 0;   // SolverOptions::max_iterations
  double cost = 0;          // ½ Σ r² at the current iterate (the best so far: LM and L-BFGS are monotone)
  double elapsed_s = 0;     // wall time since the solve began
  double iteration_s = 0;   // measured wall time of one iteration (SolveEta)
  // Time left (SolveEta): measured iteration time × the iterations the
  // convergence so far predicts (eta_extrapolated), or × the iterations up
  // to max_iterations (then eta_s = eta_max_s, an upper bound).
  double eta_s = 0;
  double eta_max_s = 0;     // measured iteration time × (max_iterations − iteration)
  bool eta_extrapolated = false;
};

// The remaining time of a solve from what it measured so far.
//
// Time per iteration: the median of the last few iteration durations (not
// the mean since the start, which holds building the problem and the first
// evaluation, nor one outlier). Iterations left: Levenberg–Marquardt and
// L-BFGS stop once the relative cost decrease |Δc|/c falls below the
// function tolerance (Ceres' convergence test); a solve that converges
// linearly shrinks that decrease by a constant ratio ρ per iteration
// (Nocedal & Wright, Numerical Optimization, §2.2), so the last two
// accepted decreases d₁, d₂ give ρ = d₂/d₁ and ⌈log(tol/d₂)/log ρ⌉ more
// iterations (quadratic convergence ends sooner: still an estimate from
// above). Without two shrinking decreases, or past the cap, the solve is
// assumed to run to max_iterations: the upper bound the ETA used to be
// (3–7× the actual time on fits that converge in a fifth of their cap).
class SolveEta {
 public:
  SolveEta(int max_iterations, double function_tolerance)
      : max_iterations_(max_iterations), tolerance_(function_tolerance) {}
  // Once per iteration, in order: the solve's elapsed time and cost at that
  // iteration. Fills p.iteration_s, p.eta_s, p.eta_max_s, p.eta_extrapolated.
  void update(int iteration, double elapsed_s, double cost, SolveProgress& p);

 private:
  static constexpr size_t kRecent = 5;
  int max_iterations_;
  double tolerance_;
  std::deque<double> durations_;  // the last kRecent iteration durations
  double last_elapsed_ = 0, last_cost_ = 0;
  double decrease_ = 0, previous_decrease_ = 0;  // the last two accepted relative decreases
  bool started_ = false;
};

// Called on the thread that runs the solve; basin hopping runs several solves
// at once, so a callback shared between them must be thread-safe.
using SolveProgressCallback = std::function<void(const SolveProgress&)>;

}  // namespace neuralsim
