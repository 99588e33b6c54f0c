// import_recordings: CSV logs into trajectories, as a YAML import
// description says (the work of the `import-csv` tool; docs/data-format.md,
// "CSV import").
#pragma once

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

struct ImportRequest {
  Config config;  // {csv_import: {...}, description: ...}
};

struct ImportResult : RunReport {
  TrajectorySet trajectories;  // meta.generator left to the caller; the training part with `split`
  TrajectorySet validation;    // the validation part of `split`; no trajectories without one
};

// ConfigError / DataError naming the file, line and key for a bad
// description or CSV file; remarks (dropped duplicate rows, end samples
// dropped by a derived qd) are warnings.
ImportResult import_recordings(const ImportRequest& request, const RunContext& context = {});

}  // namespace neuralsim
