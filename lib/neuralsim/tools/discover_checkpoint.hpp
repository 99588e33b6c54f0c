// discover's checkpoint (OUT/checkpoint.json): the completed repetitions,
// repetition 0's chosen parameters and, in a one-process run, the
// repetition in progress (its path points so far and the parameters after
// each), with the fingerprint of what the result depends on. A path
// point starts from the parameters alone (fresh Adam moments), so resuming
// after any point gives the same bits as an uninterrupted run. Validated
// like any input: sizes bounded before parsing, every value checked.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <vector>

#include "neuralsim/tools/discover.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

struct DiscoverProgress {
  std::vector<DiscoverRepetition> completed;   // in repetition order, 0 … n−1
  Eigen::VectorXd chosen_x;                    // repetition 0's chosen point (empty before it completed)
  std::optional<DiscoverRepetition> partial;   // the repetition in progress: points so far
  std::vector<Eigen::VectorXd> partial_x;      // the model evaluated at each of those points
  Eigen::VectorXd partial_next_x;              // where its next penalized point starts
};

struct DiscoverCheckpointSpec {
  Fingerprint fingerprint;
  long long num_parameters = 0;
  int num_groups = 0;
  int max_points = 0;       // per repetition (dense + path + analytical)
  int repetitions = 0;
};

void write_discover_checkpoint(CheckpointStore& store, const DiscoverProgress& progress,
                               const DiscoverCheckpointSpec& spec);

// DataError (exit 3) for a missing, corrupt or inconsistent checkpoint;
// ConfigError (exit 2) when it was written for another config, data or seed.
DiscoverProgress read_discover_checkpoint(const CheckpointStore& store, const DiscoverCheckpointSpec& spec);

}  // namespace neuralsim
