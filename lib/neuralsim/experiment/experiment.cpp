#include "neuralsim/experiment/experiment.hpp"

#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/dynamics/crba.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/contact_config.hpp"
#include "neuralsim/io/parameter_file.hpp"
#include "neuralsim/io/mjcf_model.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/model/inertia_check.hpp"

namespace neuralsim {
namespace {

// `params:` flattened: "a.b: 1" and "a: {b: 1}" (as --set params.a.b=1
// writes it) name the same parameter; giving both is an error.
void flatten_params(const Config& c, const std::string& prefix, std::map<std::string, Config>& out) {
  for (const auto& [key, value] : c.items()) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_map("")) {
      flatten_params(value, name, out);
    } else if (!out.emplace(name, value).second) {
      value.fail("", "parameter '" + name + "' is given twice (dotted and nested keys)");
    }
  }
}

struct RawParameter {
  std::string name;
  double value;
  std::string source;
};

// Precedence: a value given in the config (`params:`, which `--set
// params.X=v` writes to) wins over the same name in `params_file`, and the
// notes say which source set each parameter.
std::vector<RawParameter> read_raw_parameters(const Config& root, std::vector<std::string>& notes) {
  std::map<std::string, RawParameter> all;
  std::string file;
  if (root.has("params_file")) {
    file = root.path("params_file");
    std::map<std::string, double> values;
    try {
      values = read_parameter_file(file);
    } catch (const DataError& e) {
      throw DataError(std::string(e.what()) + " (" + root.named_by("params_file") + ")");
    }
    for (const auto& [name, value] : values) all[name] = {name, value, file};
  }
  std::size_t from_file = all.size(), overridden = 0;
  if (root.has("params")) {
    if (!root.is_map("params")) root.fail("params", "expected a map of parameter names to numbers");
    std::map<std::string, Config> flat;
    flatten_params(root.at("params"), "", flat);
    for (const auto& [name, value] : flat) {
      const RawParameter explicit_value{name, value.get<double>(""), value.where("")};
      const auto it = all.find(name);
      if (it != all.end() && it->second.source == file) {
        notes.push_back(format_printf("parameter %s = %.10g from %s (params: wins over params_file %s, which holds "
                                      "%.10g)",
                                      name.c_str(), explicit_value.value, explicit_value.source.c_str(), file.c_str(),
                                      it->second.value));
        ++overridden;
        --from_file;
      }
      all[name] = explicit_value;
    }
  }
  if (!file.empty())
    notes.push_back("params_file " + file + " set " + std::to_string(from_file) + " parameters" +
                    (overridden ? " (" + std::to_string(overridden) + " more overridden by params:)" : ""));
  std::vector<RawParameter> out;
  for (auto& [name, p] : all) out.push_back(std::move(p));
  return out;
}

// The model is checked once, after every value is set: entries of one
// inertia tensor are only jointly physical (raising ixx alone can break the
// triangle inequality that raising iyy restores), whatever order the
// params map, params_file and --set list them in. The error blames the
// parameters of the link or joint the check names.
void apply_model_parameters(Experiment& e) {
  std::map<int, std::pair<Eigen::Matrix<double, 10, 1>, int>> blocks;  // body -> (θ, components given)
  std::vector<const ExperimentParameter*> applied;
  for (const ExperimentParameter& p : e.parameters) {
    if (p.target.kind == ParameterKind::kModel) {
      set_parameter(e.model, p.target.model, p.value);
    } else if (p.target.kind == ParameterKind::kLogCholesky) {
      auto& [theta, count] = blocks.try_emplace(p.target.body, Eigen::Matrix<double, 10, 1>::Zero(), 0).first->second;
      theta[p.target.component] = p.value;
      ++count;
    } else {
      continue;
    }
    applied.push_back(&p);
  }
  for (const auto& [body, block] : blocks) {
    if (block.second != 10)
      throw ConfigError(e.parameters.front().source + ": link '" + e.model.bodies[body].name +
                        "': a log-Cholesky inertia needs all ten coordinates, got " + std::to_string(block.second));
    e.model.bodies[body].inertia = inertia_from_log_cholesky<double>(block.first);
  }
  if (applied.empty()) return;
  try {
    e.model.validate(InertiaCheck::kJointSpace);
  } catch (const ModelError& err) {
    const std::string what = err.what();
    // "link.<name>.…" / "joint.<name>.…" / "gravity.…": the element is the second field.
    std::vector<const ExperimentParameter*> blamed;
    for (const ExperimentParameter* p : applied) {
      const std::string& n = p->target.name;
      const size_t a = n.find('.'), b = a == std::string::npos ? a : n.find('.', a + 1);
      const std::string element = n.substr(0, a) == "gravity" ? "gravity"
                                  : b == std::string::npos    ? n
                                                              : "'" + n.substr(a + 1, b - a - 1) + "'";
      if (what.find(element) != std::string::npos) blamed.push_back(p);
    }
    if (blamed.empty()) blamed.push_back(applied.back());
    std::string also;
    for (size_t k = 1; k < blamed.size(); ++k)
      also += (k == 1 ? " (with " : ", ") + std::string("'") + blamed[k]->target.name +
              "' = " + format_number(blamed[k]->value) + " from " + blamed[k]->source;
    if (!also.empty()) also += ")";
    throw ConfigError(blamed[0]->source + ": parameter '" + blamed[0]->target.name + "' = " +
                      format_number(blamed[0]->value) + also + " makes the model non-physical: " + what);
  }
}

void apply_contact_parameters(Experiment& e) {
  for (const ExperimentParameter& p : e.parameters) {
    if (p.target.kind != ParameterKind::kContact) continue;
    set_contact_parameter(e.contact->parameters, p.target.contact, p.value);
    const std::string problem = contact_parameters_problem(e.contact->parameters);
    if (!problem.empty()) throw ConfigError(p.source + ": " + problem);
  }
}

// offset + amplitude sin(2π frequency t + phase), per coordinate (the
// caller checks the keys of `c`).
Sinusoid read_sinusoid(const Config& c, int n) {
  Sinusoid s;
  s.offset = read_coordinate_vector(c, "offset", n, 0.0, CoordinateValues::kListOrNumber);
  s.amplitude = read_coordinate_vector(c, "amplitude", n, 0.0, CoordinateValues::kListOrNumber);
  s.frequency_hz = read_coordinate_vector(c, "frequency", n, 0.0, CoordinateValues::kListOrNumber);
  s.phase = read_coordinate_vector(c, "phase", n, 0.0, CoordinateValues::kListOrNumber);
  return s;
}

// For each velocity coordinate, the index of its position coordinate, or -1
// for coordinates of spherical and free joints (no scalar angle to track).
std::vector<int> pd_position_index(const Model<double>& model) {
  std::vector<int> idx(model.nv, -1);
  for (const Joint<double>& j : model.joints)
    if (j.nq == 1) idx[j.idx_v] = j.idx_q;
  return idx;
}

// Every moving joint must move something: a joint whose subtree has no mass
// or inertia along it (and no armature or rotor) has a zero row in M, and the
// dynamics would be NaN at the first step. Checked at the neutral pose.
void check_mass_matrix(const Model<double>& model, const Config& where) {
  Data<double> data(model);
  crba(model, data, model.neutral_configuration());
  const double scale = std::max(data.M.diagonal().cwiseAbs().maxCoeff(), 1e-300);
  const std::vector<std::string> names = model.velocity_names();
  for (int i = 0; i < model.nv; ++i)
    if (!(data.M(i, i) > 1e-12 * scale))
      where.fail("", "coordinate '" + names[i] + "' moves no mass or inertia (and has no armature or rotor): the mass "
                     "matrix is singular (an <inertial> missing or zero?)");
  // Physical links always give a positive definite M; a lumped planar link
  // (inertia about its joint below m·r²) can make it indefinite.
  const double smallest = symmetric_eigen(Eigen::MatrixXd(data.M), false).values.minCoeff();
  if (!(smallest > -1e-9 * scale))
    where.fail("", format_printf("the joint-space mass matrix is not positive definite at the neutral pose (smallest "
                                 "eigenvalue %.6g of %.6g): the links' inertias describe no mechanism",
                                 smallest, scale));
}

}  // namespace

Model<double> load_model_section(const Config& m, std::vector<std::string>* warnings, StepOptions* sim_defaults) {
  // `joints:` beside a model file sets per-joint dynamics the file cannot
  // say (URDF has no friction law, rotor or torque offset).
  if (m.has("file")) {
    m.check_known_keys({"file", "joints"});
    Model<double> model;
    try {
      model = load_yaml_model(m.path("file"));
    } catch (const ModelError& e) {
      m.fail("file", e.what());  // the file cannot be read: say which key named it
    }
    if (m.has("joints")) apply_joint_dynamics(m.at("joints"), model);
    return model;
  }
  if (m.has("urdf")) {
    m.check_known_keys({"urdf", "floating_base", "merge_fixed_joints", "joints"});
    UrdfOptions opts;
    opts.floating_base = m.get_or<bool>("floating_base", false);
    opts.merge_fixed_joints = m.get_or<bool>("merge_fixed_joints", true);
    Model<double> model;
    try {
      model = load_urdf_model(m.path("urdf"), opts, warnings);
    } catch (const ModelError& e) {
      m.fail("urdf", e.what());
    }
    if (m.has("joints")) apply_joint_dynamics(m.at("joints"), model);
    return model;
  }
  if (m.has("mjcf")) {
    m.check_known_keys({"mjcf", "strict", "joints", "density", "viscosity"});
    MjcfOptions opts;
    opts.strict = m.get_or<bool>("strict", false);
    for (const char* fluid : {"density", "viscosity"}) {  // the same model in another medium
      if (!m.has(fluid)) continue;
      const double value = m.get<double>(fluid);
      if (!(value >= 0 && std::isfinite(value)))
        m.fail(fluid, std::string("expected a finite ") + fluid + " >= 0, got " + std::to_string(value));
      (std::string(fluid) == "density" ? opts.density : opts.viscosity) = value;
    }
    MjcfModel loaded;
    try {
      loaded = load_mjcf_model(m.path("mjcf"), opts, warnings);
    } catch (const ModelError& e) {
      m.fail("mjcf", e.what());  // unreadable file or a tree that is not physical: say which key named it
    }  // a ConfigError names the MJCF file and line itself
    if (m.has("joints")) apply_joint_dynamics(m.at("joints"), loaded.model);
    if (sim_defaults) {
      // MuJoCo's Euler is semi-implicit (velocities first); its implicit
      // integrators treat damping implicitly, which has no counterpart here.
      sim_defaults->dt = loaded.sim.timestep;
      sim_defaults->integrator =
          loaded.sim.integrator == "RK4" ? Integrator::kRK4 : Integrator::kSemiImplicitEuler;
      if (warnings && loaded.sim.integrator != "Euler" && loaded.sim.integrator != "RK4")
        warnings->push_back(m.path("mjcf") + ": <option integrator=\"" + loaded.sim.integrator +
                            "\"> has no counterpart: sim.integrator defaults to semi_implicit_euler");
    }
    return std::move(loaded.model);
  }
  return build_yaml_model(m);  // inline: errors keep the config's own lines
}

namespace experiment_control_timing {

// 10 significant digits: dt / substeps prints as 0.0002, not 0.00019999999999999998.
std::string seconds(double s) {
  std::ostringstream out;
  out << std::setprecision(10) << s;
  return out.str();
}

// True when x is a positive integer within rounding (relative 1e-6).
bool is_whole_multiple(double x) {
  const double n = std::round(x);
  return n >= 1 && std::abs(x - n) <= 1e-6 * n;
}

// `sim.controls`: {interpolation, period, tick_values, tick_offset, delay} (control_signal.hpp).
ControlSignal read_control_signal(const Config& c, const StepOptions& o) {
  c.check_known_keys({"interpolation", "period", "tick_values", "tick_offset", "delay"});
  const std::vector<std::string> names = {"zero_order_hold", "hold", "linear", "cubic"};
  const std::string name = c.get_choice("interpolation", names, "zero_order_hold");
  ControlSignal signal;
  for (int i = 0; i < 4; ++i)
    if (name == names[static_cast<size_t>(i)]) signal.interpolation = static_cast<ControlInterpolation>(i);
  signal.delay = c.get_limit("delay", 0.0);
  // Either sign: a negative delay is a lead (the recorded controls lag the ones that acted).
  if (!std::isfinite(signal.delay))
    c.fail("delay", "expected a finite actuation delay in s, got " + seconds(signal.delay));
  if (signal.interpolation != ControlInterpolation::kHold) {
    for (const char* key : {"period", "tick_values", "tick_offset"})
      if (c.has(key))
        c.fail(key, "is only for interpolation 'hold' (the controller's own rate), got interpolation '" + name + "'");
    return signal;
  }
  signal.period = c.get<double>("period");
  const double h = o.dt / o.substeps;
  if (!(signal.period > 0) || !is_whole_multiple(signal.period / h))
    c.fail("period", "expected a positive multiple of the simulation step sim.dt / sim.substeps = " + seconds(h) +
                         " s, got " + seconds(signal.period) + " s");
  signal.tick_values =
      c.get_choice("tick_values", {"linear", "cubic"}, "linear") == "cubic" ? ControlInterpolation::kCubic
                                                                              : ControlInterpolation::kLinear;
  // The integration steps must start on the controller's ticks: the offset
  // is a multiple of the step too.
  signal.tick_offset = c.get_or<double>("tick_offset", 0.0);
  const double steps = signal.tick_offset / h;
  if (!(signal.tick_offset >= 0 && signal.tick_offset < signal.period) ||
      (signal.tick_offset > 0 && !is_whole_multiple(steps)))
    c.fail("tick_offset", "expected a multiple of the simulation step " + seconds(h) + " s in [0, period = " +
                              seconds(signal.period) + " s), got " + seconds(signal.tick_offset) + " s");
  return signal;
}

}  // namespace experiment_control_timing

StepOptions read_step_options(const Config& sim, const StepOptions& defaults) {
  sim.check_known_keys({"integrator", "dt", "substeps", "duration", "check_finite", "controls"});
  StepOptions o = defaults;
  const std::string integrator = sim.get_choice("integrator", {"semi_implicit_euler", "euler", "rk4"},
                                                integrator_name(defaults.integrator));
  o.integrator = integrator == "rk4" ? Integrator::kRK4 : Integrator::kSemiImplicitEuler;
  o.dt = sim.get_or<double>("dt", defaults.dt);
  if (!(o.dt > 0 && o.dt <= 10)) sim.fail("dt", "expected a time step in (0, 10] s, got " + std::to_string(o.dt));
  o.substeps = static_cast<int>(sim.get_int_in_range("substeps", 1, 1, 1000000));
  o.check_finite = sim.get_or<bool>("check_finite", true);
  if (sim.has("controls")) {
    if (!sim.is_map("controls"))
      sim.fail("controls",
               "expected a map {interpolation: zero_order_hold | hold | linear | cubic, period, tick_values, delay}");
    o.controls = experiment_control_timing::read_control_signal(sim.at("controls"), o);
  }
  return o;
}

namespace experiment_control_timing {
// Where the control delay was given: sim.controls.delay, or (from params:
// controls.delay) the `controls` key of `sim`.
std::pair<Config, std::string> control_delay_key(const Config& sim) {
  if (sim.has("controls") && sim.at("controls").has("delay")) return {sim.at("controls"), "delay"};
  return {sim, "controls"};
}
}  // namespace experiment_control_timing

void check_delay_within_data(const Config& owner, const std::string& key, double delay, const TrajectorySet& data,
                             const std::string& source) {
  for (const Trajectory& tr : data.trajectories) {
    if (tr.size() < 2) continue;
    const double duration = tr.time[tr.size() - 1] - tr.time[0];
    if (std::abs(delay) >= duration)
      owner.fail(key, "a delay of " + experiment_control_timing::seconds(delay) +
                          " s is not shorter than the data: expected |delay| less than the duration " +
                          experiment_control_timing::seconds(duration) + " s of trajectory '" + tr.name + "' (" +
                          source + ")");
  }
}

void check_control_timing(const Config& sim, const StepOptions& options, const TrajectorySet& data,
                          const std::string& source) {
  using experiment_control_timing::seconds;
  if (options.controls.delay != 0) {
    const auto [owner, key] = experiment_control_timing::control_delay_key(sim);
    check_delay_within_data(owner, key, options.controls.delay, data, source);
  }
  if (options.controls.is_zero_order_hold()) return;
  const double h = options.dt / options.substeps;
  for (const Trajectory& tr : data.trajectories) {
    const Eigen::Index T = tr.size();
    if (T < 2) continue;
    const double first = tr.time[1] - tr.time[0];
    bool uniform = true;
    for (Eigen::Index k = 1; k + 1 < T && uniform; ++k)
      uniform = std::abs((tr.time[k + 1] - tr.time[k]) - first) <= 1e-6 * first;
    if (uniform && !experiment_control_timing::is_whole_multiple(first / h))
      sim.fail(options.substeps > 1 ? "substeps" : "dt",
               "with sim.controls.interpolation '" +
                   std::string(control_interpolation_name(options.controls.interpolation)) +
                   "' the simulation step sim.dt / sim.substeps must divide the data's sample interval: expected a "
                   "divisor of " + seconds(first) + " s (" + source + ", trajectory '" + tr.name + "'), got " +
                   seconds(h) + " s");
  }
}

void refuse_control_delay(const Config& sim, const StepOptions& options, const std::string& what) {
  if (options.controls.delay == 0) return;
  const auto [owner, key] = experiment_control_timing::control_delay_key(sim);
  owner.fail(key, what + " replays recorded controls without a delay; expected 0, got " +
                      experiment_control_timing::seconds(options.controls.delay) +
                      " s (a control delay applies to rollout --compare and simid)");
}

void refuse_control_interpolation(const Config& sim, const StepOptions& options, const std::string& what) {
  refuse_control_delay(sim, options, what);
  if (options.controls.is_zero_order_hold()) return;
  sim.at("controls").fail("interpolation",
                          what + " replays recorded controls with a zero-order hold only; expected zero_order_hold, "
                                 "got '" + control_interpolation_name(options.controls.interpolation) +
                                 "' (interpolation applies to rollout --compare, simid, train-augment and discover)");
}

Experiment load_experiment(const Config& root, bool require_sim) {
  Experiment e;
  StepOptions sim_defaults;
  e.model = load_model_section(root.at("model"), &e.warnings, &sim_defaults);
  e.contact = read_contact_section(root, e.model, e.notes, e.warnings);
  for (RawParameter& raw : read_raw_parameters(root, e.notes)) {
    const auto target = resolve_named_parameter(raw.name, e.model, e.contact.has_value());
    if (!target) throw ConfigError(raw.source + ": " + unknown_parameter_message(raw.name, e.model, e.contact.has_value()));
    if (target->kind == ParameterKind::kControlDelay && !std::isfinite(raw.value))
      throw ConfigError(raw.source + ": parameter '" + raw.name + "': expected a finite actuation delay in s, got " +
                        format_number(raw.value));
    if (target->kind == ParameterKind::kTorqueConstant && !(raw.value > 0 && std::isfinite(raw.value)))
      throw ConfigError(raw.source + ": parameter '" + raw.name + "': expected a finite torque constant > 0, got " +
                        format_number(raw.value));
    e.parameters.push_back({*target, raw.value, raw.source});
  }
  apply_model_parameters(e);
  // Links accepted only as part of a planar chain (inertia_check.hpp), named.
  for (const std::string& w : e.model.validate(InertiaCheck::kJointSpace)) e.warnings.push_back(w);
  if (e.model.nv > 0) check_mass_matrix(e.model, root.at("model"));
  if (e.contact) apply_contact_parameters(e);
  e.step = sim_defaults;
  if (require_sim || root.has("sim")) {
    const Config sim = root.at("sim");
    e.step = read_step_options(sim, sim_defaults);
    if (e.contact && e.contact->model == ContactModelType::kImpulse && e.step.integrator != Integrator::kSemiImplicitEuler)
      sim.fail("integrator", "contact model 'impulse' acts on velocities and needs semi_implicit_euler");
  }
  // A fitted delay from a params.json (or params:) replays the fit: it is
  // sim.controls.delay, which must then not be given too.
  for (const ExperimentParameter& p : e.parameters) {
    if (p.target.kind != ParameterKind::kControlDelay) continue;
    if (root.has("sim") && root.at("sim").has("controls") && root.at("sim").at("controls").has("delay"))
      root.at("sim").at("controls").fail("delay", "is also set by " + p.source +
                                                      " (controls.delay): give the delay in one place");
    e.step.controls.delay = p.value;
  }
  e.augment = read_augment_section(root, e.model, e.contact ? &*e.contact : nullptr);
  return e;
}

Eigen::VectorXd read_coordinate_vector(const Config& c, const std::string& key, int n, double fallback,
                                       CoordinateValues form) {
  if (!c.has(key)) return Eigen::VectorXd::Constant(n, fallback);
  const bool number_allowed = form == CoordinateValues::kListOrNumber;
  if (number_allowed && !c.is_list(key)) return Eigen::VectorXd::Constant(n, c.get<double>(key));
  const Eigen::VectorXd v = c.get<Eigen::VectorXd>(key);
  if (v.size() != n)
    c.fail(key, "expected " + std::to_string(n) + " values (one per coordinate" +
                    (number_allowed ? std::string(", or one number without brackets for all)") : std::string(")")) +
                    ", got a list of " + std::to_string(v.size()));
  return v;
}

std::vector<InitialState> read_initial_states(const Config& c, const Model<double>& model, std::mt19937_64& rng,
                                              long long max_count) {
  std::vector<InitialState> out;
  if (c.has("list")) {
    c.check_known_keys({"list"});
    const std::vector<Config> items = c.list("list");
    if (items.empty()) c.fail("list", "is empty");
    if (static_cast<long long>(items.size()) > max_count)
      c.fail("list", "has " + std::to_string(items.size()) + " states, more than the limit " + std::to_string(max_count));
    for (const Config& item : items) {
      item.check_known_keys({"q", "qd"});
      InitialState s;
      s.q = item.has("q") ? read_coordinate_vector(item, "q", model.nq, 0.0, CoordinateValues::kList)
                          : model.neutral_configuration();
      s.qd = read_coordinate_vector(item, "qd", model.nv, 0.0, CoordinateValues::kList);
      normalize_configuration(model, s.q);
      out.push_back(s);
    }
    return out;
  }
  c.check_known_keys({"count", "q_low", "q_high", "qd_low", "qd_high"});
  const long long count = c.get_int_in_range("count", 1, 1, max_count);
  const Eigen::VectorXd q0 = model.neutral_configuration();
  const Eigen::VectorXd ql = read_coordinate_vector(c, "q_low", model.nq, 0.0, CoordinateValues::kListOrNumber) + q0;
  const Eigen::VectorXd qh = read_coordinate_vector(c, "q_high", model.nq, 0.0, CoordinateValues::kListOrNumber) + q0;
  const Eigen::VectorXd vl = read_coordinate_vector(c, "qd_low", model.nv, 0.0, CoordinateValues::kListOrNumber);
  const Eigen::VectorXd vh = read_coordinate_vector(c, "qd_high", model.nv, 0.0, CoordinateValues::kListOrNumber);
  if ((qh - ql).minCoeff() < 0) c.fail("q_high", "must be >= q_low in every coordinate");
  if ((vh - vl).minCoeff() < 0) c.fail("qd_high", "must be >= qd_low in every coordinate");
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (long long k = 0; k < count; ++k) {
    InitialState s;
    s.q = ql + (qh - ql).cwiseProduct(Eigen::VectorXd::NullaryExpr(model.nq, [&] { return u(rng); }));
    s.qd = vl + (vh - vl).cwiseProduct(Eigen::VectorXd::NullaryExpr(model.nv, [&] { return u(rng); }));
    normalize_configuration(model, s.q);
    out.push_back(s);
  }
  return out;
}

void apply_initial_state_parameters(const Experiment& e, std::vector<InitialState>& states) {
  for (const ExperimentParameter& p : e.parameters)
    if (p.target.kind == ParameterKind::kInitialVelocity)
      for (InitialState& s : states) s.qd[p.target.velocity_index] = p.value;
}

std::vector<LinkRef> read_links(const Config& owner, const std::string& key, const Model<double>& model) {
  std::vector<LinkRef> out;
  const std::vector<std::string> names = owner.get_or<std::vector<std::string>>(key, {});
  for (size_t i = 0; i < names.size(); ++i) {
    const auto link = find_link(model, names[i]);
    if (!link) owner.fail(key + "." + std::to_string(i), "no body or frame named '" + names[i] + "'");
    out.push_back(*link);
  }
  return out;
}

void ControllerRegistry::add(const std::string& type, Factory factory) {
  for (auto& [t, f] : factories_)
    if (t == type) {
      f = std::move(factory);
      return;
    }
  factories_.emplace_back(type, std::move(factory));
}

std::vector<std::string> ControllerRegistry::types() const {
  std::vector<std::string> out;
  for (const auto& [t, f] : factories_) out.push_back(t);
  return out;
}

std::unique_ptr<Controller<double>> ControllerRegistry::make(const Config& section, const Model<double>& model,
                                                             int trajectory_index, const TrajectorySet* recorded) const {
  const std::string type = section.get_choice("type", types(), "zero");
  for (const auto& [t, f] : factories_)
    if (t == type) return f(section, model, trajectory_index, recorded);
  return nullptr;  // unreachable: get_choice checked the type
}

ControllerRegistry standard_controllers() {
  ControllerRegistry r;
  r.add("zero", [](const Config& c, const Model<double>&, int, const TrajectorySet*) {
    c.check_known_keys({"type"});
    return std::make_unique<ZeroControl<double>>();
  });
  r.add("constant", [](const Config& c, const Model<double>& model, int, const TrajectorySet*) {
    c.check_known_keys({"type", "value"});
    return std::make_unique<ConstantControl<double>>(
        read_coordinate_vector(c, "value", model.nv, 0.0, CoordinateValues::kListOrNumber));
  });
  r.add("sinusoid", [](const Config& c, const Model<double>& model, int, const TrajectorySet*) {
    c.check_known_keys({"type", "offset", "amplitude", "frequency", "phase"});
    return std::make_unique<SinusoidControl<double>>(read_sinusoid(c, model.nv));
  });
  r.add("pd", [](const Config& c, const Model<double>& model, int, const TrajectorySet*) {
    c.check_known_keys({"type", "kp", "kd", "target", "hold_initial"});
    const int n = model.nv;
    Sinusoid ref;  // hold the neutral pose unless a target is given
    ref.offset = ref.amplitude = ref.frequency_hz = ref.phase = Eigen::VectorXd::Zero(n);
    if (c.has("target")) {
      c.at("target").check_known_keys({"offset", "amplitude", "frequency", "phase"});
      ref = read_sinusoid(c.at("target"), n);
    }
    return std::make_unique<PdControl<double>>(pd_position_index(model),
                                               read_coordinate_vector(c, "kp", n, 0.0, CoordinateValues::kListOrNumber),
                                               read_coordinate_vector(c, "kd", n, 0.0, CoordinateValues::kListOrNumber), ref,
                                               c.get_or<bool>("hold_initial", false));
  });
  r.add("dataset", [](const Config& c, const Model<double>& model, int index, const TrajectorySet* recorded) {
    c.check_known_keys({"type", "file"});
    if (!recorded || recorded->trajectories.empty())
      c.fail("type", "controls of type 'dataset' need 'controls.file' with recorded trajectories");
    const Trajectory& tr = recorded->trajectories[static_cast<size_t>(index) % recorded->trajectories.size()];
    if (!tr.has_tau()) throw DataError(c.path("file") + ":/trajectories/" + tr.name + "/tau: missing (controls of type 'dataset')");
    if (tr.tau.cols() != model.nv)
      throw DataError(c.path("file") + ":/trajectories/" + tr.name + "/tau: expected shape (T, nv=" +
                      std::to_string(model.nv) + "), got (" + std::to_string(tr.tau.rows()) + ", " +
                      std::to_string(tr.tau.cols()) + ")");
    return std::make_unique<RecordedControl<double>>(Eigen::MatrixXd(tr.tau));
  });
  return r;
}

}  // namespace neuralsim
