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
  set.meta.generator = "import-csv " + version_string();
  const std::string file = run.path("trajectories.h5");
  write_trajectories(file, set);
  run.add_output(file);
  long long samples = 0;
  nlohmann::json per = nlohmann::json::array();
  for (const Trajectory& t : set.trajectories) {
    samples += t.size();
    per.push_back({{"name", t.name}, {"samples", t.size()}, {"duration_s", t.time[t.size() - 1] - t.time[0]},
                   {"has_tau", t.has_tau()}});
  }
  nlohmann::json& m = run.summary().metrics();
  m["num_trajectories"] = set.trajectories.size();
  m["num_samples"] = samples;
  m["trajectories"] = per;
  m["model"] = set.meta.model;
  spdlog::info("wrote {} trajectories ({} samples) to {}", set.trajectories.size(), samples, file);
  return r;
}

}  // namespace neuralsim
