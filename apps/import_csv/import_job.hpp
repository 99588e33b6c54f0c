// The `import-csv` tool: import_recordings (lib/neuralsim/tools/
// import_recordings.hpp) written as OUT/trajectories.h5, and with a `split`
// its validation part as OUT/validation.h5.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

RunReport run_import(ToolRun& run);

}  // namespace neuralsim
