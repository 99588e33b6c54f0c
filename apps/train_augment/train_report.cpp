// train-augment's report.html (docs/train-augment.md, "report.html"): the
// loss per epoch and the free-rollout errors with their reference rows.
#include <string>

#include "common/evaluation_json.hpp"
#include "common/html_report.hpp"
#include "neuralsim/tools/train_augment.hpp"
#include "train_augment/train_job.hpp"

namespace neuralsim {

void write_training_report(const TrainAugmentResult& r, ToolRun& run) {
  HtmlReport report("train-augment: " + r.model_name);
  const TrainingState& s = r.state;
  report.paragraph("Trained " + r.description + " (" + (r.description == r.trained_model ? "" : r.trained_model + ", ") +
                   std::to_string(r.num_parameters) +
                   " parameters) in mode " + r.mode + " with " + r.optimizer + " on windows of " +
                   std::to_string(r.window_steps) + " steps: status " + run_status_name(r.status) + ", " +
                   std::to_string(s.epoch) + " epochs" + (s.stopped_early ? " (stopped early)" : "") +
                   ", best validation loss " + html_number(s.best_validation) + " at epoch " +
                   std::to_string(s.best_epoch + 1) + " (before training " + html_number(r.initial_validation_loss) +
                   "); trajectories: " + std::to_string(r.num_train_trajectories) + " training, " +
                   std::to_string(r.num_validation_trajectories) + " validation, " +
                   std::to_string(r.num_test_trajectories) + " test.");
  report.section("Warnings");
  report.warnings(r.warnings);
  report.section("Loss");
  loss_report(report, s.history);
  if (!r.trained.physical.empty()) {
    HtmlTable t{{"physical parameter", "trained value"}, {}, {}};
    for (const auto& [name, value] : r.trained.physical) t.rows.push_back({name, html_number(value)});
    report.table(t);
  }
  report.section("Free-rollout errors");
  report.paragraph("Each trajectory rolled out from its first recorded state under its recorded controls; RMSE(q) "
                   "over the first H steps. Held-out splits are scored beside the analytical model and no motion.");
  if (r.train) evaluation_report(report, "training data", "trained model", *r.train, std::nullopt);
  if (r.validation) evaluation_report(report, "validation data", "trained model", *r.validation, r.validation_reference);
  if (r.test) evaluation_report(report, "test data (held out)", "trained model", *r.test, r.test_reference);
  if (!r.train && !r.validation) report.paragraph("Not evaluated (the run was interrupted).");
  run.write_report(report);
}

}  // namespace neuralsim
