// Free-rollout evaluations (tools/training_setup.hpp) as train-augment and
// discover write them in summary.json: the errors per trajectory and
// horizon, and a held-out split with its reference rows (the analytical
// model and "no motion"): metrics.<split>.reference.<row>. And the same in
// their report.html, with the loss per epoch.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "neuralsim/tools/training_setup.hpp"
#include "neuralsim/train/training_loop.hpp"

namespace neuralsim {

nlohmann::json evaluation_json(const RolloutEvaluation& e);
nlohmann::json held_out_json(const RolloutEvaluation& e, const std::optional<ReferenceEvaluations>& reference);

class HtmlReport;
// A subsection: mean RMSE(q) per horizon of `e` (named `model`) and of the
// reference rows when given, as a table and a chart, then the errors per
// trajectory.
void evaluation_report(HtmlReport& report, const std::string& title, const std::string& model,
                       const RolloutEvaluation& e, const std::optional<ReferenceEvaluations>& reference);
// Training and validation loss per epoch (a chart; nothing without epochs).
void loss_report(HtmlReport& report, const std::vector<EpochRecord>& history);

}  // namespace neuralsim
