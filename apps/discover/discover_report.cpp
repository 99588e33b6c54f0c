// discover's report.html (docs/discover.md, "report.html"): the verdict,
// the groups and those selected, the regularization path, the free-rollout
// errors of the retrained pruned model.
#include <cmath>
#include <string>

#include "common/evaluation_json.hpp"
#include "common/html_report.hpp"
#include "discover/discover_job.hpp"
#include "neuralsim/tools/discover.hpp"

namespace neuralsim {

void write_discover_report(const DiscoverResult& r, ToolRun& run) {
  HtmlReport report("discover: " + r.model_name);
  report.paragraph(r.verdict + " (status " + run_status_name(r.status) + "; " + std::to_string(r.repetitions.size()) +
                   " of " + std::to_string(r.planned_repetitions) + " repetitions).");
  report.section("Warnings");
  report.warnings(r.warnings);
  report.section("Groups");
  HtmlTable t{{"group", "norm", "validation loss change when removed", "entry penalty", "entry rank",
               "selection frequency", "selected"}, {}, {}};
  for (const DiscoverGroup& g : r.groups) {
    t.rows.push_back({g.label, html_number(g.norm), html_number(100 * g.removal_increase) + " %",
                      std::isnan(g.entry_lambda) ? "never" : g.entry_lambda == 0 ? "only dense" : html_number(g.entry_lambda),
                      std::to_string(g.entry_rank),
                      html_number(g.frequency), g.selected ? "yes" : ""});
    t.flagged.push_back(g.selected);
  }
  report.table(t);
  std::vector<std::string> selected;
  for (const AugmentBlueprint& bp : r.pruned)
    for (const AugmentInput& in : bp.inputs) selected.push_back(bp.name + " <- " + in.name);
  report.paragraph(selected.empty() ? "Selected: nothing (the analytical model stays as it is)." : "Selected inputs:");
  report.list(selected);
  report.table({{"validation loss", "value"},
                {{"analytical model", html_number(r.analytical_validation_loss)},
                 {"dense candidates", html_number(r.dense_validation_loss)},
                 {"chosen penalty " + html_number(r.chosen_lambda), html_number(r.chosen_validation_loss)},
                 {"retrained pruned", r.retrained_validation_loss ? html_number(*r.retrained_validation_loss) : "not run"}},
                {}});
  report.section("Regularization path (repetition 0)");
  PlotSeries train{"training", {}, {}}, validation{"validation", {}, {}, true};
  for (const DiscoverPathPoint& p : r.repetitions.front().points) {
    if (!(p.lambda > 0) || !std::isfinite(p.lambda)) continue;  // the dense and the analytical ends
    train.x.push_back(std::log10(p.lambda)), train.y.push_back(p.train_loss);
    validation.x.push_back(std::log10(p.lambda)), validation.y.push_back(p.validation_loss);
  }
  report.paragraph("Training and validation loss at each penalty of the path; the dense fit (no "
                   "penalty) and the analytical model are the validation-loss table's rows.");
  report.line_plot({"loss along the path", "log10 penalty", "loss", {train, validation}, true});
  report.section("Free-rollout errors");
  if (!r.analytical_rollouts && !r.retrained_rollouts && !r.test)
    report.paragraph("Not evaluated: the pruned model is not retrained (discover.retrain).");
  if (r.analytical_rollouts) evaluation_report(report, "validation data: analytical model", "analytical model", *r.analytical_rollouts, std::nullopt);
  if (r.retrained_rollouts) evaluation_report(report, "validation data: retrained pruned model", "retrained pruned", *r.retrained_rollouts, std::nullopt);
  if (r.test) evaluation_report(report, "test data (held out)", "retrained pruned", *r.test, r.test_reference);
  run.write_report(report);
}

}  // namespace neuralsim
