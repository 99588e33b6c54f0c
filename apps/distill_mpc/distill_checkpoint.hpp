// distill-mpc's checkpoint (OUT/checkpoint.json): the supervised trainer's
// whole state after every epoch (parameters, best parameters, Adam moments,
// the loss history) and the fingerprint of what the result depends on
// (config sections, dataset, seed). Resuming from it gives the same final
// weights as an uninterrupted run, bit for bit. It is input like any other:
// validated before use.
#pragma once

#include <map>
#include <string>

#include "neuralsim/train/supervised.hpp"

namespace neuralsim {

using DistillFingerprint = std::map<std::string, std::string>;

void write_distill_checkpoint(const std::string& path, const SupervisedState& state, long long num_parameters,
                              const DistillFingerprint& fingerprint);

// DataError (exit 3) for a missing, corrupt or inconsistent checkpoint;
// ConfigError (exit 2) when it was written for another network, config,
// dataset or seed (naming what changed).
SupervisedState read_distill_checkpoint(const std::string& path, long long num_parameters,
                                        const DistillFingerprint& fingerprint, int max_epochs);

}  // namespace neuralsim
