// The `distill-mpc` tool: distill_mpc (lib/neuralsim/tools/distill_mpc.hpp)
// and its outputs. main.cpp only names the tool.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

// Writes dataset.h5 (generated data), weights.h5, loss.csv, the closed-loop
// trace closed_loop.csv and its plot, and the metrics.
RunReport run_distill_mpc(ToolRun& run);

}  // namespace neuralsim
