#include "import_csv/import_job.hpp"

#include <spdlog/spdlog.h>

#include "common/provenance.hpp"
#include "neuralsim/io/csv_import.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"

namespace neuralsim {

int run_import(const AppOptions& opts) {
  const Config cfg = Config::load(opts.config, opts.sets);
  cfg.check_known_keys({"csv_import", "description"});
  std::vector<std::string> notes;
  TrajectorySet set = import_csv(cfg.at("csv_import"), &notes);
  set.meta.generator = "import-csv " + version_string();
  const OutputDirectory out(opts.out, "import-csv",
                            opts.force ? OutputDirectory::Reuse::kForce : OutputDirectory::Reuse::kRefuse);
  RunSummary summary("import-csv", opts, cfg, out);
  for (const std::string& n : notes) {
    spdlog::warn("{}", n);
    summary.add_warning(n);
  }
  const std::string file = out.path("trajectories.h5");
  write_trajectories(file, set);
  summary.add_output(file);
  long long samples = 0;
  nlohmann::json per = nlohmann::json::array();
  for (const Trajectory& t : set.trajectories) {
    samples += t.size();
    per.push_back({{"name", t.name}, {"samples", t.size()}, {"duration_s", t.time[t.size() - 1] - t.time[0]},
                   {"has_tau", t.has_tau()}});
  }
  summary.metrics()["num_trajectories"] = set.trajectories.size();
  summary.metrics()["num_samples"] = samples;
  summary.metrics()["trajectories"] = per;
  summary.metrics()["model"] = set.meta.model;
  summary.write();
  spdlog::info("wrote {} trajectories ({} samples) to {}", set.trajectories.size(), samples, file);
  return kExitOk;
}

}  // namespace neuralsim
