// identify's checkpoint (simid's OUT/checkpoint.json): the basin-hopping
// state after every complete round, and the fingerprint of what the result
// depends on (config sections, data, seed). A checkpoint is input like any
// other: it is validated against the parameter set before use.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

// The best solve's nuisance states (LocalResult::states: multiple-shooting
// segments, fitted window starts) are saved with it, so that a resumed fit
// analyses the same optimum.
void write_identify_checkpoint(CheckpointStore& store, const BasinHoppingState& state, const ParameterSet& params,
                            const Fingerprint& fingerprint);

// The state to resume from. DataError (exit 3) for a missing, corrupt or
// inconsistent checkpoint (sizes, finiteness, bounds, rounds, `num_states`
// finite best states); ConfigError (exit 2) when it was written for another
// config, other data or another seed, naming what changed.
// `max_iterations` bounds the best solve's convergence trace.
BasinHoppingState read_identify_checkpoint(const CheckpointStore& store, const ParameterSet& params,
                                        const Fingerprint& fingerprint, int max_rounds, int max_iterations,
                                        int num_states = 0);

nlohmann::json local_result_json(const LocalResult& r);
nlohmann::json history_json(const std::vector<RoundRecord>& history);

}  // namespace neuralsim
