// The `rollout` tool: rollout and compare (lib/neuralsim/tools/rollout.hpp)
// and their outputs. main.cpp only names the tool and its flags.
#pragma once

#include <string>

#include "common/tool.hpp"

namespace neuralsim {

struct RolloutFlags {
  std::string compare_path;  // empty: simulate; else replay this HDF5 file or CSV-import description
  std::string weights_path;  // non-empty: every `augment:` network's weights from this file
};

RunReport run_rollout(ToolRun& run, const RolloutFlags& flags);

}  // namespace neuralsim
