#include "simid/simid_job.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

#include "common/provenance.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/parameter_file.hpp"
#include "neuralsim/tools/identify.hpp"
#include "neuralsim/tools/identify_checkpoint.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

json identifiability_json(const IdentificationResult& r) {
  const Identifiability& id = r.identifiability;
  json dirs = json::array();
  for (const auto& d : id.weak_directions) {
    json dir;
    for (size_t i = 0; i < r.parameters.size(); ++i) dir[r.parameters[i].name] = d.direction[i];
    dirs.push_back({{"relative_singular_value", d.relative_singular_value},
                    {"direction_in_log_parameters", dir}, {"description", d.description}});
  }
  json unseen = json::array();
  for (int i : id.unseen) unseen.push_back(r.parameters[static_cast<size_t>(i)].name);
  return {{"singular_values", id.singular_values}, {"weak_directions", dirs},
          {"condition_number", finite_or_null(id.condition_number)}, {"no_effect", unseen},
          {"identifiable", r.analysis_done ? json(id.weak_directions.empty()) : json(nullptr)},
          {"residual_variance", finite_or_null(id.residual_variance)},
          {"nuisance_parameters", id.nuisance}};
}

json uncertainty_json(const IdentificationResult& r) {
  const UncertaintyMethod method = r.uncertainty.covariance.method;
  json u{{"method", uncertainty_method_name(method)}, {"holds_when", uncertainty_assumption(method)}};
  if (method != UncertaintyMethod::kGaussNewton) {
    u["cluster"] = cluster_by_name(r.uncertainty.cluster);
    u["clusters"] = r.robust.clusters;
    if (r.robust.clusters <= static_cast<int>(r.parameters.size()))
      u["note"] = "fewer clusters than parameters + 1: the robust estimate is unreliable";
  }
  if (method == UncertaintyMethod::kBootstrap) {
    u["samples"] = r.robust.bootstrap_samples;
    u["seed"] = r.uncertainty.covariance.seed;
  }
  u["std_error"] = json::object();
  u["gauss_newton_std_error"] = json::object();
  for (const IdentifiedParameter& p : r.parameters) {
    u["std_error"][p.name] = finite_or_null(p.std_error);
    u["gauss_newton_std_error"][p.name] = finite_or_null(p.gauss_newton_std_error);
  }
  return u;
}

// params.json: the fitted values with their errors, the fixed ones, and the
// analysis behind the errors.
ParameterFile parameter_file(const IdentificationResult& r, const ToolRun& run) {
  ParameterFile f;
  f.model = r.model_name;
  for (const IdentifiedParameter& p : r.parameters) f.parameters.push_back({p.name, p.value, p.std_error, p.initial, p.lower, p.upper});
  for (const ExperimentParameter& p : r.fixed) f.fixed.push_back({p.target.name, p.value, p.source});
  std::vector<std::vector<double>> corr(r.parameters.size(), std::vector<double>(r.parameters.size()));
  for (size_t i = 0; i < corr.size(); ++i)
    for (size_t j = 0; j < corr.size(); ++j)
      corr[i][j] = r.identifiability.correlation(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  f.annotations = {{"correlation", corr}, {"identifiability", identifiability_json(r)},
                   {"uncertainty", uncertainty_json(r)}, {"cost", r.cost}, {"seed", run.options().seed},
                   {"provenance", provenance(run.options().argv, run.options().threads)}};
  // A joint fit: each configuration's model, fixed values and fitted values
  // under their names in it (params_file of a single-configuration replay).
  for (const IdentificationResult& c : r.configurations) {
    json& a = f.annotations["configurations"][c.configuration];
    a["model"] = c.model_name;
    for (const IdentifiedParameter& p : c.parameters) a["parameters"][p.name] = p.value;
    for (const ExperimentParameter& p : c.fixed) a["fixed"][p.target.name] = p.value;
  }
  return f;
}

void fit_metrics(const IdentificationResult& r, json& m) {
  m["prediction_window"] = r.prediction_window;
  m["evaluate_only"] = r.evaluate_only;
  if (!r.evaluated_file.empty()) m["evaluated_file"] = r.evaluated_file;
  m["cost"] = r.cost;
  m["parameters"] = json::object();
  for (const IdentifiedParameter& p : r.parameters) m["parameters"][p.name] = p.value;
  estimate_metrics(r, m);  // inertias in physical coordinates, base parameters, fitted starts (simid_metrics.cpp)
  m["analysis_done"] = r.analysis_done;  // false: interrupted before the analysis finished (no errors)
  m["identifiable"] = r.analysis_done ? json(r.identifiability.weak_directions.empty()) : json(nullptr);
  m["uncertainty"] = uncertainty_json(r);
  m["basin_hopping"] = {{"history", history_json(r.search.state.history)},
                        {"stop_reason", r.search.stop_reason},
                        {"rounds", r.search.state.next_round},
                        {"population", r.basin_hopping.enabled ? r.basin_hopping.population : 1}};
  m["best_local_solve"] = local_result_json(r.best);
  if (r.max_relative_error) {
    m["relative_error"] = r.relative_error;
    m["max_relative_error"] = *r.max_relative_error;
  }
}

// fit.h5 and measured.h5 (the predictions beside the data they predict) and
// their plot; a joint fit's configuration C: fit_C.h5, measured_C.h5.
void write_predictions(const IdentificationResult& r, const std::string& params_json, ToolRun& run) {
  if (r.fitted.trajectories.empty()) return;
  const std::string suffix = r.configuration.empty() ? "" : "_" + r.configuration;
  const std::string fit = run.path("fit" + suffix + ".h5"), measured = run.path("measured" + suffix + ".h5");
  TrajectorySet fitted = r.fitted;
  fitted.meta = trajectory_metadata(r.fitted_model, "simid " + version_string(), params_json, run.options().seed);
  write_trajectories(fit, fitted);
  run.add_output(fit);
  write_trajectories(measured, r.measured, true);  // with the recording's gaps (NaN)
  run.add_output(measured);
  if (run.plots_wanted()) run.plot("plot_fit.py", {measured, fit}, "fit" + suffix + ".png");
}

}  // namespace

RunReport run_simid(ToolRun& run, const SimidFlags& flags) {
  if (flags.design_excitation) return run_excitation_design(run, flags);
  if (flags.gradients.check) {
    if (!flags.evaluate_path.empty()) throw ConfigError("--check-gradients and --evaluate: give one of them");
    if (run.resume()) throw ConfigError("--check-gradients runs no fit: there is nothing to --resume");
    IdentificationGradientCheckOptions options;
    options.check.tolerance = flags.gradients.tolerance;
    const IdentificationGradientCheck c =
        check_identification_gradient({run.config(), run.options().seed, ""}, options, run.context());
    if (!run.writes()) return c;
    json transformations = json::object();
    for (size_t i = 0; i < c.check.rows.size(); ++i) transformations[c.check.rows[i].name] = c.transformations[static_cast<size_t>(c.check.rows[i].index)];
    run.write_gradient_check(c.check, {{"of", "the fit's cost 1/2 sum r^2 with respect to the optimizer's variables"},
                                       {"formulation", c.formulation},
                                       {"transformations", transformations}});
    return c;
  }
  const IdentificationResult r = identify({run.config(), run.options().seed, flags.evaluate_path}, run.context());
  if (!run.writes()) return r;  // an MPI rank other than 0
  json& m = run.summary().metrics();
  if (!r.has_fit) {
    m["error"] = r.status == RunStatus::kInterrupted ? "interrupted before the fit's first iterate"
                                                     : "no local solve produced a usable solution";
    return r;
  }
  const ParameterFile params = parameter_file(r, run);
  write_parameter_file(run.path("params.json"), params);
  run.add_output(run.path("params.json"));
  run.write_text("identifiability.txt", r.full_report());
  evaluation_metrics(r, m);
  fit_metrics(r, m);
  write_predictions(r, parameter_records_json(params.parameters).dump(), run);
  for (const IdentificationResult& c : r.configurations) {  // a joint fit
    json& cm = m["configurations"][c.configuration];
    cm["model"] = c.model_name;
    evaluation_metrics(c, cm);
    for (const IdentifiedParameter& p : c.parameters) cm["parameters"][p.name] = p.value;
    estimate_metrics(c, cm);
    write_predictions(c, parameter_records_json(params.parameters).dump(), run);
  }
  write_simid_report(r, run);
  if (r.targets)
    spdlog::info("{} done: cost {:.6g}, mean distance to target {:.4g} m; wrote {}",
                 r.evaluate_only ? "evaluation" : "fit", r.cost, m["mean_target_distance"].get<double>(),
                 run.path("params.json"));
  else
    spdlog::info("{} done: cost {:.6g}, train RMSE(q) {:.4g}{}; wrote {}", r.evaluate_only ? "evaluation" : "fit",
                 r.cost, r.train.mean_rmse_q,
                 r.validation ? fmt::format(", validation RMSE(q) {:.4g}", r.validation->mean_rmse_q) : std::string(),
                 run.path("params.json"));
  return r;
}

}  // namespace neuralsim
