#include "neuralsim/rollout/rollout_job.hpp"

#include <tbb/parallel_for.h>

#include <chrono>
#include <cmath>
#include <random>
#include <spdlog/spdlog.h>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/errors.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/provenance.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/rollout/experiment.hpp"
#include "neuralsim/rollout/simulate.hpp"

namespace neuralsim {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TrajectoryMetadata metadata_for(const Model<double>& model, const Config& cfg, long long seed) {
  TrajectoryMetadata meta;
  meta.model = model.name;
  meta.joint_names = model.velocity_names();
  meta.q_names = model.position_names();
  meta.generator = "rollout " + version_string();
  nlohmann::json params = nlohmann::json::object();
  params["config"] = cfg.to_json();
  meta.parameters_json = params.dump();
  meta.seed = seed;
  return meta;
}

// Expectations every recorded file must meet before replay.
void validate_against_model(const TrajectorySet& data, const Model<double>& model, const std::string& path) {
  TrajectoryExpectations expect;
  expect.nq = model.nq;
  expect.nv = model.nv;
  expect.joint_names = model.velocity_names();
  validate_trajectories(data, expect, path);
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

// `output.link_poses: [names]`: bodies or frames whose world poses are
// recorded into Trajectory::link_poses (T x 7: x y z qx qy qz qw).
std::vector<std::pair<std::string, int>> read_link_pose_names(const Config& cfg, const Model<double>& model) {
  return resolve_links(model, cfg.get_or<std::vector<std::string>>("output.link_poses", {}),
                       cfg.where("output.link_poses") + ": key 'output.link_poses'");
}

ReplayError replay_with_contact(const Model<double>& model, const StepOptions& options, const Trajectory& rec,
                                const std::vector<long long>& horizons, const std::optional<ContactSettings>& contact);

// `targets: [{link, time, position: [x, y, z], tolerance}]`: positions a
// link must reach (Degrave's ball throw). Checked on every trajectory at the
// sample nearest to `time`.
struct LinkTarget {
  std::string link;
  int index = -1;  // as resolve_links
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
    target.link = t.get<std::string>("link");
    target.index = resolve_links(model, {target.link}, t.where("link") + ": key 'link'").front().second;
    target.time = t.get<double>("time");
    if (!(target.time >= 0 && target.time <= duration + 1e-12))
      throw ConfigError(t.where("time") + ": key 'time' must lie in [0, sim.duration]");
    const std::vector<double> p = t.get<std::vector<double>>("position");
    if (p.size() != 3) throw ConfigError(t.where("position") + ": key 'position' must be [x, y, z]");
    target.position = Eigen::Vector3d(p[0], p[1], p[2]);
    target.tolerance = t.get<double>("tolerance");
    if (!(target.tolerance > 0)) throw ConfigError(t.where("tolerance") + ": key 'tolerance' must be > 0");
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
      record_link_poses(model, {{t.link, t.index}}, one);
      const Eigen::Vector3d p = one.link_poses[t.link].row(0).head<3>().transpose();
      const double distance = (p - t.position).norm();
      const bool hit = distance <= t.tolerance;
      all_hit = all_hit && hit;
      report.push_back({{"trajectory", tr.name}, {"link", t.link}, {"time", tr.time[k]},
                        {"target", {t.position.x(), t.position.y(), t.position.z()}},
                        {"reached", {p.x(), p.y(), p.z()}}, {"distance", distance},
                        {"tolerance", t.tolerance}, {"hit", hit}});
      if (hit)
        spdlog::info("target hit: trajectory {} link {} at t = {:.4g} s is {:.4g} m from the target (tolerance {:.4g})",
                     tr.name, t.link, tr.time[k], distance, t.tolerance);
      else
        spdlog::error("target missed: trajectory {} link {} at t = {:.4g} s is {:.4g} m from the target (tolerance {:.4g})",
                      tr.name, t.link, tr.time[k], distance, t.tolerance);
    }
  }
  return all_hit;
}

int simulate_job(const AppOptions& opts, const Config& cfg, RunSummary& summary) {
  const auto t_setup = Clock::now();
  const Model<double> model = load_experiment_model(cfg);
  const StepOptions step_options = read_step_options(cfg.at("sim"));
  const double duration = cfg.get<double>("sim.duration");
  if (!(duration > 0)) throw ConfigError(cfg.where("sim.duration") + ": key 'sim.duration' must be > 0");
  const long long steps = std::llround(duration / step_options.dt);

  std::mt19937_64 rng(static_cast<uint64_t>(opts.seed));
  std::vector<InitialState> states =
      read_initial_states(cfg.has("initial_states") ? cfg.at("initial_states") : Config::parse("{}", cfg.file()),
                          model, rng);
  apply_initial_state_parameters(cfg, model, states);
  const std::vector<LinkTarget> targets = read_targets(cfg, model, duration);
  TrajectorySet recorded;
  const Config controls = cfg.has("controls") ? cfg.at("controls") : Config::parse("type: zero", cfg.file());
  if (controls.has("file")) {
    recorded = read_trajectories(controls.path("file"));
    TrajectoryExpectations expect;
    expect.nv = model.nv;
    expect.require_tau = true;
    validate_trajectories(recorded, expect, controls.path("file"));
  }
  // Build every controller up front so config errors surface before any work.
  std::vector<std::unique_ptr<Controller<double>>> controllers;
  for (size_t k = 0; k < states.size(); ++k)
    controllers.push_back(make_controller(controls, model, static_cast<int>(k), &recorded));
  const std::optional<ContactSettings> contact = load_experiment_contact(cfg, model);
  const auto link_poses = read_link_pose_names(cfg, model);
  const double q_noise = cfg.get_or<double>("noise.q_std", 0.0);
  const double qd_noise = cfg.get_or<double>("noise.qd_std", 0.0);
  const std::string out_file = opts.out + "/" + cfg.get_or("output.file", "trajectories.h5");
  summary.timings()["setup_s"] = seconds_since(t_setup);

  const auto t_sim = Clock::now();
  TrajectorySet set;
  set.meta = metadata_for(model, cfg, opts.seed);
  set.trajectories.resize(states.size());
  std::atomic<long long> done_steps{0};
  Progress progress("rollout", steps * static_cast<long long>(states.size()));
  std::exception_ptr error;
  std::mutex error_mutex;
  tbb::parallel_for(size_t(0), states.size(), [&](size_t k) {
    try {
      Stepper<double> stepper(model, step_options);
      if (contact) install_contact(*contact, model, stepper);
      long long local = 0;
      auto stop = [&] {
        if (++local % 1000 == 0) progress.update(done_steps.fetch_add(1000) + 1000);
        return interrupt_requested();
      };
      Trajectory tr = simulate(stepper, states[k].q, states[k].qd, *controllers[k], steps, stop);
      char name[16];
      std::snprintf(name, sizeof(name), "%03zu", k);
      tr.name = name;
      record_link_poses(model, link_poses, tr);  // before noise: poses are the true state
      if (q_noise > 0 || qd_noise > 0) {
        std::mt19937_64 noise_rng(static_cast<uint64_t>(opts.seed) * 1000003ULL + k);  // per-trajectory stream
        add_observation_noise(tr, model, q_noise, qd_noise, noise_rng);
      }
      set.trajectories[k] = std::move(tr);
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
      summary.write(opts.out);
      throw;
    }
  }
  const double sim_s = seconds_since(t_sim);
  const bool interrupted = interrupt_requested();

  write_trajectories(out_file, set);
  summary.add_output(out_file);
  long long samples = 0;
  for (const auto& tr : set.trajectories) samples += tr.size();
  summary.metrics()["num_trajectories"] = set.trajectories.size();
  summary.metrics()["num_samples"] = samples;
  summary.metrics()["steps_per_second"] = sim_s > 0 ? (samples - set.trajectories.size()) / sim_s : 0.0;
  summary.metrics()["model"] = model.name;
  summary.metrics()["nq"] = model.nq;
  summary.metrics()["nv"] = model.nv;
  summary.metrics()["integrator"] = integrator_name(step_options.integrator);
  if (contact) summary.metrics()["contact_model"] = contact_model_name(contact->model);
  summary.timings()["simulate_s"] = sim_s;
  spdlog::info("wrote {} trajectories ({} samples) to {}", set.trajectories.size(), samples, out_file);
  if (interrupted) {
    summary.set_status("interrupted");
    summary.write(opts.out);
    return kExitInterrupted;
  }
  if (!targets.empty()) {
    nlohmann::json report;
    const bool all_hit = check_targets(model, targets, set, report);
    summary.metrics()["targets"] = report;
    summary.metrics()["targets_hit"] = all_hit;
    if (!all_hit) {
      summary.set_status("target_missed");
      summary.write(opts.out);
      return kExitCheckFailed;
    }
  }
  summary.write(opts.out);
  return kExitOk;
}

int compare_job(const AppOptions& opts, const Config& cfg, const std::string& path, RunSummary& summary) {
  const Model<double> model = load_experiment_model(cfg);
  const StepOptions step_options = read_step_options(cfg.at("sim"));
  const std::optional<ContactSettings> contact = load_experiment_contact(cfg, model);
  const TrajectorySet data = read_trajectories(path);
  validate_against_model(data, model, path);
  std::vector<long long> horizons;
  for (double h : cfg.get_or<std::vector<double>>("compare.horizons", {10, 100, 1000}))
    horizons.push_back(static_cast<long long>(h));

  const auto t0 = Clock::now();
  std::vector<ReplayError> errors(data.trajectories.size());
  tbb::parallel_for(size_t(0), data.trajectories.size(), [&](size_t k) {
    errors[k] = replay_with_contact(model, step_options, data.trajectories[k], horizons, contact);
  });
  TrajectorySet predicted;
  predicted.meta = metadata_for(model, cfg, opts.seed);
  nlohmann::json per = nlohmann::json::array();
  double sum_q = 0, sum_qd = 0;
  for (auto& e : errors) {
    nlohmann::json j{{"name", e.name}, {"rmse_q", e.rmse_q}, {"rmse_qd", e.rmse_qd}};
    nlohmann::json hz = nlohmann::json::object();
    for (const auto& [h, r] : e.rmse_q_by_horizon) hz[std::to_string(h)] = r;
    j["rmse_q_by_horizon"] = hz;
    per.push_back(j);
    sum_q += e.rmse_q;
    sum_qd += e.rmse_qd;
    predicted.trajectories.push_back(std::move(e.predicted));
  }
  const std::string out_file = opts.out + "/" + cfg.get_or("output.compare_file", "compare.h5");
  write_trajectories(out_file, predicted);
  summary.add_output(out_file);
  summary.metrics()["compare_file"] = path;
  summary.metrics()["per_trajectory"] = per;
  summary.metrics()["mean_rmse_q"] = sum_q / errors.size();
  summary.metrics()["mean_rmse_qd"] = sum_qd / errors.size();
  summary.timings()["replay_s"] = seconds_since(t0);
  spdlog::info("replayed {} trajectories: mean RMSE q = {:.6g}, qd = {:.6g}", errors.size(),
               sum_q / errors.size(), sum_qd / errors.size());
  summary.write(opts.out);
  return kExitOk;
}

ReplayError replay_with_contact(const Model<double>& model, const StepOptions& options, const Trajectory& rec,
                                const std::vector<long long>& horizons, const std::optional<ContactSettings>& contact) {
  ReplayError out;
  out.name = rec.name;
  Stepper<double> stepper(model, options);
  if (contact) install_contact(*contact, model, stepper);
  const Eigen::Index T = rec.size();
  Trajectory& pred = out.predicted;
  pred.name = rec.name;
  pred.time = rec.time;
  pred.q.resize(T, model.nq);
  pred.qd.resize(T, model.nv);
  Eigen::VectorXd q = rec.q.row(0).transpose(), qd = rec.qd.row(0).transpose();
  Eigen::VectorXd u = Eigen::VectorXd::Zero(model.nv), dq(model.nv);
  normalize_configuration(model, q);
  std::vector<double> sq_q(T, 0.0);
  double sum_q = 0, sum_qd = 0;
  for (Eigen::Index k = 0; k < T; ++k) {
    pred.q.row(k) = q.transpose();
    pred.qd.row(k) = qd.transpose();
    const Eigen::VectorXd qk = rec.q.row(k).transpose();
    difference_configuration(model, qk, q, dq);
    sq_q[k] = dq.squaredNorm();
    sum_q += sq_q[k];
    sum_qd += (qd - rec.qd.row(k).transpose()).squaredNorm();
    if (k + 1 == T) break;
    if (rec.has_tau()) u = rec.tau.row(k).transpose();
    stepper.step(q, qd, u, rec.time[k], rec.time[k + 1] - rec.time[k]);
  }
  out.rmse_q = std::sqrt(sum_q / (T * model.nv));
  out.rmse_qd = std::sqrt(sum_qd / (T * model.nv));
  for (long long h : horizons) {
    const long long n = std::min<long long>(h, T);
    double s = 0;
    for (long long k = 0; k < n; ++k) s += sq_q[k];
    out.rmse_q_by_horizon.emplace_back(n, std::sqrt(s / (n * model.nv)));
  }
  return out;
}

}  // namespace

ReplayError replay_trajectory(const Model<double>& model, const StepOptions& options, const Trajectory& rec,
                              const std::vector<long long>& horizons) {
  return replay_with_contact(model, options, rec, horizons, std::nullopt);
}

int run_rollout(const AppOptions& opts, const RolloutRequest& request) {
  const Config cfg = Config::load(opts.config, opts.sets);
  cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "initial_states",
                        "controls", "noise", "output", "compare", "contact", "targets"});
  ensure_directory(opts.out);
  RunSummary summary("rollout", opts, cfg);
  if (!request.compare_path.empty()) return compare_job(opts, cfg, request.compare_path, summary);
  return simulate_job(opts, cfg, summary);
}

}  // namespace neuralsim
