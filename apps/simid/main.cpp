// simid: fit named model parameters to recorded trajectories with Ceres and
// parallel basin hopping. See README.md and docs/simid.md.
#include "simid/simid_job.hpp"

int main(int argc, char** argv) {
  neuralsim::AppOptions opts;
  opts.out = "out/simid";
  neuralsim::SimidRequest request;
  neuralsim::CommandLine command_line(
      "Identify model parameters from trajectory data (Ceres + parallel basin hopping).", opts);
  command_line.add_flag(
      "--resume", request.resume,
      "Continue from OUT/checkpoint.json (written after every complete basin-hopping round); the result "
      "is the same as an uninterrupted run");
  return neuralsim::run_app(argc, argv, command_line,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_simid(o, request); });
}
