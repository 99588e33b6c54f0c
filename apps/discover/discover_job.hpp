// The `discover` tool: discover (lib/neuralsim/tools/discover.hpp) and its
// outputs. main.cpp only names the tool.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

// Writes discovery.json, discovery.txt (the table), augment.yaml (the
// pruned augmentation for train-augment), weights.h5 (the retrained pruned
// networks, with discover.retrain), importance.png and path.png,
// report.html and the metrics.
RunReport run_discover(ToolRun& run);

struct DiscoverResult;
// report.html (discover_report.cpp): verdict, groups, selection, the path,
// free-rollout errors, provenance.
void write_discover_report(const DiscoverResult& r, ToolRun& run);

}  // namespace neuralsim
