// The `train:` section of a train-augment config (reference:
// docs/train-augment.md): which model is trained (the hybrid simulator of
// `augment:` and `train.physical`, or a data-driven baseline), the training
// mode, windows, curriculum, optimizer, schedule and early stopping.
//
//   train:
//     model: hybrid                # hybrid | mlp | lstm
//     physical: [...]              # hybrid only: physical parameters trained
//                                  # with the networks (simid's parameter
//                                  # list); absent = physics frozen
//     baseline: {hidden: [64, 64], predict_delta: true, parameters: 2000}
//                                  # mlp: hidden widths, or `parameters` (a
//                                  # target count; one width for 2 layers);
//                                  # lstm: {hidden: 32} or {parameters: n}
//     controls: recorded           # recorded (data must hold tau) | none
//     mode: unrolled               # one_step | unrolled_detached | unrolled
//     window_steps: 20             # K (the final K under a curriculum)
//     window_stride: 5
//     train_samples: 200           # first N samples of each training trajectory (0 = all)
//     train_trajectories: 0        # the first N training trajectories only (0 = all)
//     curriculum: {start: 2, every: 10, factor: 2}
//     optimizer: adam              # adam | lbfgs
//     epochs: 100
//     batch_size: 16
//     learning_rate: 1e-3
//     schedule: {type: cosine, final_fraction: 0.05, warmup: 0, gamma: 0.5, every: 10}
//     weight_decay: 0              # AdamW, networks only (physics never decays)
//     clip_norm: 0                 # 0 = off
//     patience: 0                  # early stopping (epochs), 0 = off
//     validation_steps: 100        # K of the validation windows (0 = window_steps)
//     validation_stride: 50        # samples between validation-window starts (default: their K)
//
// Every number is checked finite and in range; errors are ConfigError with
// file:line:column and the key.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/parameter_set.hpp"
#include "neuralsim/train/trainer.hpp"

namespace neuralsim {

enum class TrainedModel { kHybrid, kMlp, kLstm };
const char* trained_model_name(TrainedModel m);  // "hybrid", "mlp", "lstm"

struct BaselineSpec {
  std::vector<int> hidden;       // mlp widths / {lstm hidden size}; empty = from `parameters`
  long long parameters = 0;      // target parameter count when `hidden` is empty
  bool predict_delta = true;     // mlp: predict the state change (else the next state)
  std::uint64_t seed = 1;        // initial weights
};

struct TrainConfig {
  TrainedModel model = TrainedModel::kHybrid;
  ParameterSet physical;         // hybrid: trained physical parameters (empty = frozen)
  BaselineSpec baseline;
  bool use_controls = true;      // controls: recorded
  int train_trajectories = 0;    // the first N training trajectories (0 = all)
  TrainerOptions trainer;
};

// Reads `train:` (required). `model` and `contact` resolve physical names;
// `warnings` (when not null) receives read_parameter_set's.
TrainConfig read_train_config(const Config& train, const Model<double>& model,
                              const ContactParameters<double>* contact, long long seed,
                              std::vector<std::string>* warnings = nullptr);

}  // namespace neuralsim
