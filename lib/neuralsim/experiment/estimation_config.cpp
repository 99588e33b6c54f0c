#include "neuralsim/experiment/estimation_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/core/names.hpp"
#include "neuralsim/spatial/types.hpp"

namespace neuralsim {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// `mass: [lo, hi]` and `com: {lower: [x, y, z], upper: [x, y, z]}` of a
// log-Cholesky block, as bounds on its coordinates: m = e^{2α} and c = (t1,
// t2, t3) (J = U Uᵀ has last column e^{2α}·(t, 1): h = m t), so a mass
// range bounds α alone and a box around the centre of mass bounds each t_k
// alone (Rucker & Wensing, RA-L 2022, eq. 5). The model's own mass and COM,
// where the fit starts, must lie inside.
void bound_log_cholesky_block(const Config& c, const std::string& body_name, const Inertia<double>& inertia,
                              EstimatedParameter* block) {
  if (c.has("mass")) {
    if (!c.is_list("mass") || c.list("mass").size() != 2) c.fail("mass", "expected [lower, upper] in kg");
    const double lo = c.get_limit("mass.0", 0), hi = c.get_limit("mass.1", 0);
    if (!(lo > 0) || !(lo < hi))
      c.fail("mass", "expected 0 < lower < upper (kg), got [" + number(lo) + ", " + number(hi) + "]");
    if (!(inertia.mass >= lo && inertia.mass <= hi))
      c.fail("mass", "link '" + body_name + "' has mass " + number(inertia.mass) + " kg in the model, outside [" +
                         number(lo) + ", " + number(hi) + "]: the fit starts at the model's inertia (set it with params:)");
    block[0].lower = 0.5 * std::log(lo);
    block[0].upper = 0.5 * std::log(hi);
  }
  if (!c.has("com")) return;
  if (!c.is_map("com")) c.fail("com", "expected {lower: [x, y, z], upper: [x, y, z]} in the link frame (m)");
  const Config box = c.at("com");
  box.check_known_keys({"lower", "upper"});
  const Eigen::Vector3d com = inertia.h / inertia.mass;
  for (const char* side : {"lower", "upper"}) {
    if (!box.has(side) || !box.is_list(side) || box.list(side).size() != 3)
      box.fail(side, "expected [x, y, z] in the link frame (m); .inf for no bound");
    for (int k = 0; k < 3; ++k) {
      const std::string key = std::string(side) + "." + std::to_string(k);
      const double v = box.get_limit(key, 0);
      if (std::isfinite(v) && std::abs(v) > 1e3) box.fail(key, "expected |value| <= 1000 m, got " + number(v));
      (side[0] == 'l' ? block[7 + k].lower : block[7 + k].upper) = v;
    }
  }
  for (int k = 0; k < 3; ++k) {
    const EstimatedParameter& t = block[7 + k];
    if (!(t.lower < t.upper))
      box.fail("lower." + std::to_string(k), "is not below upper." + std::to_string(k) + ": [" + number(t.lower) +
                                                 ", " + number(t.upper) + "]");
    if (!(com[k] >= t.lower && com[k] <= t.upper))
      box.fail("lower." + std::to_string(k), "link '" + body_name + "' has its centre of mass at " + number(com[k]) +
                                                 " m on axis " + std::to_string(k) + " in the model, outside [" +
                                                 number(t.lower) + ", " + number(t.upper) +
                                                 "]: the fit starts at the model's inertia (set it with params:)");
  }
}

// The ten log-Cholesky entries of `link.<body>.inertial`, starting at the
// link's current (physical) inertia.
void add_log_cholesky_block(const Config& c, const std::string& name, const Model<double>& model,
                            std::vector<EstimatedParameter>& out) {
  c.check_known_keys({"name", "transform", "prior", "mass", "com"});
  const std::string body_name = name.substr(5, name.size() - 5 - std::string(".inertial").size());
  const int body = model.body_index(body_name);
  if (body < 0) c.fail("name", "no link named '" + body_name + "'");
  if (!(model.bodies[body].inertia.mass > 0)) c.fail("name", "link '" + body_name + "' has no mass to start from");
  Eigen::Matrix<double, 10, 1> theta;
  try {
    theta = log_cholesky_from_inertia(model.bodies[body].inertia, "link '" + body_name + "'");
  } catch (const ModelError& e) {
    // A lumped planar link (inertia_check.hpp) is no 3-D body to start from.
    c.fail("name", std::string(e.what()) + "; a link valid only as part of a planar chain cannot be estimated as a "
                                           "3-D body: estimate 'link." + body_name + ".inertia.yy' (the inertia about "
                                           "the axis) instead");
  }
  for (int k = 0; k < 10; ++k) {
    const std::string coord = "link." + body_name + ".log_cholesky." + log_cholesky_coordinate_names()[k];
    EstimatedParameter p;
    p.target = *resolve_named_parameter(coord, model, false);
    p.transformation = Transformation::kLogCholesky;
    p.initial = theta[k];
    p.nominal = theta[k];
    if (c.has("prior")) p.prior_weight = c.get_in_range("prior", 0.0, 0, 1e12);
    out.push_back(p);
  }
  bound_log_cholesky_block(c, body_name, model.bodies[body].inertia, &out[out.size() - 10]);
}

// A fitted controls.delay: only where recorded controls are replayed with a
// delay (`controls` not null: simid), with a signal whose derivative in d
// is not zero almost everywhere, and between finite bounds (of either sign:
// a negative delay is a lead).
void check_fitted_delay(const Config& c, const ControlSignal* controls, ParameterKind kind) {
  const std::string name = c.get<std::string>("name");
  if (!controls)
    c.fail("name", "'" + name + "' delays a recorded signal, and only simid fits a delay");
  if (!c.has("bounds"))
    c.fail("name",
           "a fitted '" + name +
               "' needs bounds: [lower, upper] in seconds (a negative delay is a lead), each shorter than the data");
  if (kind == ParameterKind::kSensorDelay) return;
  if (!controls->is_continuous())
    c.fail("name", std::string("fitting 'controls.delay' needs controls that vary between samples: with "
                               "sim.controls.interpolation '") +
                       control_interpolation_name(controls->interpolation) +
                       "' u(t - d) is piecewise constant and its derivative in d is zero almost everywhere; expected "
                       "sim.controls.interpolation linear or cubic (cubic: C1, recommended), or a fixed delay "
                       "(sim.controls.delay)");
}

}  // namespace

std::vector<std::string> entry_configurations(const Config& entry, const std::vector<std::string>& all) {
  for (const char* key : {"configurations", "per_configuration"})
    if (entry.has(key) && all.empty())
      entry.fail(key, "applies to a joint fit over several configurations: the config has no top-level "
                      "'configurations:' list");
  if (entry.has("per_configuration")) entry.get<bool>("per_configuration");  // a bool, checked here
  if (!entry.has("configurations")) return all;
  const std::vector<std::string> names = entry.get<std::vector<std::string>>("configurations");
  if (names.empty()) entry.fail("configurations", "is empty: name the configurations this parameter applies to");
  std::string listed;
  for (const std::string& n : all) listed += (listed.empty() ? "" : ", ") + n;
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::find(all.begin(), all.end(), names[i]) == all.end()) {
      const std::string near = closest_name(names[i], all, 2);
      entry.fail("configurations." + std::to_string(i),
                 "no configuration '" + names[i] + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                     "; the configurations are [" + listed + "]");
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      entry.fail("configurations." + std::to_string(i), "configuration '" + names[i] + "' listed twice");
  }
  return names;
}

ParameterSet read_parameter_set(const Config& owner, const std::string& key, const Model<double>& model,
                                const ContactParameters<double>* contact, std::vector<std::string>* warnings,
                                const ControlSignal* controls, const std::string& configuration,
                                const std::vector<std::string>& all_configurations) {
  std::vector<EstimatedParameter> params;
  const std::vector<Config> items = owner.list(key);
  if (items.empty()) owner.fail(key, "no parameters to estimate");
  for (const Config& c : items) {
    c.check_known_keys({"name", "initial", "range", "bounds", "scale", "transform", "prior", "configurations",
                        "per_configuration", "mass", "com"});
    const std::vector<std::string> applies = entry_configurations(c, all_configurations);
    if (!configuration.empty() && std::find(applies.begin(), applies.end(), configuration) == applies.end())
      continue;
    const std::string name = c.get<std::string>("name");
    for (const auto& other : params)
      if (other.name() == name) c.fail("name", "parameter '" + name + "' listed twice");
    const std::string transform = c.get_choice("transform", {"identity", "log", "log_cholesky"}, "identity");
    const bool inertial = name.rfind("link.", 0) == 0 && name.size() > 14 &&
                          name.compare(name.size() - 9, 9, ".inertial") == 0;
    if (inertial != (transform == "log_cholesky"))
      c.fail("transform", "the log_cholesky transform and a 'link.<body>.inertial' name go together");
    if (inertial) {
      add_log_cholesky_block(c, name, model, params);
      continue;
    }
    for (const char* key : {"mass", "com"})
      if (c.has(key))
        c.fail(key, "bounds a log_cholesky block ('link.<body>.inertial'); '" + name + "' takes bounds: [lower, upper]");
    const auto target = resolve_named_parameter(name, model, contact != nullptr);
    if (!target || target->kind == ParameterKind::kLogCholesky)
      c.fail("name", target ? "estimate a log-Cholesky block as 'link.<body>.inertial' with transform log_cholesky"
                            : unknown_parameter_message(name, model, contact != nullptr));
    EstimatedParameter p;
    p.target = *target;
    p.transformation = transform == "log" ? Transformation::kLog : Transformation::kIdentity;
    const bool delay = p.kind() == ParameterKind::kControlDelay || p.kind() == ParameterKind::kSensorDelay;
    if (delay) check_fitted_delay(c, controls, p.kind());
    if (p.kind() == ParameterKind::kImu && !controls)
      c.fail("name", "'" + name + "' calibrates an IMU of estimate.observe.imus, and only simid observes IMUs");
    const bool torque_constant = p.kind() == ParameterKind::kTorqueConstant;
    if (torque_constant && !controls)
      c.fail("name", "'" + name + "' scales a motor current of estimate.observe.motor_currents, and only simid observes "
                     "currents");
    // A torque constant divides the model's current: it must stay > 0.
    if (torque_constant && !(c.has("bounds") && c.get_limit("bounds.0", 0) > 0) &&
        !(transform == "log"))
      c.fail("bounds", "torque constant '" + name + "' must stay > 0: expected bounds [lower > 0, upper] or "
                       "transform: log");
    if (c.has("bounds")) {
      if (!c.is_list("bounds") || c.list("bounds").size() != 2) c.fail("bounds", "expected [lower, upper]");
      p.lower = c.get_limit("bounds.0", 0);
      p.upper = c.get_limit("bounds.1", 0);
      if (!(p.lower < p.upper)) c.fail("bounds", "are inverted or empty: [" + number(p.lower) + ", " + number(p.upper) + "]");
      // A drag coefficient below 0 would feed energy in (step/body_drag.hpp).
      const bool drag = p.kind() == ParameterKind::kModel && (p.target.model.kind == ParameterRef::Kind::kDragLinear ||
                                                                p.target.model.kind == ParameterRef::Kind::kDragQuadratic);
      if (drag && p.lower < 0)
        c.fail("bounds", "drag coefficient '" + name + "' must be >= 0: lower bound " + number(p.lower) + " is below 0");
      if (delay && !std::isfinite(p.lower))
        c.fail("bounds.0", "expected a finite delay bound (seconds, shorter than the data), got " + number(p.lower));
      if (delay && !std::isfinite(p.upper))
        c.fail("bounds.1", "expected a finite delay bound (seconds, shorter than the data), got " + number(p.upper));
    }
    if (c.has("range")) {
      const std::vector<double> r = c.get<std::vector<double>>("range");
      if (r.size() != 2 || !(r[0] < r[1])) c.fail("range", "expected finite [low, high] with low < high");
      p.range_low = r[0];
      p.range_high = r[1];
    } else if (std::isfinite(p.lower) && std::isfinite(p.upper)) {
      p.range_low = p.lower;
      p.range_high = p.upper;
    }
    if (p.transformation == Transformation::kLog) {
      if (p.lower < 0) c.fail("bounds", "a log transform needs a lower bound >= 0, got " + number(p.lower));
      p.lower = std::max(p.lower, 0.0);
    }
    p.scale = c.get_or<double>("scale", 1.0);
    if (!(p.scale > 0)) c.fail("scale", "must be > 0, got " + number(p.scale));
    // Without `initial`, the fit starts where the model is (as a user who
    // names bounds only expects); only a model value outside the bounds (or
    // not positive under a log transform) falls back to the middle of the
    // range, and says so.
    if (c.has("initial")) {
      p.initial = c.get<double>("initial");
    } else {
      // the model's own value (the control delay: sim.controls.delay; a
      // sensor delay: 0, or its initial value)
      p.initial = p.kind() == ParameterKind::kControlDelay ? controls->delay
                  : delay                                  ? 0.0
                                                           : named_parameter_value(p.target, model, contact, nullptr);
      const bool usable = p.initial >= p.lower && p.initial <= p.upper &&
                          (p.transformation != Transformation::kLog || p.initial > 0);
      if (!usable && !std::isnan(p.range_low)) {
        const double middle = 0.5 * (p.range_low + p.range_high);
        if (warnings)
          warnings->push_back(c.where("name") + ": parameter '" + name + "' has no initial value and the model's value " +
                              number(p.initial) + " is outside its bounds [" + number(p.lower) + ", " +
                              number(p.upper) + "]: the fit starts at the middle of the " +
                              (c.has("range") ? "range" : "bounds") + ", " + number(middle));
        p.initial = middle;
      }
    }
    if (!delay && p.kind() != ParameterKind::kInitialVelocity)
      p.nominal = named_parameter_value(p.target, model, contact, nullptr);
    if (c.has("prior")) {
      p.prior_weight = c.get_in_range("prior", 0.0, 0, 1e12);
      if (std::isnan(p.nominal) || (p.transformation == Transformation::kLog && !(p.nominal > 0)))
        c.fail("prior", "'" + name + "' has no model value " +
                            (std::isnan(p.nominal) ? std::string("to pull toward")
                                                   : "> 0 for its log transform (" + number(p.nominal) + ")"));
    }
    const std::string initial_key = c.has("initial") ? "initial" : "name";
    if (!(p.initial >= p.lower && p.initial <= p.upper))
      c.fail(initial_key, "initial value " + number(p.initial) + " is outside the bounds [" + number(p.lower) + ", " +
                              number(p.upper) + "]");
    if (p.transformation == Transformation::kLog && !(p.initial > 0))
      c.fail(initial_key, "a log transform needs a positive initial value, got " + number(p.initial));
    params.push_back(p);
  }
  try {
    return ParameterSet(std::move(params));
  } catch (const InvalidArgument& e) {
    owner.fail(key, e.what());  // the checks above catch every case first
  }
}

ProblemOptions read_problem_options(const Config& r, const Model<double>* model) {
  r.check_known_keys({"type", "window", "stride", "continuity_weight", "continuity_rounds", "continuity_tolerance",
                      "filter_window", "derivatives", "sample_stride", "loss", "loss_scale", "torque_weight",
                      "fit_initial_state", "regressor", "base_parameters"});
  ProblemOptions o;
  const std::string type =
      r.get_choice("type", {"single_shooting", "multiple_shooting", "inverse_dynamics"}, "single_shooting");
  o.formulation = type == "multiple_shooting"  ? Formulation::kMultipleShooting
                  : type == "inverse_dynamics" ? Formulation::kInverseDynamics
                                               : Formulation::kSingleShooting;
  o.window = static_cast<int>(r.get_int_in_range("window", 50, 1, 100000000));
  o.stride = static_cast<int>(r.get_int_in_range("stride", 0, 0, 100000000));
  // `auto` (default): weights in the data's units and a penalty schedule;
  // a number: that fixed weight (estimation_problem.hpp).
  if (r.has("continuity_weight")) {
    const char* expected = "expected auto or a fixed weight >= 0 (a number)";
    if (r.is_map("continuity_weight") || r.is_list("continuity_weight")) r.fail("continuity_weight", expected);
    const std::string value = r.get<std::string>("continuity_weight");
    std::istringstream in(value);
    double parsed = 0;
    const bool is_number = static_cast<bool>(in >> parsed) && (in >> std::ws).eof();
    if (value != "auto" && !is_number)
      r.fail("continuity_weight", std::string(expected) + ", got '" + value + "'");
    if (value != "auto") o.continuity_weight = r.get_in_range("continuity_weight", 10.0, 0, 1e12);
  }
  o.continuity_rounds = static_cast<int>(r.get_int_in_range("continuity_rounds", o.continuity_rounds, 0, 20));
  o.continuity_tolerance = r.get_in_range("continuity_tolerance", o.continuity_tolerance, 1e-12, 1e12);
  o.derivatives = read_derivative_options(r, model);
  o.filter_window = o.derivatives.method == DerivativeMethod::kCentralDifference ? o.derivatives.window : 5;
  o.sample_stride = static_cast<int>(r.get_int_in_range("sample_stride", 1, 1, 100000000));
  o.torque_weight = r.get_in_range("torque_weight", 0.0, 0, 1e12);
  if (o.torque_weight > 0 && o.formulation == Formulation::kInverseDynamics)
    r.fail("torque_weight", "adds torque residuals to a shooting fit; inverse_dynamics is all torque residuals already");
  if (r.has("fit_initial_state")) {
    if (!r.is_map("fit_initial_state")) r.fail("fit_initial_state", "expected a map {q: true|false, qd: true|false}");
    const Config f = r.at("fit_initial_state");
    f.check_known_keys({"q", "qd"});
    o.fit_initial_state.q = f.get_or<bool>("q", false);
    o.fit_initial_state.qd = f.get_or<bool>("qd", false);
    if (o.formulation == Formulation::kInverseDynamics)
      r.fail("fit_initial_state", "fits the starting state of shooting windows; inverse_dynamics simulates nothing "
                                  "(use single_shooting)");
    if (o.formulation == Formulation::kMultipleShooting)
      r.fail("fit_initial_state", "multiple_shooting already fits every segment's state (use single_shooting)");
  }
  const std::string loss = r.get_choice("loss", {"none", "squared", "huber", "cauchy"}, "none");
  o.loss = loss == "huber" ? Loss::kHuber : loss == "cauchy" ? Loss::kCauchy : Loss::kNone;
  o.loss_scale = r.get_or<double>("loss_scale", 1.0);
  if (!(o.loss_scale > 0)) r.fail("loss_scale", "must be > 0");
  o.regressor = r.get_choice("regressor", {"auto", "off"}, "auto") == "auto";
  o.base_parameter_least_squares =
      r.get_choice("base_parameters", {"report", "least_squares"}, "report") == "least_squares";
  if (o.base_parameter_least_squares && o.formulation != Formulation::kInverseDynamics)
    r.fail("base_parameters", "least_squares fits the base parameters to torques: needs type inverse_dynamics, got " +
                                  type);
  return o;
}

void read_prior(const Config& r, ProblemOptions& options) {
  r.check_known_keys({"weight", "geometric"});
  options.prior_weight = r.get_in_range("weight", 0.0, 0, 1e12);
  options.geometric_prior_weight = r.get_in_range("geometric", 0.0, 0, 1e12);
}

DerivativeOptions default_derivative_options(const Model<double>* model) {
  DerivativeOptions o;
  // Quaternion joints (nq != nv): Savitzky–Golay differentiates positions
  // and cannot; the moving average and central differences of q̇ can.
  if (model && model->nq != model->nv) return o;
  o.method = DerivativeMethod::kSavitzkyGolay;
  o.window = kDefaultSavitzkyGolayWindow;
  o.order = kDefaultSavitzkyGolayOrder;
  return o;
}

DerivativeOptions read_derivative_options(const Config& r, const Model<double>* model) {
  if (!r.has("derivatives") && !r.has("filter_window")) return default_derivative_options(model);
  DerivativeOptions o;
  if (!r.has("derivatives")) {
    o.window = static_cast<int>(r.get_int_in_range("filter_window", 5, 1, 100001));
    return o;
  }
  if (r.has("filter_window"))
    r.fail("filter_window", "give either filter_window or derivatives (derivatives.window is the moving-average "
                            "width of central_difference), not both");
  const Config d = r.at("derivatives");
  d.check_known_keys({"method", "window", "order", "filter_torque"});
  const std::string method = d.get_choice("method", {"central_difference", "savitzky_golay"}, "savitzky_golay");
  o.method = method == "savitzky_golay" ? DerivativeMethod::kSavitzkyGolay : DerivativeMethod::kCentralDifference;
  const bool sg = o.method == DerivativeMethod::kSavitzkyGolay;
  if (!sg && d.has("order")) d.fail("order", "only savitzky_golay has a polynomial order");
  if (sg && model && model->nq != model->nv)
    d.fail("method", "savitzky_golay differentiates positions, and model '" + model->name + "' has " +
                         std::to_string(model->nq) + " position but " + std::to_string(model->nv) +
                         " velocity coordinates (quaternion joints): use central_difference");
  if (sg) {
    const SavitzkyGolayFit fit = read_savitzky_golay_fit(d);
    o.window = fit.window;
    o.order = fit.order;
  } else {
    o.window = static_cast<int>(d.get_int_in_range("window", 5, 1, 100001));
  }
  o.filter_torque = d.get_or<bool>("filter_torque", false);
  try {
    check_derivative_options(o);
  } catch (const InvalidArgument& e) {
    d.fail("", e.what());  // the checks above catch every case first
  }
  return o;
}

const char* cluster_by_name(ClusterBy c) { return c == ClusterBy::kTrajectory ? "trajectory" : "window"; }

UncertaintyOptions read_uncertainty_options(const Config& u, long long seed) {
  u.check_known_keys({"method", "cluster", "samples", "seed", "condition_warning"});
  UncertaintyOptions o;
  const std::string method = u.get_choice("method", {"gauss_newton", "sandwich", "bootstrap"}, "gauss_newton");
  o.covariance.method = method == "sandwich"    ? UncertaintyMethod::kSandwich
                        : method == "bootstrap" ? UncertaintyMethod::kBootstrap
                                                : UncertaintyMethod::kGaussNewton;
  o.cluster = u.get_choice("cluster", {"trajectory", "window"}, "window") == "trajectory" ? ClusterBy::kTrajectory
                                                                                          : ClusterBy::kWindow;
  if (o.covariance.method != UncertaintyMethod::kBootstrap)
    for (const char* key : {"samples", "seed"})
      if (u.has(key)) u.fail(key, "only the bootstrap has " + std::string(key));
  o.covariance.bootstrap_samples = static_cast<int>(u.get_int_in_range("samples", 200, 2, 100000));
  o.covariance.seed = static_cast<uint64_t>(u.get_int_in_range("seed", seed, 0, std::numeric_limits<long long>::max()));
  o.condition_warning = u.get_in_range("condition_warning", 1e8, 1, 1e300);
  return o;
}

SolverOptions read_solver_options(const Config& s) {
  s.check_known_keys({"type", "max_iterations", "function_tolerance", "gradient_tolerance", "parameter_tolerance"});
  SolverOptions o;
  const std::string type = s.get_choice("type", {"levenberg_marquardt", "lm", "lbfgs"}, "levenberg_marquardt");
  o.solver = type == "lbfgs" ? LocalSolver::kLbfgs : LocalSolver::kLevenbergMarquardt;
  o.max_iterations = static_cast<int>(s.get_int_in_range("max_iterations", 100, 0, 1000000));
  o.function_tolerance = s.get_in_range("function_tolerance", 1e-10, 0, 1);
  o.gradient_tolerance = s.get_in_range("gradient_tolerance", 1e-12, 0, 1);
  o.parameter_tolerance = s.get_in_range("parameter_tolerance", 1e-10, 0, 1);
  return o;
}

BasinHoppingOptions read_basin_hopping(const Config& b, long long seed) {
  b.check_known_keys({"enabled", "population", "rounds", "cost_threshold", "time_budget", "spread", "decay",
                      "random_initial", "processes_per_start"});
  BasinHoppingOptions o;
  o.enabled = b.get_or<bool>("enabled", true);
  o.population = static_cast<int>(b.get_int_in_range("population", 4, 1, 100000));
  o.max_rounds = static_cast<int>(b.get_int_in_range("rounds", 10, 1, 1000000));
  o.cost_threshold = b.get_in_range("cost_threshold", -1.0, -1, std::numeric_limits<double>::max());
  o.time_budget_s = b.get_limit("time_budget", std::numeric_limits<double>::infinity());
  if (!(o.time_budget_s > 0)) b.fail("time_budget", "must be > 0 seconds (or .inf)");
  o.initial_spread = b.get_in_range("spread", 0.5, 0, 100);
  o.decay = b.get_in_range("decay", 0.7, 0, 1);
  o.random_initial = b.get_or<bool>("random_initial", false);
  o.processes_per_start = static_cast<int>(b.get_int_in_range("processes_per_start", 1, 1, 1000000));
  o.seed = static_cast<uint64_t>(seed);
  return o;
}

namespace {
// A joint channel of `observe:`: a weight, or {weight, delay, joints}.
void read_joint_channel(const Config& c, const std::string& key, double default_weight, const Model<double>& model,
                        double& weight, double& delay, std::vector<int>& joints) {
  weight = default_weight;
  delay = 0;
  if (!c.has(key)) return;
  if (!c.is_map(key)) {
    weight = c.get_in_range(key, default_weight, 0, 1e12);
    return;
  }
  const Config ch = c.at(key);
  ch.check_known_keys({"weight", "delay", "joints"});
  weight = ch.get_in_range("weight", 1.0, 0, 1e12);
  delay = ch.get_limit("delay", 0.0);
  if (!std::isfinite(delay))
    ch.fail("delay", "expected a finite sensor delay in s (negative: a lead), got " + number(delay));
  if (!ch.has("joints")) return;
  // The joints this channel observes (an unencoded or passive joint is left
  // out), in model order.
  if (!ch.is_list("joints") || ch.list("joints").empty())
    ch.fail("joints", "expected a non-empty list of joint names");
  const std::vector<std::string> names = ch.get<std::vector<std::string>>("joints");
  std::string known;
  for (const Joint<double>& j : model.joints) known += (known.empty() ? "" : ", ") + j.name;
  for (size_t i = 0; i < names.size(); ++i) {
    const int j = model.joint_index(names[i]);
    const std::string item = "joints." + std::to_string(i);
    if (j < 0) ch.fail(item, "unknown joint '" + names[i] + "'; the model's joints: [" + known + "]");
    if (std::find(joints.begin(), joints.end(), j) != joints.end()) ch.fail(item, "joint '" + names[i] + "' listed twice");
    if (model.joints[j].nv == 0) ch.fail(item, "joint '" + names[i] + "' has no degree of freedom to observe");
    joints.push_back(j);
  }
  std::sort(joints.begin(), joints.end());
}
}  // namespace

namespace {
// `imus: [{name, link, position: [x, y, z], rpy: [r, p, y], gyro_weight,
// accel_weight}]`: the sensor frame on its link (rpy as in URDF: sensor to
// link, R = Rz(y) Ry(p) Rx(r)).
void read_imus(const Config& c, const Model<double>& model, std::vector<ImuChannel>& out) {
  if (!c.is_list("imus")) c.fail("imus", "expected a list of {name, link, position, rpy, gyro_weight, accel_weight}");
  for (const Config& m : c.list("imus")) {
    m.check_known_keys({"name", "link", "position", "rpy", "gyro_weight", "accel_weight"});
    ImuChannel ch;
    ch.name = m.get<std::string>("name");
    if (!is_plain_name(ch.name))
      m.fail("name", "expected a non-empty IMU name without '/', not . or .. (the data's dataset imu/<name>)");
    for (const auto& other : out)
      if (other.name == ch.name) m.fail("name", "IMU '" + ch.name + "' listed twice");
    ch.link = m.get<std::string>("link");
    ch.mount.body = model.body_index(ch.link);
    if (ch.mount.body < 0) {
      std::string known;
      for (const auto& b : model.bodies) known += (known.empty() ? "" : ", ") + b.name;
      m.fail("link", "unknown link '" + ch.link + "'; the model's links: [" + known + "]");
    }
    for (const char* key : {"position", "rpy"}) {
      if (!m.has(key)) continue;
      const std::vector<double> v = m.get<std::vector<double>>(key);
      if (v.size() != 3 || !std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]))
        m.fail(key, std::string("expected 3 finite numbers [") + (key[0] == 'p' ? "x, y, z] in metres" : "roll, pitch, yaw] in radians") +
                        ", got " + std::to_string(v.size()) + " values");
      if (key[0] == 'p') ch.mount.position = Eigen::Vector3d(v[0], v[1], v[2]);
      else ch.mount.rotation = rpy_rotation(v[0], v[1], v[2]);
    }
    ch.gyro_weight = m.get_in_range("gyro_weight", 1.0, 0, 1e12);
    ch.accel_weight = m.get_in_range("accel_weight", 1.0, 0, 1e12);
    out.push_back(ch);
  }
}
// A link position's marker: `point: [x, y, z]` (link coordinates, metres;
// 3 finite numbers within 1 km of the origin) and `data: name` (its
// link_poses/<name> entry, a plain name; default the link's; each data name
// once, so that two markers on one link are told apart).
void read_marker(const Config& l, const std::vector<LinkPositionChannel>& earlier, LinkPositionChannel& ch) {
  if (l.has("point")) {
    if (!l.is_list("point")) l.fail("point", "expected [x, y, z] in metres (a point in the link's frame)");
    const std::vector<double> v = l.get<std::vector<double>>("point");
    if (v.size() != 3) l.fail("point", "expected 3 numbers [x, y, z] in metres, got " + std::to_string(v.size()));
    ch.point = Eigen::Vector3d(v[0], v[1], v[2]);
    if (!ch.point.allFinite() || ch.point.norm() > 1e3)
      l.fail("point", "expected 3 finite numbers [x, y, z] in metres with |point| <= 1e3, got [" + format_number(v[0]) +
                          ", " + format_number(v[1]) + ", " + format_number(v[2]) + "]");
  }
  if (l.has("data")) {
    ch.data = l.get<std::string>("data");
    if (!is_plain_name(ch.data))
      l.fail("data",
             "expected a plain name without '/' (the data's link_poses/<name>), got '" + printable(ch.data) + "'");
  }
  for (const LinkPositionChannel& other : earlier)
    if (other.data_name() == ch.data_name())
      l.fail(l.has("data") ? "data" : "link",
             "data name '" + ch.data_name() + "' listed twice (two markers on one link need different `data` names)");
}

// `key: [{link, weight}]` (link positions or orientations; a position also
// {point, data}: read_marker): each link must exist; `unique` refuses a
// link listed twice.
template <class Channel>
void read_link_channels(const Config& c, const char* key, const Model<double>& model, bool unique,
                        std::vector<Channel>& out) {
  if (!c.has(key)) return;
  constexpr bool kMarker = std::is_same<Channel, LinkPositionChannel>::value;
  for (const Config& l : c.list(key)) {
    if (kMarker)
      l.check_known_keys({"link", "weight", "point", "data"});
    else
      l.check_known_keys({"link", "weight"});
    Channel ch;
    ch.link = l.get<std::string>("link");
    ch.body = model.body_index(ch.link);
    if (ch.body < 0) l.fail("link", "unknown link '" + ch.link + "'");
    if (unique)
      for (const Channel& other : out)
        if (other.link == ch.link) l.fail("link", "link '" + ch.link + "' listed twice");
    if constexpr (kMarker) read_marker(l, out, ch);
    ch.weight = l.get_in_range("weight", 1.0, 0, 1e12);
    out.push_back(ch);
  }
}
}  // namespace

namespace {
// `joint_torques:` / `motor_currents:` / `commanded_torques:` {weight, joints: [names]}: 1-DoF
// joints only (a torque sensor or motor acts about one axis); every 1-DoF
// joint when `joints` is absent.
// The channel's `joints` (all 1-DoF joints when absent), sorted.
void read_channel_joints(const Config& ch, const Model<double>& model, std::vector<int>& joints);

void read_joint_force_channel(const Config& c, const std::string& key, const Model<double>& model,
                              JointForceChannel& out) {
  if (!c.has(key)) return;
  if (!c.is_map(key)) c.fail(key, "expected {weight, joints: [names]}");
  const Config ch = c.at(key);
  ch.check_known_keys({"weight", "joints"});
  out.weight = ch.get_in_range("weight", 1.0, 0, 1e12);
  read_channel_joints(ch, model, out.joints);
}

void read_channel_joints(const Config& ch, const Model<double>& model, std::vector<int>& joints) {
  JointForceChannel out;
  std::string known;
  for (const Joint<double>& j : model.joints)
    if (j.nv == 1) known += (known.empty() ? "" : ", ") + j.name;
  if (!ch.has("joints")) {
    for (int j = 0; j < static_cast<int>(model.joints.size()); ++j)
      if (model.joints[j].nv == 1) out.joints.push_back(j);
    if (out.joints.empty()) ch.fail("", "the model has no 1-DoF joint to observe");
    joints = out.joints;
    return;
  }
  if (!ch.is_list("joints") || ch.list("joints").empty()) ch.fail("joints", "expected a non-empty list of joint names");
  const std::vector<std::string> names = ch.get<std::vector<std::string>>("joints");
  for (size_t i = 0; i < names.size(); ++i) {
    const int j = model.joint_index(names[i]);
    const std::string item = "joints." + std::to_string(i);
    if (j < 0 || model.joints[j].nv != 1)
      ch.fail(item, (j < 0 ? "unknown joint '" : "joint '") + names[i] +
                        (j < 0 ? "'" : "' is not a 1-DoF joint") + "; the model's 1-DoF joints: [" + known + "]");
    if (std::find(out.joints.begin(), out.joints.end(), j) != out.joints.end())
      ch.fail(item, "joint '" + names[i] + "' listed twice");
    out.joints.push_back(j);
  }
  std::sort(out.joints.begin(), out.joints.end());
  joints = out.joints;
}
}  // namespace

std::vector<LinkPositionChannel> read_link_positions(const Config& section, const char* key,
                                                     const Model<double>& model) {
  std::vector<LinkPositionChannel> out;
  read_link_channels(section, key, model, false, out);
  return out;
}

ObservationSpec read_observation(const Config& c, const Model<double>& model) {
  c.check_known_keys({"q", "qd", "link_positions", "link_orientations", "imus", "joint_torques", "motor_currents",
                      "commanded_torques"});
  ObservationSpec spec;
  read_joint_channel(c, "q", 1.0, model, spec.q_weight, spec.q_delay, spec.q_joints);
  read_joint_channel(c, "qd", 0.0, model, spec.qd_weight, spec.qd_delay, spec.qd_joints);
  spec.link_positions = read_link_positions(c, "link_positions", model);
  read_link_channels(c, "link_orientations", model, true, spec.link_orientations);
  if (c.has("imus")) read_imus(c, model, spec.imus);
  read_joint_force_channel(c, "joint_torques", model, spec.joint_torques);
  read_joint_force_channel(c, "motor_currents", model, spec.motor_currents);
  if (c.has("commanded_torques")) {
    // {weight: w | [w per row], joints}: a list weighs each row (each listed
    // joint, or each velocity coordinate without `joints`).
    const bool listed = c.is_map("commanded_torques") && c.at("commanded_torques").is_list("weight");
    JointForceChannel commanded;
    if (!listed) read_joint_force_channel(c, "commanded_torques", model, commanded);
    CommandedTorqueChannel& out = spec.commanded_torques;
    out.weight = listed ? 1.0 : commanded.weight;
    if (listed) {
      const Config ch = c.at("commanded_torques");
      ch.check_known_keys({"weight", "joints"});
      if (ch.has("joints")) read_channel_joints(ch, model, out.joints);
      const std::vector<double> w = ch.get<std::vector<double>>("weight");
      const size_t rows = out.joints.empty() ? static_cast<size_t>(model.nv) : out.joints.size();
      if (w.size() != rows)
        ch.fail("weight", "expected " + std::to_string(rows) + " weights (one per " +
                              (out.joints.empty() ? std::string("velocity coordinate") : "listed joint") + "), got " +
                              std::to_string(w.size()));
      for (size_t i = 0; i < w.size(); ++i)
        if (!(w[i] >= 0 && w[i] <= 1e12)) ch.fail("weight." + std::to_string(i), "expected a weight in [0, 1e12]");
      out.row_weights = w;
    } else if (c.at("commanded_torques").has("joints")) {
      out.joints = commanded.joints;
    }
  }
  if (spec.residuals_per_sample(model) == 0) c.fail("", "nothing is observed (all weights are zero)");
  return spec;
}

}  // namespace neuralsim
