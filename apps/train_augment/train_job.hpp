// The `train-augment` tool: train the neural augmentations of a hybrid
// simulator (and optionally its physical parameters), or a data-driven
// baseline, on recorded trajectories (config reference:
// docs/train-augment.md). main.cpp only parses the command line.
#pragma once

#include "common/app.hpp"

namespace neuralsim {

struct TrainRequest {
  bool resume = false;  // continue from OUT/checkpoint.json
};

int run_train_augment(const AppOptions& opts, const TrainRequest& request);

}  // namespace neuralsim
