// The `distill-mpc` tool (docs/distill-mpc.md): closed-loop data of an MPC,
// supervised training of a network on it, closed-loop evaluation of the
// network in the MPC's place. main.cpp only parses the command line.
#pragma once

#include "common/app.hpp"

namespace neuralsim {

struct DistillRequest {
  bool resume = false;  // continue from OUT/checkpoint.json
};

int run_distill_mpc(const AppOptions& opts, const DistillRequest& request);

}  // namespace neuralsim
