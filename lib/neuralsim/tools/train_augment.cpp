#include "neuralsim/tools/train_augment.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <limits>
#include <algorithm>
#include <cstdint>
#include <memory>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/train_config.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/training_setup.hpp"
#include "neuralsim/tools/training_checkpoint.hpp"
#include "neuralsim/train/baseline_models.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"
#include "neuralsim/train/trainer.hpp"

namespace neuralsim {
namespace train_augment_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The trained model and what the outputs need to know about it.
struct ModelUnderTraining {
  std::unique_ptr<WindowModel> model;
  std::vector<std::string> parameter_names;
  HybridWindowModel* hybrid = nullptr;
  MlpStateModel* mlp = nullptr;
  LstmStateModel* lstm = nullptr;
  std::vector<std::string> notes;  // what a run logs about the model (input normalization)
};

ModelUnderTraining build_hybrid(const Experiment& exp, const TrainConfig& tc, const TrajectorySet& train,
                                const Config& cfg) {
  if (exp.augment.empty() && tc.physical.size() == 0)
    cfg.fail("augment", "a hybrid model needs networks (augment:) or physical parameters (train.physical) to train");
  ModelUnderTraining m;
  // The networks read their inputs normalized by the training data's
  // statistics unless the config gave them (or weights).
  std::vector<AugmentBlueprint> augment = exp.augment;
  normalize_augment_inputs(augment, exp.model, train, m.notes, /*only_flagged=*/true);
  RolloutProblem p = hybrid_problem(exp, std::move(augment));
  p.physical = tc.physical;
  auto h = std::make_unique<HybridWindowModel>(std::move(p));
  m.hybrid = h.get();
  m.parameter_names = h->parameter_names();
  m.model = std::move(h);
  return m;
}

ModelUnderTraining build_model(const Experiment& exp, const TrainConfig& tc, const TrajectorySet& train,
                               const Config& cfg) {
  if (tc.model == TrainedModel::kHybrid) return build_hybrid(exp, tc, train, cfg);
  ModelUnderTraining m;
  const Model<double>& model = exp.model;
  StateNames names;
  names.q_names = model.position_names();
  names.v_names = model.velocity_names();
  const bool u = tc.use_controls;
  if (tc.model == TrainedModel::kMlp) {
    MlpStateModelOptions o;
    o.nq = model.nq;
    o.nv = model.nv;
    o.use_controls = u;
    o.predict_delta = tc.baseline.predict_delta;
    o.seed = tc.baseline.seed;
    o.names = names;
    o.hidden_widths = tc.baseline.hidden;
    if (o.hidden_widths.empty()) {
      const int h = MlpStateModel::hidden_width_for_parameter_count(tc.baseline.parameters, o.nq, o.nv, u, 2);
      o.hidden_widths = {h, h};
    }
    auto b = std::make_unique<MlpStateModel>(o);
    b->fit_normalization(train);
    m.mlp = b.get();
    m.parameter_names = b->parameter_names();
    m.model = std::move(b);
    return m;
  }
  LstmStateModelOptions o;
  o.nq = model.nq;
  o.nv = model.nv;
  o.use_controls = u;
  o.seed = tc.baseline.seed;
  o.names = names;
  o.hidden = tc.baseline.hidden.empty()
                 ? LstmStateModel::hidden_width_for_parameter_count(tc.baseline.parameters, o.nq, o.nv, u)
                 : tc.baseline.hidden[0];
  auto b = std::make_unique<LstmStateModel>(o);
  b->fit_normalization(train);
  m.lstm = b.get();
  m.parameter_names = b->parameter_names();
  m.model = std::move(b);
  return m;
}

TrainedParameters trained_parameters(const ModelUnderTraining& m, const Eigen::VectorXd& x) {
  TrainedParameters p;
  if (m.hybrid) {
    p.networks = m.hybrid->blueprints_at(x);
    const Eigen::VectorXd values = m.hybrid->physical_values(x);
    for (int i = 0; i < m.hybrid->num_physical(); ++i) p.physical.push_back({m.parameter_names[static_cast<size_t>(i)], values[i]});
  } else if (m.mlp) {
    p.mlp = NamedNetwork{"mlp", m.mlp->network(x), m.mlp->input_names(), m.mlp->output_names(), {}};
    p.mlp_model = {m.mlp->name(), m.mlp->options().use_controls};
  } else if (m.lstm) {
    p.lstm = NamedLstm{m.lstm->network(x), m.lstm->input_names(), m.lstm->output_names(), m.lstm->name(),
                       m.lstm->options().use_controls};
  }
  return p;
}

void configure_hybrid(const ModelUnderTraining& m, TrainerOptions& options, const Config& cfg) {
  // Weight decay acts on network weights, never on physical parameters.
  options.decay_mask = Eigen::VectorXd::Ones(m.model->num_parameters());
  options.decay_mask.head(m.hybrid->num_physical()).setZero();
  options.lower = m.hybrid->lower_bounds();
  options.upper = m.hybrid->upper_bounds();
  if (options.optimizer == TrainerOptions::Optimizer::kLbfgs &&
      (options.lower.array().isFinite().any() || options.upper.array().isFinite().any()))
    cfg.at("train").fail("optimizer", "lbfgs cannot keep the bounded train.physical parameters within their "
                                      "bounds; use adam (projected onto the bounds) or transform: log without bounds");
}

}  // namespace train_augment_detail

TrainAugmentResult train_augment(const TrainAugmentRequest& request, const RunContext& context) {
  using namespace train_augment_detail;
  const auto t_start = Clock::now();
  const Config& cfg = request.config;
  TrainingSetup s = read_training_setup(cfg, request.seed, {"augment"});
  const Model<double>& model = s.exp.model;
  const WindowLossWeights weights = loss_weights_from_data(s.train_set);
  ModelUnderTraining m = build_model(s.exp, s.tc, s.train_set, cfg);
  if (m.hybrid) configure_hybrid(m, s.options, cfg);

  // Everything the result depends on, for the checkpoint.
  TrainingCheckpointSpec spec;
  spec.num_parameters = m.model->num_parameters();
  spec.parameter_names = m.parameter_names;
  spec.fingerprint = training_fingerprint(cfg, s, request.seed);
  spec.max_epochs = s.options.epochs;

  s.options.communicator = context.communicator;
  Trainer trainer(*m.model, s.train_set, s.data.validation, weights, s.options);
  if (context.resume && !context.checkpoint)
    throw InvalidArgument("train_augment: resume requested without a checkpoint store");
  TrainAugmentResult r;
  r.state = context.resume ? read_training_checkpoint(*context.checkpoint, spec) : trainer.initial_state();

  r.warnings = s.exp.warnings;
  for (const TrajectorySet* set : {&s.data.train, &s.data.validation, &s.data.test})
    for (const std::string& w : plausibility_warnings(*set, model, s.data.train_source)) r.warnings.push_back(w);
  r.warnings.insert(r.warnings.end(), s.data_notes.begin(), s.data_notes.end());  // rows a CSV import dropped
  context.started();
  for (const std::string& n : s.exp.notes) context.info(n);
  for (const std::string& n : m.notes) context.info(n);
  for (const std::string& w : r.warnings) context.warn(w);
  if (!s.exp.augment.empty() && !m.hybrid)
    context.info(std::string("augment: is not used by the ") + trained_model_name(s.tc.model) + " baseline");
  context.info(format_printf("training %s (%d parameters) on %zu trajectories (%zu validation, %zu test held out), "
                             "mode %s, K = %d",
                             m.model->name().c_str(), m.model->num_parameters(), s.train_set.trajectories.size(),
                             s.data.validation.trajectories.size(), s.data.test.trajectories.size(),
                             training_mode_name(s.options.mode),
                             s.options.window_steps));
  if (context.resume)
    context.info("resuming from " + context.checkpoint->name() + " at epoch " + std::to_string(r.state.epoch));
  r.timings["setup_s"] = seconds_since(t_start);

  const Eigen::VectorXd x0 = m.model->initial_parameters();
  r.initial_validation_loss = trainer.validation_loss(x0);
  const auto t_train = Clock::now();
  {
    ProgressStage progress(context, "train-augment", s.options.epochs);
    try {
      trainer.run(
          r.state,
          [&](const TrainingState& st) {
            if (context.checkpoint) write_training_checkpoint(*context.checkpoint, st, spec);
            progress.update(st.epoch);
            const EpochRecord& e = st.history.back();
            if (context.logs(LogLevel::kDebug))
              context.debug(format_printf("epoch %d: K = %d, train loss %.6g, validation loss %.6g, lr %.3g", e.epoch,
                                          e.window_steps, e.train_loss, e.validation_loss, e.learning_rate));
            return !context.stop_requested();
          },
          context.stop);
    } catch (const NumericalError& e) {
      r.status = RunStatus::kDiverged;
      r.message = e.what();
    }
  }
  r.timings["train_s"] = seconds_since(t_train);
  if (context.stop_agreed()) r.status = RunStatus::kInterrupted;
  if (r.state.best_x.size() == 0) r.state.best_x = r.state.x.size() ? r.state.x : x0;
  double t_grad = 0, t_opt = 0, t_val = 0;
  for (const EpochRecord& e : r.state.history) {
    t_grad += e.seconds_gradient;
    t_opt += e.seconds_optimizer;
    t_val += e.seconds_validation;
  }
  r.timings["gradient_s"] = t_grad;
  r.timings["optimizer_s"] = t_opt;
  r.timings["validation_s"] = t_val;

  r.model_name = model.name;
  r.trained_model = trained_model_name(s.tc.model);
  r.description = m.model->name();
  r.num_parameters = m.model->num_parameters();
  if (m.hybrid) {
    r.num_physical = m.hybrid->num_physical();
    r.num_network_weights = m.hybrid->num_weights();
  }
  r.mode = training_mode_name(s.options.mode);
  r.optimizer = s.options.optimizer == TrainerOptions::Optimizer::kAdam ? "adam" : "lbfgs";
  r.window_steps = s.options.window_steps;
  r.train_samples = s.tc.trainer.max_samples;
  r.num_train_trajectories = static_cast<int>(s.train_set.trajectories.size());
  r.num_validation_trajectories = static_cast<int>(s.data.validation.trajectories.size());
  r.num_test_trajectories = static_cast<int>(s.data.test.trajectories.size());
  r.trained = trained_parameters(m, r.state.best_x);
  if (r.status == RunStatus::kInterrupted) return r;
  const auto t_eval = Clock::now();
  r.train = evaluate_rollouts(*m.model, r.state.best_x, model, s.data.train, s.horizons, context);
  r.validation = evaluate_rollouts(*m.model, r.state.best_x, model, s.data.validation, s.horizons, context);
  if (!s.data.validation.trajectories.empty())
    r.validation_reference = evaluate_references(s.exp, s.data.validation, s.horizons, context);
  // The test split, once, with the parameters selected on validation.
  if (!s.data.test.trajectories.empty()) {
    r.test = evaluate_rollouts(*m.model, r.state.best_x, model, s.data.test, s.horizons, context);
    r.test_reference = evaluate_references(s.exp, s.data.test, s.horizons, context);
    context.info(format_printf("test (%zu trajectories, held out): free-rollout RMSE q %.6g (analytical model %.6g, "
                               "no motion %.6g)",
                               s.data.test.trajectories.size(), r.test->mean_rmse_q,
                               r.test_reference->analytical_model.mean_rmse_q, r.test_reference->no_motion.mean_rmse_q));
  }
  r.timings["evaluate_s"] = seconds_since(t_eval);
  context.info(format_printf("best epoch %d: validation loss %.6g (initial %.6g); free-rollout RMSE q: train %.6g, "
                             "validation %.6g",
                             r.state.best_epoch, r.state.best_validation, r.initial_validation_loss,
                             r.train->mean_rmse_q, r.validation->mean_rmse_q));
  return r;
}

TrainingGradientCheck check_training_gradient(const TrainAugmentRequest& request,
                                              const TrainingGradientCheckOptions& options, const RunContext& context) {
  using namespace train_augment_detail;
  if (options.max_weights < 0) throw InvalidArgument("check_training_gradient: max_weights < 0");
  const Config& cfg = request.config;
  TrainingSetup s = read_training_setup(cfg, request.seed, {"augment"});
  const WindowLossWeights weights = loss_weights_from_data(s.train_set);
  ModelUnderTraining m = build_model(s.exp, s.tc, s.train_set, cfg);
  if (m.hybrid) configure_hybrid(m, s.options, cfg);
  s.options.communicator = context.communicator;
  Trainer trainer(*m.model, s.train_set, s.data.validation, weights, s.options);
  const std::vector<std::string>& names = m.parameter_names;
  if (!options.scale_derivative_of.empty() &&
      std::find(names.begin(), names.end(), options.scale_derivative_of) == names.end())
    throw InvalidArgument("check_training_gradient: no parameter '" + options.scale_derivative_of + "'");

  TrainingGradientCheck r;
  r.trained_model = trained_model_name(s.tc.model);
  r.mode = training_mode_name(s.options.mode);
  r.num_parameters = m.model->num_parameters();
  r.num_physical = m.hybrid ? m.hybrid->num_physical() : 0;
  r.window_steps = trainer.current_window_steps(std::max(0, s.options.epochs - 1));
  r.warnings = s.exp.warnings;
  context.started();
  for (const std::string& w : r.warnings) context.warn(w);

  // Every physical parameter, then network weights drawn without
  // replacement by a seeded partial Fisher–Yates shuffle (splitmix64: the
  // same choice on every platform).
  GradientCheckOptions check = options.check;
  check.coordinates.clear();
  for (int i = 0; i < r.num_physical; ++i) check.coordinates.push_back(i);
  std::vector<int> others;
  for (int i = r.num_physical; i < r.num_parameters; ++i) others.push_back(i);
  const size_t take = std::min(others.size(), static_cast<size_t>(options.max_weights));
  std::uint64_t state = static_cast<std::uint64_t>(request.seed);
  for (size_t k = 0; k < take; ++k) {
    state = splitmix64(state);
    std::swap(others[k], others[k + state % (others.size() - k)]);
  }
  std::sort(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(take));
  check.coordinates.insert(check.coordinates.end(), others.begin(), others.begin() + static_cast<std::ptrdiff_t>(take));
  if (check.coordinates.empty()) throw ConfigError("--check-gradients: the model has no parameter to check");

  const Eigen::VectorXd x0 = m.model->initial_parameters();
  Eigen::VectorXd reverse;
  trainer.training_loss(x0, &reverse);  // NumericalError naming the window when not finite
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == options.scale_derivative_of) reverse[static_cast<Eigen::Index>(i)] *= options.derivative_scale;
  const auto loss = [&](const Eigen::VectorXd& x, double* f) {
    try {
      *f = trainer.training_loss(x, nullptr);
      return true;
    } catch (const NumericalError&) {
      return false;
    }
  };
  r.check = check_gradient(loss, x0, names, {{m.hybrid ? "reverse_mode" : "backpropagation", reverse}}, check);
  if (!r.check.passed) {
    r.status = RunStatus::kGradientCheckFailed;
    r.message = std::to_string(r.check.disagreeing) + " derivative(s) disagree with central differences";
  }
  return r;
}

}  // namespace neuralsim

// ---------------------------------------------------------------------------
// the trained model's files

namespace neuralsim {
namespace train_augment_detail {

namespace fs = std::filesystem;

// `path` (absolute, or relative to the working directory) relative to `dir`
// when it can be said so, else absolute.
std::string relative_to(const std::string& path, const std::string& dir) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec) return path;
  const fs::path rel = fs::relative(abs, fs::absolute(dir, ec), ec);
  return ec || rel.empty() ? abs.string() : rel.string();
}

}  // namespace train_augment_detail

std::string write_trained_weights(const TrainedParameters& p, const std::string& weights_path,
                                  const std::string& lstm_path) {
  if (!p.networks.empty()) {
    write_augment_weights(weights_path, p.networks);
    return weights_path;
  }
  if (p.mlp) {
    write_networks(weights_path, {*p.mlp}, p.mlp_model);
    return weights_path;
  }
  if (p.lstm) {
    write_lstm_file(lstm_path, *p.lstm);
    return lstm_path;
  }
  return "";
}

std::string replay_config_yaml(const Config& cfg, const TrainAugmentResult& r, const std::string& out_dir,
                               const std::string& weights_file) {
  using namespace train_augment_detail;
  using nlohmann::json;
  const json all = cfg.to_json();
  std::string out = "# The rollout config that replays the model trained by train-augment as is (written by\n"
                    "# train-augment from " + cfg.file() + "):\n"
                    "#   rollout --config THIS_FILE --compare DATA.h5 --out DIR\n"
                    "# Paths are relative to this file. Changing the networks here (output_scale, hidden,\n"
                    "# activation, inputs) is refused: a trained model is replayed as trained.\n";
  // JSON is YAML (1.2 flow style); numbers are printed to parse back to the same double.
  auto put = [&](const std::string& key, const json& value) { out += key + ": " + value.dump() + "\n"; };
  if (all.contains("name")) put("name", all["name"].get<std::string>() + "_replay");
  json model = all["model"];
  const Config model_section = cfg.at("model");
  for (const char* key : {"file", "urdf"})
    if (model_section.has(key) && model[key].is_string()) model[key] = relative_to(model_section.path(key), out_dir);
  put("model", model);
  if (all.contains("sim")) put("sim", all["sim"]);
  if (all.contains("contact")) put("contact", all["contact"]);
  if (all.contains("params_file")) put("params_file", relative_to(cfg.path("params_file"), out_dir));
  json params = all.contains("params") ? all["params"] : json::object();
  for (const auto& [name, value] : r.trained.physical) params[name] = value;  // params: wins over params_file
  if (!params.empty()) put("params", params);
  if (r.trained_model == "hybrid" && all.contains("augment")) {
    json augment = all["augment"];
    for (json& entry : augment)
      for (const char* key : {"weights", "input_mean", "input_std"}) entry.erase(key);
    put("augment", augment);
  }
  if (!weights_file.empty()) put("weights", relative_to(weights_file, out_dir));
  return out;
}

}  // namespace neuralsim
