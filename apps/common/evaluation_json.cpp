#include "common/evaluation_json.hpp"

#include <string>

#include "common/app.hpp"

namespace neuralsim {

using nlohmann::json;

json evaluation_json(const RolloutEvaluation& e) {
  json hz = json::object();
  for (const auto& [h, r] : e.mean_rmse_q_by_horizon) hz[std::to_string(h)] = e.diverged ? json(nullptr) : json(r);
  json per = json::array();
  for (const RolloutEvaluation::PerTrajectory& t : e.per_trajectory) {
    json j{{"name", t.name}};
    if (t.diverged) {
      j["diverged"] = true;
    } else {
      j["rmse_q"] = t.rmse_q;
      j["rmse_qd"] = t.rmse_qd;
      json th = json::object();
      for (const auto& [h, r] : t.rmse_q_by_horizon) th[std::to_string(h)] = r;
      j["rmse_q_by_horizon"] = th;
    }
    per.push_back(j);
  }
  return {{"mean_rmse_q", finite_or_null(e.mean_rmse_q)},
          {"mean_rmse_qd", finite_or_null(e.mean_rmse_qd)},
          {"mean_rmse_q_by_horizon", hz},
          {"diverged_trajectories", e.diverged},
          {"per_trajectory", per}};
}

json held_out_json(const RolloutEvaluation& e, const std::optional<ReferenceEvaluations>& reference) {
  json j = evaluation_json(e);
  if (reference)
    j["reference"] = {{"analytical_model", evaluation_json(reference->analytical_model)},
                      {"no_motion", evaluation_json(reference->no_motion)}};
  return j;
}

}  // namespace neuralsim
