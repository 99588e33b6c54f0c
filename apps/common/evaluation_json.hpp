// Free-rollout evaluations (tools/training_setup.hpp) as train-augment and
// discover write them in summary.json: the errors per trajectory and
// horizon, and a held-out split with its reference rows (the analytical
// model and "no motion"): metrics.<split>.reference.<row>.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "neuralsim/tools/training_setup.hpp"

namespace neuralsim {

nlohmann::json evaluation_json(const RolloutEvaluation& e);
nlohmann::json held_out_json(const RolloutEvaluation& e, const std::optional<ReferenceEvaluations>& reference);

}  // namespace neuralsim
