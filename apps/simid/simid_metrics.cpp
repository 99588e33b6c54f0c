// summary.json's errors per trajectory, window and torque, and its
// estimates beside the named parameters (docs/simid.md):
// each fitted link in physical coordinates, for an inverse-dynamics fit the
// base parameters with their estimates and standard errors, and the fitted
// starting states (residual.fit_initial_state, multiple shooting's segments).
#include <cmath>

#include "common/app.hpp"
#include "neuralsim/tools/identify.hpp"
#include "simid/simid_job.hpp"

namespace neuralsim {

static nlohmann::json per_trajectory_json(const FitEvaluation& e, bool targets) {
  nlohmann::json a = nlohmann::json::array();
  for (const TrajectoryFit& t : e.per_trajectory) {
    nlohmann::json j{{"name", t.name}};
    if (!targets) j["rmse_q"] = t.rmse_q;
    if (!std::isnan(t.rmse_link_position)) j[targets ? "target_distance" : "rmse_link_position"] = t.rmse_link_position;
    if (!std::isnan(t.cost)) j["cost"] = t.cost;
    for (const auto& [channel, rmse] : t.rmse_sensors) j["rmse_sensors"][channel] = rmse;
    a.push_back(j);
  }
  return a;
}

static nlohmann::json torque_evaluation_json(const TorqueEvaluation& t, const ProblemOptions& problem) {
  nlohmann::json j = torque_json(t.fitted);
  if (t.initial) j["initial"] = torque_json(*t.initial);
  if (problem.derivatives.method == DerivativeMethod::kCentralDifference) j["filter_window"] = problem.filter_window;
  j["derivatives"] = derivatives_json(problem.derivatives);
  return j;
}

void evaluation_metrics(const IdentificationResult& r, nlohmann::json& m) {
  const bool links = !r.train.per_trajectory.empty() && !std::isnan(r.train.per_trajectory.front().rmse_link_position);
  if (r.targets) m["mean_target_distance"] = r.train.mean_rmse_link_position * std::sqrt(3.0);
  else m["train_rmse_q"] = r.train.mean_rmse_q;
  if (!r.targets && links) m["train_rmse_link_position"] = r.train.mean_rmse_link_position;
  m["train_per_trajectory"] = per_trajectory_json(r.train, r.targets);
  if (r.validation) {
    m["validation_rmse_q"] = r.validation->mean_rmse_q;
    if (links) m["validation_rmse_link_position"] = r.validation->mean_rmse_link_position;
    m["validation_per_trajectory"] = per_trajectory_json(*r.validation, false);
  }
  if (r.test) m["test_rmse_q"] = r.test->mean_rmse_q;  // held out: evaluated once with the fitted parameters
  if (r.test && links) m["test_rmse_link_position"] = r.test->mean_rmse_link_position;
  if (r.test) m["test_per_trajectory"] = per_trajectory_json(*r.test, false);
  if (r.train_windows) m["train_windows"] = windows_json(*r.train_windows);
  if (r.validation_windows) m["validation_windows"] = windows_json(*r.validation_windows);
  if (r.train_torque) m["train_torque"] = torque_evaluation_json(*r.train_torque, r.problem);
  if (r.validation_torque) m["validation_torque"] = torque_evaluation_json(*r.validation_torque, r.problem);
  if (!r.torque_note.empty()) m["torque_note"] = r.torque_note;
  m["physically_consistent"] = r.physically_consistent;
  m["missing_entries"] = {{"observed", r.missing.observed}, {"missing", r.missing.missing}, {"per_channel", r.missing.per_channel}};
}

void estimate_metrics(const IdentificationResult& r, nlohmann::json& m) {
  for (const InertialEstimate& e : r.inertials)
    for (size_t k = 0; k < 10; ++k)
      m["inertials"][e.link][InertialEstimate::coordinate_names()[k]] = {
          {"value", e.value[static_cast<int>(k)]}, {"std_error", finite_or_null(e.std_error[static_cast<int>(k)])}};
  for (const FittedStartStates& f : r.start_states) {
    nlohmann::json q = nlohmann::json::array(), qd = nlohmann::json::array();
    for (Eigen::Index k = 0; k < f.states.q.rows(); ++k) {
      q.push_back(std::vector<double>(f.states.q.row(k).data(), f.states.q.row(k).data() + f.states.q.cols()));
      qd.push_back(std::vector<double>(f.states.qd.row(k).data(), f.states.qd.row(k).data() + f.states.qd.cols()));
    }
    m["start_states"][f.name] = {{"samples", f.states.samples}, {"q", q}, {"qd", qd}};
  }
  const ContinuityReport& c = r.best.continuity;  // multiple shooting: how its segments join
  if (c.joins > 0)
    m["multiple_shooting"] = {{"joins", c.joins},
                              {"continuity_weight_q", c.weight_q},
                              {"continuity_weight_qd", c.weight_qd},
                              {"rounds", c.rounds},
                              {"gap_q_max", finite_or_null(c.gap_q_max)},
                              {"gap_q_rms", finite_or_null(c.gap_q_rms)},
                              {"gap_qd_max", finite_or_null(c.gap_qd_max)},
                              {"gap_qd_rms", finite_or_null(c.gap_qd_rms)},
                              {"gap_rms", finite_or_null(c.gap_rms)},
                              {"misfit_rms_q", c.misfit_rms},
                              {"tolerance", c.tolerance},
                              {"joined", c.joined()}};
  const BaseParameterFit& b = r.base_parameters;
  if (b.links.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  for (const BaseParameterEstimate& e : b.estimates)
    list.push_back({{"combination", e.expression}, {"value", e.value}, {"std_error", finite_or_null(e.std_error)}});
  m["base_parameters"] = {{"links", b.links},
                          {"standard_parameters", b.standard},
                          {"rank", b.base.rank},
                          {"rank_tolerance", b.base.tolerance},
                          {"estimates", list}};
  if (!r.base_least_squares) return;
  const BaseParameterLeastSquares& ls = *r.base_least_squares;
  nlohmann::json direct = nlohmann::json::array(), others = nlohmann::json::object();
  for (size_t k = 0; k < ls.estimates.size(); ++k)
    direct.push_back({{"combination", ls.estimates[k].expression},
                      {"value", ls.estimates[k].value},
                      {"std_error", finite_or_null(ls.estimates[k].std_error)},
                      {"z", finite_or_null(ls.z[k])}});
  for (size_t i = 0; i < r.parameters.size() && i < ls.value.size(); ++i)
    if (std::isfinite(ls.value[i]))
      others[r.parameters[i].name] = {{"value", ls.value[i]}, {"std_error", finite_or_null(ls.std_error[i])}};
  m["base_parameters"]["least_squares"] = {{"estimates", direct},
                                           {"parameters", others},
                                           {"cost", ls.cost},
                                           {"torque_rmse", ls.rmse},
                                           {"validation_torque_rmse", finite_or_null(ls.validation_rmse)},
                                           {"residuals", ls.residuals},
                                           {"iterations", ls.iterations},
                                           {"converged", ls.converged}};
}

}  // namespace neuralsim
