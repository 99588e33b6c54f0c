// train-augment's checkpoint (OUT/checkpoint.json): the trainer's whole
// state after every epoch (parameters, best parameters, Adam moments, the
// loss history) and the fingerprint of what the result depends on (config
// sections, data, seed). Resuming from it gives the same final weights as an
// uninterrupted run (Adam). It is input like any other: validated against
// the model before use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "neuralsim/train/trainer.hpp"

namespace neuralsim {

using Fingerprint = std::map<std::string, std::string>;

void write_train_checkpoint(const std::string& path, const TrainerState& state,
                            const std::vector<std::string>& parameter_names, const Fingerprint& fingerprint);

// DataError (exit 3) for a missing, corrupt or inconsistent checkpoint
// (sizes, finiteness, epochs out of range); ConfigError (exit 2) when it was
// written for other parameters, another config, other data or another seed.
TrainerState read_train_checkpoint(const std::string& path, const std::vector<std::string>& parameter_names,
                                   const Fingerprint& fingerprint, int max_epochs);

}  // namespace neuralsim
