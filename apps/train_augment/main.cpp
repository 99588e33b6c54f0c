// train-augment: train the networks inside a hybrid simulator (and its
// physical parameters) or a data-driven baseline on recorded trajectories.
// See docs/train-augment.md.
#include <CLI/CLI.hpp>

#include "train_augment/train_job.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Train the neural augmentations of a hybrid simulator, or a data-driven baseline, on trajectories."};
  neuralsim::AppOptions opts;
  opts.out = "out/train-augment";
  neuralsim::TrainRequest request;
  neuralsim::add_common_options(app, opts);
  app.add_flag("--resume", request.resume,
               "Continue from OUT/checkpoint.json (written after every epoch); with Adam the final weights are "
               "the same as an uninterrupted run's");
  return neuralsim::run_app(argc, argv, app, opts,
                            [&](const neuralsim::AppOptions& o) { return neuralsim::run_train_augment(o, request); });
}
