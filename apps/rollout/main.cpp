// rollout: simulate a model and write trajectories, or replay recorded
// trajectories (--compare) and report prediction errors. See README.md.
#include "rollout/rollout_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool({"rollout", "Simulate a model from a YAML experiment config and write HDF5 trajectories.", ""});
  neuralsim::RolloutFlags flags;
  tool.command_line().add_existing_file(
      "--compare", flags.compare_path,
      "Replay every trajectory of this HDF5 file (or CSV-import description, .yaml) from its initial "
      "state with its recorded controls and report RMSE per trajectory and horizon in summary.json");
  tool.command_line().add_existing_file(
      "--weights", flags.weights_path,
      "Weights of the config's augment: networks (a weights file written by train-augment); each "
      "network is looked up by its blueprint's name");
  return tool.run(argc, argv, [&](neuralsim::ToolRun& run) { return neuralsim::run_rollout(run, flags); });
}
