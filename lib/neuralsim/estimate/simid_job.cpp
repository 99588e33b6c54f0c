#include "neuralsim/estimate/simid_job.hpp"
#include "neuralsim/io/python.hpp"

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <spdlog/spdlog.h>

#include "neuralsim/estimate/basin_hopping.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/csv_import.hpp"
#include "neuralsim/io/errors.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/provenance.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/rollout/experiment.hpp"

namespace neuralsim {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A data file: HDF5 trajectories, or a CSV-import description (.yaml).
TrajectorySet load_data_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".yaml" || ext == ".yml") return import_csv(path);
  return read_trajectories(path);
}

struct DataSplit {
  TrajectorySet train, validation;
  std::string train_source, validation_source;
};

// `key` holds one path or a list of paths, resolved like every config path
// (relative to the config file, or to the working directory when given by --set).
TrajectorySet load_list(const Config& data, const std::string& key, std::string& source) {
  std::vector<std::string> paths;
  bool is_list = true;
  try {
    paths = data.get<std::vector<std::string>>(key);
  } catch (const ConfigError&) {
    is_list = false;
  }
  if (is_list) {
    for (size_t i = 0; i < paths.size(); ++i) paths[i] = data.path(key + "." + std::to_string(i));
  } else {
    paths = {data.path(key)};
  }
  TrajectorySet all;
  for (const std::string& path : paths) {
    TrajectorySet set = load_data_file(path);
    if (all.trajectories.empty()) all.meta = set.meta;
    for (auto& t : set.trajectories) {
      if (paths.size() > 1) t.name = std::filesystem::path(path).stem().string() + "_" + t.name;
      all.trajectories.push_back(std::move(t));
    }
    source += (source.empty() ? "" : ", ") + path;
  }
  return all;
}

// `data.targets: [{name, q0, qd0, time, link, position}]`: instead of
// recordings, positions a link must reach at a time from a start state
// (Degrave's ball throw; the estimated initial.qd.* coordinates replace
// qd0). Each becomes a two-sample trajectory whose second sample holds the
// target as the link's observed position; q there is a placeholder that is
// never compared (the observation must be link positions only).
TrajectorySet targets_as_trajectories(const Config& data, const Model<double>& model) {
  TrajectorySet set;
  set.meta.model = model.name;
  set.meta.joint_names = model.velocity_names();
  set.meta.q_names = model.position_names();
  set.meta.generator = "simid data.targets";
  int index = 0;
  for (const Config& t : data.list("targets")) {
    t.check_known_keys({"name", "q0", "qd0", "time", "link", "position"});
    Trajectory tr;
    tr.name = t.get_or<std::string>("name", fmt::format("target{:02d}", index++));
    const Eigen::VectorXd q0 = t.get<Eigen::VectorXd>("q0");
    const Eigen::VectorXd qd0 = t.has("qd0") ? t.get<Eigen::VectorXd>("qd0") : Eigen::VectorXd::Zero(model.nv);
    if (q0.size() != model.nq) throw ConfigError(t.where("q0") + ": key 'q0' needs nq = " + std::to_string(model.nq) + " values");
    if (qd0.size() != model.nv) throw ConfigError(t.where("qd0") + ": key 'qd0' needs nv = " + std::to_string(model.nv) + " values");
    const double time = t.get<double>("time");
    if (!(time > 0)) throw ConfigError(t.where("time") + ": key 'time' must be > 0");
    const std::string link = t.get<std::string>("link");
    const auto links = resolve_links(model, {link}, t.where("link") + ": key 'link'");
    const std::vector<double> p = t.get<std::vector<double>>("position");
    if (p.size() != 3) throw ConfigError(t.where("position") + ": key 'position' must be [x, y, z]");
    tr.time = Eigen::Vector2d(0.0, time);
    tr.q.resize(2, model.nq);
    tr.q.row(0) = q0.transpose();
    tr.q.row(1) = q0.transpose();
    tr.qd.resize(2, model.nv);
    tr.qd.row(0) = qd0.transpose();
    tr.qd.row(1) = qd0.transpose();
    record_link_poses(model, links, tr);
    tr.link_poses[link].row(1) << p[0], p[1], p[2], 0, 0, 0, 1;
    set.trajectories.push_back(std::move(tr));
  }
  if (set.trajectories.empty()) throw ConfigError(data.where("targets") + ": key 'data.targets' is empty");
  return set;
}

DataSplit load_data(const Config& data, const Model<double>& model) {
  data.check_known_keys({"train", "validation", "validation_fraction", "max_samples", "targets"});
  DataSplit split;
  if (data.has("targets")) {
    if (data.has("train")) throw ConfigError(data.where("targets") + ": give either data.train or data.targets, not both");
    split.train = targets_as_trajectories(data, model);
    split.train_source = data.where("targets");
    return split;
  }
  split.train = load_list(data, "train", split.train_source);
  if (data.has("validation")) {
    split.validation = load_list(data, "validation", split.validation_source);
  } else if (data.has("validation_fraction")) {
    const double f = data.get<double>("validation_fraction");
    if (!(f >= 0 && f < 1)) throw ConfigError(data.where("validation_fraction") + ": must be in [0, 1)");
    const size_t n = split.train.trajectories.size();
    const size_t nv = static_cast<size_t>(std::floor(f * n));
    split.validation.meta = split.train.meta;
    for (size_t k = n - nv; k < n; ++k) split.validation.trajectories.push_back(split.train.trajectories[k]);
    split.train.trajectories.resize(n - nv);
    split.validation_source = split.train_source + " (last " + std::to_string(nv) + " trajectories)";
  }
  // Optionally cut long recordings (real data at 1 kHz) to keep fits quick.
  const long long max_samples = data.get_or<long long>("max_samples", 0);
  for (TrajectorySet* set : {&split.train, &split.validation})
    for (Trajectory& t : set->trajectories)
      if (max_samples > 0 && t.size() > max_samples) {
        t.time.conservativeResize(max_samples);
        t.q.conservativeResize(max_samples, Eigen::NoChange);
        t.qd.conservativeResize(max_samples, Eigen::NoChange);
        if (t.has_tau()) t.tau.conservativeResize(max_samples, Eigen::NoChange);
        for (auto& [name, pose] : t.link_poses) pose.conservativeResize(max_samples, Eigen::NoChange);
      }
  TrajectoryExpectations expect;
  expect.nq = model.nq;
  expect.nv = model.nv;
  expect.joint_names = model.velocity_names();
  if (split.train.trajectories.empty()) throw DataError(split.train_source + ": no training trajectories");
  validate_trajectories(split.train, expect, split.train_source);
  if (!split.validation.trajectories.empty()) validate_trajectories(split.validation, expect, split.validation_source);
  return split;
}

ProblemOptions read_problem_options(const Config& r) {
  r.check_known_keys({"type", "window", "stride", "continuity_weight", "filter_window", "sample_stride", "loss",
                      "loss_scale"});
  ProblemOptions o;
  o.formulation = formulation_from_name(r.get_or("type", "single_shooting"));
  o.window = r.get_or<int>("window", 50);
  if (o.window < 1) throw ConfigError(r.where("window") + ": residual.window must be >= 1");
  o.stride = r.get_or<int>("stride", 0);
  o.continuity_weight = r.get_or<double>("continuity_weight", 10.0);
  o.filter_window = r.get_or<int>("filter_window", 5);
  o.sample_stride = r.get_or<int>("sample_stride", 1);
  o.loss = loss_from_name(r.get_or("loss", "none"));
  o.loss_scale = r.get_or<double>("loss_scale", 1.0);
  return o;
}

SolverOptions read_solver_options(const Config& s) {
  s.check_known_keys({"type", "max_iterations", "function_tolerance", "gradient_tolerance", "parameter_tolerance"});
  SolverOptions o;
  o.solver = local_solver_from_name(s.get_or("type", "levenberg_marquardt"));
  o.max_iterations = s.get_or<int>("max_iterations", 100);
  o.function_tolerance = s.get_or<double>("function_tolerance", 1e-10);
  o.gradient_tolerance = s.get_or<double>("gradient_tolerance", 1e-12);
  o.parameter_tolerance = s.get_or<double>("parameter_tolerance", 1e-10);
  return o;
}

BasinHoppingOptions read_basin_hopping(const Config& b, long long seed) {
  b.check_known_keys({"enabled", "population", "rounds", "cost_threshold", "time_budget", "spread", "decay",
                      "random_initial"});
  BasinHoppingOptions o;
  o.enabled = b.get_or<bool>("enabled", true);
  o.population = b.get_or<int>("population", 4);
  o.max_rounds = b.get_or<int>("rounds", 10);
  o.cost_threshold = b.get_or<double>("cost_threshold", -1.0);
  o.time_budget_s = b.get_or<double>("time_budget", std::numeric_limits<double>::infinity());
  o.initial_spread = b.get_or<double>("spread", 0.5);
  o.decay = b.get_or<double>("decay", 0.7);
  o.random_initial = b.get_or<bool>("random_initial", false);
  o.seed = static_cast<uint64_t>(seed);
  if (o.population < 1 || o.max_rounds < 1) throw ConfigError(b.where("") + ": population and rounds must be >= 1");
  return o;
}

json local_result_json(const LocalResult& r) {
  return {{"x", r.x}, {"cost", r.cost}, {"initial_cost", r.initial_cost}, {"iterations", r.iterations},
          {"usable", r.usable}, {"report", r.report}, {"seconds", r.seconds}};
}

LocalResult local_result_from_json(const json& j) {
  LocalResult r;
  r.x = j.at("x").get<std::vector<double>>();
  r.cost = j.at("cost").get<double>();
  r.initial_cost = j.value("initial_cost", r.cost);
  r.iterations = j.value("iterations", 0);
  r.usable = j.value("usable", true);
  r.report = j.value("report", "");
  return r;
}

json history_json(const std::vector<RoundRecord>& history) {
  json h = json::array();
  for (const auto& r : history)
    h.push_back({{"round", r.round}, {"best_cost", r.best_cost}, {"round_best_cost", r.round_best_cost},
                 {"spread", r.spread}, {"usable_solves", r.usable_solves}, {"seconds", r.seconds}});
  return h;
}

void write_checkpoint(const std::string& path, const BasinHoppingState& s, const std::vector<std::string>& names,
                      long long seed) {
  json j{{"format", "neuralsim-simid-checkpoint"}, {"version", 1}, {"next_round", s.next_round},
         {"has_best", s.has_best}, {"parameter_names", names}, {"seed", seed}, {"history", history_json(s.history)}};
  if (s.has_best) j["best"] = local_result_json(s.best);
  write_text_atomic(path, j.dump(2));
}

BasinHoppingState read_checkpoint(const std::string& path, const std::vector<std::string>& names, long long seed) {
  std::ifstream in(path);
  if (!in) throw DataError(path + ": no checkpoint to resume from (run without --resume first)");
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw DataError(path + ": corrupt checkpoint: " + e.what());
  }
  if (j.value("parameter_names", std::vector<std::string>{}) != names)
    throw ConfigError(path + ": checkpoint was written for different parameters; remove it or use another --out");
  if (j.value("seed", seed) != seed)
    throw ConfigError(path + ": checkpoint was written with seed " + std::to_string(j.value("seed", 0LL)) +
                      ", not " + std::to_string(seed));
  BasinHoppingState s;
  s.next_round = j.at("next_round").get<int>();
  s.has_best = j.value("has_best", false);
  if (s.has_best) s.best = local_result_from_json(j.at("best"));
  for (const auto& r : j.at("history")) {
    RoundRecord rec;
    rec.round = r.at("round");
    rec.best_cost = r.at("best_cost");
    rec.round_best_cost = r.value("round_best_cost", rec.best_cost);
    rec.spread = r.value("spread", 0.0);
    rec.usable_solves = r.value("usable_solves", 0);
    rec.seconds = r.value("seconds", 0.0);
    s.history.push_back(rec);
  }
  return s;
}

double rmse_q(const Model<double>& model, const Trajectory& data, const Trajectory& pred) {
  Eigen::VectorXd dq(model.nv);
  double s = 0;
  for (Eigen::Index k = 0; k < data.size(); ++k) {
    difference_configuration(model, Eigen::VectorXd(data.q.row(k).transpose()), Eigen::VectorXd(pred.q.row(k).transpose()), dq);
    s += dq.squaredNorm();
  }
  return std::sqrt(s / (data.size() * model.nv));
}

// RMSE of the observed link positions over every sample but the first (the
// prediction starts from the data there), in metres.
double rmse_link_positions(const ObservationSpec& observe, const Trajectory& data, const Trajectory& pred) {
  double s = 0;
  long long n = 0;
  for (const auto& ch : observe.link_positions)
    for (Eigen::Index k = 1; k < data.size(); ++k) {
      s += (data.link_poses.at(ch.link).row(k).head<3>() - pred.link_poses.at(ch.link).row(k).head<3>()).squaredNorm();
      n += 3;
    }
  return n > 0 ? std::sqrt(s / n) : 0.0;
}

struct Evaluation {
  double mean_rmse_q = 0;
  double mean_rmse_link_position = 0;
  json per_trajectory = json::array();
  TrajectorySet predictions;
};

// `targets`: the data are reach targets (data.targets), whose q is a
// placeholder: only the distance to the target is meaningful.
Evaluation evaluate_fit(const ResidualContext& ctx, const std::vector<double>& x, const TrajectorySet& data,
                        int window, bool targets) {
  Evaluation e;
  e.predictions.meta = data.meta;
  const bool links = !ctx.observe.link_positions.empty();
  for (const Trajectory& tr : data.trajectories) {
    Trajectory pred;
    double r = std::numeric_limits<double>::infinity(), rl = r;
    try {
      pred = windowed_prediction(ctx, x, tr, window);
      if (!targets) r = rmse_q(*ctx.model, tr, pred);
      if (links) rl = rmse_link_positions(ctx.observe, tr, pred);
    } catch (const NumericalError& err) {
      spdlog::warn("prediction of '{}' diverged: {}", tr.name, err.what());
    }
    json j{{"name", tr.name}};
    if (!targets) j["rmse_q"] = r;
    if (links) j[targets ? "target_distance" : "rmse_link_position"] = targets ? rl * std::sqrt(3.0) : rl;
    e.per_trajectory.push_back(j);
    e.mean_rmse_q += r / data.trajectories.size();
    e.mean_rmse_link_position += rl / data.trajectories.size();
    if (pred.size() > 0) e.predictions.trajectories.push_back(std::move(pred));
  }
  return e;
}

void try_plot(const std::string& out_dir, const std::string& measured_file, const std::string& fitted_file) {
  // Plotting is delegated to matplotlib (scripts/plot_fit.py); skip quietly
  // without it so headless CI machines still pass.
  const std::string python = python_interpreter();
  const std::string script = std::string(NEURALSIM_SOURCE_DIR) + "/scripts/plot_fit.py";
  if (!std::filesystem::exists(script) || !std::filesystem::exists(python)) return;
  const std::string cmd = "'" + python + "' '" + script + "' '" + measured_file + "' '" + fitted_file + "' '" +
                          out_dir + "/fit.png' > /dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) spdlog::info("no plot written (python3-matplotlib not installed?)");
}

}  // namespace

int run_simid(const AppOptions& opts, const SimidRequest& request) {
  const auto t_start = Clock::now();
  const Config cfg = Config::load(opts.config, opts.sets);
  cfg.check_known_keys(
      {"name", "description", "model", "params", "params_file", "sim", "data", "estimate", "output", "contact"});
  const Model<double> model = load_experiment_model(cfg);
  const std::optional<ContactSettings> contact = load_experiment_contact(cfg, model);
  const StepOptions step = read_step_options(cfg.at("sim"));
  const Config est = cfg.at("estimate");
  est.check_known_keys({"parameters", "observe", "residual", "solver", "basin_hopping", "ground_truth",
                        "evaluation_window"});
  const ParameterSet params =
      ParameterSet::from_config(est, "parameters", model, contact ? &contact->parameters : nullptr);
  const ObservationSpec observe = est.has("observe") ? ObservationSpec::from_config(est.at("observe"), model)
                                                     : ObservationSpec::from_config(Config::parse("{}", cfg.file()), model);
  const ProblemOptions problem_options =
      est.has("residual") ? read_problem_options(est.at("residual")) : read_problem_options(Config::parse("{}", cfg.file()));
  // Predictions restart from the measured state every `evaluation_window`
  // samples (default: the shooting window; 50 for inverse dynamics), so fits
  // of different formulations are compared under one metric.
  const int window = est.get_or<int>(
      "evaluation_window", problem_options.formulation == Formulation::kInverseDynamics ? 50 : problem_options.window);
  if (window < 1) throw ConfigError(est.where("evaluation_window") + ": estimate.evaluation_window must be >= 1");
  SolverOptions solver =
      est.has("solver") ? read_solver_options(est.at("solver")) : read_solver_options(Config::parse("{}", cfg.file()));
  if (solver.solver == LocalSolver::kLbfgs && problem_options.formulation == Formulation::kMultipleShooting)
    throw ConfigError(est.where("solver") + ": lbfgs cannot optimize multiple-shooting states; use levenberg_marquardt");
  if (problem_options.formulation == Formulation::kInverseDynamics && contact)
    throw ConfigError(est.where("residual") + ": inverse_dynamics does not model contact forces; use single_shooting "
                                              "or multiple_shooting with a 'contact:' section");
  if (problem_options.formulation != Formulation::kSingleShooting && params.has(ParameterKind::kInitialVelocity))
    throw ConfigError(est.where("parameters") + ": initial.qd.* parameters need residual type single_shooting "
                                                "(multiple shooting already frees every segment's state)");
  const BasinHoppingOptions bh = est.has("basin_hopping") ? read_basin_hopping(est.at("basin_hopping"), opts.seed)
                                                          : read_basin_hopping(Config::parse("{}", cfg.file()), opts.seed);

  const DataSplit data = load_data(cfg.at("data"), model);
  const bool targets = cfg.at("data").has("targets");
  // A target is reached from the start state: predictions never restart.
  const int eval_window = targets ? std::numeric_limits<int>::max() : window;
  if (targets && (observe.q_weight > 0 || observe.qd_weight > 0 || observe.link_positions.empty()))
    throw ConfigError(est.where("observe") + ": with data.targets observe only link positions: "
                                             "{q: 0, link_positions: [{link: ...}]}");
  observe.check_available(data.train, data.train_source);
  if (problem_options.formulation == Formulation::kInverseDynamics)
    for (const Trajectory& t : data.train.trajectories)
      if (!t.has_tau())
        throw DataError(data.train_source + ":/trajectories/" + t.name +
                        "/tau: inverse-dynamics identification needs measured joint forces (expected shape (T, nv=" +
                        std::to_string(model.nv) + "))");

  ensure_directory(opts.out);
  RunSummary summary("simid", opts, cfg);
  const std::string checkpoint = opts.out + "/checkpoint.json";
  std::vector<const Trajectory*> train;
  for (const Trajectory& t : data.train.trajectories) train.push_back(&t);
  ResidualContext ctx{&model, &params, step, observe, contact ? &*contact : nullptr};
  ProblemFactory factory = [&] { return std::make_unique<EstimationProblem>(ctx, train, problem_options); };

  const double time_budget = bh.time_budget_s;
  const auto t_fit = Clock::now();
  auto should_abort = [&] { return interrupt_requested() || seconds_since(t_fit) > time_budget; };
  BasinHoppingState state;
  if (request.resume) {
    state = read_checkpoint(checkpoint, params.names(), opts.seed);
    spdlog::info("resuming from {} at round {}", checkpoint, state.next_round);
  }
  const int total_rounds = bh.enabled ? bh.max_rounds : 1;
  auto on_round = [&](const BasinHoppingState& s) {
    write_checkpoint(checkpoint, s, params.names(), opts.seed);
    const RoundRecord& r = s.history.back();
    const double elapsed = seconds_since(t_fit);
    const int done = s.next_round;
    const double eta = done > 0 ? elapsed / std::max(1, static_cast<int>(s.history.size())) * (total_rounds - done) : 0;
    spdlog::info("round {}/{}: best cost {:.6g} (this round {:.6g}, {} usable solves) elapsed {:.1f}s ETA {:.1f}s",
                 r.round + 1, total_rounds, r.best_cost, r.round_best_cost, r.usable_solves, elapsed, eta);
  };
  BasinHoppingResult result = basin_hopping(factory, params, bh, solver, state, on_round, should_abort);
  const double fit_s = seconds_since(t_fit);
  if (!result.state.has_best) {
    summary.set_status(interrupt_requested() ? "interrupted" : "error");
    summary.metrics()["error"] = "no local solve produced a usable solution";
    summary.write(opts.out);
    if (interrupt_requested()) return kExitInterrupted;
    throw NumericalError("simid: no local solve produced a usable solution (every start diverged or failed); "
                         "check bounds, initial values and the time step");
  }
  const LocalResult& best = result.state.best;

  // Fitted model, uncertainty and identifiability.
  std::unique_ptr<EstimationProblem> problem = factory();
  Eigen::VectorXd residuals;
  const Eigen::MatrixXd J = problem->parameter_jacobian(best.x, &residuals);
  const Identifiability id = analyze_identifiability(params, best.x, J, residuals);
  const std::vector<double> per_traj_cost = problem->cost_per_trajectory(best.x);

  json pj;
  pj["format"] = "neuralsim-parameters";
  pj["model"] = model.name;
  json values = json::object();
  for (int i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    values[p.name] = {{"value", id.value[i]}, {"std_error", std::isnan(id.std_error[i]) ? json(nullptr) : json(id.std_error[i])},
                      {"initial", p.initial}, {"lower", std::isfinite(p.lower) ? json(p.lower) : json(nullptr)},
                      {"upper", std::isfinite(p.upper) ? json(p.upper) : json(nullptr)}};
  }
  pj["parameters"] = values;
  pj["names"] = params.names();
  std::vector<std::vector<double>> corr(params.size(), std::vector<double>(params.size()));
  for (int i = 0; i < params.size(); ++i)
    for (int j = 0; j < params.size(); ++j) corr[i][j] = id.correlation(i, j);
  pj["correlation"] = corr;
  pj["identifiability"] = to_json(id, params);
  pj["cost"] = best.cost;
  pj["seed"] = opts.seed;
  pj["provenance"] = provenance(opts.argv, opts.threads);
  const std::string params_file = opts.out + "/params.json";
  write_text_atomic(params_file, pj.dump(2));
  summary.add_output(params_file);

  std::ostringstream report;
  report << "Identifiability report for " << model.name << " (" << params.size() << " parameters)\n";
  for (int i = 0; i < params.size(); ++i)
    report << "  " << params[i].name << " = " << id.value[i] << " ± " << id.std_error[i] << "\n";
  report << "Singular values of the scaled Jacobian:";
  for (double s : id.singular_values) report << " " << s;
  report << "\n";
  if (id.weak_directions.empty()) report << "All parameters are identifiable from this data.\n";
  for (const auto& d : id.weak_directions)
    report << "Near-singular direction (σ/σmax = " << d.relative_singular_value << "): " << d.description << "\n";
  const std::string report_file = opts.out + "/identifiability.txt";
  write_text_atomic(report_file, report.str());
  summary.add_output(report_file);
  for (const auto& d : id.weak_directions) spdlog::warn("identifiability: {}", d.description);

  // Predictions and errors on train and validation data.

  const Evaluation train_eval = evaluate_fit(ctx, best.x, data.train, eval_window, targets);
  if (!targets) summary.metrics()["train_rmse_q"] = train_eval.mean_rmse_q;
  if (targets) summary.metrics()["mean_target_distance"] = train_eval.mean_rmse_link_position * std::sqrt(3.0);
  else if (!observe.link_positions.empty())
    summary.metrics()["train_rmse_link_position"] = train_eval.mean_rmse_link_position;
  summary.metrics()["train_per_trajectory"] = train_eval.per_trajectory;
  for (size_t t = 0; t < per_traj_cost.size(); ++t)
    summary.metrics()["train_per_trajectory"][t]["cost"] = per_traj_cost[t];
  TrajectorySet fitted_set = train_eval.predictions;
  if (!data.validation.trajectories.empty()) {
    const Evaluation val = evaluate_fit(ctx, best.x, data.validation, eval_window, false);
    summary.metrics()["validation_rmse_q"] = val.mean_rmse_q;
    if (!observe.link_positions.empty())
      summary.metrics()["validation_rmse_link_position"] = val.mean_rmse_link_position;
    summary.metrics()["validation_per_trajectory"] = val.per_trajectory;
    for (auto t : val.predictions.trajectories) {
      t.name = "validation_" + t.name;
      fitted_set.trajectories.push_back(std::move(t));
    }
  }
  summary.metrics()["prediction_window"] = window;
  summary.metrics()["cost"] = best.cost;
  summary.metrics()["parameters"] = json::object();
  for (int i = 0; i < params.size(); ++i) summary.metrics()["parameters"][params[i].name] = id.value[i];
  summary.metrics()["identifiable"] = id.weak_directions.empty();
  summary.metrics()["basin_hopping"] = {{"history", history_json(result.state.history)},
                                        {"stop_reason", result.stop_reason},
                                        {"rounds", result.state.next_round},
                                        {"population", bh.enabled ? bh.population : 1}};
  summary.metrics()["best_local_solve"] = local_result_json(best);
  if (est.has("ground_truth")) {
    const json truth = est.at("ground_truth").to_json();
    double max_rel = 0;
    json errs = json::object();
    for (int i = 0; i < params.size(); ++i) {
      if (!truth.contains(params[i].name)) continue;
      const double t = truth[params[i].name].get<double>();
      const double rel = std::abs(id.value[i] - t) / std::max(std::abs(t), 1e-12);
      errs[params[i].name] = rel;
      max_rel = std::max(max_rel, rel);
    }
    summary.metrics()["relative_error"] = errs;
    summary.metrics()["max_relative_error"] = max_rel;
  }
  fitted_set.meta.model = model.name;
  fitted_set.meta.joint_names = model.velocity_names();
  fitted_set.meta.q_names = model.position_names();
  fitted_set.meta.generator = "simid " + version_string();
  fitted_set.meta.parameters_json = pj["parameters"].dump();
  fitted_set.meta.seed = opts.seed;
  const std::string fit_file = opts.out + "/fit.h5";
  if (!fitted_set.trajectories.empty()) {
    write_trajectories(fit_file, fitted_set);
    summary.add_output(fit_file);
    TrajectorySet measured = data.train;
    for (auto t : data.validation.trajectories) {
      t.name = "validation_" + t.name;
      measured.trajectories.push_back(std::move(t));
    }
    const std::string measured_file = opts.out + "/measured.h5";
    write_trajectories(measured_file, measured);
    summary.add_output(measured_file);
    if (cfg.get_or<bool>("output.plot", true)) {
      try_plot(opts.out, measured_file, fit_file);
      if (std::filesystem::exists(opts.out + "/fit.png")) summary.add_output(opts.out + "/fit.png");
    }
  }
  summary.timings()["fit_s"] = fit_s;
  summary.timings()["total_s"] = seconds_since(t_start);
  const bool interrupted = interrupt_requested();
  summary.set_status(interrupted ? "interrupted" : "ok");
  summary.write(opts.out);
  if (targets)
    spdlog::info("fit done: cost {:.6g}, mean distance to target {:.4g} m; wrote {}", best.cost,
                 summary.metrics()["mean_target_distance"].get<double>(), params_file);
  else
    spdlog::info("fit done: cost {:.6g}, train RMSE(q) {:.4g}{}; wrote {}", best.cost, train_eval.mean_rmse_q,
                 data.validation.trajectories.empty()
                     ? std::string()
                     : fmt::format(", validation RMSE(q) {:.4g}", summary.metrics()["validation_rmse_q"].get<double>()),
                 params_file);
  return interrupted ? kExitInterrupted : kExitOk;
}

}  // namespace neuralsim
