// The `rollout` tool: simulate a model from initial states under controls
// and write the trajectories, or (--compare) replay recorded trajectories
// and report prediction errors. main.cpp only parses the command line.
#pragma once

#include <string>

#include "common/app.hpp"

namespace neuralsim {

struct RolloutRequest {
  std::string compare_path;  // empty: simulate; else replay this HDF5 file or CSV-import description
  std::string weights_path;  // non-empty: every `augment:` network's weights from this file
};

// Runs the job described by opts.config; writes into opts.out; returns the
// exit code (throws the library's errors for run_app to map).
int run_rollout(const AppOptions& opts, const RolloutRequest& request);

}  // namespace neuralsim
