#include "simid/simid_job.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <spdlog/spdlog.h>

#include "common/fingerprint.hpp"
#include "common/provenance.hpp"
#include "common/python.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/estimate/covariance.hpp"
#include "neuralsim/estimate/identifiability.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "simid/simid_checkpoint.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

Config section_or_empty(const Config& owner, const std::string& key) {
  return owner.has(key) ? owner.at(key) : Config::parse("{}", owner.file());
}

// `targets`: the data are reach targets (data.targets), whose q is a
// placeholder: only the distance to the target is meaningful.
struct FitEvaluation {
  double mean_rmse_q = 0;
  double mean_rmse_link_position = 0;
  json per_trajectory = json::array();
  TrajectorySet predictions;
};

FitEvaluation evaluate_fit(const ResidualContext& ctx, const std::vector<double>& x, const TrajectorySet& data,
                        int window, bool targets) {
  FitEvaluation e;
  e.predictions.meta = data.meta;
  std::vector<std::string> links;
  for (const auto& ch : ctx.observe.link_positions) links.push_back(ch.link);
  for (const Trajectory& tr : data.trajectories) {
    Trajectory pred;
    double r = std::numeric_limits<double>::infinity(), rl = r;
    try {
      pred = windowed_prediction(ctx, x, tr, window);
      if (!targets) r = prediction_error(*ctx.model, tr, pred).rmse_q;
      if (!links.empty()) rl = link_position_rmse(links, tr, pred);
    } catch (const NumericalError& err) {
      spdlog::warn("prediction of '{}' diverged: {}", tr.name, err.what());
    }
    json j{{"name", tr.name}};
    if (!targets) j["rmse_q"] = r;
    if (!links.empty()) j[targets ? "target_distance" : "rmse_link_position"] = targets ? rl * std::sqrt(3.0) : rl;
    e.per_trajectory.push_back(j);
    e.mean_rmse_q += r / data.trajectories.size();
    e.mean_rmse_link_position += rl / data.trajectories.size();
    if (pred.size() > 0) e.predictions.trajectories.push_back(std::move(pred));
  }
  return e;
}

json identifiability_json(const Identifiability& id, const ParameterSet& params) {
  json j;
  json dirs = json::array();
  for (const auto& d : id.weak_directions) {
    json dir;
    for (int i = 0; i < params.size(); ++i) dir[params[i].name()] = d.direction[i];
    dirs.push_back({{"relative_singular_value", d.relative_singular_value},
                    {"direction_in_log_parameters", dir},
                    {"description", d.description}});
  }
  j["singular_values"] = id.singular_values;
  j["weak_directions"] = dirs;
  j["identifiable"] = id.weak_directions.empty();
  j["residual_variance"] = id.residual_variance;
  return j;
}

// Cluster of every residual row of `problem`'s Jacobian, in the order the
// problem adds residual blocks (trajectory by trajectory, window by window):
// by trajectory, or by window (a shooting window or segment; for inverse
// dynamics, runs of `window` consecutive samples).
std::vector<int> residual_clusters(const ResidualContext& ctx, const std::vector<const Trajectory*>& train,
                                   const ProblemOptions& po, ClusterBy by, int total_rows) {
  const Model<double>& model = *ctx.model;
  const int per = ctx.observe.residuals_per_sample(model);
  const int window = std::max(1, po.window);
  const int stride = po.stride > 0 ? po.stride : window;
  std::vector<int> sizes;  // rows per window, all trajectories
  std::vector<int> trajectory_rows;
  for (const Trajectory* tr : train) {
    const int T = static_cast<int>(tr->size());
    const size_t first = sizes.size();
    auto torque_windows = [&] {
      DerivativeOptions d = po.derivatives;
      if (d.method == DerivativeMethod::kCentralDifference) d.window = po.filter_window;
      const int n = static_cast<int>(prepare_inverse_dynamics(*tr, d, po.sample_stride).q.rows());
      for (int s = 0; s < n; s += window) sizes.push_back(std::min(window, n - s) * model.nv);
    };
    switch (po.formulation) {
      case Formulation::kSingleShooting:
        for (int s = 0; s + 1 < T; s += stride) sizes.push_back(std::min(window, T - 1 - s) * per);
        break;
      case Formulation::kMultipleShooting:
        for (int s = 0; s + 1 < T; s += window) {
          const int length = std::min(window, T - 1 - s);
          const bool last = s + window + 1 >= T;
          sizes.push_back(last ? (length + 1) * per : length * per + 2 * model.nv);
        }
        break;
      case Formulation::kInverseDynamics: torque_windows(); break;
    }
    // A combined objective's torque rows follow the trajectory's shooting rows.
    if (po.torque_weight > 0 && po.formulation != Formulation::kInverseDynamics && tr->has_tau()) torque_windows();
    int rows = 0;
    for (size_t k = first; k < sizes.size(); ++k) rows += sizes[k];
    trajectory_rows.push_back(rows);
  }
  std::vector<int> clusters = clusters_from_sizes(by == ClusterBy::kTrajectory ? trajectory_rows : sizes);
  if (static_cast<int>(clusters.size()) != total_rows)
    throw std::logic_error("simid: " + std::to_string(clusters.size()) + " clustered residual rows for a Jacobian of " +
                           std::to_string(total_rows));
  return clusters;
}

// Progress inside the local solves, from SolverOptions::on_iteration (a
// 9-parameter multiple-shooting fit can spend 20 minutes in one solve). With
// -v every iteration is a debug line; otherwise one info line at most every
// kInterval seconds, the first only once a solve has run that long, so quick
// fits stay as quiet as before; nothing under -q. Called from the TBB
// workers of basin hopping: a caller that finds another one printing skips.
class LocalSolveLog {
 public:
  static constexpr double kInterval = 5.0;
  LocalSolveLog(int rounds, int population) : rounds_(rounds), population_(population), last_(Clock::now()) {}
  void operator()(const SolveProgress& p) {
    const bool debug = spdlog::should_log(spdlog::level::debug);
    if (!debug && !spdlog::should_log(spdlog::level::info)) return;
    if (!debug) {
      std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
      if (!lock.owns_lock() || seconds_since(last_) < kInterval || p.elapsed_s < kInterval) return;
      last_ = Clock::now();
    }
    const std::string line =
        fmt::format("local solve (round {}/{}, start {}/{}): iteration {}/{}, cost {:.6g}, elapsed {:.1f} s, "
                    "ETA <= {:.1f} s",
                    p.round + 1, rounds_, p.start + 1, population_, p.iteration, p.max_iterations, p.cost,
                    p.elapsed_s, p.eta_s);
    if (debug) spdlog::debug("{}", line);
    else spdlog::info("{}", line);
  }

 private:
  int rounds_, population_;
  Clock::time_point last_;
  std::mutex mutex_;
};

}  // namespace

int run_simid(const AppOptions& opts, const SimidRequest& request) {
  const auto t_start = Clock::now();
  const Config cfg = Config::load(opts.config, opts.sets);
  cfg.check_known_keys(
      {"name", "description", "model", "params", "params_file", "sim", "data", "estimate", "output", "contact"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"plot"});
  const Experiment exp = load_experiment(cfg);
  const Model<double>& model = exp.model;
  const Config est = cfg.at("estimate");
  est.check_known_keys({"parameters", "observe", "residual", "solver", "basin_hopping", "ground_truth",
                        "evaluation_window", "evaluation", "uncertainty"});
  const ParameterSet params =
      read_parameter_set(est, "parameters", model, exp.contact ? &exp.contact->parameters : nullptr);
  const ObservationSpec observe = read_observation(section_or_empty(est, "observe"), model);
  const ProblemOptions problem_options = read_problem_options(section_or_empty(est, "residual"));
  const DerivativeOptions& derivatives = problem_options.derivatives;
  const UncertaintyOptions uncertainty = read_uncertainty_options(section_or_empty(est, "uncertainty"), opts.seed);
  // Predictions restart from the measured state every `evaluation_window`
  // samples (default: the shooting window; 50 for inverse dynamics), so fits
  // of different formulations are compared under one metric.
  const int window = static_cast<int>(est.get_int_in_range(
      "evaluation_window", problem_options.formulation == Formulation::kInverseDynamics ? 50 : problem_options.window,
      1, 100000000));
  // `evaluation: {every: T, horizon: H}` (seconds): windowed validation on
  // every file's own clock, besides the sample-based metric above.
  if (est.has("evaluation") && est.has("evaluation_window"))
    est.fail("evaluation", "give either evaluation (seconds) or evaluation_window (samples), not both");
  std::optional<EvaluationWindows> eval_windows;
  if (est.has("evaluation")) eval_windows = read_evaluation_windows(est.at("evaluation"));
  SolverOptions solver = read_solver_options(section_or_empty(est, "solver"));
  if (solver.solver == LocalSolver::kLbfgs && problem_options.formulation == Formulation::kMultipleShooting)
    est.fail("solver", "lbfgs cannot optimize multiple-shooting states; use levenberg_marquardt");
  if (problem_options.formulation == Formulation::kInverseDynamics && exp.contact)
    est.fail("residual", "inverse_dynamics does not model contact forces; use single_shooting or multiple_shooting "
                         "with a 'contact:' section");
  if (problem_options.formulation != Formulation::kSingleShooting && params.has(ParameterKind::kInitialVelocity))
    est.fail("parameters", "initial.qd.* parameters need residual type single_shooting (multiple shooting already "
                           "frees every segment's state)");
  const BasinHoppingOptions bh = read_basin_hopping(section_or_empty(est, "basin_hopping"), opts.seed);

  std::vector<std::string> data_notes;
  const DataSplit data = load_data(cfg.at("data"), model, &data_notes);
  const bool targets = data.targets;
  // A target is reached from the start state: predictions never restart.
  const int eval_window = targets ? std::numeric_limits<int>::max() : window;
  if (targets && (observe.q_weight > 0 || observe.qd_weight > 0 || observe.link_positions.empty()))
    est.fail("observe", "with data.targets observe only link positions: {q: 0, link_positions: [{link: ...}]}");
  observe.check_available(data.train, data.train_source);
  if (problem_options.torque_weight > 0) {
    bool any = false;
    for (const Trajectory& t : data.train.trajectories) any = any || t.has_tau();
    if (!any)
      throw DataError(data.train_source + ": estimate.residual.torque_weight needs recorded joint forces "
                      "(/trajectories/<name>/tau), and no training trajectory has them");
  }
  if (problem_options.formulation == Formulation::kInverseDynamics)
    for (const Trajectory& t : data.train.trajectories)
      if (!t.has_tau())
        throw DataError(data.train_source + ":/trajectories/" + t.name +
                        "/tau: inverse-dynamics identification needs measured joint forces (expected shape (T, nv=" +
                        std::to_string(model.nv) + "))");
  if (problem_options.formulation == Formulation::kInverseDynamics) {
    // A derivative window longer than every training trajectory leaves no sample.
    long long longest = 0;
    for (const Trajectory& t : data.train.trajectories) longest = std::max<long long>(longest, t.size());
    const int margin = derivative_margin(derivatives);
    if (longest <= 2LL * margin) {
      // Too little data, not a bad setting: a data error (exit 3), naming the key.
      const Config r = est.at("residual");
      const std::string key = r.has("derivatives") ? "derivatives.window" : "filter_window";
      throw DataError("no residuals: " + r.where(key) + ": key '" + r.prefix() + "." + key + "': a window of " +
                      std::to_string(derivatives.window) + " samples leaves no sample of the training data for " +
                      "residual type inverse_dynamics (longest trajectory: " + std::to_string(longest) +
                      " samples; " + std::to_string(margin) + " are dropped at each end)");
    }
  }
  if (est.has("ground_truth"))
    for (const auto& [name, value] : est.at("ground_truth").items()) value.get<double>("");
  if (eval_windows) {
    if (targets) est.fail("evaluation", "reach targets are predicted from the start state: windows do not apply");
    check_windows_fit(est.at("evaluation"), *eval_windows, {&data.train, &data.validation});
  }

  // Everything the result depends on, for the checkpoint. Rounds and the
  // time budget only say when to stop: the rounds already done are the same
  // for any value, so a resume may extend them.
  json fingerprinted = cfg.to_json();
  if (fingerprinted["estimate"].contains("basin_hopping") && fingerprinted["estimate"]["basin_hopping"].is_object())
    for (const char* key : {"rounds", "time_budget"}) fingerprinted["estimate"]["basin_hopping"].erase(key);
  // The uncertainty estimate is computed after the fit and changes no round.
  if (fingerprinted["estimate"].is_object()) fingerprinted["estimate"].erase("uncertainty");
  Fingerprint fingerprint = config_digests(fingerprinted, {"name", "description", "output"});
  fingerprint["data.train"] = trajectory_digest(data.train);
  fingerprint["data.validation"] = trajectory_digest(data.validation);
  fingerprint["seed"] = std::to_string(opts.seed);

  std::vector<const Trajectory*> train;
  for (const Trajectory& t : data.train.trajectories) train.push_back(&t);
  ResidualContext ctx{&model, &params, exp.step, observe, exp.contact ? &*exp.contact : nullptr};
  ProblemFactory factory = [&] { return std::make_unique<EstimationProblem>(ctx, train, problem_options); };
  factory();  // a problem without residuals is a data error, before any output
  // A checkpoint is input too: checked before the output directory is taken.
  const std::string checkpoint = (std::filesystem::path(opts.out) / "checkpoint.json").string();
  BasinHoppingState state;
  if (request.resume) state = read_simid_checkpoint(checkpoint, params, fingerprint, bh.enabled ? bh.max_rounds : 1);

  const OutputDirectory out(opts.out, "simid",
                            request.resume ? OutputDirectory::Reuse::kResume
                            : opts.force   ? OutputDirectory::Reuse::kForce
                                           : OutputDirectory::Reuse::kRefuse);
  RunSummary summary("simid", opts, cfg, out);
  for (const std::string& n : exp.notes) spdlog::info("{}", n);
  for (const std::string& n : data_notes) spdlog::info("{}", n);
  std::vector<std::string> warnings = exp.warnings;
  for (const std::string& w : plausibility_warnings(data.train, model, data.train_source)) warnings.push_back(w);
  for (const std::string& w : plausibility_warnings(data.validation, model, data.validation_source))
    warnings.push_back(w);
  for (const std::string& w : warnings) {
    spdlog::warn("{}", w);
    summary.add_warning(w);
  }

  if (request.resume) spdlog::info("resuming from {} at round {}", checkpoint, state.next_round);
  begin_cooperative_interrupts();
  const double time_budget = bh.time_budget_s;
  const auto t_fit = Clock::now();
  auto should_abort = [&] { return interrupt_requested() || seconds_since(t_fit) > time_budget; };
  const int total_rounds = bh.enabled ? bh.max_rounds : 1;
  Progress progress("simid rounds", total_rounds);
  auto on_round = [&](const BasinHoppingState& s) {
    write_simid_checkpoint(checkpoint, s, params, fingerprint);
    const RoundRecord& r = s.history.back();
    spdlog::info("round {}/{}: best cost {:.6g} (this round {:.6g}, {} usable solves)", r.round + 1, total_rounds,
                 r.best_cost, r.round_best_cost, r.usable_solves);
    progress.update(s.next_round);
  };
  // Residual blocks are evaluated on the --threads TBB workers inside every
  // local solve (bit-identical at any thread count, estimation_problem.hpp).
  solver.num_threads = 0;
  LocalSolveLog solve_log(total_rounds, bh.enabled ? std::max(1, bh.population) : 1);
  solver.on_iteration = [&solve_log](const SolveProgress& p) { solve_log(p); };
  BasinHoppingResult result = basin_hopping(factory, params, bh, solver, state, on_round, should_abort);
  progress.finish();
  if (std::filesystem::exists(checkpoint)) summary.add_output(checkpoint);
  const double fit_s = seconds_since(t_fit);
  if (!result.state.has_best) {
    summary.set_status(interrupt_requested() ? "interrupted" : "diverged");
    summary.metrics()["error"] = "no local solve produced a usable solution";
    summary.write();
    if (interrupt_requested()) return kExitInterrupted;
    // Say where: replay the first training trajectory at the initial guess
    // with divergence checks on (time, coordinate and value).
    std::string where;
    try {
      windowed_prediction(ctx, params.initial_variables(), data.train.trajectories.front(), eval_window);
    } catch (const NumericalError& e) {
      where = std::string("; at the initial guess, on ") + data.train.trajectories.front().name + ": " + e.what();
    }
    throw NumericalError("simid: no local solve produced a usable solution (every start diverged or failed)" + where +
                         "; check bounds, initial values and the time step");
  }
  const LocalResult& best = result.state.best;

  // Fitted model, uncertainty and identifiability.
  std::unique_ptr<EstimationProblem> problem = factory();
  Eigen::VectorXd residuals;
  const Eigen::MatrixXd J = problem->parameter_jacobian(best.x, &residuals);
  const Identifiability id = analyze_identifiability(params, best.x, J, residuals);
  // The reported standard errors: Gauss–Newton (identifiability.hpp) or a
  // robust estimate (estimate/covariance.hpp) on the Jacobian w.r.t. physical
  // values; parameters the data cannot determine stay NaN whatever the method.
  std::vector<double> std_error = id.std_error;
  CovarianceEstimate robust;
  if (uncertainty.covariance.method != UncertaintyMethod::kGaussNewton) {
    Eigen::MatrixXd Jp = J;
    for (int i = 0; i < params.size(); ++i) Jp.col(i) /= physical_derivative(params, i, best.x[i]);
    robust = estimate_covariance(Jp, residuals,
                                 residual_clusters(ctx, train, problem_options, uncertainty.cluster,
                                                   static_cast<int>(J.rows())),
                                 uncertainty.covariance);
    for (int i = 0; i < params.size(); ++i) std_error[i] = std::isnan(id.std_error[i]) ? id.std_error[i] : robust.std_error[i];
  }
  json uncertainty_json{{"method", uncertainty_method_name(uncertainty.covariance.method)},
                        {"holds_when", uncertainty_assumption(uncertainty.covariance.method)}};
  if (uncertainty.covariance.method != UncertaintyMethod::kGaussNewton) {
    uncertainty_json["cluster"] = cluster_by_name(uncertainty.cluster);
    uncertainty_json["clusters"] = robust.clusters;
    if (robust.clusters <= params.size())
      uncertainty_json["note"] = "fewer clusters than parameters + 1: the robust estimate is unreliable";
  }
  if (uncertainty.covariance.method == UncertaintyMethod::kBootstrap) {
    uncertainty_json["samples"] = robust.bootstrap_samples;
    uncertainty_json["seed"] = uncertainty.covariance.seed;
  }
  auto error_json = [](double v) { return std::isnan(v) ? json(nullptr) : json(v); };
  uncertainty_json["std_error"] = json::object();
  uncertainty_json["gauss_newton_std_error"] = json::object();
  for (int i = 0; i < params.size(); ++i) {
    uncertainty_json["std_error"][params[i].name()] = error_json(std_error[i]);
    uncertainty_json["gauss_newton_std_error"][params[i].name()] = error_json(id.std_error[i]);
  }
  const std::vector<double> per_traj_cost = problem->cost_per_trajectory(best.x);

  json pj;
  pj["format"] = "neuralsim-parameters";
  pj["model"] = model.name;
  json values = json::object();
  for (int i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    values[p.name()] = {{"value", id.value[i]},
                        {"std_error", error_json(std_error[i])},
                        {"initial", p.initial}, {"lower", std::isfinite(p.lower) ? json(p.lower) : json(nullptr)},
                        {"upper", std::isfinite(p.upper) ? json(p.upper) : json(nullptr)}};
  }
  pj["parameters"] = values;
  pj["names"] = params.names();
  // The values the run held fixed (`params:`, `params_file:`, --set), so that
  // the file alone says which model the estimates belong to.
  json fixed = json::object();
  const std::vector<std::string> estimated = params.names();
  for (const ExperimentParameter& p : exp.parameters)
    if (std::find(estimated.begin(), estimated.end(), p.target.name) == estimated.end())
      fixed[p.target.name] = {{"value", p.value}, {"source", p.source}};
  pj["fixed"] = fixed;
  std::vector<std::vector<double>> corr(params.size(), std::vector<double>(params.size()));
  for (int i = 0; i < params.size(); ++i)
    for (int j = 0; j < params.size(); ++j) corr[i][j] = id.correlation(i, j);
  pj["correlation"] = corr;
  pj["identifiability"] = identifiability_json(id, params);
  pj["uncertainty"] = uncertainty_json;
  pj["cost"] = best.cost;
  pj["seed"] = opts.seed;
  pj["provenance"] = provenance(opts.argv, opts.threads);
  const std::string params_file = out.path("params.json");
  write_text_atomic(params_file, pj.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  summary.add_output(params_file);

  std::ostringstream report;
  report << "Identifiability report for " << model.name << " (" << params.size() << " parameters)\n";
  report << "Standard errors: " << uncertainty_method_name(uncertainty.covariance.method) << " ("
         << uncertainty_assumption(uncertainty.covariance.method) << ")\n";
  for (int i = 0; i < params.size(); ++i)
    report << "  " << params[i].name() << " = " << id.value[i] << " ± " << std_error[i] << "\n";
  report << "Singular values of the scaled Jacobian:";
  for (double s : id.singular_values) report << " " << s;
  report << "\n";
  if (id.weak_directions.empty()) report << "All parameters are identifiable from this data.\n";
  for (const auto& d : id.weak_directions)
    report << "Near-singular direction (σ/σmax = " << d.relative_singular_value << "): " << d.description << "\n";
  const std::string report_file = out.path("identifiability.txt");
  write_text_atomic(report_file, report.str());
  summary.add_output(report_file);
  for (const auto& d : id.weak_directions) spdlog::warn("identifiability: {}", d.description);

  // Predictions and errors on train and validation data.
  const FitEvaluation train_eval = evaluate_fit(ctx, best.x, data.train, eval_window, targets);
  if (!targets) summary.metrics()["train_rmse_q"] = train_eval.mean_rmse_q;
  if (targets) summary.metrics()["mean_target_distance"] = train_eval.mean_rmse_link_position * std::sqrt(3.0);
  else if (!observe.link_positions.empty())
    summary.metrics()["train_rmse_link_position"] = train_eval.mean_rmse_link_position;
  summary.metrics()["train_per_trajectory"] = train_eval.per_trajectory;
  for (size_t t = 0; t < per_traj_cost.size(); ++t)
    summary.metrics()["train_per_trajectory"][t]["cost"] = per_traj_cost[t];
  TrajectorySet fitted_set = train_eval.predictions;
  if (!data.validation.trajectories.empty()) {
    const FitEvaluation val = evaluate_fit(ctx, best.x, data.validation, eval_window, false);
    summary.metrics()["validation_rmse_q"] = val.mean_rmse_q;
    if (!observe.link_positions.empty())
      summary.metrics()["validation_rmse_link_position"] = val.mean_rmse_link_position;
    summary.metrics()["validation_per_trajectory"] = val.per_trajectory;
    for (auto t : val.predictions.trajectories) {
      t.name = "validation_" + t.name;
      fitted_set.trajectories.push_back(std::move(t));
    }
  }
  // Windowed errors in seconds and the inverse-dynamics torque error (the
  // residual of residual type inverse_dynamics, with its filter window) of
  // the fitted and of the initial parameters.
  if (eval_windows) {
    summary.metrics()["train_windows"] = windows_json(evaluate_windows(ctx, best.x, data.train, *eval_windows));
    if (!data.validation.trajectories.empty())
      summary.metrics()["validation_windows"] =
          windows_json(evaluate_windows(ctx, best.x, data.validation, *eval_windows));
  }
  if (!targets) {
    std::vector<std::string> torque_notes;
    auto torque_report = [&](const TrajectorySet& set, const std::string& split) {
      std::string note;
      const std::optional<TorqueError> fitted = torque_error(ctx, best.x, set, derivatives, &note);
      if (!note.empty()) torque_notes.push_back(split + ": " + note);
      if (!fitted) return;
      json j = torque_json(*fitted);
      const std::optional<TorqueError> initial =
          torque_error(ctx, params.initial_variables(), set, derivatives);
      if (initial) j["initial"] = torque_json(*initial);
      j["filter_window"] = problem_options.filter_window;
      j["derivatives"] = {{"method", derivative_method_name(derivatives.method)}, {"window", derivatives.window},
                          {"order", derivatives.order}, {"filter_torque", derivatives.filter_torque}};
      summary.metrics()[split + "_torque"] = j;
    };
    torque_report(data.train, "train");
    if (!data.validation.trajectories.empty()) torque_report(data.validation, "validation");
    if (exp.contact && (summary.metrics().contains("train_torque") || summary.metrics().contains("validation_torque")))
      torque_notes.push_back("contact forces are not in the inverse dynamics");
    if (!torque_notes.empty()) {
      std::string all;
      for (const std::string& n : torque_notes) all += (all.empty() ? "" : "; ") + n;
      summary.metrics()["torque_note"] = all;
      spdlog::info("{}", all);
    }
  }
  // A fit whose residuals dwarf the data's own spread explains nothing: the
  // data may be corrupt or the model unsuitable (cost ½Σr² over m residuals).
  if (!targets && residuals.size() > 0) {
    double spread = 0;
    for (const Trajectory& t : data.train.trajectories)
      spread = std::max(spread, (t.q.rowwise() - t.q.colwise().mean()).cwiseAbs().maxCoeff());
    const double rms = std::sqrt(2.0 * best.cost / static_cast<double>(residuals.size()));
    if (rms > 10.0 * std::max(spread, 1e-12)) {
      const std::string w = "the fit's RMS residual " + std::to_string(rms) + " is more than 10 times the data's spread " +
                            std::to_string(spread) + ": the data may be corrupt or the model unsuitable";
      spdlog::warn("{}", w);
      summary.add_warning(w);
    }
  }
  // Plain inertia entries (link.<b>.inertia.yy, ...) are bounded one at a
  // time, so a fit can leave the physical set (the triangle inequality of
  // the principal moments); log-Cholesky blocks cannot. Say so, not silently.
  {
    Model<double> fitted = model;
    params.apply(best.x.data(), fitted);
    try {
      fitted.validate();
      summary.metrics()["physically_consistent"] = true;
    } catch (const ModelError& e) {
      summary.metrics()["physically_consistent"] = false;
      const std::string w = std::string("the fitted parameters are not physical: ") + e.what() +
                            "; estimate the link's inertia as 'link.<body>.inertial' with transform log_cholesky "
                            "(docs/simid.md) to keep the fit physically consistent";
      spdlog::warn("{}", w);
      summary.add_warning(w);
    }
  }
  summary.metrics()["prediction_window"] = window;
  summary.metrics()["cost"] = best.cost;
  summary.metrics()["parameters"] = json::object();
  for (int i = 0; i < params.size(); ++i) summary.metrics()["parameters"][params[i].name()] = id.value[i];
  summary.metrics()["identifiable"] = id.weak_directions.empty();
  summary.metrics()["uncertainty"] = uncertainty_json;
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
      if (!truth.contains(params[i].name())) continue;
      const double t = truth[params[i].name()].get<double>();
      const double rel = std::abs(id.value[i] - t) / std::max(std::abs(t), 1e-12);
      errs[params[i].name()] = rel;
      max_rel = std::max(max_rel, rel);
    }
    summary.metrics()["relative_error"] = errs;
    summary.metrics()["max_relative_error"] = max_rel;
  }
  fitted_set.meta = trajectory_metadata(model, "simid " + version_string(), pj["parameters"].dump(), opts.seed);
  if (!fitted_set.trajectories.empty()) {
    const std::string fit_file = out.path("fit.h5");
    write_trajectories(fit_file, fitted_set);
    summary.add_output(fit_file);
    TrajectorySet measured = data.train;
    for (auto t : data.validation.trajectories) {
      t.name = "validation_" + t.name;
      measured.trajectories.push_back(std::move(t));
    }
    const std::string measured_file = out.path("measured.h5");
    write_trajectories(measured_file, measured);
    summary.add_output(measured_file);
    if (plots_wanted(cfg, opts)) {
      draw_plot("plot_fit.py", {measured_file, fit_file, out.dir() + "/fit.png"});
      if (std::filesystem::exists(out.path("fit.png"))) summary.add_output(out.path("fit.png"));
    }
  }
  summary.timings()["fit_s"] = fit_s;
  summary.timings()["total_s"] = seconds_since(t_start);
  const bool interrupted = interrupt_requested();
  summary.set_status(interrupted ? "interrupted" : "ok");
  summary.write();
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
