// simid: fit named model parameters to recorded trajectories with Ceres and
// parallel basin hopping. See README.md and docs/simid.md.
#include "simid/simid_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool({"simid", "Identify model parameters from trajectory data (Ceres + parallel basin hopping).",
                        "Continue from OUT/checkpoint.json (written after every complete basin-hopping round); the "
                        "result is the same as an uninterrupted run"});
  neuralsim::SimidFlags flags;
  tool.command_line().add_existing_file(
      "--evaluate", flags.evaluate_path,
      "Fit nothing: evaluate the estimated parameters at this file's values (a params.json) and write every "
      "metric a fit writes (as estimate.solver.max_iterations 0 does at the initial values)");
  tool.command_line().add_gradient_check(flags.gradients);
  tool.command_line().add_flag("--design-excitation", flags.design_excitation,
                               "Fit nothing: design a periodic excitation trajectory from the config's excitation: "
                               "section and write excitation.h5, excitation.csv and excitation.json");
  return tool.run(argc, argv, [&](neuralsim::ToolRun& run) { return neuralsim::run_simid(run, flags); });
}
