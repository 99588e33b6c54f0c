// distill-mpc: distill a convex MPC into a network (issue 14): generate (or
// read) closed-loop data of the MPC under random commands and pushes, train
// an MLP on what the MPC sees against its solution, and evaluate the
// network in the MPC's place. See docs/distill-mpc.md.
#include <CLI/CLI.hpp>

#include "distill_mpc/distill_job.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Distill a model-predictive controller into a neural network and evaluate it in closed loop."};
  neuralsim::AppOptions opts;
  opts.out = "out/distill-mpc";
  neuralsim::DistillRequest request;
  neuralsim::add_common_options(app, opts);
  app.add_flag("--resume", request.resume,
               "Continue from OUT/checkpoint.json (written after every epoch); the final weights are the same as "
               "an uninterrupted run's");
  return neuralsim::run_app(argc, argv, app, opts,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_distill_mpc(o, request); });
}
