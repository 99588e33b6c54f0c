// train-augment: train the networks inside a hybrid simulator (and its
// physical parameters) or a data-driven baseline on recorded trajectories.
// See docs/train-augment.md.
#include "train_augment/train_job.hpp"

int main(int argc, char** argv) {
  neuralsim::AppOptions opts;
  opts.out = "out/train-augment";
  neuralsim::TrainRequest request;
  neuralsim::CommandLine command_line(
      "Train the neural augmentations of a hybrid simulator, or a data-driven baseline, on trajectories.", opts);
  command_line.add_flag(
      "--resume", request.resume,
      "Continue from OUT/checkpoint.json (written after every epoch); with Adam the final weights are "
      "the same as an uninterrupted run's");
  return neuralsim::run_app(argc, argv, command_line,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_train_augment(o, request); });
}
