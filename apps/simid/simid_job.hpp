// The `simid` tool: fit named model parameters to recorded trajectories
// (config reference: docs/simid.md). main.cpp only parses the command line.
#pragma once

#include "common/app.hpp"

namespace neuralsim {

struct SimidRequest {
  bool resume = false;  // continue from OUT/checkpoint.json
};

int run_simid(const AppOptions& opts, const SimidRequest& request);

}  // namespace neuralsim
