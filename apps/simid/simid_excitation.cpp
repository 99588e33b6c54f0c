// `simid --design-excitation` (docs/simid.md, "Excitation design"): the
// design (tools/excitation.hpp) and its files: excitation.h5 (the data
// format simid reads: time, q, q̇ and the model's command τ), excitation.csv
// (time, q, q̇ per joint: what the robot is sent), excitation.json (the
// coefficients, the predicted standard errors, the criteria, the limits'
// margins) and summary.json's metrics.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/provenance.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/excitation.hpp"
#include "simid/simid_job.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

std::string excitation_csv(const ExcitationDesignResult& r, const std::vector<std::string>& joints) {
  std::string out = "time";
  for (const std::string& j : joints) out += ",q_" + j;
  for (const std::string& j : joints) out += ",qd_" + j;
  out += "\n";
  char buf[40];
  for (Eigen::Index k = 0; k < r.time.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%.17g", r.time[k]);
    out += buf;
    for (const RowMatrixXd* m : {&r.q, &r.qd})
      for (Eigen::Index j = 0; j < m->cols(); ++j) {
        std::snprintf(buf, sizeof buf, ",%.17g", (*m)(k, j));
        out += buf;
      }
    out += "\n";
  }
  return out;
}

json information_json(const ExcitationInformation& i) {
  return {{"log_det", finite_or_null(i.log_det)}, {"condition", finite_or_null(i.condition)}};
}

json limit_or_null(double v) { return std::isfinite(v) && std::abs(v) < 1e29 ? json(v) : json(nullptr); }

// The named parameters: the identifiable ones' predicted errors (after β's
// in std_errors), the others with the reason.
json named_json(const ExcitationDesignResult& r) {
  json out = json::array();
  const Eigen::Index p = static_cast<Eigen::Index>(r.parameter_names.size());
  for (size_t k = 0; k < r.named.size(); ++k) {
    const Eigen::Index i = p + static_cast<Eigen::Index>(k);
    out.push_back({{"name", r.named[k]},
                   {"model_value", r.named_values[k]},
                   {"identifiable", true},
                   {"std_error", finite_or_null(r.designed.std_errors[i])},
                   {"initial_std_error", finite_or_null(r.initial.std_errors[i])}});
  }
  for (const auto& [name, why] : r.unidentifiable)
    out.push_back({{"name", name},
                   {"identifiable", false},
                   {"std_error", nullptr},
                   {"reason", "not identifiable from the torques: " + why}});
  return out;
}

// Per designed joint: its coordinates in the model's q and v, and its limits.
json joints_json(const ExcitationRun& run, const std::vector<std::string>& joints) {
  json out = json::array();
  const ExcitationLimits& l = run.options.limits;
  for (size_t j = 0; j < joints.size(); ++j) {
    const Eigen::Index i = static_cast<Eigen::Index>(j);
    const int v = run.result.coordinates[j];
    int q = v;
    for (const Joint<double>& jt : run.model.joints)
      if (jt.idx_v == v && jt.nv == 1) q = jt.idx_q;
    out.push_back({{"name", joints[j]},
                   {"q_index", q},
                   {"v_index", v},
                   {"limits",
                    {{"q_lower", limit_or_null(l.q_lower[i])},
                     {"q_upper", limit_or_null(l.q_upper[i])},
                     {"qd", limit_or_null(l.qd[i])},
                     {"qdd", limit_or_null(l.qdd[i])},
                     {"tau", limit_or_null(l.tau[i])}}}});
  }
  return out;
}

json excitation_json(const ExcitationRun& run, const std::vector<std::string>& joints, long long seed) {
  const ExcitationDesignResult& r = run.result;
  const ExcitationDesignOptions& o = run.options;
  json coeffs = json::object();
  for (int j = 0; j < r.trajectory.joints(); ++j) {
    std::vector<double> a(r.trajectory.a.cols()), b(r.trajectory.b.cols());
    for (Eigen::Index l = 0; l < r.trajectory.a.cols(); ++l) {
      a[static_cast<size_t>(l)] = r.trajectory.a(j, l);
      b[static_cast<size_t>(l)] = r.trajectory.b(j, l);
    }
    coeffs[joints[static_cast<size_t>(j)]] = {{"q0", r.trajectory.q0[j]}, {"a", a}, {"b", b}};
  }
  json params = json::array();
  for (size_t k = 0; k < r.parameter_names.size(); ++k) {
    const Eigen::Index i = static_cast<Eigen::Index>(k);
    params.push_back({{"combination", r.parameter_names[k]}, {"model_value", r.base_values[i]},
                      {"std_error", finite_or_null(r.designed.std_errors[i])},
                      {"initial_std_error", finite_or_null(r.initial.std_errors[i])}});
  }
  json margins = json::array();
  for (const ExcitationLimitMargin& m : r.margins)
    margins.push_back({{"quantity", m.quantity}, {"joint", joints[static_cast<size_t>(m.joint)]}, {"limit", m.limit},
                       {"worst", m.worst}, {"margin", m.margin}});
  return {
      {"trajectory",
       {{"form", "q_j(t) = q0_j + sum_l a_jl/(w l) sin(w l t) - b_jl/(w l) cos(w l t), w = 2 pi / period"},
        {"period", o.period},
        {"harmonics", o.harmonics},
        {"base_frequency_hz", 1.0 / o.period},
        {"start_at_rest", o.start_at_rest},
        {"coefficients", coeffs}}},
      {"samples", {{"rate", o.output_rate}, {"periods", o.periods}, {"count", r.time.size()}}},
      {"criterion", excitation_criterion_name(o.criterion)},
      {"noise", std::vector<double>(o.noise.data(), o.noise.data() + o.noise.size())},
      {"links", run.links},
      {"joints", joints_json(run, joints)},
      {"named_parameters", named_json(r)},
      {"mount",
       run.result.wrench.size() == 0
           ? json(nullptr)
           : json{{"pose", std::vector<double>(run.result.model_q.row(0).data(), run.result.model_q.row(0).data() + 7)},
                  {"wrench", o.mount.wrench},
                  {"force_noise", o.mount.force_noise},
                  {"torque_noise", o.mount.torque_noise}}},
      {"initial", information_json(r.initial)},
      {"designed", information_json(r.designed)},
      {"base_parameters", params},
      {"limit_margins", margins},
      {"solver",
       {{"iterations", r.iterations},
        {"termination", r.termination},
        {"chosen_start", r.chosen_start},
        {"restarts", o.restarts},
        {"repair_scale", r.repair_scale},
        {"seconds", r.seconds},
        {"seed", seed}}}};
}

}  // namespace

RunReport run_excitation_design(ToolRun& run, const SimidFlags& flags) {
  if (flags.gradients.check || !flags.evaluate_path.empty())
    throw ConfigError("--design-excitation fits nothing: give it without --check-gradients and --evaluate");
  if (run.resume()) throw ConfigError("--design-excitation runs no fit: there is nothing to --resume");
  const ExcitationRun e = design_excitation_from_config({run.config(), run.options().seed}, run.context());
  if (!run.writes()) return e;
  const ExcitationDesignResult& r = e.result;
  std::vector<std::string> joints;
  for (int v : r.coordinates) joints.push_back(e.model.velocity_names()[static_cast<size_t>(v)]);
  TrajectorySet set;
  set.meta = trajectory_metadata(e.model, "simid --design-excitation " + version_string(), "{}", run.options().seed);
  Trajectory t;
  t.name = "excitation";
  t.time = r.time;
  t.q = r.model_q;  // a mounted base: held at its pose, the stand's wrench in its rows of tau
  t.qd = r.model_qd;
  t.tau = r.model_tau;
  set.trajectories.push_back(t);
  write_trajectories(run.path("excitation.h5"), set);
  run.add_output(run.path("excitation.h5"));
  run.write_text("excitation.csv", excitation_csv(r, joints));
  const json j = excitation_json(e, joints, run.options().seed);
  run.write_text("excitation.json", j.dump(2) + "\n");
  json& m = run.summary().metrics();
  m["excitation"] = {{"criterion", j["criterion"]}, {"initial", j["initial"]}, {"designed", j["designed"]},
                     {"base_parameters", r.parameter_names.size()}, {"iterations", r.iterations},
                     {"repair_scale", r.repair_scale}, {"termination", r.termination}};
  double worst = 1;
  for (const ExcitationLimitMargin& lm : r.margins) worst = std::min(worst, lm.margin);
  m["excitation"]["smallest_limit_margin"] = worst;
  m["excitation"]["named_parameters"] = {{"identifiable", r.named.size()},
                                         {"not_identifiable", r.unidentifiable.size()}};
  if (run.plots_wanted())
    run.plot("plot_excitation.py", {run.path("excitation.h5"), run.path("excitation.json")}, "excitation.png");
  spdlog::info("excitation designed: cond(F) {:.4g} -> {:.4g}, log det F {:.4g} -> {:.4g}, {} base parameters, "
               "smallest limit margin {:.3g}, {:.2f} s; wrote {}",
               r.initial.condition, r.designed.condition, r.initial.log_det, r.designed.log_det,
               r.parameter_names.size(), worst, r.seconds, run.path("excitation.json"));
  return e;
}

}  // namespace neuralsim
