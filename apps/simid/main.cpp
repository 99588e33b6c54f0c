// simid: fit named model parameters to recorded trajectories with Ceres and
// parallel basin hopping. See README.md and docs/simid.md.
#include "simid/simid_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool({"simid", "Identify model parameters from trajectory data (Ceres + parallel basin hopping).",
                        "Continue from OUT/checkpoint.json (written after every complete basin-hopping round); the "
                        "result is the same as an uninterrupted run"});
  return tool.run(argc, argv, neuralsim::run_simid);
}
