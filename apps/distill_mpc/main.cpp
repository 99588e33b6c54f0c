// distill-mpc: distill a convex MPC into a network (issue 14): generate (or
// read) closed-loop data of the MPC under random commands and pushes, train
// an MLP on what the MPC sees against its solution, and evaluate the
// network in the MPC's place. See docs/distill-mpc.md.
#include "distill_mpc/distill_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool(
      {"distill-mpc", "Distill a model-predictive controller into a neural network and evaluate it in closed loop.",
       "Continue from OUT/checkpoint.json (written after every epoch); the final weights are the same as an "
       "uninterrupted run's"});
  return tool.run(argc, argv, neuralsim::run_distill_mpc);
}
