// The `train-augment` tool: train_augment (lib/neuralsim/tools/
// train_augment.hpp) and its outputs. main.cpp only names the tool.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

// Writes the trained parameters in their file formats (weights.h5 or
// lstm.json, params.json), loss.csv and loss.png, the validation
// predictions and the metrics.
struct TrainAugmentFlags {
  GradientCheckFlags gradients;  // --check-gradients: check, no training
};

RunReport run_train_augment(ToolRun& run, const TrainAugmentFlags& flags = {});

}  // namespace neuralsim
