#include "train_augment/train_job.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <spdlog/spdlog.h>

#include "common/fingerprint.hpp"
#include "common/provenance.hpp"
#include "common/python.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/train_config.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/train/baseline_models.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"
#include "train_augment/train_checkpoint.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

// The trained model and what the outputs need to know about it.
struct ModelUnderTraining {
  std::unique_ptr<WindowModel> model;
  std::vector<std::string> parameter_names;
  HybridWindowModel* hybrid = nullptr;
  MlpStateModel* mlp = nullptr;
  LstmStateModel* lstm = nullptr;
};

// The first `n` samples of every trajectory (0 = all).
TrajectorySet first_samples(TrajectorySet set, int n) {
  if (n <= 0) return set;
  for (Trajectory& t : set.trajectories) {
    const Eigen::Index k = std::min<Eigen::Index>(t.size(), n);
    t.time.conservativeResize(k);
    t.q.conservativeResize(k, Eigen::NoChange);
    t.qd.conservativeResize(k, Eigen::NoChange);
    if (t.has_tau()) t.tau.conservativeResize(k, Eigen::NoChange);
    for (auto& [name, poses] : t.link_poses) poses.conservativeResize(k, Eigen::NoChange);
  }
  return set;
}

// `controls: recorded` needs τ in every trajectory; `controls: none` drops it.
void check_controls(TrajectorySet& set, const std::string& source, bool use_controls, const Model<double>& model) {
  for (Trajectory& t : set.trajectories) {
    if (use_controls && !t.has_tau())
      throw DataError(source + ":/trajectories/" + t.name + "/tau: missing; training replays the recorded joint " +
                      "forces (expected shape (T, nv=" + std::to_string(model.nv) +
                      ")); for a passive system set train.controls: none");
    if (!use_controls) t.tau.resize(0, 0);
  }
}

ModelUnderTraining build_model(const Experiment& exp, const TrainConfig& tc, const TrajectorySet& train,
                               const Config& cfg) {
  ModelUnderTraining m;
  const Model<double>& model = exp.model;
  StateNames names;
  names.q_names = model.position_names();
  names.v_names = model.velocity_names();
  if (tc.model == TrainedModel::kHybrid) {
    if (exp.augment.empty() && tc.physical.size() == 0)
      cfg.fail("augment", "a hybrid model needs networks (augment:) or physical parameters (train.physical) to train");
    RolloutProblem p;
    p.model = model;
    p.step = exp.step;
    if (exp.contact) p.contact = *exp.contact;  // impulse: taped, without warm start (docs/gradients.md)
    p.augment = exp.augment;
    p.physical = tc.physical;
    auto h = std::make_unique<HybridWindowModel>(std::move(p));
    m.hybrid = h.get();
    m.parameter_names = h->parameter_names();
    m.model = std::move(h);
    return m;
  }
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

// Free rollouts of whole recordings from their first state under their
// recorded controls, and the errors per horizon.
struct TrainingEvaluation {
  json per_trajectory = json::array();
  double mean_rmse_q = 0, mean_rmse_qd = 0;
  std::map<long long, double> mean_rmse_q_by_horizon;
  TrajectorySet predictions;
  int diverged = 0;
};

TrainingEvaluation evaluate(WindowModel& wm, const Eigen::VectorXd& x, const Model<double>& model, const TrajectorySet& data,
                    const std::vector<long long>& horizons) {
  TrainingEvaluation e;
  e.predictions.meta = data.meta;
  const double n = static_cast<double>(data.trajectories.size());
  for (const Trajectory& tr : data.trajectories) {
    const Eigen::Index T = tr.size();
    Eigen::MatrixXd controls = tr.has_tau() ? Eigen::MatrixXd(tr.tau.topRows(T - 1).transpose())
                                            : Eigen::MatrixXd(0, T - 1);
    Eigen::MatrixXd q, qd;
    Trajectory pred;
    pred.name = tr.name;
    pred.time = tr.time;
    pred.q.resize(T, model.nq);
    pred.qd.resize(T, model.nv);
    pred.q.row(0) = tr.q.row(0);
    pred.qd.row(0) = tr.qd.row(0);
    bool finite = true;
    try {
      wm.rollout(x, tr.q.row(0).transpose(), tr.qd.row(0).transpose(), controls, &q, &qd);
      pred.q.bottomRows(T - 1) = q.transpose();
      pred.qd.bottomRows(T - 1) = qd.transpose();
      finite = pred.q.allFinite() && pred.qd.allFinite();
    } catch (const NumericalError& err) {
      spdlog::warn("the rollout of '{}' diverged: {}", tr.name, err.what());
      finite = false;
    }
    json j{{"name", tr.name}};
    if (!finite) {
      ++e.diverged;
      j["diverged"] = true;
      e.mean_rmse_q = e.mean_rmse_qd = std::numeric_limits<double>::infinity();
      e.per_trajectory.push_back(j);
      continue;
    }
    const PredictionError pe = prediction_error(model, tr, pred, horizons);
    j["rmse_q"] = pe.rmse_q;
    j["rmse_qd"] = pe.rmse_qd;
    json hz = json::object();
    for (const auto& [h, r] : pe.rmse_q_by_horizon) {
      hz[std::to_string(h)] = r;
      e.mean_rmse_q_by_horizon[h] += r / n;
    }
    j["rmse_q_by_horizon"] = hz;
    e.per_trajectory.push_back(j);
    e.mean_rmse_q += pe.rmse_q / n;
    e.mean_rmse_qd += pe.rmse_qd / n;
    e.predictions.trajectories.push_back(std::move(pred));
  }
  return e;
}

json evaluation_json(const TrainingEvaluation& e) {
  json hz = json::object();
  for (const auto& [h, r] : e.mean_rmse_q_by_horizon) hz[std::to_string(h)] = e.diverged ? json(nullptr) : json(r);
  return {{"mean_rmse_q", finite_or_null(e.mean_rmse_q)},
          {"mean_rmse_qd", finite_or_null(e.mean_rmse_qd)},
          {"mean_rmse_q_by_horizon", hz},
          {"diverged_trajectories", e.diverged},
          {"per_trajectory", e.per_trajectory}};
}

std::string loss_csv(const std::vector<EpochRecord>& history) {
  std::ostringstream s;
  s.precision(17);
  s << "epoch,window_steps,train_loss,validation_loss,learning_rate,gradient_norm,seconds_gradient,"
       "seconds_optimizer,seconds_validation\n";
  for (const EpochRecord& r : history)
    s << r.epoch << ',' << r.window_steps << ',' << r.train_loss << ',' << r.validation_loss << ',' << r.learning_rate
      << ',' << r.gradient_norm << ',' << r.seconds_gradient << ',' << r.seconds_optimizer << ','
      << r.seconds_validation << '\n';
  return s.str();
}

// The trained parameters in their file formats; returns the files written.
std::vector<std::string> write_parameters(const ModelUnderTraining& m, const Eigen::VectorXd& x,
                                          const OutputDirectory& out, const std::string& weights_name,
                                          const AppOptions& opts) {
  std::vector<std::string> files;
  if (m.hybrid) {
    const std::vector<AugmentBlueprint> bps = m.hybrid->blueprints_at(x);
    if (!bps.empty()) {
      write_augment_weights(out.path(weights_name), bps);
      files.push_back(out.path(weights_name));
    }
    const int np = m.hybrid->num_physical();
    if (np > 0) {
      const Eigen::VectorXd values = m.hybrid->physical_values(x);
      json params = json::object();
      for (int i = 0; i < np; ++i) params[m.parameter_names[static_cast<size_t>(i)]] = {{"value", values[i]}};
      json pj{{"parameters", params}, {"seed", opts.seed}, {"provenance", provenance(opts.argv, opts.threads)}};
      write_text_atomic(out.path("params.json"), pj.dump(2) + "\n");
      files.push_back(out.path("params.json"));
    }
  } else if (m.mlp) {
    write_networks(out.path(weights_name), {{"mlp", m.mlp->network(x), m.mlp->input_names(), m.mlp->output_names()}});
    files.push_back(out.path(weights_name));
  } else if (m.lstm) {
    // The network-file format holds MLPs; an LSTM is written as JSON.
    const nn::Lstm net = m.lstm->network(x);
    json j{{"format", "neuralsim-lstm"},
           {"input_dim", net.input_dim()},
           {"hidden_size", net.hidden_size()},
           {"output_dim", net.output_dim()},
           {"input_names", m.lstm->input_names()},
           {"output_names", m.lstm->output_names()},
           {"input_mean", std::vector<double>(net.input_mean().data(), net.input_mean().data() + net.input_mean().size())},
           {"input_std", std::vector<double>(net.input_std().data(), net.input_std().data() + net.input_std().size())},
           {"output_scale",
            std::vector<double>(net.output_scale().data(), net.output_scale().data() + net.output_scale().size())},
           {"parameters", net.parameter_vector()}};
    write_text_atomic(out.path("lstm.json"), j.dump(1) + "\n");
    files.push_back(out.path("lstm.json"));
  }
  return files;
}

}  // namespace

int run_train_augment(const AppOptions& opts, const TrainRequest& request) {
  const auto t_start = Clock::now();
  const Config cfg = Config::load(opts.config, opts.sets);
  cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "contact", "augment", "data",
                        "train", "evaluate", "output"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"weights", "plot"});
  if (cfg.has("evaluate")) cfg.at("evaluate").check_known_keys({"horizons"});
  const Experiment exp = load_experiment(cfg);
  const Model<double>& model = exp.model;
  const TrainConfig tc =
      read_train_config(cfg.at("train"), model, exp.contact ? &exp.contact->parameters : nullptr, opts.seed);
  std::vector<long long> horizons;
  for (double h : cfg.get_or<std::vector<double>>("evaluate.horizons", {10, 100, 1000})) {
    if (!(h >= 1 && h <= 1e12 && h == std::floor(h))) cfg.fail("evaluate.horizons", "horizons are sample counts >= 1");
    horizons.push_back(static_cast<long long>(h));
  }
  const std::string weights_name =
      OutputDirectory::configured_name(cfg, "output.weights", "weights.h5",
                                       {"checkpoint.json", "params.json", "loss.csv", "loss.png", "lstm.json",
                                        "predictions.h5"});
  const bool plot = plots_wanted(cfg, opts);

  std::vector<std::string> data_notes;
  DataSplit data = load_data(cfg.at("data"), model, &data_notes);
  if (data.targets) cfg.at("data").fail("targets", "train-augment learns from recorded trajectories, not targets");
  check_controls(data.train, data.train_source, tc.use_controls, model);
  check_controls(data.validation, data.validation_source, tc.use_controls, model);
  // The trainer sees the first train_samples of each training recording;
  // normalization and loss weights come from the same samples.
  TrainerOptions options = tc.trainer;
  if (tc.train_trajectories > 0) {
    if (tc.train_trajectories > static_cast<int>(data.train.trajectories.size()))
      cfg.at("train").fail("train_trajectories", "asks for " + std::to_string(tc.train_trajectories) +
                                                     " trajectories; the training split of " + data.train_source +
                                                     " has " + std::to_string(data.train.trajectories.size()));
    data.train.trajectories.resize(static_cast<size_t>(tc.train_trajectories));
  }
  const TrajectorySet train_set = first_samples(data.train, options.max_samples);
  options.max_samples = 0;
  const WindowLossWeights weights = loss_weights_from_data(train_set);

  ModelUnderTraining m = build_model(exp, tc, train_set, cfg);
  if (m.hybrid) {
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
  if (!exp.augment.empty() && !m.hybrid)
    spdlog::info("augment: is not used by the {} baseline", trained_model_name(tc.model));

  // Everything the result depends on, for the checkpoint.
  Fingerprint fingerprint = config_digests(cfg.to_json(), {"name", "description", "output", "evaluate"});
  fingerprint["data.train"] = trajectory_digest(data.train);
  fingerprint["data.validation"] = trajectory_digest(data.validation);
  fingerprint["seed"] = std::to_string(opts.seed);

  Trainer trainer(*m.model, train_set, data.validation, weights, options);
  const std::string checkpoint = (std::filesystem::path(opts.out) / "checkpoint.json").string();
  TrainerState state = request.resume
                           ? read_train_checkpoint(checkpoint, m.parameter_names, fingerprint, options.epochs)
                           : trainer.initial_state();

  const OutputDirectory out(opts.out, "train-augment",
                            request.resume ? OutputDirectory::Reuse::kResume
                            : opts.force   ? OutputDirectory::Reuse::kForce
                                           : OutputDirectory::Reuse::kRefuse);
  RunSummary summary("train-augment", opts, cfg, out);
  for (const std::string& n : exp.notes) spdlog::info("{}", n);
  for (const std::string& n : data_notes) spdlog::info("{}", n);
  for (const std::string& w : exp.warnings) {
    spdlog::warn("{}", w);
    summary.add_warning(w);
  }
  for (const TrajectorySet* set : {&data.train, &data.validation})
    for (const std::string& w : plausibility_warnings(*set, model, data.train_source)) {
      spdlog::warn("{}", w);
      summary.add_warning(w);
    }
  spdlog::info("training {} ({} parameters) on {} trajectories ({} validation), mode {}, K = {}",
               m.model->name(), m.model->num_parameters(), train_set.trajectories.size(),
               data.validation.trajectories.size(), training_mode_name(options.mode), options.window_steps);
  if (request.resume) spdlog::info("resuming from {} at epoch {}", checkpoint, state.epoch);
  summary.timings()["setup_s"] = seconds_since(t_start);

  const Eigen::VectorXd x0 = m.model->initial_parameters();
  const double initial_validation = trainer.validation_loss(x0);

  begin_cooperative_interrupts();
  const auto t_train = Clock::now();
  Progress progress("train-augment", options.epochs);
  std::string status = "ok";
  std::string error;
  try {
    trainer.run(
        state,
        [&](const TrainerState& s) {
          write_train_checkpoint(checkpoint, s, m.parameter_names, fingerprint);
          progress.update(s.epoch);
          const EpochRecord& r = s.history.back();
          spdlog::debug("epoch {}: K = {}, train loss {:.6g}, validation loss {:.6g}, lr {:.3g}", r.epoch,
                        r.window_steps, r.train_loss, r.validation_loss, r.learning_rate);
          return !interrupt_requested();
        },
        interrupt_flag());
  } catch (const NumericalError& e) {
    status = "diverged";
    error = e.what();
  }
  progress.finish();
  const double train_s = seconds_since(t_train);
  if (interrupt_requested()) status = "interrupted";
  if (state.best_x.size() == 0) state.best_x = state.x.size() ? state.x : x0;

  // The best parameters are written whatever ended the run.
  for (const std::string& f : write_parameters(m, state.best_x, out, weights_name, opts)) summary.add_output(f);
  const std::string csv = out.path("loss.csv");
  write_text_atomic(csv, loss_csv(state.history));
  summary.add_output(csv);
  if (plot && !state.history.empty()) {
    draw_plot("plot_loss.py", {csv, out.path("loss.png")});
    if (std::filesystem::exists(out.path("loss.png"))) summary.add_output(out.path("loss.png"));
  }
  if (std::filesystem::exists(checkpoint)) summary.add_output(checkpoint);

  json& metrics = summary.metrics();
  metrics["model"] = trained_model_name(tc.model);
  metrics["num_parameters"] = m.model->num_parameters();
  if (m.hybrid) {
    metrics["num_physical_parameters"] = m.hybrid->num_physical();
    metrics["num_network_weights"] = m.hybrid->num_weights();
  }
  metrics["mode"] = training_mode_name(options.mode);
  metrics["optimizer"] = options.optimizer == TrainerOptions::Optimizer::kAdam ? "adam" : "lbfgs";
  metrics["window_steps"] = options.window_steps;
  metrics["train_samples"] = tc.trainer.max_samples;
  metrics["num_train_trajectories"] = train_set.trajectories.size();
  metrics["num_validation_trajectories"] = data.validation.trajectories.size();
  metrics["epochs_completed"] = state.epoch;
  metrics["best_epoch"] = state.best_epoch;
  metrics["stopped_early"] = state.stopped_early;
  metrics["initial_validation_loss"] = finite_or_null(initial_validation);
  metrics["best_validation_loss"] = finite_or_null(state.best_validation);
  if (!state.history.empty()) metrics["final_train_loss"] = finite_or_null(state.history.back().train_loss);
  if (!error.empty()) metrics["error"] = error;
  double t_grad = 0, t_opt = 0, t_val = 0;
  for (const EpochRecord& r : state.history) {
    t_grad += r.seconds_gradient;
    t_opt += r.seconds_optimizer;
    t_val += r.seconds_validation;
  }
  summary.timings()["train_s"] = train_s;
  summary.timings()["gradient_s"] = t_grad;
  summary.timings()["optimizer_s"] = t_opt;
  summary.timings()["validation_s"] = t_val;

  if (status != "interrupted") {
    const auto t_eval = Clock::now();
    const TrainingEvaluation on_train = evaluate(*m.model, state.best_x, model, data.train, horizons);
    TrainingEvaluation on_validation = evaluate(*m.model, state.best_x, model, data.validation, horizons);
    metrics["train"] = evaluation_json(on_train);
    metrics["validation"] = evaluation_json(on_validation);
    if (!on_validation.predictions.trajectories.empty()) {
      on_validation.predictions.meta.generator = "train-augment " + version_string();
      write_trajectories(out.path("predictions.h5"), on_validation.predictions);
      summary.add_output(out.path("predictions.h5"));
    }
    summary.timings()["evaluate_s"] = seconds_since(t_eval);
    spdlog::info("best epoch {}: validation loss {:.6g} (initial {:.6g}); free-rollout RMSE q: train {:.6g}, "
                 "validation {:.6g}",
                 state.best_epoch, state.best_validation, initial_validation, on_train.mean_rmse_q,
                 on_validation.mean_rmse_q);
  }
  summary.set_status(status);
  summary.write();
  if (status == "diverged") throw NumericalError(error + " (the best parameters so far were written to " + out.dir() + ")");
  return status == "interrupted" ? kExitInterrupted : kExitOk;
}

}  // namespace neuralsim
