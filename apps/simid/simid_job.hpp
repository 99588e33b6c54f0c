// The `simid` tool: identify (lib/neuralsim/tools/identify.hpp) and its
// outputs (config reference: docs/simid.md). main.cpp only names the tool.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

struct SimidFlags {
  std::string evaluate_path;  // non-empty: evaluate this parameter file's values, no fit
  GradientCheckFlags gradients;  // --check-gradients: check, no fit
};

// Runs identify on the run's config and writes params.json,
// identifiability.txt, fit.h5, measured.h5, fit.png and the metrics.
RunReport run_simid(ToolRun& run, const SimidFlags& flags = {});

}  // namespace neuralsim
