#include "neuralsim/tools/identify.hpp"

#include "neuralsim/estimate/sensor_prediction.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/inertia_prior.hpp"
#include "neuralsim/experiment/configurations.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/io/parameter_file.hpp"
#include "neuralsim/model/parameterization.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/identify_checkpoint.hpp"

namespace neuralsim {
namespace identify_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The post-fit analysis after a stop (Ctrl-C, SIGTERM, Python's
// KeyboardInterrupt). It is what gives the standard errors and the
// predictions, and a cheap one is worth finishing; but on 1 kHz data or a
// long multiple-shooting problem its Jacobian alone costs as much as a solver
// iteration, and Ctrl-C must end the run within a second. So once the stop
// flag is set the analysis has kGraceSeconds more; past that its residual
// blocks are skipped (EstimationProblem::set_stop), the next check() throws
// AnalysisAbandoned, and identify() reports the fitted values alone
// (IdentificationResult::analysis_done false).
struct AnalysisAbandoned {};
class AnalysisDeadline {
 public:
  static constexpr double kGraceSeconds = 0.5;
  explicit AnalysisDeadline(const RunContext& context) : context_(context) {}
  // The stop flag, noting when it was first seen (the fit polls it through
  // this, so the grace counts from the stop, not from the analysis' start).
  // Thread-safe: residual blocks poll it from the TBB workers.
  bool stop_seen() const {
    if (!context_.stop_requested()) return false;
    long long seen = 0;
    first_seen_ns_.compare_exchange_strong(seen, now_ns());
    return true;
  }
  bool expired() const {
    return stop_seen() && static_cast<double>(now_ns() - first_seen_ns_.load()) * 1e-9 > kGraceSeconds;
  }
  void check() const {
    if (expired()) throw AnalysisAbandoned{};
  }
  // Abandoned at once: an analysis costs at least one Jacobian of the whole
  // problem, about one solver iteration, so after a stop the analysis of a
  // fit whose iterations take longer than the grace cannot finish within it
  // (and building its problem alone may take longer than the grace).
  void abandon_if_slower_than_grace(const LocalResult& best) const {
    if (stop_seen() && best.seconds / std::max(1, best.iterations) > kGraceSeconds) throw AnalysisAbandoned{};
  }

 private:
  static long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }
  const RunContext& context_;
  mutable std::atomic<long long> first_seen_ns_{0};
};

// The fitted values without the analysis: no standard errors (NaN), no
// correlation, identifiability unknown, no predictions.
void values_only(const ParameterSet& params, const std::vector<double>& x, IdentificationResult& r) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int P = params.size();
  r.analysis_done = false;
  r.identifiability = Identifiability{};
  r.identifiability.correlation = Eigen::MatrixXd::Constant(P, P, nan);
  r.identifiability.condition_number = nan;
  r.identifiability.residual_variance = nan;
  for (int i = 0; i < P; ++i) {
    const double value = params.physical(i, x[static_cast<size_t>(i)]);
    r.identifiability.value.push_back(value);
    r.identifiability.std_error.push_back(nan);
    r.parameters.push_back({params[i].name(), value, nan, nan, params[i].initial, params[i].lower, params[i].upper,
                            transformation_name(params[i].transformation), ""});
  }
}

Config section_or_empty(const Config& owner, const std::string& key) {
  return owner.has(key) ? owner.at(key) : Config::parse("{}", owner.file());
}

// Everything read from the config and checked before any work: of the
// experiment, or of one configuration of a joint fit (its own model,
// parameters, channels and data; the estimate section's options shared).
struct Setup {
  std::string configuration;  // its name in a joint fit; empty otherwise
  Experiment exp;
  ParameterSet params;
  ObservationSpec observe;
  ProblemOptions problem;
  UncertaintyOptions uncertainty;
  int window = 0;       // evaluation_window
  int eval_window = 0;  // window, or never restart for reach targets
  std::optional<EvaluationWindows> eval_windows;
  SolverOptions solver;
  BasinHoppingOptions bh;
  DataSplit data;
  std::vector<std::string> data_notes;
  std::map<std::string, double> ground_truth;
  bool has_ground_truth = false;
};

void check_data(const Config& est, const Setup& s) {
  const Model<double>& model = s.exp.model;
  const DataSplit& data = s.data;
  if (data.targets && (s.observe.q_weight > 0 || s.observe.qd_weight > 0 || s.observe.link_positions.empty()))
    est.fail("observe", "with data.targets observe only link positions: {q: 0, link_positions: [{link: ...}]}");
  s.observe.check_available(data.train, data.train_source);
  if (data.targets && s.problem.fit_initial_state.any())
    est.at("residual").fail("fit_initial_state", "a reach target's start state is given (data.targets: q0, qd0), not "
                                                 "measured: there is no recorded start to fit");
  if (s.problem.torque_weight > 0) {
    bool any = false;
    for (const Trajectory& t : data.train.trajectories) any = any || t.has_tau();
    if (!any)
      throw DataError(data.train_source + ": estimate.residual.torque_weight needs recorded joint forces "
                      "(/trajectories/<name>/tau), and no training trajectory has them");
  }
  if (s.problem.formulation != Formulation::kInverseDynamics) return;
  for (const Trajectory& t : data.train.trajectories)
    if (!t.has_tau() && s.observe.commanded_torques.rows(model.nv) > 0)
      throw DataError(data.train_source + ":/trajectories/" + t.name +
                      "/tau: inverse-dynamics identification needs measured joint forces (expected shape (T, nv=" +
                      std::to_string(model.nv) + "))");
  // A derivative window longer than every training trajectory leaves no sample.
  long long longest = 0;
  for (const Trajectory& t : data.train.trajectories) longest = std::max<long long>(longest, t.size());
  const int margin = derivative_margin(s.problem.derivatives);
  if (longest <= 2LL * margin) {
    // Too little data, not a bad setting: a data error (exit 3), naming the key.
    const Config r = est.at("residual");
    const std::string key = r.has("derivatives") ? "derivatives.window" : "filter_window";
    throw DataError("no residuals: " + r.where(key) + ": key '" + r.prefix() + "." + key + "': a window of " +
                    std::to_string(s.problem.derivatives.window) + " samples leaves no sample of the training data " +
                    "for residual type inverse_dynamics (longest trajectory: " + std::to_string(longest) +
                    " samples; " + std::to_string(margin) + " are dropped at each end)");
  }
}

// The default derivative window is counted in samples (31): 30 ms at 1 kHz,
// where the 7-DoF study's intervals hold, but 155 ms at 200 Hz, where
// Savitzky–Golay's cubic bends fast motion and q̈'s bias took the 95 %
// intervals' coverage to 77 % (docs/simid-studies.md). Say so where a
// recording is sampled that slowly.
void warn_long_default_window(const Config& est, Setup& s) {
  const bool torque = s.problem.formulation == Formulation::kInverseDynamics || s.problem.torque_weight > 0;
  const Config r = section_or_empty(est, "residual");
  if (!torque || r.has("derivatives") || r.has("filter_window") ||
      s.problem.derivatives.method != DerivativeMethod::kSavitzkyGolay)
    return;
  constexpr double kLongest = 0.05;  // s
  for (const Trajectory& t : s.data.train.trajectories) {
    if (t.size() < 2) continue;
    const double dt = (t.time[t.size() - 1] - t.time[0]) / static_cast<double>(t.size() - 1);
    const double span = (s.problem.derivatives.window - 1) * dt;
    if (!(span > kLongest)) continue;
    s.exp.warnings.push_back(format_printf(
        "estimate.residual.derivatives: the default Savitzky–Golay window of %d samples spans %.3g s at trajectory "
        "'%s' (%.4g Hz), which biases q̈ of fast motion (the 7-DoF study at 200 Hz: 77 %% of the 95 %% intervals "
        "held, 96 %% with 7-11 samples): give derivatives.window for this rate and the noise of q, e.g. %d samples "
        "(about 30 ms; docs/simid-studies.md)",
        s.problem.derivatives.window, span, t.name.c_str(), 1 / dt,
        2 * static_cast<int>(std::lround(0.015 / dt)) + 1));
    return;
  }
}

// A simulation starts from a recorded state (q, q̇), which must be
// complete: the fit's windows or segments, and the evaluation's restarts
// (every evaluation_window samples, or the `evaluation:` windows). Missing
// entries elsewhere are skipped (observation.hpp).
void check_missing_data(const Setup& s) {
  if (s.data.targets) return;  // a reach target's start is given, not recorded
  const DataSplit& d = s.data;
  const ProblemOptions& p = s.problem;
  const int window = std::max(1, p.window);
  if (p.formulation == Formulation::kSingleShooting)
    check_complete_starts(d.train, p.stride > 0 ? p.stride : window, d.train_source,
                          "a single-shooting window (estimate.residual.window, stride) starts");
  if (p.formulation == Formulation::kMultipleShooting)
    check_complete_starts(d.train, window, d.train_source,
                          "a multiple-shooting segment (estimate.residual.window) starts");
  for (const auto& [set, source] : {std::pair{&d.train, &d.train_source}, std::pair{&d.validation, &d.validation_source},
                                    std::pair{&d.test, &d.test_source}}) {
    if (!s.eval_windows) {
      check_complete_starts(*set, s.window, *source, "a prediction (estimate.evaluation_window) restarts");
      continue;
    }
    for (const Trajectory& tr : set->trajectories)
      for (const SampleWindow& w : select_windows(tr.time, *s.eval_windows).windows)
        check_complete_state(tr, w.start, *source, "an evaluation window (estimate.evaluation) starts");
  }
}

// The entry of estimate.parameters that names `name`.
Config delay_parameter_config(const Config& est, const std::string& name = "controls.delay") {
  for (const Config& item : est.list("parameters"))
    if (item.get<std::string>("name") == name) return item;
  return est;  // not reached: the parameter set holds it
}

// Sensor delays: fixed ones from params: / params_file: (a params.json
// replays a fit) go to the observation, unless estimate.observe gives them
// too; a fitted one needs its channel observed.
void apply_sensor_delays(const Config& est, Setup& s) {
  const char* channels[2] = {"q", "qd"};
  double* delays[2] = {&s.observe.q_delay, &s.observe.qd_delay};
  const double weights[2] = {s.observe.q_weight, s.observe.qd_weight};
  for (const ExperimentParameter& p : s.exp.parameters) {
    if (p.target.kind != ParameterKind::kSensorDelay) continue;
    const int c = p.target.channel;
    if (est.has("observe") && est.at("observe").is_map(channels[c]) && est.at("observe").at(channels[c]).has("delay"))
      est.at("observe").at(channels[c]).fail("delay", "is also set by " + p.source + " (" + p.target.name +
                                                          "): give the delay in one place");
    *delays[c] = p.value;
  }
  for (int i = 0; i < s.params.size(); ++i)
    if (s.params[i].kind() == ParameterKind::kSensorDelay && !(weights[s.params[i].target.channel] > 0))
      delay_parameter_config(est, s.params[i].name())
          .fail("name", "'" + s.params[i].name() + "' delays the channel estimate.observe." +
                            channels[s.params[i].target.channel] + ", which is not observed (weight 0)");
}

// Inverse dynamics compares the torques of one sample: a control delay
// (fixed or fitted) has no effect on it, so it is refused rather than ignored.
void refuse_delay_without_replay(const Config& cfg, const Config& est, const Setup& s) {
  const bool inverse = s.problem.formulation == Formulation::kInverseDynamics;
  const bool torque = s.problem.torque_weight > 0;
  if (inverse && (s.params.has(ParameterKind::kSensorDelay) || s.observe.q_delay != 0 || s.observe.qd_delay != 0))
    est.fail("observe", "a sensor delay applies to simulated states, and residual type inverse_dynamics compares "
                        "torques; use single_shooting or multiple_shooting");
  if (!inverse && !torque) return;
  const std::string what = inverse ? "residual type inverse_dynamics" : "estimate.residual.torque_weight";
  if (s.params.has(ParameterKind::kControlDelay))
    delay_parameter_config(est).fail("name", "'controls.delay' delays the replayed controls, and " + what +
                                                 " compares the torques of one sample; use single_shooting or "
                                                 "multiple_shooting without torque_weight");
  if (s.exp.step.controls.delay != 0)
    cfg.at("sim").at("controls").fail("delay", "a control delay applies to the replayed controls, and " + what +
                                                   " compares the torques of one sample; expected 0 with it");
}

// The IMUs of estimate.observe.imus: a fitted or fixed imu.<name>.* names
// one of them (and a channel with weight > 0); fixed values from params: /
// params_file: (a params.json replays a fit) become the channel's
// calibration. The shooting formulations take q̈ at a sample from the
// forward dynamics under the control the replay applies there (any
// interpolation and delay, imu_residual.hpp), which impulses bypass.
void apply_imus(const Config& est, Setup& s) {
  std::vector<ImuChannel>& imus = s.observe.imus;
  auto channel = [&](const NamedParameter& p) -> ImuChannel* {
    for (ImuChannel& ch : imus)
      if (ch.name == p.sensor) return &ch;
    return nullptr;
  };
  auto known = [&] {
    std::string out;
    for (const ImuChannel& ch : imus) out += (out.empty() ? "" : ", ") + ch.name;
    return "[" + out + "]";
  };
  for (const ExperimentParameter& p : s.exp.parameters) {
    if (p.target.kind != ParameterKind::kImu) continue;
    ImuChannel* ch = channel(p.target);
    if (!ch)
      throw ConfigError(p.source + ": '" + p.target.name + "' names IMU '" + p.target.sensor +
                        "', which is not in estimate.observe.imus " + known());
    if (p.target.axis < 0) ch->gain[p.target.channel] = p.value;
    else ch->bias[p.target.channel][p.target.axis] = p.value;
  }
  for (int i = 0; i < s.params.size(); ++i) {
    const NamedParameter& p = s.params[i].target;
    if (p.kind != ParameterKind::kImu) continue;
    const Config item = delay_parameter_config(est, p.name);
    const ImuChannel* ch = channel(p);
    if (!ch) item.fail("name", "'" + p.name + "' names IMU '" + p.sensor + "', which is not in estimate.observe.imus " + known());
    if (!((p.channel == 0 ? ch->gyro_weight : ch->accel_weight) > 0))
      item.fail("name", "'" + p.name + "' calibrates a channel of IMU '" + p.sensor + "' whose " +
                            (p.channel == 0 ? "gyro_weight" : "accel_weight") + " is 0 (not observed)");
  }
  if (imus.empty() || s.problem.formulation == Formulation::kInverseDynamics) return;
  if (s.exp.contact && s.exp.contact->model == ContactModelType::kImpulse)
    est.at("observe").fail("imus", "an IMU in single or multiple shooting needs q̈ at each sample, which contact "
                                   "impulses do not give; use a force-level contact model (hunt_crossley, penalty), "
                                   "residual type inverse_dynamics, or no 'contact:' section");
}

// The joint-force channels (estimate.observe.joint_torques, motor_currents):
// a fixed joint.<name>.torque_constant from params: / params_file: becomes
// the channel's value, a fitted one needs its joint's current observed; in
// shooting, q̈ at a sample comes from the forward dynamics as for the IMUs
// (same contact condition).
void apply_joint_force_channels(const Config& est, Setup& s) {
  ObservationSpec& obs = s.observe;
  auto observed = [&](int joint) {
    const std::vector<int>& js = obs.motor_currents.joints;
    return obs.motor_currents.observed() && std::find(js.begin(), js.end(), joint) != js.end();
  };
  for (const ExperimentParameter& p : s.exp.parameters) {
    if (p.target.kind != ParameterKind::kTorqueConstant) continue;
    if (obs.torque_constant.empty()) obs.torque_constant.assign(s.exp.model.joints.size(), 1.0);
    obs.torque_constant[static_cast<size_t>(p.target.joint)] = p.value;
  }
  for (int i = 0; i < s.params.size(); ++i) {
    const NamedParameter& p = s.params[i].target;
    if (p.kind == ParameterKind::kTorqueConstant && !observed(p.joint))
      delay_parameter_config(est, p.name)
          .fail("name", "'" + p.name + "' scales the current of joint '" + s.exp.model.joints[p.joint].name +
                            "', which estimate.observe.motor_currents does not observe (weight 0 or not in its joints)");
  }
  if (obs.joint_force_residuals() == 0 || s.problem.formulation == Formulation::kInverseDynamics) return;
  if (s.exp.contact && s.exp.contact->model == ContactModelType::kImpulse)
    est.at("observe").fail(obs.joint_torques.observed() ? "joint_torques" : "motor_currents",
                           "a joint-torque or motor-current channel in single or multiple shooting needs q̈ at each "
                           "sample, which contact impulses do not give; use a force-level contact model "
                           "(hunt_crossley, penalty), residual type inverse_dynamics, or no 'contact:' section");
}

// `configuration` (with the list of every configuration's name): one
// configuration of a joint fit, `cfg` its view of the config
// (experiment/configurations.hpp).
// Whether an inverse-dynamics fit's rows are the commanded torques alone, at
// their default weights (no IMU, joint-torque or current rows): what the
// base parameters read, nv rows per sample.
bool commanded_torque_rows_only(const ObservationSpec& observe) {
  return observe.commanded_torques.is_default() && observe.imus.empty() && observe.joint_force_residuals() == 0;
}

// residual.base_parameters: least_squares fits β to the torque rows of the
// regressor route, one configuration at a time.
void check_base_parameter_least_squares(const Config& est, const Setup& s,
                                        const std::vector<std::string>& configurations) {
  if (!s.problem.base_parameter_least_squares) return;
  const Config r = est.at("residual");
  std::string why_not;
  if (inertial_bodies(s.params).empty())
    r.fail("base_parameters", "least_squares needs link inertias among estimate.parameters (mass, com, inertia or "
                              "inertial): none is fitted");
  if (!regressor_route_applies(s.exp.model, s.params, &why_not))
    r.fail("base_parameters", "least_squares needs the regressor route: " + why_not);
  if (!commanded_torque_rows_only(s.observe))
    r.fail("base_parameters", "least_squares fits the commanded torques alone: not with observe.commanded_torques, "
                              "imus, joint_torques or motor_currents");
  if (!configurations.empty())
    r.fail("base_parameters", "least_squares is not available for a joint fit over configurations");
}

Setup read_setup(const Config& cfg, long long seed, const std::string& configuration = {},
                 const std::vector<std::string>& configurations = {}) {
  cfg.check_known_keys(
      {"name", "description", "model", "params", "params_file", "sim", "data", "estimate", "output", "contact",
       "excitation",  // excitation: read by --design-excitation only (tools/excitation.hpp)
       "configurations"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"plot"});
  Setup s;
  s.configuration = configuration;
  s.exp = load_experiment(cfg);
  const Model<double>& model = s.exp.model;
  const Config est = cfg.at("estimate");
  est.check_known_keys({"parameters", "observe", "residual", "solver", "basin_hopping", "ground_truth",
                        "evaluation_window", "evaluation", "uncertainty", "prior"});
  s.params = read_parameter_set(est, "parameters", model, s.exp.contact ? &s.exp.contact->parameters : nullptr,
                                &s.exp.warnings, &s.exp.step.controls, configuration, configurations);
  s.observe = read_observation(section_or_empty(est, "observe"), model);
  s.problem = read_problem_options(section_or_empty(est, "residual"), &model);
  read_prior(section_or_empty(est, "prior"), s.problem);
  if (s.problem.geometric_prior_weight > 0) {
    const std::vector<int> bodies = inertial_bodies(s.params);
    if (bodies.empty())
      est.at("prior").fail("geometric", "no fitted parameter changes a link's inertia (mass, com, inertia or "
                                        "inertial): the geometric prior acts on links' inertias");
    for (int b : bodies) try {
        GeometricInertiaDistance(pseudo_inertia(model.bodies[static_cast<size_t>(b)].inertia));
      } catch (const InvalidArgument&) {
        est.at("prior").fail("geometric", "link '" + model.bodies[static_cast<size_t>(b)].name +
                                              "' has a model inertia that is not physically consistent (its "
                                              "pseudo-inertia is not positive definite): nothing to pull toward");
      }
  }
  s.uncertainty = read_uncertainty_options(section_or_empty(est, "uncertainty"), seed);
  // Predictions restart from the measured state every `evaluation_window`
  // samples (default: the shooting window; 50 for inverse dynamics), so fits
  // of different formulations are compared under one metric.
  s.window = static_cast<int>(est.get_int_in_range(
      "evaluation_window", s.problem.formulation == Formulation::kInverseDynamics ? 50 : s.problem.window, 1,
      100000000));
  // `evaluation: {every: T, horizon: H}` (seconds): windowed validation on
  // every file's own clock, besides the sample-based metric above.
  if (est.has("evaluation") && est.has("evaluation_window"))
    est.fail("evaluation", "give either evaluation (seconds) or evaluation_window (samples), not both");
  if (est.has("evaluation")) s.eval_windows = read_evaluation_windows(est.at("evaluation"));
  s.solver = read_solver_options(section_or_empty(est, "solver"));
  if (s.solver.solver == LocalSolver::kLbfgs && s.problem.formulation == Formulation::kMultipleShooting)
    est.fail("solver", "lbfgs cannot optimize multiple-shooting states; use levenberg_marquardt");
  if (s.problem.formulation == Formulation::kInverseDynamics && s.exp.contact)
    est.fail("residual", "inverse_dynamics does not model contact forces; use single_shooting or multiple_shooting "
                         "with a 'contact:' section");
  if (s.problem.formulation != Formulation::kSingleShooting && s.params.has(ParameterKind::kInitialVelocity))
    est.fail("parameters", "initial.qd.* parameters need residual type single_shooting (multiple shooting already "
                           "frees every segment's state)");
  // One starting velocity per window, or one shared by every trajectory:
  // not both (fitting q alone keeps initial.qd.* on the first sample).
  if (s.problem.fit_initial_state.qd && s.params.has(ParameterKind::kInitialVelocity))
    est.at("residual").fail("fit_initial_state", "fits every window's starting velocity, and estimate.parameters "
                                                 "has initial.qd.* (one velocity shared by every trajectory): give one");
  if (s.solver.solver == LocalSolver::kLbfgs && s.problem.fit_initial_state.any())
    est.at("residual").fail("fit_initial_state", "lbfgs cannot optimize starting states; use levenberg_marquardt");
  s.bh = read_basin_hopping(section_or_empty(est, "basin_hopping"), seed);
  // The commanded-torque rows belong to the torque residuals.
  const CommandedTorqueChannel& commanded = s.observe.commanded_torques;
  const bool torque_rows = s.problem.formulation == Formulation::kInverseDynamics || s.problem.torque_weight > 0;
  if (!commanded.is_default() && !torque_rows)
    est.at("observe").fail("commanded_torques", "weighs the torque rows of residual type inverse_dynamics or of "
                                                "residual.torque_weight, and this fit has none");
  if (commanded.weight == 0 && s.problem.torque_weight > 0)
    est.at("observe").fail("commanded_torques", "weight 0 removes the torque rows that residual.torque_weight adds: "
                                                "set torque_weight 0 instead");
  if (s.problem.formulation == Formulation::kInverseDynamics && commanded.weight == 0 && s.observe.imus.empty() &&
      s.observe.joint_force_residuals() == 0)
    est.at("observe").fail("commanded_torques", "weight 0 leaves inverse dynamics nothing to compare: observe "
                                                "joint_torques, motor_currents or imus");
  apply_sensor_delays(est, s);
  refuse_delay_without_replay(cfg, est, s);
  apply_imus(est, s);
  apply_joint_force_channels(est, s);
  check_base_parameter_least_squares(est, s, configurations);

  // NaN in q, q̇ and link poses is a missing sample (docs/simid.md, gaps):
  // check_missing_data says where it cannot be skipped.
  s.data = load_data(cfg.at("data"), model, &s.data_notes, true);
  check_control_timing(cfg.at("sim"), s.exp.step, s.data.train, s.data.train_source);
  check_control_timing(cfg.at("sim"), s.exp.step, s.data.validation, s.data.validation_source);
  check_control_timing(cfg.at("sim"), s.exp.step, s.data.test, s.data.test_source);
  // Every delay (both bounds when fitted), of either sign, shorter than every trajectory.
  for (const auto& [set, source] : {std::pair{&s.data.train, &s.data.train_source},
                                    std::pair{&s.data.validation, &s.data.validation_source},
                                    std::pair{&s.data.test, &s.data.test_source}}) {
    for (int i = 0; i < s.params.size(); ++i)
      if (s.params[i].kind() == ParameterKind::kControlDelay || s.params[i].kind() == ParameterKind::kSensorDelay)
        for (const int b : {0, 1})
          check_delay_within_data(delay_parameter_config(est, s.params[i].name()), b == 0 ? "bounds.0" : "bounds.1",
                                  b == 0 ? s.params[i].lower : s.params[i].upper, *set, *source);
    const char* channels[2] = {"q", "qd"};
    const double fixed[2] = {s.observe.q_delay, s.observe.qd_delay};
    for (int c = 0; c < 2; ++c)
      if (fixed[c] != 0 && est.has("observe") && est.at("observe").is_map(channels[c]))
        check_delay_within_data(est.at("observe").at(channels[c]), "delay", fixed[c], *set, *source);
  }
  // A target is reached from the start state: predictions never restart.
  s.eval_window = s.data.targets ? std::numeric_limits<int>::max() : s.window;
  check_data(est, s);
  warn_long_default_window(est, s);
  check_missing_data(s);
  if (est.has("ground_truth")) {
    s.has_ground_truth = true;
    for (const auto& [name, value] : est.at("ground_truth").items()) s.ground_truth[name] = value.get<double>("");
  }
  if (s.eval_windows) {
    if (s.data.targets) est.fail("evaluation", "reach targets are predicted from the start state: windows do not apply");
    check_windows_fit(est.at("evaluation"), *s.eval_windows, {&s.data.train, &s.data.validation});
  }
  return s;
}

// Everything the result depends on, for the checkpoint. Rounds and the time
// budget only say when to stop: the rounds already done are the same for
// any value, so a resume may extend them. The uncertainty estimate is
// computed after the fit and changes no round.
Fingerprint identification_fingerprint(const Config& cfg, const std::vector<Setup>& parts, long long seed) {
  nlohmann::json fingerprinted = cfg.to_json();
  if (fingerprinted["estimate"].contains("basin_hopping") && fingerprinted["estimate"]["basin_hopping"].is_object())
    for (const char* key : {"rounds", "time_budget", "processes_per_start"})
      fingerprinted["estimate"]["basin_hopping"].erase(key);
  if (fingerprinted["estimate"].is_object()) fingerprinted["estimate"].erase("uncertainty");
  Fingerprint fingerprint = config_digests(fingerprinted, {"name", "description", "output"});
  for (const Setup& part : parts) {
    const std::string prefix = part.configuration.empty() ? "" : "configurations." + part.configuration + ".";
    fingerprint[prefix + "data.train"] = trajectory_digest(part.data.train);
    fingerprint[prefix + "data.validation"] = trajectory_digest(part.data.validation);
  }
  fingerprint["seed"] = std::to_string(seed);
  return fingerprint;
}

// Progress inside the local solves, from SolverOptions::on_iteration (a
// 9-parameter multiple-shooting fit can spend 20 minutes in one solve). At
// debug level every iteration is a line; otherwise one info line at most
// every kInterval seconds, the first only once a solve has run that long,
// so quick fits stay quiet. Called from the TBB workers of basin hopping: a
// caller that finds another one printing skips.
class LocalSolveLog {
 public:
  static constexpr double kInterval = 5.0;
  LocalSolveLog(const RunContext& context, int rounds, int population)
      : context_(context), rounds_(rounds), population_(population), last_(Clock::now()) {}
  void operator()(const SolveProgress& p) {
    const bool debug = context_.logs(LogLevel::kDebug);
    if (!debug && !context_.logs(LogLevel::kInfo)) return;
    if (!debug) {
      std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
      if (!lock.owns_lock() || seconds_since(last_) < kInterval || p.elapsed_s < kInterval) return;
      last_ = Clock::now();
    }
    // The ETA from measured iteration times (estimate/solve_progress.hpp):
    // extrapolated from the convergence so far, else the bound at
    // max_iterations.
    const std::string eta = p.eta_extrapolated ? format_printf("ETA %.1f s (at most %.1f s)", p.eta_s, p.eta_max_s)
                                               : format_printf("ETA <= %.1f s", p.eta_max_s);
    context_.log(debug ? LogLevel::kDebug : LogLevel::kInfo,
                 format_printf("local solve (round %d/%d, start %d/%d): iteration %d/%d, cost %.6g, elapsed %.1f s, "
                               "%.3f s/iteration, %s",
                               p.round + 1, rounds_, p.start + 1, population_, p.iteration, p.max_iterations, p.cost,
                               p.elapsed_s, p.iteration_s, eta.c_str()));
  }

 private:
  const RunContext& context_;
  int rounds_, population_;
  Clock::time_point last_;
  std::mutex mutex_;
};

// Predictions restarted every `window` samples and their errors. For reach
// targets the q of the data is a placeholder: only the distance counts.
// Progress of the evaluation after the fit, in samples processed per step
// (every step visits each sample a bounded number of times): nothing is
// printed unless it runs longer than the progress interval (common/app.hpp).
class EvaluationProgress {
 public:
  EvaluationProgress(const RunContext& context, long long total) : stage_(context, "simid evaluation", total) {}
  void add(long long samples) { stage_.update(done_ += samples); }
  TrajectoryDone per_trajectory() {
    return [this](const Trajectory& t) { add(static_cast<long long>(t.size())); };
  }

 private:
  ProgressStage stage_;
  long long done_ = 0;
};

long long samples_in(const TrajectorySet& set) {
  long long n = 0;
  for (const Trajectory& t : set.trajectories) n += static_cast<long long>(t.size());
  return n;
}

// `starts` (optional, one per trajectory): the fitted starting states the
// predictions restart from where they hold one.
FitEvaluation evaluate_fit(const ResidualContext& ctx, const std::vector<double>& x, const TrajectorySet& data,
                           int window, bool targets, const RunContext& context, EvaluationProgress& progress,
                           const AnalysisDeadline& deadline, const std::vector<StartStates>* starts = nullptr) {
  FitEvaluation e;
  e.predictions.meta = data.meta;
  std::vector<std::string> links;
  for (const auto& ch : ctx.observe.link_positions) links.push_back(ch.data_name());  // markers: their data names
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double sum_link = 0;
  long long with_links = 0;
  for (size_t t = 0; t < data.trajectories.size(); ++t) {
    deadline.check();
    const Trajectory& tr = data.trajectories[t];
    // The observed links and markers this recording holds: a validation or
    // test recording need not hold them (none: NaN, left out of the mean).
    std::vector<std::string> held;
    for (const std::string& l : links)
      if (tr.link_poses.count(l)) held.push_back(l);
    Trajectory pred;
    double r = std::numeric_limits<double>::infinity(), rl = held.empty() ? nan : r;
    try {
      pred = windowed_prediction(ctx, x, tr, window, starts && t < starts->size() ? &(*starts)[t] : nullptr);
      if (!targets) r = prediction_error(*ctx.model, tr, pred).rmse_q;
      if (!held.empty()) rl = link_position_rmse(held, tr, pred);
    } catch (const NumericalError& err) {
      context.warn("prediction of '" + tr.name + "' diverged: " + err.what());
    }
    e.per_trajectory.push_back({tr.name, targets ? nan : r, targets ? rl * std::sqrt(3.0) : rl, nan,
                                pred.size() > 0 ? sensor_rmse(ctx.observe, *ctx.model, tr, pred)
                                                : std::map<std::string, double>{}});
    e.mean_rmse_q += r / data.trajectories.size();
    if (!held.empty()) {
      sum_link += rl;
      ++with_links;
    }
    if (pred.size() > 0) e.predictions.trajectories.push_back(std::move(pred));
    progress.add(static_cast<long long>(tr.size()));
  }
  e.mean_rmse_link_position = with_links > 0 ? sum_link / static_cast<double>(with_links) : nan;
  return e;
}

// The standard errors of the chosen method, the covariance and the
// identifiability analysis at the best point, from J (the Jacobian of the
// residuals at r.best.x). Returns the covariance of the reported standard
// errors (physical values; undetermined parameters' rows and columns NaN).
Eigen::MatrixXd analyze_fit(const Setup& s, const ParameterSet& params, const EstimationProblem& problem,
                            const Eigen::MatrixXd& J, const Eigen::VectorXd& residuals, IdentificationResult& r,
                            const AnalysisDeadline& deadline) {
  const std::vector<double>& x = r.best.x;
  // J has the nuisance states profiled out (parameter_jacobian): they take
  // degrees of freedom from the residual variance.
  const int nuisance = problem.num_state_variables();
  r.identifiability = analyze_identifiability(params, x, J, residuals, 1e-4, nuisance);
  deadline.check();
  const Identifiability& id = r.identifiability;
  // The reported standard errors: Gauss–Newton (identifiability.hpp) or a
  // robust estimate (estimate/covariance.hpp) on the Jacobian w.r.t.
  // physical values; parameters the data cannot determine stay NaN whatever
  // the method.
  std::vector<double> std_error = id.std_error;
  if (s.uncertainty.covariance.method != UncertaintyMethod::kGaussNewton) {
    Eigen::MatrixXd Jp = J;
    for (int i = 0; i < params.size(); ++i) Jp.col(i) /= physical_derivative(params, i, x[i]);
    CovarianceOptions covariance = s.uncertainty.covariance;
    covariance.nuisance = nuisance;
    r.robust = estimate_covariance(Jp, residuals, problem.residual_clusters(s.uncertainty.cluster), covariance);
    deadline.check();
    for (int i = 0; i < params.size(); ++i)
      std_error[i] = std::isnan(id.std_error[i]) ? id.std_error[i] : r.robust.std_error[i];
  }
  for (int i = 0; i < params.size(); ++i) {
    const char* bound = r.evaluate_only ? nullptr : bound_reached(params, i, x[static_cast<size_t>(i)]);
    r.parameters.push_back({params[i].name(), id.value[i], std_error[i], id.std_error[i], params[i].initial,
                            params[i].lower, params[i].upper, transformation_name(params[i].transformation),
                            bound ? bound : ""});
  }
  // The covariance of the reported standard errors, for the inertias in
  // physical coordinates: undetermined parameters' rows and columns NaN.
  const int P = params.size();
  Eigen::MatrixXd covariance(P, P);
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < P; ++j)
      covariance(i, j) = s.uncertainty.covariance.method != UncertaintyMethod::kGaussNewton
                             ? r.robust.covariance(i, j)
                             : id.correlation(i, j) * std_error[i] * std_error[j];
  for (int i = 0; i < P; ++i)
    if (std::isnan(std_error[i])) {
      covariance.row(i).setConstant(std::numeric_limits<double>::quiet_NaN());
      covariance.col(i).setConstant(std::numeric_limits<double>::quiet_NaN());
    }
  return covariance;
}

// Inverse-dynamics torque errors (the residual of residual type
// inverse_dynamics, with its derivatives) of the fitted and the initial
// parameters.
void evaluate_torque(const Setup& s, const ResidualContext& ctx, IdentificationResult& r, const RunContext& context,
                     EvaluationProgress& progress) {
  std::vector<std::string> notes;
  auto evaluate = [&](const TrajectorySet& set, const std::string& split, std::optional<TorqueEvaluation>& out) {
    std::string note;
    const std::optional<TorqueError> fitted =
        torque_error(ctx, r.best.x, set, s.problem.derivatives, &note, progress.per_trajectory());
    if (!note.empty()) notes.push_back(split + ": " + note);
    if (!fitted) return;
    out = TorqueEvaluation{*fitted, torque_error(ctx, s.params.initial_variables(), set, s.problem.derivatives,
                                                 nullptr, progress.per_trajectory())};
  };
  evaluate(s.data.train, "train", r.train_torque);
  if (!s.data.validation.trajectories.empty()) evaluate(s.data.validation, "validation", r.validation_torque);
  // An inverse-dynamics fit predicts torques, not motion: fit.h5 gets the
  // fitted model's torque at the recorded states beside the predictions.
  if (s.problem.formulation == Formulation::kInverseDynamics) {
    auto add = [&](const std::optional<TorqueEvaluation>& t, const std::string& prefix) {
      if (!t) return;
      for (Trajectory tr : t->fitted.model_torque) {
        tr.name = prefix + tr.name;
        r.fitted.trajectories.push_back(std::move(tr));
      }
    };
    add(r.train_torque, "inverse_dynamics_");
    add(r.validation_torque, "validation_inverse_dynamics_");
  }
  if (s.exp.contact && (r.train_torque || r.validation_torque))
    notes.push_back("contact forces are not in the inverse dynamics");
  for (const std::string& n : notes) r.torque_note += (r.torque_note.empty() ? "" : "; ") + n;
  if (!r.torque_note.empty()) context.info(r.torque_note);
}

// The fitted starting states of every training trajectory (fitted window
// starts, multiple-shooting segments), named after it.
std::vector<FittedStartStates> start_states_of(const std::vector<StartStates>& states, const TrajectorySet& train) {
  std::vector<FittedStartStates> out;
  for (size_t t = 0; t < states.size(); ++t) out.push_back({train.trajectories[t].name, states[t]});
  return out;
}

// fit.h5's "fitted_start_<name>": the fitted starting states as a
// trajectory whose samples are the window or segment starts.
void add_start_states(IdentificationResult& r, const TrajectorySet& train) {
  for (size_t t = 0; t < r.start_states.size(); ++t) {
    const StartStates& f = r.start_states[t].states;
    if (f.samples.empty()) continue;
    Trajectory tr;
    tr.name = "fitted_start_" + r.start_states[t].name;
    tr.time.resize(static_cast<Eigen::Index>(f.samples.size()));
    for (size_t k = 0; k < f.samples.size(); ++k)
      tr.time[static_cast<Eigen::Index>(k)] = train.trajectories[t].time[f.samples[k]];
    tr.q = f.q;
    tr.qd = f.qd;
    r.fitted.trajectories.push_back(std::move(tr));
  }
}

// A held-out split's predictions and recordings beside the training ones
// (fit.h5, measured.h5), their names prefixed.
void add_held_out(IdentificationResult& r, const FitEvaluation& e, const TrajectorySet& data, const std::string& prefix) {
  for (auto t : e.predictions.trajectories) {
    t.name = prefix + t.name;
    r.fitted.trajectories.push_back(std::move(t));
  }
  for (auto t : data.trajectories) {
    t.name = prefix + t.name;
    r.measured.trajectories.push_back(std::move(t));
  }
}

// Training and validation predictions, windows, torque errors and physical
// consistency of one configuration at its parameters r.best.x, given its
// training trajectories' costs and fitted starting states (from the
// problem, in the order of its training data).
void evaluate(const Setup& s, const ResidualContext& ctx, const std::vector<double>& cost,
              const std::vector<StartStates>& fitted_starts, IdentificationResult& r, const RunContext& context,
              EvaluationProgress& progress, const AnalysisDeadline& deadline) {
  const std::vector<double>& x = r.best.x;
  // Training predictions restart from the fitted starting states (validation
  // and test data have none: they restart from the measured state).
  if (!r.evaluate_only) r.start_states = start_states_of(fitted_starts, s.data.train);
  const bool from_fitted_starts = s.problem.fit_initial_state.any() && !r.start_states.empty();
  std::vector<StartStates> starts;
  for (const FittedStartStates& f : r.start_states) starts.push_back(f.states);
  r.train = evaluate_fit(ctx, x, s.data.train, s.eval_window, s.data.targets, context, progress, deadline,
                         from_fitted_starts ? &starts : nullptr);
  for (size_t t = 0; t < cost.size() && t < r.train.per_trajectory.size(); ++t) r.train.per_trajectory[t].cost = cost[t];
  r.measured = s.data.train;
  r.fitted = r.train.predictions;
  add_start_states(r, s.data.train);
  if (!s.data.validation.trajectories.empty()) {
    r.validation = evaluate_fit(ctx, x, s.data.validation, s.eval_window, false, context, progress, deadline);
    add_held_out(r, *r.validation, s.data.validation, "validation_");
  }
  // The test split, once, with the fitted parameters (held out of the fit).
  if (!s.data.test.trajectories.empty()) {
    r.test = evaluate_fit(ctx, x, s.data.test, s.eval_window, false, context, progress, deadline);
    add_held_out(r, *r.test, s.data.test, "test_");
  }
  deadline.check();
  if (s.eval_windows) {
    r.train_windows = evaluate_windows(ctx, x, s.data.train, *s.eval_windows, progress.per_trajectory());
    if (!s.data.validation.trajectories.empty())
      r.validation_windows =
          evaluate_windows(ctx, x, s.data.validation, *s.eval_windows, progress.per_trajectory());
  }
  deadline.check();
  if (!s.data.targets) evaluate_torque(s, ctx, r, context, progress);
  deadline.check();
  // Plain inertia entries (link.<b>.inertia.yy, ...) are bounded one at a
  // time, so a fit can leave the physical set (the triangle inequality of
  // the principal moments); log-Cholesky blocks cannot. Say so, not silently.
  s.params.apply(x.data(), r.fitted_model);
  try {
    r.fitted_model.validate();
  } catch (const ModelError& e) {
    r.physically_consistent = false;
    // In a planar chain the fit may still be a valid planar system
    // (inertia_check.hpp): say which.
    std::string planar;
    try {
      if (!r.fitted_model.validate(InertiaCheck::kJointSpace).empty())
        planar = "; as a planar chain the fitted model is still valid (only the inertia about the common axis enters "
                 "its dynamics)";
    } catch (const ModelError&) {
    }
    const std::string w = std::string("the fitted parameters are not physical: ") + e.what() + planar +
                          "; estimate the link's inertia as 'link.<body>.inertial' with transform log_cholesky "
                          "(docs/simid.md) to keep the fit physically consistent";
    context.warn(w);
    r.warnings.push_back(w);
  }
}

// Multiple shooting: how well the segments join at the solution, weighed
// as the solve ended (its penalty rounds' factor), which the analysis after
// it then uses too; a warning when they do not join within the tolerance.
void report_continuity(EstimationProblem& problem, IdentificationResult& r, const RunContext& context) {
  problem.set_continuity_factor(r.best.continuity.factor);
  const int rounds = r.best.continuity.rounds;
  r.best.continuity = problem.continuity(r.best.x);
  r.best.continuity.rounds = rounds;
  const ContinuityReport& c = r.best.continuity;
  if (c.joined() || r.evaluate_only) return;
  const std::string w =
      std::isnan(c.gap_rms)
          ? std::string("multiple shooting: estimate.residual.continuity_weight 0 does not tie the segments "
                        "together; their joints are not measured (gaps null in summary.json)")
          : format_printf(
      "multiple shooting: the segments do not join: RMS gap %.3g rad (max |dq| %.3g rad, max |dqd| %.3g rad/s) > "
      "%g x the RMS q misfit %.3g rad after %d penalty round(s) (weights q %.3g, qd %.3g); raise "
      "estimate.solver.max_iterations or estimate.residual.continuity_rounds, or set continuity_weight",
                c.gap_rms, c.gap_q_max, c.gap_qd_max, c.tolerance, c.misfit_rms, c.rounds, c.weight_q, c.weight_qd);
  context.warn(w);
  r.warnings.push_back(w);
}

// A fit whose residuals dwarf the data's own spread explains nothing: the
// data may be corrupt or the model unsuitable (cost ½Σr² over m residuals).
// Static data (no spread) is compared with a floor of 1e-6 of its size,
// not with zero. Over every configuration's training data.
void check_residual_spread(const std::vector<Setup>& parts, const Eigen::VectorXd& residuals, IdentificationResult& r,
                           const RunContext& context) {
  if (parts.front().data.targets || residuals.size() == 0) return;
  double spread = 0, size = 0;
  for (const Setup& s : parts)
    for (const Trajectory& t : s.data.train.trajectories)  // missing samples (NaN) left out
      for (Eigen::Index c = 0; c < t.q.cols(); ++c) {
        double sum = 0;
        long long n = 0;
        for (Eigen::Index k = 0; k < t.q.rows(); ++k)
          if (!std::isnan(t.q(k, c))) sum += t.q(k, c), ++n;
        const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
        for (Eigen::Index k = 0; k < t.q.rows(); ++k)
          if (!std::isnan(t.q(k, c))) {
            spread = std::max(spread, std::abs(t.q(k, c) - mean));
            size = std::max(size, std::abs(t.q(k, c)));
          }
      }
  const double rms = std::sqrt(2.0 * r.best.cost / static_cast<double>(residuals.size()));
  if (rms > 10.0 * std::max(spread, 1e-6 * (1.0 + size))) {
    const std::string w = format_printf("the fit's RMS residual %.3g is more than 10 times the data's spread %.3g: "
                                        "the data may be corrupt or the model unsuitable",
                                        rms, spread);
    context.warn(w);
    r.warnings.push_back(w);
  }
}

// |fit − truth| / |truth| for each estimate.ground_truth entry (by the
// fitted parameters' names: "<name>@<configuration>" in a joint fit).
void ground_truth_errors(const Setup& s, IdentificationResult& r) {
  if (s.has_ground_truth) {
    double max_rel = 0;
    for (const IdentifiedParameter& p : r.parameters) {
      const auto truth = s.ground_truth.find(p.name);
      if (truth == s.ground_truth.end()) continue;
      const double rel = std::abs(p.value - truth->second) / std::max(std::abs(truth->second), 1e-12);
      r.relative_error[p.name] = rel;
      max_rel = std::max(max_rel, rel);
    }
    r.max_relative_error = max_rel;
  }
}

// --evaluate FILE: the estimated parameters' values from a parameter file
// (a params.json, or a flat {"name": value} map), as optimizer variables.
// Input, checked before any work: a missing value or one outside a log
// transform's domain is a DataError naming the file and the parameter.
// The file's other values are not used (the config sets the rest of the
// model); one that differs from the config's is a warning.
// `model`: the model whose other values are compared (null in a joint fit).
std::vector<double> evaluation_point(const std::string& path, const ParameterSet& params, const Model<double>* model,
                                     std::vector<std::string>& warnings) {
  const std::map<std::string, double> values = read_parameter_file(path);
  std::vector<double> x(static_cast<size_t>(params.size()));
  for (int i = 0; i < params.size(); ++i) {
    const std::string name = params[i].name();
    const auto it = values.find(name);
    if (it == values.end())
      throw DataError(path + ": no value for '" + name + "', which estimate.parameters lists (the file has " +
                      std::to_string(values.size()) + " values)");
    const double v = it->second;
    if (params[i].transformation == Transformation::kLog && !(v > 0))
      throw DataError(path + ": '" + name + "': expected a value > 0 (transform log), got " + format_printf("%.10g", v));
    x[static_cast<size_t>(i)] = params.variable(i, v);
    if (!std::isfinite(x[static_cast<size_t>(i)]))
      throw DataError(path + ": '" + name + "': the value " + format_printf("%.10g", v) + " has no optimizer variable");
    if (v < params[i].lower || v > params[i].upper)
      warnings.push_back(format_printf("%s: %s = %.10g is outside its bounds [%g, %g] (evaluated anyway)", path.c_str(),
                                       name.c_str(), v, params[i].lower, params[i].upper));
  }
  const std::vector<std::string> estimated = params.names();
  for (const auto& [name, v] : values) {
    if (!model || std::find(estimated.begin(), estimated.end(), name) != estimated.end()) continue;
    const auto target = resolve_named_parameter(name, *model, false);
    if (!target || target->kind != ParameterKind::kModel) continue;
    const double mine = named_parameter_value(*target, *model, nullptr, nullptr);
    if (std::abs(mine - v) > 1e-12 * std::max(std::abs(mine), std::abs(v)))
      warnings.push_back(format_printf("%s holds %s = %.10g, which this config holds at %.10g: the config's value is "
                                       "used (params_file: would use the file's)",
                                       path.c_str(), name.c_str(), v, mine));
  }
  return x;
}

// The search result of an evaluation: the given point as the best "solve",
// with no iteration and no round.
BasinHoppingResult evaluate_point(const ProblemFactory& factory, const std::vector<double>& x) {
  BasinHoppingResult result;
  result.stop_reason = "evaluate_only";
  const auto t0 = Clock::now();
  double cost = 0;
  const bool ok = factory()->evaluate(x, &cost, nullptr);
  LocalResult& best = result.state.best;
  best.x = x;
  best.initial_cost = best.cost = cost;
  best.iterations = 0;
  best.usable = ok;
  best.report = "evaluation only: no solve";
  best.seconds = seconds_since(t0);
  result.state.has_best = ok;
  return result;
}

// The setups of every configuration (one without `configurations:`) and the
// parameter vector the solver adjusts: the only configuration's, or the
// joint vector with each configuration's columns in it.
struct Setups {
  std::vector<Setup> parts;
  JointParameters joint;  // a joint fit only
  bool is_joint() const { return parts.size() > 1; }
  const ParameterSet& params() const { return is_joint() ? joint.joint : parts.front().params; }
  std::vector<double> local(size_t c, const std::vector<double>& x) const {
    if (!is_joint()) return x;
    std::vector<double> out;
    for (const int col : joint.columns[c]) out.push_back(x[static_cast<size_t>(col)]);
    return out;
  }
};

Setups read_setups(const Config& cfg, long long seed, std::vector<std::string>& warnings) {
  Setups out;
  const std::vector<ConfigurationEntry> entries = read_configurations(cfg);
  if (entries.empty()) {
    out.parts.push_back(read_setup(cfg, seed));
    return out;
  }
  std::vector<std::string> names;
  for (const ConfigurationEntry& e : entries) names.push_back(e.name);
  std::vector<const ParameterSet*> local;
  for (const ConfigurationEntry& e : entries) out.parts.push_back(read_setup(e.config, seed, e.name, names));
  for (const Setup& part : out.parts) local.push_back(&part.params);
  out.joint = joint_parameters(cfg.at("estimate"), entries, local, &warnings);
  if (out.parts.front().data.targets)
    cfg.fail("configurations", "a joint fit compares recorded motion: reach targets (data.targets) are refused");
  return out;
}

// Each configuration's fitted links in physical coordinates and, for an
// inverse-dynamics fit of torque rows alone, its base parameters, with
// errors from the whole problem's covariance and Jacobian (a joint fit: the
// configuration's columns of the joint vector, every configuration's rows).
void physical_estimates(const Setups& setups, const std::vector<ResidualContext>& ctxs, const Eigen::MatrixXd& J,
                        const Eigen::MatrixXd& covariance, IdentificationResult& r,
                        std::vector<IdentificationResult>& parts) {
  const Setup& s = setups.parts.front();
  const bool joint = setups.is_joint();
  // The base parameters read J's rows as nv torque rows per sample, in
  // configuration order (the prior's rows, if any, last).
  const bool base = s.problem.formulation == Formulation::kInverseDynamics && commanded_torque_rows_only(s.observe);
  // The samples of the fit's torque residuals, as EstimationProblem forms them.
  std::vector<std::vector<std::shared_ptr<const InverseDynamicsSamples>>> samples(setups.parts.size());
  Eigen::Index rows = 0;
  for (size_t c = 0; base && c < setups.parts.size(); ++c) {
    const Setup& part = setups.parts[c];
    for (const Trajectory& t : part.data.train.trajectories) {
      samples[c].push_back(std::make_shared<const InverseDynamicsSamples>(part.problem.torque_samples(t)));
      rows += samples[c].back()->q.rows() * part.exp.model.nv;
    }
  }
  const std::vector<double>& values = r.identifiability.value;
  for (size_t c = 0; c < setups.parts.size(); ++c) {
    const Setup& part = setups.parts[c];
    IdentificationResult& p = joint ? parts[c] : r;
    std::vector<int> columns = joint ? setups.joint.columns[c] : std::vector<int>{};
    if (!joint)
      for (int i = 0; i < part.params.size(); ++i) columns.push_back(i);
    std::vector<double> local_values;
    Eigen::MatrixXd local_covariance(part.params.size(), part.params.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      local_values.push_back(values[static_cast<size_t>(columns[i])]);
      for (size_t j = 0; j < columns.size(); ++j)
        local_covariance(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = covariance(columns[i], columns[j]);
    }
    p.inertials = inertial_estimates(part.exp.model, part.params, local_values, local_covariance);
    if (!base) continue;
    std::vector<const InverseDynamicsSamples*> ptrs;
    for (const auto& k : samples[c]) ptrs.push_back(k.get());
    p.base_parameters = fit_base_parameters(part.exp.model, part.params, setups.local(c, r.best.x), ptrs,
                                            J.topRows(rows), r.identifiability.residual_variance, columns);
    if (!part.problem.base_parameter_least_squares || p.base_parameters.links.empty()) continue;
    std::vector<std::shared_ptr<const InverseDynamicsSamples>> validation;
    for (const Trajectory& t : part.data.validation.trajectories)
      if (t.has_tau()) validation.push_back(std::make_shared<InverseDynamicsSamples>(part.problem.torque_samples(t)));
    p.base_least_squares = fit_base_parameters_least_squares(ctxs[c], samples[c], p.base_parameters,
                                                             setups.local(c, r.best.x), {}, validation);
  }
}

// The analysis of the best point: Jacobian, standard errors and
// identifiability, cost per trajectory, predictions, windows and torque
// errors, per configuration of a joint fit. `deadline.check()` between
// steps (and set_stop in the problem's evaluations) abandon it after a stop.
void analyze(const Setups& setups, const ParameterSet& params, bool joint, const ProblemFactory& factory,
             const std::vector<ResidualContext>& ctxs, std::vector<IdentificationResult>& parts,
             IdentificationResult& r, const RunContext& context, const AnalysisDeadline& deadline) {
  const Setup& s = setups.parts.front();
  long long train_samples = 0, validation_samples = 0, test_samples = 0;
  for (const Setup& part : setups.parts) {
    train_samples += samples_in(part.data.train);
    validation_samples += samples_in(part.data.validation);
    test_samples += samples_in(part.data.test);
  }
  // Jacobian and cost per trajectory, predictions, windows and the two
  // torque errors (fitted, initial): see the steps below.
  EvaluationProgress progress(context, 3 * train_samples + validation_samples + test_samples +
                                           (s.eval_windows ? train_samples + validation_samples : 0) +
                                           (s.data.targets ? 0 : 2 * (train_samples + validation_samples)));
  deadline.check();
  std::unique_ptr<EstimationProblem> problem = factory();
  deadline.check();
  problem->set_stop([&deadline] { return deadline.expired(); });
  // The analysis is at the best solve's nuisance states (a new problem holds
  // the recorded ones; an evaluation has none of its own).
  if (!r.best.states.empty()) problem->set_states(r.best.states);
  report_continuity(*problem, r, context);
  Eigen::VectorXd residuals;
  {
    const Eigen::MatrixXd J = problem->parameter_jacobian(r.best.x, &residuals);
    deadline.check();
    progress.add(train_samples);
    const Eigen::MatrixXd covariance = analyze_fit(s, params, *problem, J, residuals, r, deadline);
    physical_estimates(setups, ctxs, J, covariance, r, parts);
  }
  deadline.check();
  for (const auto& d : r.identifiability.weak_directions) context.warn("identifiability: " + d.description);
  for (const std::string& w : uncertainty_warnings(params, r.best.x, r.identifiability,
                                                   s.uncertainty.condition_warning, !r.evaluate_only)) {
    context.warn(w);
    r.warnings.push_back(w);
  }
  // Each configuration at its own parameters, with its slice of the
  // problem's per-trajectory costs and fitted starting states.
  const std::vector<double> cost = problem->cost_per_trajectory(r.best.x);
  deadline.check();
  progress.add(train_samples);
  const std::vector<StartStates> starts = problem->start_states();
  size_t first = 0;
  for (size_t c = 0; c < setups.parts.size(); ++c) {
    const Setup& part = setups.parts[c];
    IdentificationResult& p = joint ? parts[c] : r;
    const size_t n = part.data.train.trajectories.size();
    const auto slice = [&](const auto& v) {
      using V = std::decay_t<decltype(v)>;
      return v.size() >= first + n ? V(v.begin() + static_cast<std::ptrdiff_t>(first),
                                        v.begin() + static_cast<std::ptrdiff_t>(first + n))
                                   : V();
    };
    if (joint) {
      p.has_fit = true;
      p.best = r.best;
      p.best.x = setups.local(c, r.best.x);
      p.cost = 0;
      for (size_t t = first; t < first + n && t < cost.size(); ++t) p.cost += cost[t];
      p.search = r.search;
      p.identifiability = r.identifiability;
      for (size_t i = 0; i < setups.joint.columns[c].size(); ++i) {
        IdentifiedParameter q = r.parameters[static_cast<size_t>(setups.joint.columns[c][i])];
        q.name = part.params[static_cast<int>(i)].name();  // its name in the configuration's model
        p.parameters.push_back(q);
      }
    }
    evaluate(part, ctxs[c], slice(cost), slice(starts), p, context, progress, deadline);
    first += n;
  }
  check_residual_spread(setups.parts, residuals, r, context);
  ground_truth_errors(s, r);
  if (joint) {
    // The top level holds every configuration's errors, their trajectories
    // named "<configuration>.<trajectory>"; the files and plots are per
    // configuration (r.configurations).
    auto merge = [](std::optional<FitEvaluation>& into, const FitEvaluation& e, const std::string& prefix) {
      if (!into) into = FitEvaluation{};
      for (TrajectoryFit f : e.per_trajectory) {
        f.name = prefix + f.name;
        into->per_trajectory.push_back(std::move(f));
      }
    };
    std::optional<FitEvaluation> train, validation, test;
    for (IdentificationResult& p : parts) {
      const std::string prefix = p.configuration + ".";
      merge(train, p.train, prefix);
      if (p.validation) merge(validation, *p.validation, prefix);
      if (p.test) merge(test, *p.test, prefix);
      r.physically_consistent = r.physically_consistent && p.physically_consistent;
      for (const std::string& w : p.warnings)
        if (std::find(r.warnings.begin(), r.warnings.end(), "configuration '" + p.configuration + "': " + w) ==
            r.warnings.end())
          r.warnings.push_back("configuration '" + p.configuration + "': " + w);
    }
    auto means = [](FitEvaluation& e) {
      e.mean_rmse_q = e.mean_rmse_link_position = 0;
      for (const TrajectoryFit& f : e.per_trajectory) {
        e.mean_rmse_q += f.rmse_q / static_cast<double>(e.per_trajectory.size());
        e.mean_rmse_link_position += f.rmse_link_position / static_cast<double>(e.per_trajectory.size());
      }
    };
    r.train = *train;
    means(r.train);
    for (auto* e : {&validation, &test})
      if (*e) means(**e);
    r.validation = validation;
    r.test = test;
    r.configurations = std::move(parts);
  }
}

}  // namespace identify_detail

IdentificationResult identify(const IdentificationRequest& request, const RunContext& context) {
  using namespace identify_detail;
  const auto t_start = Clock::now();
  const Config& cfg = request.config;
  std::vector<std::string> joint_warnings;
  const Setups setups = read_setups(cfg, request.seed, joint_warnings);
  const Setup& s = setups.parts.front();  // the shared options (estimate: residual, solver, basin hopping, ...)
  const ParameterSet& params = setups.params();
  const bool joint = setups.is_joint();
  const Fingerprint fingerprint = identification_fingerprint(cfg, setups.parts, request.seed);

  std::vector<ResidualContext> ctxs;
  for (const Setup& part : setups.parts)
    ctxs.push_back({&part.exp.model, &part.params, part.exp.step, part.observe,
                    part.exp.contact ? &*part.exp.contact : nullptr});
  std::vector<ProblemPart> problem_parts;
  for (size_t c = 0; c < setups.parts.size(); ++c) {
    std::vector<const Trajectory*> train;
    for (const Trajectory& t : setups.parts[c].data.train.trajectories) train.push_back(&t);
    problem_parts.push_back({ctxs[c], train, joint ? setups.joint.columns[c] : std::vector<int>{}});
  }
  ProblemFactory factory = [&] { return std::make_unique<EstimationProblem>(params, problem_parts, s.problem); };
  // A problem without residuals is a data error, before any output.
  int num_states = 0;
  std::string torque_route;  // said in the log once the work starts
  {
    const std::unique_ptr<EstimationProblem> first = factory();
    num_states = first->num_state_variables();
    torque_route = first->torque_route();
  }
  const int total_rounds = s.bh.enabled ? s.bh.max_rounds : 1;
  // Evaluation only: the values of a parameter file (--evaluate), or the
  // initial values when the solver may take no iteration.
  const bool evaluate_only = !request.evaluate.empty() || s.solver.max_iterations == 0;
  std::vector<std::string> evaluation_warnings;
  std::vector<double> x_given;
  if (!request.evaluate.empty())
    x_given = evaluation_point(request.evaluate, params, joint ? nullptr : &s.exp.model, evaluation_warnings);
  else if (evaluate_only) x_given = params.initial_variables();
  // A checkpoint is input too: checked before the work starts.
  if (context.resume && evaluate_only)
    throw ConfigError("nothing to resume: an evaluation (--evaluate, or estimate.solver.max_iterations 0) runs no "
                      "basin-hopping rounds");
  if (context.resume && !context.checkpoint)
    throw InvalidArgument("identify: resume requested without a checkpoint store");
  BasinHoppingState state;
  if (context.resume)
    state = read_identify_checkpoint(*context.checkpoint, params, fingerprint, total_rounds, s.solver.max_iterations,
                                     num_states);

  IdentificationResult r;
  r.basin_hopping = s.bh;
  r.uncertainty = s.uncertainty;
  r.problem = s.problem;
  r.evaluate_only = evaluate_only;
  r.evaluated_file = request.evaluate;
  r.prediction_window = s.window;
  r.targets = s.data.targets;
  // Per configuration: what it holds before the fit (a joint fit's
  // configurations become r.configurations; otherwise the only one is r).
  std::vector<IdentificationResult> parts(setups.parts.size());
  for (size_t c = 0; c < setups.parts.size(); ++c) {
    const Setup& part = setups.parts[c];
    IdentificationResult& p = parts[c];
    p.configuration = part.configuration;
    p.model_name = part.exp.model.name;
    p.fitted_model = part.exp.model;
    p.basin_hopping = s.bh;
    p.uncertainty = s.uncertainty;
    p.problem = s.problem;
    p.observe = part.observe;
    p.targets = part.data.targets;
    p.prediction_window = s.window;
    p.evaluate_only = evaluate_only;
    p.evaluated_file = request.evaluate;
    const std::vector<std::string> estimated = part.params.names();
    for (const ExperimentParameter& e : part.exp.parameters)
      if (std::find(estimated.begin(), estimated.end(), e.target.name) == estimated.end()) p.fixed.push_back(e);
    std::vector<std::string>& w = p.warnings;
    w = part.exp.warnings;
    const Model<double>& model = part.exp.model;
    for (const std::string& x : plausibility_warnings(part.data.train, model, part.data.train_source)) w.push_back(x);
    for (const std::string& x : plausibility_warnings(part.data.validation, model, part.data.validation_source))
      w.push_back(x);
    for (const std::string& x : plausibility_warnings(part.data.test, model, part.data.test_source)) w.push_back(x);
    // Rows a CSV import dropped are warnings, as import-csv reports them.
    w.insert(w.end(), part.data_notes.begin(), part.data_notes.end());
    p.missing = part.observe.count_missing(model, part.data.train);
    if (p.missing.missing > 0)
      w.push_back(part.data.train_source + ": " + p.missing.summary() + "; their residuals are dropped");
    const std::string prefix = joint ? "configuration '" + part.configuration + "': " : "";
    for (const std::string& x : w) r.warnings.push_back(prefix + x);
  }
  if (!joint) {
    r = parts.front();
    parts.clear();
  } else {
    r.model_name = "joint fit of " + std::to_string(setups.parts.size()) + " configurations";
    r.fitted_model = s.exp.model;
    r.observe = s.observe;
    for (const IdentificationResult& p : parts) {
      r.missing.observed += p.missing.observed;
      r.missing.missing += p.missing.missing;
    }
  }
  r.warnings.insert(r.warnings.end(), joint_warnings.begin(), joint_warnings.end());
  for (const std::string& w : evaluation_warnings) r.warnings.push_back(w);

  context.started();
  for (const Setup& part : setups.parts)
    for (const std::string& n : part.exp.notes) context.info(n);
  if (!torque_route.empty()) context.info(torque_route);
  for (const std::string& w : r.warnings) context.warn(w);
  if (context.resume)
    context.info("resuming from " + context.checkpoint->name() + " at round " + std::to_string(state.next_round));

  const AnalysisDeadline deadline(context);  // the stop's time, for the analysis after the fit
  const auto t_fit = Clock::now();
  bool interrupted = false;
  if (evaluate_only) {
    context.info(request.evaluate.empty() ? std::string("evaluating the initial values (max_iterations 0): no fit")
                                          : "evaluating the values of " + request.evaluate + ": no fit");
    r.search = evaluate_point(factory, x_given);
  } else {
    auto should_abort = [&] { return deadline.stop_seen() || seconds_since(t_fit) > s.bh.time_budget_s; };
    ProgressStage progress(context, "simid rounds", total_rounds);
    auto on_round = [&](const BasinHoppingState& b) {
      if (context.checkpoint) write_identify_checkpoint(*context.checkpoint, b, params, fingerprint);
      const RoundRecord& rec = b.history.back();
      context.info(format_printf("round %d/%d: best cost %.6g (this round %.6g, %d usable solves)", rec.round + 1,
                                 total_rounds, rec.best_cost, rec.round_best_cost, rec.usable_solves));
      progress.update(b.next_round);
    };
    // Residual blocks are evaluated on the TBB workers inside every local
    // solve (bit-identical at any thread count, estimation_problem.hpp).
    BasinHoppingOptions bh = s.bh;
    bh.communicator = context.communicator;
    SolverOptions solver = s.solver;
    solver.num_threads = 0;
    LocalSolveLog solve_log(context, total_rounds, s.bh.enabled ? std::max(1, s.bh.population) : 1);
    solver.on_iteration = [&solve_log](const SolveProgress& p) { solve_log(p); };
    r.search = basin_hopping(factory, params, bh, solver, state, on_round, should_abort);
    progress.finish();
    interrupted = context.stop_agreed();
  }
  r.timings["fit_s"] = seconds_since(t_fit);
  if (!r.search.state.has_best) {
    r.status = interrupted ? RunStatus::kInterrupted : RunStatus::kDiverged;
    if (interrupted) return r;
    // Say where: replay the first training trajectory at the initial guess
    // (or the evaluated values) with divergence checks on (time, coordinate
    // and value).
    const std::vector<double> x0 = setups.local(0, evaluate_only ? x_given : params.initial_variables());
    std::string where;
    try {
      windowed_prediction(ctxs.front(), x0, s.data.train.trajectories.front(), s.eval_window);
    } catch (const NumericalError& e) {
      where = std::string("; at the ") + (evaluate_only ? "evaluated values" : "initial guess") + ", on " +
              s.data.train.trajectories.front().name + ": " + e.what();
    }
    r.message = (evaluate_only ? std::string("simid: the cost is not finite at the evaluated values")
                               : std::string("simid: no local solve produced a usable solution (every start "
                                             "diverged or failed)")) +
                where + "; check bounds, initial values and the time step";
    return r;
  }
  r.has_fit = true;
  r.best = r.search.state.best;
  r.cost = r.best.cost;

  const auto t_evaluation = Clock::now();
  // Abandoned past the grace after a stop: the result as it is now, plus
  // the fitted values (AnalysisDeadline).
  const IdentificationResult before_analysis = r;
  try {
    deadline.abandon_if_slower_than_grace(r.best);
    analyze(setups, params, joint, factory, ctxs, parts, r, context, deadline);
  } catch (const AnalysisAbandoned&) {
    r = before_analysis;
    values_only(params, r.best.x, r);
    setups.parts.front().params.apply(setups.local(0, r.best.x).data(), r.fitted_model);
    const std::string w = format_printf(
        "interrupted: the post-fit analysis (standard errors, identifiability, predictions) could not finish "
        "within %.1f s of the stop and is left out; params.json holds the fitted values without standard errors",
        AnalysisDeadline::kGraceSeconds);
    context.warn(w);
    r.warnings.push_back(w);
  }
  r.timings["evaluation_s"] = seconds_since(t_evaluation);
  r.timings["total_s"] = seconds_since(t_start);
  // A stop during the analysis is an interrupted run too (exit 130).
  r.status = interrupted || context.stop_agreed() ? RunStatus::kInterrupted : RunStatus::kOk;
  return r;
}


IdentificationGradientCheck check_identification_gradient(const IdentificationRequest& request,
                                                          const IdentificationGradientCheckOptions& options,
                                                          const RunContext& context) {
  using namespace identify_detail;
  std::vector<std::string> joint_warnings;
  const Setups setups = read_setups(request.config, request.seed, joint_warnings);
  const Setup& s = setups.parts.front();
  const ParameterSet& params = setups.params();
  std::vector<ProblemPart> parts;
  for (size_t c = 0; c < setups.parts.size(); ++c) {
    const Setup& part = setups.parts[c];
    std::vector<const Trajectory*> train;
    for (const Trajectory& t : part.data.train.trajectories) train.push_back(&t);
    parts.push_back({{&part.exp.model, &part.params, part.exp.step, part.observe,
                      part.exp.contact ? &*part.exp.contact : nullptr},
                     train,
                     setups.is_joint() ? setups.joint.columns[c] : std::vector<int>{}});
  }
  EstimationProblem problem(params, parts, s.problem);
  const std::vector<std::string> names = params.names();
  if (!options.scale_derivative_of.empty() &&
      std::find(names.begin(), names.end(), options.scale_derivative_of) == names.end())
    throw InvalidArgument("check_identification_gradient: no estimated parameter '" + options.scale_derivative_of + "'");

  IdentificationGradientCheck r;
  r.formulation = formulation_name(s.problem.formulation);
  for (int i = 0; i < params.size(); ++i) r.transformations.push_back(transformation_name(params[i].transformation));
  for (const Setup& part : setups.parts) r.warnings.insert(r.warnings.end(), part.exp.warnings.begin(), part.exp.warnings.end());
  r.warnings.insert(r.warnings.end(), joint_warnings.begin(), joint_warnings.end());
  context.started();
  for (const std::string& w : r.warnings) context.warn(w);

  const std::vector<double> x0 = params.initial_variables();
  double cost0 = 0;
  std::vector<double> g;
  if (!problem.evaluate(x0, &cost0, &g))
    throw NumericalError("gradient check: the cost is not finite at the initial values (the simulation diverges)");
  Eigen::VectorXd forward = Eigen::Map<const Eigen::VectorXd>(g.data(), static_cast<Eigen::Index>(g.size()));
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == options.scale_derivative_of) forward[static_cast<Eigen::Index>(i)] *= options.derivative_scale;
  const auto cost = [&](const Eigen::VectorXd& x, double* f) {
    return problem.evaluate(std::vector<double>(x.data(), x.data() + x.size()), f, nullptr);
  };
  const Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(x0.data(), static_cast<Eigen::Index>(x0.size()));
  r.check = check_gradient(cost, x, names, {{"forward_mode", forward}}, options.check);
  if (!r.check.passed) {
    r.status = RunStatus::kGradientCheckFailed;
    r.message = std::to_string(r.check.disagreeing) + " derivative(s) disagree with central differences";
  }
  return r;
}

std::string IdentificationResult::full_report() const {
  std::ostringstream report;
  report << "Identifiability report for " << model_name << " (" << parameters.size() << " parameters)\n";
  if (!analysis_done)
    report << "Interrupted before the analysis finished: the fitted values without standard errors, no "
              "identifiability analysis.\n";
  report << "Standard errors: " << uncertainty_method_name(uncertainty.covariance.method) << " ("
         << uncertainty_assumption(uncertainty.covariance.method) << ")\n";
  for (const IdentifiedParameter& p : parameters) report << "  " << p.name << " = " << p.value << " ± " << p.std_error << "\n";
  // The fitted links of each configuration's model (a joint fit: errors from
  // the joint problem).
  std::vector<const IdentificationResult*> models{this};
  for (const IdentificationResult& c : configurations) models.push_back(&c);
  for (const IdentificationResult* m : models) {
    const std::string in = m->configuration.empty() ? "" : " (configuration " + m->configuration + ")";
    for (const InertialEstimate& e : m->inertials) {
      report << "Link " << e.link << in << " in physical coordinates (link frame; inertia about the centre of mass):\n";
      for (int k = 0; k < 10; ++k)
        report << "  " << InertialEstimate::coordinate_names()[static_cast<size_t>(k)] << " = " << e.value[k]
               << " ± " << e.std_error[k] << "\n";
    }
    const BaseParameterFit& b = m->base_parameters;
    if (b.links.empty()) continue;
    report << "Base parameters" << in << " (Gautier & Khalil): " << b.base.rank << " identifiable combinations of the "
           << b.standard << " standard inertial parameters (m, h = m·c, I about the link frame's origin) "
           << "of the fitted links (QR rank tolerance " << b.base.tolerance << "):\n";
    for (const BaseParameterEstimate& e : b.estimates)
      report << "  " << e.expression << " = " << e.value << " ± " << e.std_error << "\n";
    if (!m->base_least_squares) continue;
    const BaseParameterLeastSquares& ls = *m->base_least_squares;
    report << "Base parameters fitted directly" << in << " (least squares without the consistency constraint; z = "
           << "(consistent − direct)/σ_direct; torque RMSE " << ls.rmse << ", held out " << ls.validation_rmse
           << (ls.converged ? "" : "; not converged: " + ls.report) << "):\n";
    for (size_t k = 0; k < ls.estimates.size(); ++k)
      report << "  " << ls.estimates[k].expression << " = " << ls.estimates[k].value << " ± "
             << ls.estimates[k].std_error << "  (z = " << ls.z[k] << ")\n";
  }
  report << "Singular values of the scaled Jacobian:";
  for (double v : identifiability.singular_values) report << " " << v;
  report << "\n";
  if (analysis_done && identifiability.weak_directions.empty())
    report << "All parameters are identifiable from this data.\n";
  for (const auto& d : identifiability.weak_directions)
    report << "Near-singular direction (σ/σmax = " << d.relative_singular_value << "): " << d.description << "\n";
  return report.str();
}

}  // namespace neuralsim
