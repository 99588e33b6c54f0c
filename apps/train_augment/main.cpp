// train-augment: train the networks inside a hybrid simulator (and its
// physical parameters) or a data-driven baseline on recorded trajectories.
// See docs/train-augment.md.
#include "train_augment/train_job.hpp"

int main(int argc, char** argv) {
  neuralsim::Tool tool(
      {"train-augment",
       "Train the neural augmentations of a hybrid simulator, or a data-driven baseline, on trajectories.",
       "Continue from OUT/checkpoint.json (written after every epoch); with Adam the final weights are the same as "
       "an uninterrupted run's"});
  neuralsim::TrainAugmentFlags flags;
  tool.command_line().add_gradient_check(flags.gradients);
  return tool.run(argc, argv, [&](neuralsim::ToolRun& run) { return neuralsim::run_train_augment(run, flags); });
}
