#include "neuralsim/tools/training_setup.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/experiment/evaluation.hpp"

namespace neuralsim {
namespace training_setup_detail {

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
    for (auto& [name, reading] : t.imus) reading.conservativeResize(k, Eigen::NoChange);
    if (t.tau_measured.size() > 0) t.tau_measured.conservativeResize(k, Eigen::NoChange);
    if (t.current.size() > 0) t.current.conservativeResize(k, Eigen::NoChange);
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

}  // namespace training_setup_detail

using training_setup_detail::check_controls;
using training_setup_detail::first_samples;

TrainingSetup read_training_setup(const Config& cfg, long long seed, const std::vector<std::string>& tool_keys) {
  std::vector<std::string> keys = {"name", "description", "model", "params", "params_file", "sim", "contact",
                                   "data", "train", "evaluate", "output"};
  keys.insert(keys.end(), tool_keys.begin(), tool_keys.end());
  cfg.check_known_keys(keys);
  if (cfg.has("output")) cfg.at("output").check_known_keys({"weights", "plot"});
  if (cfg.has("evaluate")) cfg.at("evaluate").check_known_keys({"horizons"});
  TrainingSetup s;
  s.exp = load_experiment(cfg);
  const Model<double>& model = s.exp.model;
  s.tc = read_train_config(cfg.at("train"), model, s.exp.contact ? &s.exp.contact->parameters : nullptr, seed,
                           &s.exp.warnings);
  for (double h : cfg.get_or<std::vector<double>>("evaluate.horizons", {10, 100, 1000})) {
    if (!(h >= 1 && h <= 1e12 && h == std::floor(h))) cfg.fail("evaluate.horizons", "horizons are sample counts >= 1");
    s.horizons.push_back(static_cast<long long>(h));
  }
  s.data = load_data(cfg.at("data"), model, &s.data_notes);
  if (s.data.targets) cfg.at("data").fail("targets", "training learns from recorded trajectories, not targets");
  check_controls(s.data.train, s.data.train_source, s.tc.use_controls, model);
  check_controls(s.data.validation, s.data.validation_source, s.tc.use_controls, model);
  check_controls(s.data.test, s.data.test_source, s.tc.use_controls, model);
  // The hybrid model's steps follow the recorded time stamps when it
  // interpolates or delays controls (train/hybrid_window_model.hpp). A
  // sensor delay would shift what the loss compares: simid's alone.
  for (const ExperimentParameter& p : s.exp.parameters)
    if (p.target.kind == ParameterKind::kSensorDelay)
      throw ConfigError(p.source + ": parameter '" + p.target.name +
                        "': window training compares q and q̇ at their samples, without a sensor delay (simid applies "
                        "and fits observe.*.delay); expected no sensor delay");
  check_control_timing(cfg.at("sim"), s.exp.step, s.data.train, s.data.train_source);
  check_control_timing(cfg.at("sim"), s.exp.step, s.data.validation, s.data.validation_source);
  check_control_timing(cfg.at("sim"), s.exp.step, s.data.test, s.data.test_source);
  // The trainer sees the first train_samples of each training recording;
  // normalization and loss weights come from the same samples.
  s.options = s.tc.trainer;
  if (s.tc.train_trajectories > 0) {
    if (s.tc.train_trajectories > static_cast<int>(s.data.train.trajectories.size()))
      cfg.at("train").fail("train_trajectories", "asks for " + std::to_string(s.tc.train_trajectories) +
                                                     " trajectories; the training split of " + s.data.train_source +
                                                     " has " + std::to_string(s.data.train.trajectories.size()));
    s.data.train.trajectories.resize(static_cast<size_t>(s.tc.train_trajectories));
  }
  s.train_set = first_samples(s.data.train, s.options.max_samples);
  s.options.max_samples = 0;
  return s;
}

Fingerprint training_fingerprint(const Config& cfg, const TrainingSetup& setup, long long seed) {
  Fingerprint f = config_digests(cfg.to_json(), {"name", "description", "output", "evaluate"});
  f["data.train"] = trajectory_digest(setup.data.train);
  f["data.validation"] = trajectory_digest(setup.data.validation);
  f["seed"] = std::to_string(seed);
  return f;
}

void normalize_augment_inputs(std::vector<AugmentBlueprint>& blueprints, const Model<double>& model,
                              const TrajectorySet& train, std::vector<std::string>& notes, bool only_flagged) {
  auto wanted = [&](const AugmentBlueprint& bp) { return !only_flagged || bp.normalize_from_data; };
  if (std::none_of(blueprints.begin(), blueprints.end(), wanted)) return;
  AugmentedDynamics<double> aug(model, model, blueprints);
  Data<double> data(model);
  Eigen::VectorXd gear(model.nv), actuation = Eigen::VectorXd::Zero(model.nv);
  for (const Joint<double>& j : model.joints)
    for (int i = 0; i < j.nv; ++i) gear[j.idx_v + i] = j.dynamics.gear_ratio;
  std::vector<Eigen::VectorXd> sum(blueprints.size()), sum2(blueprints.size());
  for (std::size_t k = 0; k < blueprints.size(); ++k) {
    sum[k] = sum2[k] = Eigen::VectorXd::Zero(blueprints[k].network.input_dim());
  }
  double n = 0;
  Eigen::VectorXd buf;
  for (const Trajectory& t : train.trajectories) {
    for (Eigen::Index s = 0; s < t.size(); ++s) {
      const Eigen::VectorXd q = t.q.row(s).transpose(), qd = t.qd.row(s).transpose();
      if (t.has_tau()) actuation = gear.cwiseProduct(t.tau.row(s).transpose());
      forward_kinematics(model, data, q, qd);
      for (std::size_t k = 0; k < blueprints.size(); ++k) {
        if (!wanted(blueprints[k]) || is_contact_site(blueprints[k].site.quantity)) continue;
        buf.resize(blueprints[k].network.input_dim());
        aug.network_input(static_cast<int>(k), data, q, qd, actuation, t.time[s] - t.time[0], buf.data());
        sum[k] += buf;
        sum2[k] += buf.cwiseAbs2();
      }
      n += 1;
    }
  }
  for (std::size_t k = 0; k < blueprints.size(); ++k) {
    AugmentBlueprint& bp = blueprints[k];
    if (!wanted(bp)) continue;
    bp.normalize_from_data = false;
    if (is_contact_site(bp.site.quantity)) {
      notes.push_back("augment " + bp.name + ": contact inputs are not normalized (they exist only in contact)");
      continue;
    }
    const Eigen::VectorXd mean = sum[k] / n;
    Eigen::VectorXd std = (sum2[k] / n - mean.cwiseAbs2()).cwiseMax(0.0).cwiseSqrt();
    for (Eigen::Index i = 0; i < std.size(); ++i)
      if (!(std[i] > 1e-9 * (1.0 + std::abs(mean[i])))) {
        std[i] = 1.0;
        notes.push_back("augment " + bp.name + ": input value " + std::to_string(i) +
                        " is constant on the training data (not scaled)");
      }
    bp.network.set_input_normalization(mean, std);
  }
}

RolloutProblem hybrid_problem(const Experiment& exp, std::vector<AugmentBlueprint> augment) {
  RolloutProblem p;
  p.model = exp.model;
  p.step = exp.step;
  if (exp.contact) p.contact = *exp.contact;  // impulse: taped, without warm start (docs/gradients.md)
  p.augment = std::move(augment);
  return p;
}

Trajectory free_rollout(WindowModel& wm, const Eigen::VectorXd& x, const Model<double>& model, const Trajectory& tr,
                        bool use_controls) {
  const Eigen::Index T = tr.size();
  const Eigen::MatrixXd controls = use_controls ? Eigen::MatrixXd(tr.tau.topRows(T - 1).transpose())
                                                : Eigen::MatrixXd(0, T - 1);
  Eigen::MatrixXd q, qd;
  Trajectory pred;
  pred.name = tr.name;
  pred.time = tr.time;
  pred.q.resize(T, model.nq);
  pred.qd.resize(T, model.nv);
  pred.q.row(0) = tr.q.row(0);
  pred.qd.row(0) = tr.qd.row(0);
  wm.rollout(x, tr.q.row(0).transpose(), tr.qd.row(0).transpose(), controls, &q, &qd, &tr);
  pred.q.bottomRows(T - 1) = q.transpose();
  pred.qd.bottomRows(T - 1) = qd.transpose();
  return pred;
}

RolloutEvaluation evaluate_rollouts(WindowModel& wm, const Eigen::VectorXd& x, const Model<double>& model,
                                    const TrajectorySet& data, const std::vector<long long>& horizons,
                                    const RunContext& context) {
  return evaluate_predictions(
      model, data, horizons, [&](const Trajectory& tr) { return free_rollout(wm, x, model, tr, tr.has_tau()); },
      context);
}

RolloutEvaluation evaluate_predictions(const Model<double>& model, const TrajectorySet& data,
                                       const std::vector<long long>& horizons, const RecordingPredictor& predict,
                                       const RunContext& context) {
  RolloutEvaluation e;
  e.predictions.meta = data.meta;
  const double n = static_cast<double>(data.trajectories.size());
  for (const Trajectory& tr : data.trajectories) {
    Trajectory pred;
    bool finite = true;
    try {
      pred = predict(tr);
      finite = pred.q.allFinite() && pred.qd.allFinite();
    } catch (const NumericalError& err) {
      context.warn("the rollout of '" + tr.name + "' diverged: " + err.what());
      finite = false;
    }
    RolloutEvaluation::PerTrajectory t;
    t.name = tr.name;
    if (!finite) {
      ++e.diverged;
      t.diverged = true;
      e.mean_rmse_q = e.mean_rmse_qd = std::numeric_limits<double>::infinity();
      e.per_trajectory.push_back(t);
      continue;
    }
    const PredictionError pe = prediction_error(model, tr, pred, horizons);
    t.rmse_q = pe.rmse_q;
    t.rmse_qd = pe.rmse_qd;
    t.rmse_q_by_horizon = pe.rmse_q_by_horizon;
    for (const auto& [h, r] : pe.rmse_q_by_horizon) e.mean_rmse_q_by_horizon[h] += r / n;
    e.per_trajectory.push_back(t);
    e.mean_rmse_q += pe.rmse_q / n;
    e.mean_rmse_qd += pe.rmse_qd / n;
    e.predictions.trajectories.push_back(std::move(pred));
  }
  return e;
}

ReferenceEvaluations evaluate_references(const Experiment& exp, const TrajectorySet& data,
                                         const std::vector<long long>& horizons, const RunContext& context) {
  ReferenceEvaluations r;
  r.analytical_model = evaluate_predictions(
      exp.model, data, horizons,
      [&](const Trajectory& tr) { return replay_recording(exp.model, exp.step, exp.contact, tr); }, context);
  r.no_motion = evaluate_predictions(exp.model, data, horizons, no_motion_prediction, context);
  // The rows' numbers are what a table needs; their trajectories are not written.
  r.analytical_model.predictions.trajectories.clear();
  r.no_motion.predictions.trajectories.clear();
  return r;
}

}  // namespace neuralsim
