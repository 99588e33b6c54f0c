#include "distill_mpc/distill_job.hpp"

#include <filesystem>
#include <sstream>

#include "common/provenance.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/tools/distill_mpc.hpp"
#include "neuralsim/tools/training_checkpoint.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

json evaluation_json(const ClosedLoopEvaluation& e, bool linear) {
  json per = json::array();
  for (const EpisodeResult& r : e.episodes) {
    json j{{linear ? "stable" : "survived", r.ok}};
    if (linear) {
      j["rms_position"] = r.err_a;
      j["rms_velocity"] = r.err_b;
      j["final_state_norm"] = r.err_c;
    } else {
      j["height_rmse"] = r.err_a;
      j["velocity_rmse"] = r.err_b;
      j["yaw_rate_rmse"] = r.err_c;
    }
    if (!r.ok) {
      j["reason"] = r.reason;
      j["fall_time"] = r.fall_time;
    }
    per.push_back(j);
  }
  json out{{"episodes", e.episodes.size()},
           {linear ? "stable" : "survived", e.ok},
           {"per_episode", per},
           {"mean_seconds_per_update", e.mean_seconds_per_update}};
  out[linear ? "mean_rms_position" : "mean_height_rmse"] = e.mean_err_a;
  out[linear ? "mean_rms_velocity" : "mean_velocity_rmse"] = e.mean_err_b;
  out[linear ? "mean_final_state_norm" : "mean_yaw_rate_rmse"] = e.mean_err_c;
  return out;
}

std::string trace_csv(bool linear, const EpisodeResult& mpc, const EpisodeResult& net) {
  std::ostringstream s;
  s.precision(10);
  if (linear)
    s << "controller,t,position,position_ref,velocity,velocity_ref,control,control_ref\n";
  else
    s << "controller,t,height,height_cmd,forward_velocity,forward_velocity_cmd,yaw_rate,yaw_rate_cmd\n";
  for (const auto& [name, r] : {std::pair<const char*, const EpisodeResult*>{"mpc", &mpc}, {"network", &net}})
    for (const TraceRow& t : r->trace)
      s << name << ',' << t.t << ',' << t.a << ',' << t.a_ref << ',' << t.b << ',' << t.b_ref << ',' << t.c << ','
        << t.c_ref << '\n';
  return s.str();
}

json rmse_json(const Eigen::VectorXd& v) {
  json a = json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(finite_or_null(v[i]));
  return a;
}

json training_json(const DistillResult& r) {
  const TrainingState& s = *r.training;
  return {{"network", r.network_description},
          {"num_parameters", r.num_parameters},
          {"train_samples", r.train_samples},
          {"validation_samples", r.validation_samples},
          {"epochs_completed", s.epoch},
          {"best_epoch", s.best_epoch},
          {"initial_validation_loss", finite_or_null(r.initial_validation_loss)},
          {"best_validation_loss", finite_or_null(s.best_validation)},
          {"final_train_loss", s.history.empty() ? json(nullptr) : finite_or_null(s.history.back().train_loss)},
          {"train_rmse", rmse_json(r.train_rmse)},
          {"validation_rmse", rmse_json(r.validation_rmse)},
          {"train_rmse_mean", finite_or_null(r.train_rmse.mean())},
          {"validation_rmse_mean", finite_or_null(r.validation_rmse.mean())}};
}

void write_dataset(const std::string& path, DistillDataset dataset) {
  dataset.generator = "distill-mpc " + version_string();
  write_distill_dataset(path, dataset);
}

// Closed loop: the MPC and the network under the same episodes, the trace of the first, its plot.
void write_evaluation(const DistillResult& r, ToolRun& run) {
  const bool linear = r.system == "linear";
  json ev{{"duration", r.evaluation_duration}, {"mpc", evaluation_json(*r.mpc, linear)},
          {"network", evaluation_json(*r.with_network, linear)}};
  const double tm = r.mpc->mean_seconds_per_update, tn = r.with_network->mean_seconds_per_update;
  ev["speedup_per_update"] = tn > 0 ? json(tm / tn) : json(nullptr);
  run.summary().metrics()["evaluation"] = ev;
  run.write_text("closed_loop.csv", trace_csv(linear, r.mpc->episodes.at(0), r.with_network->episodes.at(0)));
  if (run.plots_wanted())
    run.plot("plot_distill.py", {run.path("closed_loop.csv"), run.path("loss.csv")}, "closed_loop.png");
}

}  // namespace

RunReport run_distill_mpc(ToolRun& run) {
  const Config& cfg = run.config();
  const std::string weights_name = OutputDirectory::configured_name(
      cfg, "output.weights", "weights.h5", {"checkpoint.json", "loss.csv", "closed_loop.csv", "closed_loop.png"});
  const std::string dataset_name = OutputDirectory::configured_name(
      cfg, "output.dataset", "dataset.h5",
      {"checkpoint.json", "loss.csv", "closed_loop.csv", "closed_loop.png", weights_name});
  DistillRequest request{cfg, run.options().seed, "", {}};
  const std::string previous = (std::filesystem::path(run.options().out) / dataset_name).string();
  if (run.resume() && std::filesystem::exists(previous)) request.previous_dataset = previous;
  // The generated dataset is written before training, so that a run killed while training resumes from it.
  request.on_dataset = [&](const DistillDataset& d) {
    if (run.writes()) write_dataset(run.path(dataset_name), d);
  };
  DistillResult r = distill_mpc(request, run.context());
  if (!run.writes()) return r;  // an MPI rank other than 0
  json& m = run.summary().metrics();
  m["system"] = r.system;
  m["num_features"] = r.num_features;
  m["num_targets"] = r.num_targets;
  if (r.data_episodes_failed) m["data_episodes_failed"] = *r.data_episodes_failed;
  if (r.training) {
    if (r.dataset_file.empty()) run.add_output(run.path(dataset_name));
    m["dataset"] = {{"samples", r.dataset.size()},
                    {"file", r.dataset_file.empty() ? run.path(dataset_name) : r.dataset_file}};
    write_networks(run.path(weights_name), {{r.network_name, *r.network, r.feature_names, r.target_names, {}}});
    run.add_output(run.path(weights_name));
    run.write_text("loss.csv", training_history_csv(r.training->history));
    m["training"] = training_json(r);
    if (r.status == RunStatus::kDiverged) {
      m["error"] = r.message;
      r.message += " (the best weights so far were written to " + run.out().dir() + ")";
    }
  }
  if (r.mpc) write_evaluation(r, run);
  return r;
}

}  // namespace neuralsim
