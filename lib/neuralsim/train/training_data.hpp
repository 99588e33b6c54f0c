// Training windows cut from recorded trajectories, and the loss weights that
// make a window loss dimensionless.
//
// A window of K steps starting at sample s of a trajectory holds the
// recorded states s … s+K−1 (before each step), the controls applied at
// those samples, and the recorded states s+1 … s+K (after each step); see
// TrainingWindow in train/window_model.hpp. A trajectory of T samples (or of
// the first max_samples of them) gives the windows s = 0, stride, 2·stride, …
// with s + K ≤ T − 1, i.e. ⌊(T − 1 − K) / stride⌋ + 1 windows when T > K.
#pragma once

#include <cstdint>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/train/window_model.hpp"

namespace neuralsim {

struct WindowOptions {
  int steps = 1;        // K ≥ 1: steps per window
  int stride = 1;       // ≥ 1: samples between the starts of consecutive windows
  int max_samples = 0;  // 0 = all; else only the first N samples of each
                        // trajectory are used ("train on the first 200 steps")
  // Windows overlap when stride < K, so their total size can be K times the
  // data's; make_windows refuses a request above this many bytes instead of
  // running out of memory.
  std::int64_t max_bytes = std::int64_t{2} << 30;
};

// Number of windows make_windows would return for one trajectory of T samples.
std::int64_t count_windows(Eigen::Index samples, const WindowOptions& o);

// Every window of every trajectory, in trajectory order then start order.
// Controls are tau at samples start … start+K−1, or 0 × K when the set has no
// tau. Throws InvalidArgument for steps < 1, stride < 1, max_samples < 0 or a
// request above max_bytes; DataError (naming the trajectory by index and name,
// and the sample) for inconsistent nq/nv/tau sizes across or within
// trajectories and for a non-finite value among the samples used.
std::vector<TrainingWindow> make_windows(const TrajectorySet& set, const WindowOptions& o);

// Weights 1/σ² per coordinate of q and q̇, σ² the (population) variance over
// every sample of every trajectory, floored at `floor` so that a constant
// coordinate does not get an infinite weight. With these weights each term of
// the window loss is dimensionless and a loss of 1 means an error of one
// standard deviation of the data. Throws DataError for an empty set, a
// non-finite sample, or inconsistent sizes; InvalidArgument for floor ≤ 0.
WindowLossWeights loss_weights_from_data(const TrajectorySet& set, double floor = 1e-6);

}  // namespace neuralsim
