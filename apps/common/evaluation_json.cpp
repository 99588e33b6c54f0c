#include "common/evaluation_json.hpp"

#include <string>

#include "common/app.hpp"
#include "common/html_report.hpp"

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

void evaluation_report(HtmlReport& report, const std::string& title, const std::string& model,
                       const RolloutEvaluation& e, const std::optional<ReferenceEvaluations>& reference) {
  report.subsection(title);
  std::vector<std::pair<std::string, const RolloutEvaluation*>> rows{{model, &e}};
  if (reference) rows.insert(rows.end(), {{"analytical model", &reference->analytical_model}, {"no motion", &reference->no_motion}});
  HtmlTable t{{"mean RMSE(q) over free rollouts"}, {}, {}};
  LinePlot plot{title + ": mean RMSE(q) by horizon", "horizon [steps]", "RMSE(q)", {}, true};
  for (const auto& [h, v] : e.mean_rmse_q_by_horizon) t.header.push_back(std::to_string(h) + " steps");
  t.header.insert(t.header.end(), {"whole trajectory", "RMSE(qd)", "diverged"});
  for (const auto& [name, ev] : rows) {
    std::vector<std::string> row{name};
    PlotSeries series{name, {}, {}, ev != &e};
    for (const auto& [h, v] : ev->mean_rmse_q_by_horizon) {
      row.push_back(html_number(ev->diverged ? NAN : v));
      series.x.push_back(static_cast<double>(h)), series.y.push_back(ev->diverged ? NAN : v);
    }
    row.insert(row.end(), {html_number(ev->mean_rmse_q), html_number(ev->mean_rmse_qd), std::to_string(ev->diverged)});
    t.rows.push_back(row);
    plot.series.push_back(series);
  }
  report.table(t);
  if (e.mean_rmse_q_by_horizon.size() > 1) report.line_plot(plot);
  HtmlTable per{{"trajectory (" + model + ")", "RMSE(q)", "RMSE(qd)"}, {}, {}};
  for (const RolloutEvaluation::PerTrajectory& p : e.per_trajectory) {
    per.rows.push_back({p.name, p.diverged ? "diverged" : html_number(p.rmse_q), p.diverged ? "" : html_number(p.rmse_qd)});
    per.flagged.push_back(p.diverged);
  }
  report.table(per);
}

void loss_report(HtmlReport& report, const std::vector<EpochRecord>& history) {
  if (history.empty()) return;
  PlotSeries train{"training", {}, {}}, validation{"validation", {}, {}, true};
  for (const EpochRecord& r : history) {
    train.x.push_back(r.epoch + 1), train.y.push_back(r.train_loss);
    validation.x.push_back(r.epoch + 1), validation.y.push_back(r.validation_loss);
  }
  report.line_plot({"loss per epoch", "epoch", "loss", {train, validation}, true});
}

}  // namespace neuralsim
