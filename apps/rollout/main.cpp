// rollout: simulate a model and write trajectories, or replay recorded
// trajectories (--compare) and report prediction errors. See README.md.
#include "rollout/rollout_job.hpp"

int main(int argc, char** argv) {
  neuralsim::AppOptions opts;
  opts.out = "out/rollout";
  neuralsim::RolloutRequest request;
  neuralsim::CommandLine command_line(
      "Simulate a model from a YAML experiment config and write HDF5 trajectories.", opts);
  command_line.add_existing_file(
      "--compare", request.compare_path,
      "Replay every trajectory of this HDF5 file (or CSV-import description, .yaml) from its initial "
      "state with its recorded controls and report RMSE per trajectory and horizon in summary.json");
  command_line.add_existing_file(
      "--weights", request.weights_path,
      "Weights of the config's augment: networks (a weights file written by train-augment); each "
      "network is looked up by its blueprint's name");
  return neuralsim::run_app(argc, argv, command_line,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_rollout(o, request); });
}
