// simid: fit named model parameters to recorded trajectories with Ceres and
// parallel basin hopping. See README.md and docs/simid.md.
#include "neuralsim/estimate/simid_job.hpp"
#include "neuralsim/io/app.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Identify model parameters from trajectory data (Ceres + parallel basin hopping)."};
  neuralsim::AppOptions opts;
  opts.out = "out/simid";
  neuralsim::SimidRequest request;
  neuralsim::add_common_options(app, opts);
  app.add_flag("--resume", request.resume,
               "Continue from OUT/checkpoint.json (written after every basin-hopping round)");
  return neuralsim::run_app(argc, argv, app, opts,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_simid(o, request); });
}
