// The `import-csv` tool: a CSV import description (--config) in, one HDF5
// trajectory file (OUT/trajectories.h5, docs/data-format.md) and
// summary.json out. The same descriptions are accepted wherever a tool
// reads trajectories, so importing is needed only to share or inspect data.
#pragma once

#include "common/app.hpp"

namespace neuralsim {

int run_import(const AppOptions& opts);

}  // namespace neuralsim
