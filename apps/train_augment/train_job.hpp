// The `train-augment` tool: train_augment (lib/neuralsim/tools/
// train_augment.hpp) and its outputs. main.cpp only names the tool.
#pragma once

#include "common/tool.hpp"

namespace neuralsim {

// Writes the trained parameters in their file formats (weights.h5 or
// lstm.json, params.json), loss.csv and loss.png, the validation
// predictions, report.html and the metrics.
struct TrainAugmentFlags {
  GradientCheckFlags gradients;  // --check-gradients: check, no training
};

RunReport run_train_augment(ToolRun& run, const TrainAugmentFlags& flags = {});

struct TrainAugmentResult;
// report.html (train_report.cpp): loss per epoch, trained physical values,
// free-rollout errors with their reference rows, provenance.
void write_training_report(const TrainAugmentResult& r, ToolRun& run);

}  // namespace neuralsim
