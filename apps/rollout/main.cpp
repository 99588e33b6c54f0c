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
      "A model trained by train-augment: its weights.h5 (the hybrid's networks, looked up by their "
      "blueprints' names, or the MLP baseline) or lstm.json; the file says which. Overrides the "
      "config's weights:");
  return tool.run(argc, argv, [&](neuralsim::ToolRun& run) { return neuralsim::run_rollout(run, flags); });
}
