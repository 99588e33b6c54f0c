// Progress of one local solve, reported once per solver iteration.
//
// The estimate layer only calls a std::function; turning it into log lines,
// progress bars or rate limits is the tool's business (apps/simid), so the
// numeric layers never see a logger or a terminal.
#pragma once

#include <functional>

namespace neuralsim {

struct SolveProgress {
  int round = -1;           // basin-hopping round (-1: a plain local solve)
  int start = -1;           // start within the round (-1: a plain local solve)
  int iteration = 0;        // solver iteration; 0 is the initial point
  int max_iterations = 0;   // SolverOptions::max_iterations
  double cost = 0;          // ½ Σ r² at the current iterate (the best so far: LM and L-BFGS are monotone)
  double elapsed_s = 0;     // wall time since the solve began
  // Time left if the solve runs to max_iterations at its mean iteration time
  // so far: an upper bound, since a solve usually converges earlier.
  double eta_s = 0;
};

// Called on the thread that runs the solve; basin hopping runs several solves
// at once, so a callback shared between them must be thread-safe.
using SolveProgressCallback = std::function<void(const SolveProgress&)>;

}  // namespace neuralsim
