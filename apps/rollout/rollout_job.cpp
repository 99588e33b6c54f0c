#include "rollout/rollout_job.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

#include "common/provenance.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/rollout.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

void model_metrics(const ModelSummary& m, json& metrics) {
  if (!m.weights_path.empty()) {
    metrics["weights_file"] = m.weights_path;
    metrics["trained_model"] = m.trained_model;
  }
  if (m.augmentations.empty()) return;
  json nets = json::array();
  for (const AugmentationInfo& a : m.augmentations) nets.push_back({{"name", a.name}, {"parameters", a.parameters}});
  metrics["augmentations"] = nets;
}

json targets_json(const std::vector<TargetCheck>& targets) {
  json report = json::array();
  for (const TargetCheck& t : targets)
    report.push_back({{"trajectory", t.trajectory}, {"link", t.link}, {"time", t.time},
                      {"target", {t.target.x(), t.target.y(), t.target.z()}},
                      {"reached", {t.reached.x(), t.reached.y(), t.reached.z()}}, {"distance", t.distance},
                      {"tolerance", t.tolerance}, {"hit", t.hit}});
  return report;
}

RunReport simulate_job(ToolRun& run, const RolloutFlags& flags) {
  const std::string out_name = OutputDirectory::configured_name(run.config(), "output.file", "trajectories.h5");
  RolloutResult r = rollout({run.config(), run.options().seed, flags.weights_path}, run.context());
  if (!run.writes()) return r;  // an MPI rank other than 0
  json& m = run.summary().metrics();
  model_metrics(r.model, m);
  if (r.status == RunStatus::kDiverged) {
    m["error"] = r.message;
    return r;
  }
  if (!r.trajectories.trajectories.empty()) {
    r.trajectories.meta.generator = "rollout " + version_string();
    write_trajectories(run.path(out_name), r.trajectories);
    run.add_output(run.path(out_name));
    spdlog::info("wrote {} trajectories ({} samples) to {}", r.trajectories.trajectories.size(), r.num_samples,
                 run.path(out_name));
  }
  m["num_trajectories"] = r.trajectories.trajectories.size();
  m["num_requested_trajectories"] = r.num_requested;
  m["num_samples"] = r.num_samples;
  m["steps_per_second"] = r.steps_per_second;
  m["model"] = r.model.model_name;
  m["nq"] = r.model.nq;
  m["nv"] = r.model.nv;
  m["integrator"] = r.model.integrator;
  if (!r.model.contact_model.empty()) m["contact_model"] = r.model.contact_model;
  if (!r.targets.empty()) {
    m["targets"] = targets_json(r.targets);
    m["targets_hit"] = r.status != RunStatus::kTargetMissed;
  }
  return r;
}

RunReport compare_job(ToolRun& run, const RolloutFlags& flags) {
  const std::string out_name = OutputDirectory::configured_name(run.config(), "output.compare_file", "compare.h5");
  CompareResult r =
      compare({run.config(), run.options().seed, flags.compare_path, flags.weights_path}, run.context());
  if (!run.writes()) return r;  // an MPI rank other than 0
  json& m = run.summary().metrics();
  model_metrics(r.model, m);
  r.predictions.meta.generator = "rollout " + version_string();
  write_trajectories(run.path(out_name), r.predictions);
  run.add_output(run.path(out_name));
  auto per_trajectory = [](const std::vector<PredictionError>& errors) {
    json per = json::array();
    for (const PredictionError& e : errors) {
      json hz = json::object();
      // Every configured horizon keeps its key; one longer than the trajectory is null.
      for (const auto& [h, v] : e.rmse_q_by_horizon) hz[std::to_string(h)] = std::isfinite(v) ? json(v) : json(nullptr);
      per.push_back({{"name", e.name}, {"rmse_q", e.rmse_q}, {"rmse_qd", e.rmse_qd}, {"rmse_q_by_horizon", hz}});
      if (!e.position_links.empty()) {  // task space: the observed links or markers
        json hp = json::object();
        for (const auto& [h, v] : e.rmse_position_by_horizon) hp[std::to_string(h)] = finite_or_null(v);
        per.back()["position_links"] = e.position_links;
        per.back()["rmse_position"] = finite_or_null(e.rmse_position);
        per.back()["rmse_position_by_horizon"] = hp;
      }
    }
    return per;
  };
  auto pooled = [](const PooledPredictionError& p) {
    json hz = json::object();
    for (const auto& [h, v] : p.rmse_q_by_horizon) hz[std::to_string(h)] = std::isfinite(v) ? json(v) : json(nullptr);
    json out{{"rmse_q", finite_or_null(p.rmse_q)}, {"rmse_qd", finite_or_null(p.rmse_qd)},
             {"rmse_q_by_horizon", hz}, {"samples", p.samples}};
    if (!std::isnan(p.rmse_position)) {
      json hp = json::object();
      for (const auto& [h, v] : p.rmse_position_by_horizon) hp[std::to_string(h)] = finite_or_null(v);
      out["rmse_position"] = finite_or_null(p.rmse_position);
      out["rmse_position_by_horizon"] = hp;
    }
    return out;
  };
  m["compare_file"] = flags.compare_path;
  m["per_trajectory"] = per_trajectory(r.per_trajectory);
  m["mean_rmse_q"] = r.mean_rmse_q;
  m["mean_rmse_qd"] = r.mean_rmse_qd;
  m["pooled"] = pooled(r.pooled);
  m["reference"]["no_motion"] = {{"mean_rmse_q", r.no_motion_mean_rmse_q},
                                 {"mean_rmse_qd", r.no_motion_mean_rmse_qd},
                                 {"pooled", pooled(r.no_motion_pooled)},
                                 {"per_trajectory", per_trajectory(r.no_motion)}};
  if (r.windows) m["windows"] = windows_json(*r.windows);
  if (r.torque) {
    m["torque"] = torque_json(*r.torque);
    m["torque"]["derivatives"] = derivatives_json(r.torque_derivatives);
  }
  if (!r.torque_note.empty()) m["torque_note"] = r.torque_note;
  return r;
}

}  // namespace

RunReport run_rollout(ToolRun& run, const RolloutFlags& flags) {
  return flags.compare_path.empty() ? simulate_job(run, flags) : compare_job(run, flags);
}

}  // namespace neuralsim
