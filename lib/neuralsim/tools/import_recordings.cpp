#include "neuralsim/tools/import_recordings.hpp"

#include "neuralsim/io/csv_import.hpp"

namespace neuralsim {

ImportResult import_recordings(const ImportRequest& request, const RunContext& context) {
  const Config& cfg = request.config;
  cfg.check_known_keys({"csv_import", "description"});
  ImportResult r;
  r.trajectories = import_csv(cfg.at("csv_import"), &r.warnings, &r.validation);
  context.started();
  for (const std::string& w : r.warnings) context.warn(w);
  return r;
}

}  // namespace neuralsim
