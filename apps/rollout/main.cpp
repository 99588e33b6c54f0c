// rollout: simulate a model and write trajectories, or replay recorded
// trajectories (--compare) and report prediction errors. See README.md.
#include <CLI/CLI.hpp>

#include "rollout/rollout_job.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Simulate a model from a YAML experiment config and write HDF5 trajectories."};
  neuralsim::AppOptions opts;
  opts.out = "out/rollout";
  neuralsim::RolloutRequest request;
  neuralsim::add_common_options(app, opts);
  app.add_option("--compare", request.compare_path,
                 "Replay every trajectory of this HDF5 file (or CSV-import description, .yaml) from its "
                 "initial state with its recorded controls and report RMSE per trajectory and horizon in "
                 "summary.json")
      ->check(CLI::ExistingFile);
  app.add_option("--weights", request.weights_path,
                 "Weights of the config's augment: networks (a weights file written by train-augment); each "
                 "network is looked up by its blueprint's name")
      ->check(CLI::ExistingFile);
  return neuralsim::run_app(argc, argv, app, opts,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_rollout(o, request); });
}
