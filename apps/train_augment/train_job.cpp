#include "train_augment/train_job.hpp"

#include <spdlog/spdlog.h>

#include "common/evaluation_json.hpp"
#include "common/provenance.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/lstm_file.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/io/parameter_file.hpp"
#include "neuralsim/tools/train_augment.hpp"
#include "neuralsim/tools/training_checkpoint.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

// The trained parameters in their file formats, and the rollout config
// that replays them (replay.yaml).
void write_parameters(const TrainAugmentResult& r, const std::string& weights_name, ToolRun& run) {
  const TrainedParameters& p = r.trained;
  const std::string weights = write_trained_weights(p, run.path(weights_name), run.path("lstm.json"));
  if (!weights.empty()) run.add_output(weights);
  run.write_text("replay.yaml", replay_config_yaml(run.config(), r, run.out().dir(), weights));
  if (!p.physical.empty()) {
    ParameterFile f;
    f.model = r.model_name;
    for (const auto& [name, value] : p.physical) f.parameters.push_back({name, value, {}, {}, {}, {}});
    f.annotations = {{"seed", run.options().seed},
                     {"provenance", provenance(run.options().argv, run.options().threads)}};
    write_parameter_file(run.path("params.json"), f);
    run.add_output(run.path("params.json"));
  }
}

void training_metrics(const TrainAugmentResult& r, json& m) {
  m["model"] = r.trained_model;
  m["num_parameters"] = r.num_parameters;
  if (r.trained_model == "hybrid") {
    m["num_physical_parameters"] = r.num_physical;
    m["num_network_weights"] = r.num_network_weights;
  }
  m["mode"] = r.mode;
  m["optimizer"] = r.optimizer;
  m["window_steps"] = r.window_steps;
  m["train_samples"] = r.train_samples;
  m["num_train_trajectories"] = r.num_train_trajectories;
  m["num_validation_trajectories"] = r.num_validation_trajectories;
  m["num_test_trajectories"] = r.num_test_trajectories;
  m["epochs_completed"] = r.state.epoch;
  m["best_epoch"] = r.state.best_epoch;
  m["stopped_early"] = r.state.stopped_early;
  m["initial_validation_loss"] = finite_or_null(r.initial_validation_loss);
  m["best_validation_loss"] = finite_or_null(r.state.best_validation);
  if (!r.state.history.empty()) m["final_train_loss"] = finite_or_null(r.state.history.back().train_loss);
  if (r.status == RunStatus::kDiverged) m["error"] = r.message;
}

}  // namespace

RunReport run_train_augment(ToolRun& run, const TrainAugmentFlags& flags) {
  if (flags.gradients.check) {
    if (run.resume()) throw ConfigError("--check-gradients trains nothing: there is nothing to --resume");
    TrainingGradientCheckOptions options;
    options.check.tolerance = flags.gradients.tolerance;
    const TrainingGradientCheck c = check_training_gradient({run.config(), run.options().seed}, options, run.context());
    if (!run.writes()) return c;
    run.write_gradient_check(c.check, {{"of", "the training loss (mean over the training windows)"},
                                       {"model", c.trained_model}, {"mode", c.mode},
                                       {"window_steps", c.window_steps}, {"parameters", c.num_parameters},
                                       {"physical_parameters", c.num_physical}});
    return c;
  }
  const std::string weights_name =
      OutputDirectory::configured_name(run.config(), "output.weights", "weights.h5",
                                       {"checkpoint.json", "params.json", "loss.csv", "loss.png", "lstm.json",
                                        "predictions.h5", "replay.yaml"});
  TrainAugmentResult r = train_augment({run.config(), run.options().seed}, run.context());
  if (!run.writes()) return r;  // an MPI rank other than 0
  // The best parameters are written whatever ended the run.
  write_parameters(r, weights_name, run);
  run.write_text("loss.csv", training_history_csv(r.state.history));
  if (run.plots_wanted() && !r.state.history.empty()) run.plot("plot_loss.py", {run.path("loss.csv")}, "loss.png");
  json& m = run.summary().metrics();
  training_metrics(r, m);
  if (r.train) m["train"] = evaluation_json(*r.train);
  // Each held-out split with its reference rows (analytical model, no
  // motion) scored the same way: metrics.<split>.reference.<row>.
  if (r.validation) m["validation"] = held_out_json(*r.validation, r.validation_reference);
  if (r.test) m["test"] = held_out_json(*r.test, r.test_reference);
  if (r.validation && !r.validation->predictions.trajectories.empty()) {
    TrajectorySet predictions = r.validation->predictions;
    predictions.meta.generator = "train-augment " + version_string();
    write_trajectories(run.path("predictions.h5"), predictions);
    run.add_output(run.path("predictions.h5"));
  }
  write_training_report(r, run);
  if (r.status == RunStatus::kDiverged) r.message += " (the best parameters so far were written to " + run.out().dir() + ")";
  return r;
}

}  // namespace neuralsim
