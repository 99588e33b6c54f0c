// Work is sized before it starts: a run whose outputs or workspace would not
// fit is refused up front (exit 2, with the estimate), instead of failing
// with bad_alloc or the out-of-memory killer hours later.
#pragma once

#include <string>

#include "neuralsim/io/config.hpp"

namespace neuralsim {

// The memory a run may plan to use: half of MemAvailable (/proc/meminfo),
// at most 64 GiB; 8 GiB when that cannot be read.
double memory_budget_bytes();

// An HDF5 output is built in memory before it is written (io/hdf5_output.hpp):
// while it is written, its data is held three times at most (the data, the
// file's image, the image's copy: compression only makes the last two
// smaller).
inline constexpr double kHdf5OutputCopies = 3.0;

// ConfigError at `key` of `owner` when `bytes` exceeds memory_budget_bytes();
// `what` describes the work ("200 trajectories x 1000001 samples").
void check_memory(const Config& owner, const std::string& key, const std::string& what, double bytes);

}  // namespace neuralsim
