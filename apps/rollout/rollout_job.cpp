#include "rollout/rollout_job.hpp"

#include <tbb/parallel_for.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <spdlog/spdlog.h>

#include "common/provenance.hpp"
#include "common/work_size.hpp"
#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/mpc_controllers.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/simulate.hpp"

namespace neuralsim {
namespace {

constexpr long long kMaxTrajectories = 1000000;

void log_experiment(const Experiment& e, RunSummary& summary) {
  for (const std::string& n : e.notes) spdlog::info("{}", n);
  for (const std::string& w : e.warnings) {
    spdlog::warn("{}", w);
    summary.add_warning(w);
  }
}

std::string parameters_json(const Config& cfg) {
  nlohmann::json params = nlohmann::json::object();
  params["config"] = cfg.to_json();
  return params.dump();
}

void add_observation_noise(Trajectory& tr, const Model<double>& model, double q_std, double qd_std,
                           std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    for (int i = 0; i < model.nq; ++i) tr.q(k, i) += q_std * n(rng);
    for (int i = 0; i < model.nv; ++i) tr.qd(k, i) += qd_std * n(rng);
    Eigen::VectorXd q = tr.q.row(k).transpose();
    normalize_configuration(model, q);
    tr.q.row(k) = q.transpose();
  }
}

// `targets: [{link, time, position: [x, y, z], tolerance}]`: positions a
// link must reach (Degrave's ball throw). Checked on every trajectory at the
// sample nearest to `time`.
struct LinkTarget {
  LinkRef link;
  double time = 0;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  double tolerance = 0;
};

std::vector<LinkTarget> read_targets(const Config& cfg, const Model<double>& model, double duration) {
  std::vector<LinkTarget> out;
  if (!cfg.has("targets")) return out;
  for (const Config& t : cfg.list("targets")) {
    t.check_known_keys({"link", "time", "position", "tolerance"});
    LinkTarget target;
    const std::string link = t.get<std::string>("link");
    const auto ref = find_link(model, link);
    if (!ref) t.fail("link", "no body or frame named '" + link + "'");
    target.link = *ref;
    target.time = t.get<double>("time");
    if (!(target.time >= 0 && target.time <= duration + 1e-12)) t.fail("time", "must lie in [0, sim.duration]");
    const std::vector<double> p = t.get<std::vector<double>>("position");
    if (p.size() != 3) t.fail("position", "expected [x, y, z]");
    target.position = Eigen::Vector3d(p[0], p[1], p[2]);
    target.tolerance = t.get<double>("tolerance");
    if (!(target.tolerance > 0)) t.fail("tolerance", "must be > 0");
    out.push_back(target);
  }
  return out;
}

// Distances to each target; true when every one is within its tolerance.
bool check_targets(const Model<double>& model, const std::vector<LinkTarget>& targets, const TrajectorySet& set,
                   nlohmann::json& report) {
  bool all_hit = true;
  report = nlohmann::json::array();
  for (const Trajectory& tr : set.trajectories) {
    for (const LinkTarget& t : targets) {
      Eigen::Index k = 0;
      (tr.time.array() - t.time).abs().minCoeff(&k);
      Trajectory one;
      one.time = tr.time.segment(k, 1);
      one.q = tr.q.middleRows(k, 1);
      record_link_poses(model, {t.link}, one);
      const Eigen::Vector3d p = one.link_poses[t.link.first].row(0).head<3>().transpose();
      const double distance = (p - t.position).norm();
      const bool hit = distance <= t.tolerance;
      all_hit = all_hit && hit;
      report.push_back({{"trajectory", tr.name}, {"link", t.link.first}, {"time", tr.time[k]},
                        {"target", {t.position.x(), t.position.y(), t.position.z()}},
                        {"reached", {p.x(), p.y(), p.z()}}, {"distance", distance},
                        {"tolerance", t.tolerance}, {"hit", hit}});
      if (hit)
        spdlog::info("target hit: trajectory {} link {} at t = {:.4g} s is {:.4g} m from the target (tolerance {:.4g})",
                     tr.name, t.link.first, tr.time[k], distance, t.tolerance);
      else
        spdlog::error("target missed: trajectory {} link {} at t = {:.4g} s is {:.4g} m from the target (tolerance {:.4g})",
                      tr.name, t.link.first, tr.time[k], distance, t.tolerance);
    }
  }
  return all_hit;
}

// The experiment, with the networks of `--weights` when given.
Experiment load_rollout_experiment(const Config& cfg, const RolloutRequest& request) {
  Experiment exp = load_experiment(cfg);
  if (!request.weights_path.empty()) {
    if (exp.augment.empty())
      throw ConfigError(cfg.file() + ": --weights " + request.weights_path +
                        ": the config has no augment: section whose networks the weights would replace");
    load_augment_weights(exp.augment, request.weights_path);
  }
  return exp;
}

void record_augmentation(const Experiment& exp, const RolloutRequest& request, RunSummary& summary) {
  if (exp.augment.empty()) return;
  nlohmann::json nets = nlohmann::json::array();
  for (const AugmentBlueprint& bp : exp.augment)
    nets.push_back({{"name", bp.name}, {"parameters", bp.network.num_parameters()}});
  summary.metrics()["augmentations"] = nets;
  if (!request.weights_path.empty()) summary.metrics()["weights_file"] = request.weights_path;
}

OutputDirectory::Reuse reuse_of(const AppOptions& opts) {
  return opts.force ? OutputDirectory::Reuse::kForce : OutputDirectory::Reuse::kRefuse;
}

int simulate_job(const AppOptions& opts, const Config& cfg, const RolloutRequest& request) {
  const auto t_setup = Clock::now();
  const Experiment exp = load_rollout_experiment(cfg, request);
  const Model<double>& model = exp.model;
  const Config sim = cfg.at("sim");
  const double duration = sim.get<double>("duration");
  if (!(duration >= exp.step.dt))
    sim.fail("duration", "must be at least one time step (dt = " + std::to_string(exp.step.dt) + " s), got " +
                             std::to_string(duration));
  if (duration / exp.step.dt > 1e12) sim.fail("duration", "is more than 10^12 time steps");
  const long long steps = std::llround(duration / exp.step.dt);

  std::mt19937_64 rng(static_cast<uint64_t>(opts.seed));
  const Config states_section = cfg.has("initial_states") ? cfg.at("initial_states") : Config::parse("{}", cfg.file());
  std::vector<InitialState> states = read_initial_states(states_section, model, rng, kMaxTrajectories);
  apply_initial_state_parameters(exp, states);
  const std::vector<LinkTarget> targets = read_targets(cfg, model, duration);
  const Config controls = cfg.has("controls") ? cfg.at("controls") : Config::parse("type: zero", cfg.file());
  TrajectorySet recorded;
  if (controls.has("file")) {
    recorded = load_trajectory_file(controls.path("file"));
    TrajectoryExpectations expect;
    expect.nv = model.nv;
    expect.require_tau = true;
    validate_trajectories(recorded, expect, controls.path("file"));
  }
  const std::vector<LinkRef> link_poses = read_links(cfg, "output.link_poses", model);
  const double q_noise = cfg.get_in_range("noise.q_std", 0.0, 0, 1e6);
  const double qd_noise = cfg.get_in_range("noise.qd_std", 0.0, 0, 1e6);
  if (cfg.has("noise")) cfg.at("noise").check_known_keys({"q_std", "qd_std"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"file", "link_poses", "compare_file"});
  const std::string out_name = OutputDirectory::configured_name(cfg, "output.file", "trajectories.h5");
  // Sized before anything is allocated: every sample of every trajectory is kept.
  const double per_sample = 8.0 * (1 + model.nq + 2 * model.nv + 7 * link_poses.size());
  check_memory(sim, "duration",
               std::to_string(states.size()) + " trajectories of " + std::to_string(steps + 1) + " samples",
               per_sample * static_cast<double>(states.size()) * static_cast<double>(steps + 1));
  // Every controller is built up front so config errors surface before any work.
  const ControllerRegistry registry = [&] { ControllerRegistry r = standard_controllers(); add_mpc_controllers(r, exp.step); return r; }();
  std::vector<std::unique_ptr<Controller<double>>> controllers;
  for (size_t k = 0; k < states.size(); ++k)
    controllers.push_back(registry.make(controls, model, static_cast<int>(k), &recorded));
  for (size_t k = 0; k < states.size(); ++k)
    if (!states[k].q.allFinite() || !states[k].qd.allFinite())
      states_section.fail("", "initial state " + std::to_string(k) + " is not finite");

  const OutputDirectory out(opts.out, "rollout", reuse_of(opts));
  const std::string out_file = out.path(out_name);
  RunSummary summary("rollout", opts, cfg, out);
  log_experiment(exp, summary);
  record_augmentation(exp, request, summary);
  summary.timings()["setup_s"] = seconds_since(t_setup);

  begin_cooperative_interrupts();
  const auto t_sim = Clock::now();
  TrajectorySet set;
  set.meta = trajectory_metadata(model, "rollout " + version_string(), parameters_json(cfg), opts.seed);
  std::vector<Trajectory> trajectories(states.size());
  std::vector<char> complete(states.size(), 0);
  std::atomic<long long> done_steps{0};
  Progress progress("rollout", steps * static_cast<long long>(states.size()));
  std::exception_ptr error;
  std::mutex error_mutex;
  tbb::parallel_for(size_t(0), states.size(), [&](size_t k) {
    try {
      if (interrupt_requested()) return;
      Stepper<double> stepper(model, exp.step);
      std::shared_ptr<ContactSystem<double>> contact;
      if (exp.contact) contact = install_contact(*exp.contact, model, stepper);
      std::shared_ptr<AugmentedDynamics<double>> networks;
      if (!exp.augment.empty()) networks = install_augmentation<double>(exp.augment, model, stepper, contact.get());
      long long local = 0;
      auto stop = [&] {
        if (++local % 1000 == 0) progress.update(done_steps.fetch_add(1000) + 1000);
        return interrupt_requested();
      };
      Trajectory tr = simulate(stepper, states[k].q, states[k].qd, *controllers[k], steps, stop);
      if (tr.size() != steps + 1) return;  // interrupted: only complete trajectories are written
      char name[24];
      std::snprintf(name, sizeof(name), "%03zu", k);
      tr.name = name;
      record_link_poses(model, link_poses, tr);  // before noise: poses are the true state
      if (q_noise > 0 || qd_noise > 0) {
        std::mt19937_64 noise_rng(static_cast<uint64_t>(opts.seed) * 1000003ULL + k);  // per-trajectory stream
        add_observation_noise(tr, model, q_noise, qd_noise, noise_rng);
      }
      trajectories[k] = std::move(tr);
      complete[k] = 1;
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  });
  progress.finish();
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const NumericalError& e) {
      summary.set_status("diverged");
      summary.metrics()["error"] = e.what();
      summary.write();
      throw;
    }
  }
  const double sim_s = seconds_since(t_sim);
  for (size_t k = 0; k < trajectories.size(); ++k)
    if (complete[k]) set.trajectories.push_back(std::move(trajectories[k]));
  const bool interrupted = interrupt_requested();

  long long samples = 0;
  for (const auto& tr : set.trajectories) samples += tr.size();
  if (!set.trajectories.empty()) {
    write_trajectories(out_file, set);
    summary.add_output(out_file);
    spdlog::info("wrote {} trajectories ({} samples) to {}", set.trajectories.size(), samples, out_file);
  }
  summary.metrics()["num_trajectories"] = set.trajectories.size();
  summary.metrics()["num_requested_trajectories"] = states.size();
  summary.metrics()["num_samples"] = samples;
  summary.metrics()["steps_per_second"] =
      sim_s > 0 ? static_cast<double>(samples - static_cast<long long>(set.trajectories.size())) / sim_s : 0.0;
  summary.metrics()["model"] = model.name;
  summary.metrics()["nq"] = model.nq;
  summary.metrics()["nv"] = model.nv;
  summary.metrics()["integrator"] = integrator_name(exp.step.integrator);
  if (exp.contact) summary.metrics()["contact_model"] = contact_model_name(exp.contact->model);
  summary.timings()["simulate_s"] = sim_s;
  if (interrupted) {
    summary.set_status("interrupted");
    summary.write();
    return kExitInterrupted;
  }
  if (!targets.empty()) {
    nlohmann::json report;
    const bool all_hit = check_targets(model, targets, set, report);
    summary.metrics()["targets"] = report;
    summary.metrics()["targets_hit"] = all_hit;
    if (!all_hit) {
      summary.set_status("target_missed");
      summary.write();
      return kExitCheckFailed;
    }
  }
  summary.write();
  return kExitOk;
}

int compare_job(const AppOptions& opts, const Config& cfg, const RolloutRequest& request) {
  const std::string& path = request.compare_path;
  const Experiment exp = load_rollout_experiment(cfg, request);
  const Model<double>& model = exp.model;
  std::vector<std::string> notes;
  const TrajectorySet data = load_trajectory_file(path, &notes);
  for (const std::string& n : notes) spdlog::info("{}", n);
  validate_against_model(data, model, path);
  std::vector<long long> horizons;
  if (cfg.has("compare")) cfg.at("compare").check_known_keys({"horizons", "windows", "torque"});
  for (double h : cfg.get_or<std::vector<double>>("compare.horizons", {10, 100, 1000})) {
    if (!(h >= 1 && h <= 1e12 && h == std::floor(h))) cfg.fail("compare.horizons", "horizons are sample counts >= 1");
    horizons.push_back(static_cast<long long>(h));
  }
  // Windows in seconds (restart from the measured state every T s, predict H s).
  std::optional<EvaluationWindows> windows;
  if (cfg.has("compare.windows")) {
    const Config w = cfg.at("compare.windows");
    windows = read_evaluation_windows(w);
    check_windows_fit(w, *windows, {&data});
  }
  // Inverse-dynamics torque error of the config's model: `torque: true` or
  // `torque: {filter_window: n}` (the moving average before differencing).
  bool torque = false;
  int torque_filter = 1;
  if (cfg.has("compare.torque")) {
    if (cfg.is_map("compare.torque")) {
      const Config t = cfg.at("compare.torque");
      t.check_known_keys({"filter_window"});
      torque = true;
      torque_filter = static_cast<int>(t.get_int_in_range("filter_window", 1, 1, 10001));
      if (torque_filter % 2 == 0) t.fail("filter_window", "must be odd (a centred moving average)");
    } else {
      torque = cfg.get<bool>("compare.torque");
    }
  }
  const std::string out_name = OutputDirectory::configured_name(cfg, "output.compare_file", "compare.h5");
  const OutputDirectory out(opts.out, "rollout", reuse_of(opts));
  const std::string out_file = out.path(out_name);
  RunSummary summary("rollout", opts, cfg, out);
  log_experiment(exp, summary);
  record_augmentation(exp, request, summary);
  for (const std::string& w : plausibility_warnings(data, model, path)) {
    spdlog::warn("{}", w);
    summary.add_warning(w);
  }

  begin_cooperative_interrupts();
  const auto t0 = Clock::now();
  std::vector<Trajectory> predicted(data.trajectories.size());
  tbb::parallel_for(size_t(0), data.trajectories.size(), [&](size_t k) {
    predicted[k] = replay_recording(model, exp.step, exp.contact, data.trajectories[k], exp.augment);
  });
  TrajectorySet predicted_set;
  predicted_set.meta = trajectory_metadata(model, "rollout " + version_string(), parameters_json(cfg), opts.seed);
  nlohmann::json per = nlohmann::json::array();
  double sum_q = 0, sum_qd = 0;
  for (size_t k = 0; k < predicted.size(); ++k) {
    const PredictionError e = prediction_error(model, data.trajectories[k], predicted[k], horizons);
    nlohmann::json j{{"name", e.name}, {"rmse_q", e.rmse_q}, {"rmse_qd", e.rmse_qd}};
    nlohmann::json hz = nlohmann::json::object();
    // Every configured horizon keeps its key; one longer than the trajectory is null.
    for (const auto& [h, r] : e.rmse_q_by_horizon) hz[std::to_string(h)] = std::isfinite(r) ? nlohmann::json(r) : nlohmann::json(nullptr);
    j["rmse_q_by_horizon"] = hz;
    per.push_back(j);
    sum_q += e.rmse_q;
    sum_qd += e.rmse_qd;
    predicted_set.trajectories.push_back(std::move(predicted[k]));
  }
  write_trajectories(out_file, predicted_set);
  summary.add_output(out_file);
  const double n = static_cast<double>(predicted.size());
  summary.metrics()["compare_file"] = path;
  summary.metrics()["per_trajectory"] = per;
  summary.metrics()["mean_rmse_q"] = sum_q / n;
  summary.metrics()["mean_rmse_qd"] = sum_qd / n;
  summary.timings()["replay_s"] = seconds_since(t0);
  if (windows) {
    const auto t_windows = Clock::now();
    const WindowedEvaluation we = evaluate_windows(model, exp.step, exp.contact, data, *windows, exp.augment);
    summary.metrics()["windows"] = windows_json(we);
    summary.timings()["windows_s"] = seconds_since(t_windows);
    spdlog::info("{} windows of {:.4g} s every {:.4g} s ({} skipped): mean RMSE q = {:.6g}, median {:.6g}",
                 we.overall.count, windows->horizon_s, windows->every_s, we.overall.skipped, we.overall.mean_rmse_q,
                 we.overall.median_rmse_q);
  }
  if (torque) {
    std::string note;
    const std::optional<TorqueError> te = torque_error(model, data, torque_filter, &note);
    if (te) {
      summary.metrics()["torque"] = torque_json(*te);
      spdlog::info("inverse-dynamics torque RMSE = {:.6g} over {} samples", te->rmse, te->samples);
    }
    // RNEA sees neither contact forces nor networks: say so next to the number.
    if (te && exp.contact) note += (note.empty() ? "" : "; ") + std::string("contact forces are not in the inverse dynamics");
    if (te && !exp.augment.empty())
      note += (note.empty() ? "" : "; ") + std::string("the torque error is of the physical model, without the augmentations");
    if (!note.empty()) {
      summary.metrics()["torque_note"] = note;
      spdlog::info("{}", note);
    }
  }
  spdlog::info("replayed {} trajectories: mean RMSE q = {:.6g}, qd = {:.6g}", predicted.size(), sum_q / n, sum_qd / n);
  summary.write();
  return kExitOk;
}

}  // namespace

int run_rollout(const AppOptions& opts, const RolloutRequest& request) {
  const Config cfg = Config::load(opts.config, opts.sets);
  cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "initial_states",
                        "controls", "noise", "output", "compare", "contact", "targets", "augment"});
  if (!request.compare_path.empty()) return compare_job(opts, cfg, request);
  return simulate_job(opts, cfg, request);
}

}  // namespace neuralsim
