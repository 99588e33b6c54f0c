// simid's report.html (docs/simid.md, "report.html"): what a person reads
// of an identification, drawn from the typed result alone.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "common/html_report.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/tools/identify.hpp"
#include "simid/simid_job.hpp"

namespace neuralsim {
namespace {

// One compared signal of a trajectory: a column of q, q̇, τ or a link position.
struct SimidChannel {
  std::string name, unit;
  const Trajectory* measured_trajectory;
  const Trajectory* fitted_trajectory;
  const RowMatrixXd* measured;
  const RowMatrixXd* fitted;
  Eigen::Index column;
};

// The channels the residuals compared: of the prediction `f` (q, q̇, link
// positions; may be null) and of the inverse dynamics' torques `ft` (may be null).
std::vector<SimidChannel> simid_channels(const IdentificationResult& r, const Trajectory& m, const Trajectory* f,
                                         const Trajectory* ft) {
  const TrajectoryMetadata& meta = r.measured.meta;
  const auto name = [](const std::vector<std::string>& names, Eigen::Index j) {
    return j < static_cast<Eigen::Index>(names.size()) ? names[static_cast<std::size_t>(j)] : std::to_string(j);
  };
  std::vector<SimidChannel> c;
  if (ft)
    for (Eigen::Index j = 0; j < m.tau.cols() && j < ft->tau.cols(); ++j)
      c.push_back({"tau " + name(meta.joint_names, j), "N·m or N", &m, ft, &m.tau, &ft->tau, j});
  if (!f) return c;
  if (r.observe.q_weight > 0 && !r.targets)
    for (Eigen::Index j = 0; j < m.q.cols() && j < f->q.cols(); ++j)
      c.push_back({"q " + name(meta.q_names, j), "rad or m", &m, f, &m.q, &f->q, j});
  if (r.observe.qd_weight > 0)
    for (Eigen::Index j = 0; j < m.qd.cols() && j < f->qd.cols(); ++j)
      c.push_back({"qd " + name(meta.joint_names, j), "rad/s or m/s", &m, f, &m.qd, &f->qd, j});
  for (const LinkPositionChannel& l : r.observe.link_positions) {
    const std::string& name = l.data_name();  // a marker's point, as the prediction records it
    const auto a = m.link_poses.find(name), b = f->link_poses.find(name);
    if (a == m.link_poses.end() || b == f->link_poses.end()) continue;
    for (Eigen::Index k = 0; k < 3; ++k) c.push_back({name + " " + "xyz"[k], "m", &m, f, &a->second, &b->second, k});
  }
  // The sensor channels, as predicted along the fitted motion (estimate/sensor_prediction.hpp).
  static const char* imu_axes[6] = {"gyro x", "gyro y", "gyro z", "accel x", "accel y", "accel z"};
  for (const ImuChannel& s : r.observe.imus) {
    const auto a = m.imus.find(s.name), b = f->imus.find(s.name);
    if (a == m.imus.end() || b == f->imus.end()) continue;
    for (Eigen::Index k = 0; k < 6; ++k)
      c.push_back({s.name + " " + imu_axes[k], k < 3 ? "rad/s" : "m/s²", &m, f, &a->second, &b->second, k});
  }
  for (const auto& [ch, label, unit, a, b] :
       {std::tuple<const JointForceChannel*, const char*, const char*, const RowMatrixXd*, const RowMatrixXd*>{
            &r.observe.joint_torques, "tau_measured ", "N·m or N", &m.tau_measured, &f->tau_measured},
        {&r.observe.motor_currents, "current ", "A", &m.current, &f->current}}) {
    if (!ch->observed() || a->size() == 0 || b->size() == 0) continue;
    for (const int j : ch->joints) {
      const Joint<double>& joint = r.fitted_model.joints[static_cast<std::size_t>(j)];
      c.push_back({label + joint.name, unit, &m, f, a, b, joint.idx_v});
    }
  }
  return c;
}

// Measured − fitted at the fitted samples, the measured signal interpolated
// linearly where the times differ (the inverse dynamics uses every
// sample_stride-th sample).
void add_residuals(const SimidChannel& c, std::vector<double>& out) {
  const Eigen::VectorXd &tm = c.measured_trajectory->time, &tf = c.fitted_trajectory->time;
  const Eigen::Index n = std::min<Eigen::Index>(tm.size(), c.measured->rows());
  Eigen::Index k = 0;
  for (Eigen::Index i = 0; i < tf.size() && i < c.fitted->rows() && n > 0; ++i) {
    const double t = tf(i);
    if (t < tm(0) || t > tm(n - 1)) continue;
    while (k + 1 < n && tm(k + 1) <= t) ++k;
    double v = (*c.measured)(k, c.column);
    if (k + 1 < n && t > tm(k)) v += ((*c.measured)(k + 1, c.column) - v) * (t - tm(k)) / (tm(k + 1) - tm(k));
    out.push_back(v - (*c.fitted)(i, c.column));
  }
}

std::vector<double> column(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }
std::vector<double> column(const RowMatrixXd& m, Eigen::Index j) {
  std::vector<double> c(static_cast<std::size_t>(m.rows()));
  for (Eigen::Index k = 0; k < m.rows(); ++k) c[static_cast<std::size_t>(k)] = m(k, j);
  return c;
}

void parameter_section(const IdentificationResult& r, HtmlReport& report) {
  report.section("Parameters");
  const bool truth = !r.relative_error.empty();
  HtmlTable t{{"name", "transform", "initial", r.evaluate_only ? "evaluated" : "fitted", "std. error",
               "95 % interval", "bounds", "ended at bound"},
              {},
              {}};
  if (truth) t.header.push_back("rel. error vs truth");
  for (const IdentifiedParameter& p : r.parameters) {
    const bool known = std::isfinite(p.std_error);
    std::vector<std::string> row{p.name, p.transformation, html_number(p.initial), html_number(p.value),
                                 known ? html_number(p.std_error) : "n/a",
                                 known ? html_number(p.value) + " ± " + html_number(1.96 * p.std_error)
                                 : std::isnan(r.identifiability.residual_variance)
                                       ? "n/a: no more residuals than parameters (no noise estimate)"
                                       : "(-inf, inf): not identifiable from this data",
                                 "[" + html_number(p.lower) + ", " + html_number(p.upper) + "]",
                                 p.at_bound.empty() ? "" : p.at_bound};
    if (truth) row.push_back(r.relative_error.count(p.name) ? html_number(r.relative_error.at(p.name)) : "");
    t.rows.push_back(row);
    t.flagged.push_back(!known || !p.at_bound.empty());
  }
  report.table(t);
  const UncertaintyMethod method = r.uncertainty.covariance.method;
  report.paragraph(std::string("Standard errors: ") + uncertainty_method_name(method) + " (" +
                   uncertainty_assumption(method) + "). Intervals are value ± 1.96 standard errors in physical "
                   "units; highlighted rows ended at a bound or have no standard error.");
  std::vector<const IdentificationResult*> models{&r};  // a joint fit: each configuration's links
  for (const IdentificationResult& c : r.configurations) models.push_back(&c);
  for (const IdentificationResult* m : models) {
    const std::string where = m->configuration.empty() ? "" : " in configuration " + m->configuration;
    for (const InertialEstimate& e : m->inertials) {  // link.<b>.inertial in physical coordinates
      HtmlTable in{{"link " + e.link + where + " (link frame; inertia about the COM)", "value", "std. error",
                    "95 % interval"},
                   {},
                   {}};
      for (int k = 0; k < 10; ++k) {
        const bool known = std::isfinite(e.std_error[k]);
        in.rows.push_back({InertialEstimate::coordinate_names()[static_cast<std::size_t>(k)], html_number(e.value[k]),
                           known ? html_number(e.std_error[k]) : "n/a",
                           known ? html_number(e.value[k]) + " ± " + html_number(1.96 * e.std_error[k])
                                 : "not determined by this data"});
        in.flagged.push_back(!known);
      }
      report.table(in);
    }
  }
  if (!r.fixed.empty()) {
    HtmlTable f{{"held fixed", "value", "from"}, {}, {}};
    for (const ExperimentParameter& p : r.fixed) f.rows.push_back({p.target.name, html_number(p.value), p.source});
    report.table(f);
  }
  HeatMap h{"correlation of the estimates", {}, {}, -1, 1};
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    h.labels.push_back(r.parameters[i].name);
    h.values.emplace_back();
    for (std::size_t j = 0; j < r.parameters.size(); ++j)
      h.values.back().push_back(r.identifiability.correlation(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
  }
  if (!r.parameters.empty()) report.heat_map(h);
}

// The base parameters of an inverse-dynamics fit of link inertias, per
// configuration; with residual.base_parameters: least_squares also the
// direct fit's β̂ and z (highlighted when |z| > 3: the consistency
// constraint moved that combination).
void base_parameter_tables(const IdentificationResult& r, HtmlReport& report) {
  std::vector<const IdentificationResult*> models{&r};
  for (const IdentificationResult& c : r.configurations) models.push_back(&c);
  for (const IdentificationResult* m : models) {
    const BaseParameterFit& b = m->base_parameters;
    if (b.links.empty()) continue;
    const BaseParameterLeastSquares* ls = m->base_least_squares ? &*m->base_least_squares : nullptr;
    const std::string where = m->configuration.empty() ? "" : " (configuration " + m->configuration + ")";
    HtmlTable t{{"base parameter" + where, "value", "std. error"}, {}, {}};
    if (ls) t.header.insert(t.header.end(), {"fitted directly", "std. error", "z"});
    for (size_t k = 0; k < b.estimates.size(); ++k) {
      const BaseParameterEstimate& e = b.estimates[k];
      std::vector<std::string> row{e.expression, html_number(e.value),
                                   std::isfinite(e.std_error) ? html_number(e.std_error) : "n/a"};
      bool flagged = !std::isfinite(e.std_error);
      if (ls) {
        row.insert(row.end(), {html_number(ls->estimates[k].value), html_number(ls->estimates[k].std_error),
                               html_number(ls->z[k])});
        flagged = flagged || !(std::abs(ls->z[k]) <= 3);
      }
      t.rows.push_back(row);
      t.flagged.push_back(flagged);
    }
    report.table(t);
  }
}

void identifiability_section(const IdentificationResult& r, HtmlReport& report) {
  const Identifiability& id = r.identifiability;
  report.section("Identifiability");
  std::string sv;
  for (double s : id.singular_values) sv += (sv.empty() ? "" : ", ") + html_number(s);
  report.paragraph("cond(JᵀJ) of the column-equilibrated Jacobian: " + html_number(id.condition_number) +
                   " (warning above " + html_number(r.uncertainty.condition_warning) + "); its singular values: " + sv +
                   ".");
  std::vector<std::string> words;
  if (id.weak_directions.empty())
    words.push_back("All " + std::to_string(r.parameters.size()) + " parameters are identifiable from this data.");
  for (const UnidentifiableDirection& d : id.weak_directions) {
    std::string parts;
    for (std::size_t i = 0; i < d.direction.size() && i < r.parameters.size(); ++i)
      if (std::abs(d.direction[i]) > 0.1)
        parts += (parts.empty() ? "" : ", ") + r.parameters[i].name + " " + format_printf("%+.2f", d.direction[i]);
    words.push_back("Not identifiable from this data: " + d.description + " (relative singular value " +
                    html_number(d.relative_singular_value) + "; the direction, in parameters scaled by their "
                    "Jacobian columns: " + parts + "). Its parameters get an infinite interval.");
  }
  for (int i : id.unseen)
    words.push_back("'" + r.parameters[static_cast<std::size_t>(i)].name +
                    "' has no effect on any residual: the data cannot see it.");
  report.list(words);
  base_parameter_tables(r, report);
}

void convergence_section(const IdentificationResult& r, HtmlReport& report) {
  report.section("Convergence");
  report.paragraph("Best local solve: " + r.best.report + (r.search.state.history.empty() ? "" :
                   "; basin hopping: " + std::to_string(r.search.state.history.size()) + " round(s), stopped by '" +
                   r.search.stop_reason + "'."));
  PlotSeries cost{"cost", {}, r.best.cost_history};
  for (std::size_t k = 0; k < cost.y.size(); ++k) cost.x.push_back(static_cast<double>(k));
  if (!cost.y.empty()) report.line_plot({"cost ½Σr² of the best local solve", "iteration", "cost", {cost}, true});
  PlotSeries best{"best so far", {}, {}}, round{"round's best", {}, {}, true};
  for (const RoundRecord& h : r.search.state.history) {
    best.x.push_back(h.round), best.y.push_back(h.best_cost);
    round.x.push_back(h.round), round.y.push_back(h.round_best_cost);
  }
  if (best.x.size() > 1) report.line_plot({"basin hopping", "round", "cost", {best, round}, true});
}

// Measured against fitted for every channel of every trajectory, then the
// residual histograms of the training data.
// `title`: the configuration's name in a joint fit (empty otherwise).
void trajectory_section(const IdentificationResult& r, HtmlReport& report, const std::string& title = {}) {
  const std::string of = title.empty() ? "" : " (configuration " + title + ")";
  report.section("Measured and fitted" + of);
  const bool torque = r.problem.formulation == Formulation::kInverseDynamics;
  report.paragraph((r.targets ? std::string("Reach targets (solid) and the fitted motion (dashed).")
                              : "Recorded (solid) and predicted (dashed); predictions restart from the recorded state "
                                "every " + std::to_string(r.prediction_window) + " samples.") +
                   (torque ? " Joint forces: the recorded ones and the fitted model's inverse dynamics at the "
                             "recorded states, which the fit compared."
                           : ""));
  const std::size_t n_train = r.train.per_trajectory.size(),
                    n_validation = r.validation ? r.validation->per_trajectory.size() : 0;
  std::vector<std::vector<double>> residuals;
  std::vector<std::string> names;
  const auto fitted = [&](const std::string& name) -> const Trajectory* {
    for (const Trajectory& c : r.fitted.trajectories)
      if (c.name == name) return &c;
    return nullptr;
  };
  for (std::size_t t = 0; t < r.measured.trajectories.size(); ++t) {
    const Trajectory& m = r.measured.trajectories[t];
    const char* role = t < n_train ? "training" : t < n_train + n_validation ? "validation" : "test";
    // An inverse-dynamics fit's torques are named inverse_dynamics_NAME
    // (validation_inverse_dynamics_NAME); predictions have the data's names.
    const Trajectory* ft = !torque ? nullptr
                           : t < n_train ? fitted("inverse_dynamics_" + m.name)
                                         : fitted("validation_inverse_dynamics_" + m.name.substr(std::string("validation_").size()));
    report.subsection(std::string(role) + ": " + m.name);
    const std::vector<SimidChannel> channels = simid_channels(r, m, fitted(m.name), ft);
    if (channels.empty()) report.paragraph("No prediction (it diverged or is not evaluated).");
    for (const SimidChannel& c : channels) {
      report.line_plot({c.name, "time [s]", c.unit,
                        {{"measured", column(m.time), column(*c.measured, c.column)},
                         {"fitted", column(c.fitted_trajectory->time), column(*c.fitted, c.column), true}}},
                       380, 230);
      if (t >= n_train) continue;
      std::size_t k = 0;
      while (k < names.size() && names[k] != c.name) ++k;
      if (k == names.size()) names.push_back(c.name), residuals.emplace_back();
      add_residuals(c, residuals[k]);
    }
  }
  report.section("Residuals" + of);
  report.paragraph("Measured minus fitted over the training data, per channel.");
  for (std::size_t k = 0; k < names.size(); ++k) report.histogram({names[k], "measured - fitted", residuals[k]});
}

}  // namespace

void write_simid_report(const IdentificationResult& r, ToolRun& run) {
  HtmlReport report("simid: " + r.model_name);
  std::string summary = std::string(r.evaluate_only ? "Evaluation" : "Fit") + " of " +
                        std::to_string(r.parameters.size()) + " parameters (" +
                        formulation_name(r.problem.formulation) + "): status " + run_status_name(r.status) +
                        ", cost " + html_number(r.cost) + " (from " + html_number(r.best.initial_cost) + ")";
  if (!r.targets) summary += ", training RMSE(q) " + html_number(r.train.mean_rmse_q);
  if (r.validation) summary += ", validation RMSE(q) " + html_number(r.validation->mean_rmse_q);
  if (r.test) summary += ", test RMSE(q) " + html_number(r.test->mean_rmse_q);
  report.paragraph(summary + ".");
  report.section("Warnings");
  report.warnings(r.warnings);
  parameter_section(r, report);
  identifiability_section(r, report);
  convergence_section(r, report);
  if (r.configurations.empty()) trajectory_section(r, report);
  for (const IdentificationResult& c : r.configurations) trajectory_section(c, report, c.configuration);
  run.write_report(report);
}

}  // namespace neuralsim
