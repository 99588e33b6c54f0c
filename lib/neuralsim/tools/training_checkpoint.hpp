// The training loop's checkpoint (train-augment's and distill-mpc's
// OUT/checkpoint.json): the TrainingState after every epoch (parameters,
// best parameters, Adam moments, the history) and the fingerprint of what
// the result depends on (config sections, data, seed). Resuming from it
// gives the same final parameters as an uninterrupted run (Adam). It is
// input like any other: its size is bounded by what the writer writes for
// this many parameters and epochs, and every value is checked.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/run_context.hpp"
#include "neuralsim/train/training_loop.hpp"

namespace neuralsim {

// What a checkpoint must match.
struct TrainingCheckpointSpec {
  long long num_parameters = 0;
  std::vector<std::string> parameter_names;  // empty: unnamed (a network's weights)
  Fingerprint fingerprint;
  int max_epochs = 0;
};

void write_training_checkpoint(CheckpointStore& store, const TrainingState& state, const TrainingCheckpointSpec& spec);

// DataError (exit 3) for a missing, corrupt or inconsistent checkpoint
// (sizes, finiteness, epochs out of range); ConfigError (exit 2) when it was
// written for other parameters, another config, other data or another seed.
TrainingState read_training_checkpoint(const CheckpointStore& store, const TrainingCheckpointSpec& spec);

// The largest checkpoint the writer writes for `spec` (the reader's bound).
double training_checkpoint_capacity(const TrainingCheckpointSpec& spec);

// The loss history as CSV: epoch, window_steps, train_loss,
// validation_loss, learning_rate, gradient_norm and the three timings.
std::string training_history_csv(const std::vector<EpochRecord>& history);

}  // namespace neuralsim
