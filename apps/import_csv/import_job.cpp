#include "import_csv/import_job.hpp"

#include <spdlog/spdlog.h>

#include "common/provenance.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/import_recordings.hpp"

namespace neuralsim {

RunReport run_import(ToolRun& run) {
  ImportResult r = import_recordings({run.config()}, run.context());
  if (!run.writes()) return r;  // an MPI rank other than 0
  TrajectorySet& set = r.trajectories;
  const bool split = !r.validation.trajectories.empty();
  set.meta.generator = "import-csv " + version_string();
  r.validation.meta.generator = set.meta.generator;
  nlohmann::json& m = run.summary().metrics();
  // trajectories.h5 (the training part with `split`), and validation.h5:
  // the files a tool's data.train and data.validation name.
  const auto write_set = [&](const TrajectorySet& s, const std::string& name, const std::string& prefix) {
    const std::string file = run.path(name);
    write_trajectories(file, s, true);  // NaN: an empty q or qd cell (a missing sample)
    run.add_output(file);
    long long samples = 0;
    nlohmann::json per = nlohmann::json::array();
    for (const Trajectory& t : s.trajectories) {
      samples += t.size();
      per.push_back({{"name", t.name}, {"samples", t.size()}, {"duration_s", t.time[t.size() - 1] - t.time[0]},
                     {"has_tau", t.has_tau()}});
    }
    m[prefix + "num_trajectories"] = s.trajectories.size();
    m[prefix + "num_samples"] = samples;
    m[prefix + "trajectories"] = per;
    spdlog::info("wrote {} trajectories ({} samples) to {}", s.trajectories.size(), samples, file);
  };
  write_set(set, "trajectories.h5", "");
  if (split) write_set(r.validation, "validation.h5", "validation_");
  m["model"] = set.meta.model;
  return r;
}

}  // namespace neuralsim
