#include "neuralsim/rollout/experiment.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/io/errors.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/model/urdf_model.hpp"
#include "neuralsim/model/yaml_model.hpp"

namespace neuralsim {
namespace {

Eigen::VectorXd vector_of_size(const Config& c, const std::string& key, int n, double fill) {
  if (!c.has(key)) return Eigen::VectorXd::Constant(n, fill);
  Eigen::VectorXd v = c.get<Eigen::VectorXd>(key);
  if (v.size() == 1 && n != 1) return Eigen::VectorXd::Constant(n, v[0]);
  if (v.size() != n)
    throw ConfigError(c.where(key) + ": key '" + c.prefix() + (c.prefix().empty() ? "" : ".") + key +
                      "': expected " + std::to_string(n) + " values (one per coordinate), got " +
                      std::to_string(v.size()));
  return v;
}

Sinusoid read_sinusoid(const Config& c, int n) {
  Sinusoid s;
  s.offset = vector_of_size(c, "offset", n, 0.0);
  s.amplitude = vector_of_size(c, "amplitude", n, 0.0);
  s.frequency_hz = vector_of_size(c, "frequency", n, 0.0);
  s.phase = vector_of_size(c, "phase", n, 0.0);
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

void flatten_parameters(const nlohmann::json& j, const std::string& prefix, const std::string& where,
                        std::map<std::string, double>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object())
      flatten_parameters(it.value(), name, where, out);
    else if (it.value().is_number()) {
      // "a.b: 1" and "a: {b: 2}" name the same parameter: refuse to guess.
      if (!out.emplace(name, it.value().get<double>()).second)
        throw ConfigError(where + ": parameter '" + name + "' is given twice (dotted and nested keys)");
    }
    else
      throw ConfigError(where + ": parameter '" + name + "' must be a number");
  }
}

}  // namespace

Model<double> load_experiment_model(const Config& root) {
  const Config m = root.at("model");
  Model<double> model;
  try {
    if (m.has("file")) {
      m.check_known_keys({"file"});
      model = load_yaml_model(m.path("file"));
    } else if (m.has("urdf")) {
      m.check_known_keys({"urdf", "floating_base", "merge_fixed_joints"});
      UrdfOptions opts;
      opts.floating_base = m.get_or<bool>("floating_base", false);
      opts.merge_fixed_joints = m.get_or<bool>("merge_fixed_joints", true);
      model = load_urdf_model(m.path("urdf"), opts);
    } else {
      // Inline model: re-read the section from the file so messages keep lines.
      model = build_yaml_model(YAML::Load(m.to_json().dump()), root.file() + " (model)");
    }
  } catch (const ModelError& e) {
    throw ConfigError(m.where("") + ": " + e.what());
  }
  const ExperimentParameters all = read_experiment_parameters(root);
  for (const auto& [name, value] : all.values) {
    if (is_contact_parameter_name(name) || is_initial_state_parameter_name(name)) continue;
    apply_parameters(model, {{name, value}}, all.source.at(name));
  }
  return model;
}

bool is_contact_parameter_name(const std::string& name) { return name.rfind("contact.", 0) == 0; }
bool is_initial_state_parameter_name(const std::string& name) { return name.rfind("initial.", 0) == 0; }

ExperimentParameters read_experiment_parameters(const Config& root) {
  ExperimentParameters out;
  if (root.has("params")) {
    std::map<std::string, double> values;
    // Parameter names contain dots, so read the section as JSON and flatten
    // nested maps: `--set params.link.link1.length=2.9` nests, a YAML key
    // "link.link1.length: 2.9" does not; both name the same parameter.
    const nlohmann::json p = root.at("params").to_json();
    if (!p.is_object()) throw ConfigError(root.where("params") + ": key 'params' must map names to numbers");
    flatten_parameters(p, "", root.where("params"), values);
    for (const auto& [name, value] : values) {
      out.values[name] = value;
      out.source[name] = root.where("params");
    }
  }
  if (root.has("params_file")) {
    const std::string path = root.path("params_file");
    for (const auto& [name, value] : read_parameter_file(path)) {
      out.values[name] = value;
      out.source[name] = path;
    }
  }
  return out;
}

std::optional<ContactSettings> load_experiment_contact(const Config& root, const Model<double>& model) {
  std::optional<ContactSettings> settings = contact_settings_from(root, model);
  const ExperimentParameters all = read_experiment_parameters(root);
  for (const auto& [name, value] : all.values) {
    if (!is_contact_parameter_name(name)) continue;
    if (!settings)
      throw ConfigError(all.source.at(name) + ": contact parameter '" + name +
                        "' given, but the config has no 'contact:' section");
    try {
      set_contact_parameter(settings->parameters, resolve_contact_parameter(name), value);
    } catch (const ConfigError& e) {
      throw ConfigError(all.source.at(name) + ": " + e.what());
    }
  }
  return settings;
}

void apply_initial_state_parameters(const Config& root, const Model<double>& model,
                                    std::vector<InitialState>& states) {
  const ExperimentParameters all = read_experiment_parameters(root);
  const std::vector<std::string> coords = model.velocity_names();
  for (const auto& [name, value] : all.values) {
    if (!is_initial_state_parameter_name(name)) continue;
    int index = -1;
    for (size_t i = 0; i < coords.size(); ++i)
      if (name == "initial.qd." + coords[i]) index = static_cast<int>(i);
    if (index < 0) {
      std::string list;
      for (const auto& c : coords) list += (list.empty() ? "" : ", ") + ("initial.qd." + c);
      throw ConfigError(all.source.at(name) + ": unknown initial-state parameter '" + name + "' (valid: " + list + ")");
    }
    for (InitialState& s : states) s.qd[index] = value;
  }
}

std::vector<std::pair<std::string, int>> resolve_links(const Model<double>& model,
                                                       const std::vector<std::string>& names,
                                                       const std::string& where) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& name : names) {
    const int body = model.body_index(name), frame = model.frame_index(name);
    if (body < 0 && frame < 0) throw ConfigError(where + ": no body or frame named '" + name + "'");
    out.emplace_back(name, body >= 0 ? body : -2 - frame);
  }
  return out;
}

void record_link_poses(const Model<double>& model, const std::vector<std::pair<std::string, int>>& links,
                       Trajectory& tr) {
  if (links.empty()) return;
  Data<double> data(model);
  for (const auto& [name, index] : links) tr.link_poses[name].resize(tr.size(), 7);
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    forward_kinematics(model, data, Eigen::VectorXd(tr.q.row(k).transpose()));
    for (const auto& [name, index] : links) {
      const Transform<double> X = index >= 0 ? data.X_world[index] : frame_transform_world(model, data, -2 - index);
      const Eigen::Quaterniond rot(Eigen::Matrix3d(X.E.transpose()));
      tr.link_poses[name].row(k) << X.r.transpose(), rot.x(), rot.y(), rot.z(), rot.w();
    }
  }
}

std::map<std::string, double> read_parameter_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DataError(path + ": cannot open parameter file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": invalid JSON: " + e.what());
  }
  const nlohmann::json& params = j.contains("parameters") ? j["parameters"] : j;
  if (!params.is_object()) throw DataError(path + ": expected an object of parameters");
  std::map<std::string, double> out;
  for (auto it = params.begin(); it != params.end(); ++it) {
    const nlohmann::json& v = it.value();
    if (v.is_number()) {
      out[it.key()] = v.get<double>();
    } else if (v.is_object() && v.contains("value") && v["value"].is_number()) {
      out[it.key()] = v["value"].get<double>();
    } else {
      throw DataError(path + ": parameter '" + it.key() + "' has no numeric value");
    }
  }
  return out;
}

void apply_parameters(Model<double>& model, const std::map<std::string, double>& values,
                      const std::string& source) {
  for (const auto& [name, value] : values) {
    ParameterRef ref;
    try {
      ref = resolve_parameter(model, name);
    } catch (const ConfigError& e) {
      throw ConfigError(source + ": " + e.what());
    }
    set_parameter(model, ref, value);
  }
}

StepOptions read_step_options(const Config& sim) {
  sim.check_known_keys({"integrator", "dt", "substeps", "duration", "check_finite"});
  StepOptions o;
  o.integrator = integrator_from_name(sim.get_or("integrator", "semi_implicit_euler"));
  o.dt = sim.get_or<double>("dt", 1e-3);
  if (!(o.dt > 0)) throw ConfigError(sim.where("dt") + ": key 'sim.dt' must be > 0");
  o.substeps = sim.get_or<int>("substeps", 1);
  if (o.substeps < 1) throw ConfigError(sim.where("substeps") + ": key 'sim.substeps' must be >= 1");
  o.check_finite = sim.get_or<bool>("check_finite", true);
  return o;
}

std::vector<InitialState> read_initial_states(const Config& c, const Model<double>& model,
                                              std::mt19937_64& rng) {
  std::vector<InitialState> out;
  if (c.has("list")) {
    for (const Config& item : c.list("list")) {
      InitialState s;
      s.q = item.has("q") ? vector_of_size(item, "q", model.nq, 0.0) : model.neutral_configuration();
      s.qd = vector_of_size(item, "qd", model.nv, 0.0);
      normalize_configuration(model, s.q);
      out.push_back(s);
    }
    if (out.empty()) throw ConfigError(c.where("list") + ": 'initial_states.list' is empty");
    return out;
  }
  c.check_known_keys({"count", "q_low", "q_high", "qd_low", "qd_high"});
  const int count = c.get_or<int>("count", 1);
  if (count < 1) throw ConfigError(c.where("count") + ": 'initial_states.count' must be >= 1");
  const Eigen::VectorXd q0 = model.neutral_configuration();
  const Eigen::VectorXd ql = vector_of_size(c, "q_low", model.nq, 0.0) + q0;
  const Eigen::VectorXd qh = vector_of_size(c, "q_high", model.nq, 0.0) + q0;
  const Eigen::VectorXd vl = vector_of_size(c, "qd_low", model.nv, 0.0);
  const Eigen::VectorXd vh = vector_of_size(c, "qd_high", model.nv, 0.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < count; ++k) {
    InitialState s;
    s.q = ql + (qh - ql).cwiseProduct(Eigen::VectorXd::NullaryExpr(model.nq, [&] { return u(rng); }));
    s.qd = vl + (vh - vl).cwiseProduct(Eigen::VectorXd::NullaryExpr(model.nv, [&] { return u(rng); }));
    normalize_configuration(model, s.q);
    out.push_back(s);
  }
  return out;
}

std::unique_ptr<Controller<double>> make_controller(const Config& c, const Model<double>& model,
                                                    int trajectory_index, const TrajectorySet* recorded) {
  const std::string type = c.get_or("type", "zero");
  const int n = model.nv;
  if (type == "zero") return std::make_unique<ZeroControl<double>>();
  if (type == "constant") {
    c.check_known_keys({"type", "value"});
    return std::make_unique<ConstantControl<double>>(vector_of_size(c, "value", n, 0.0));
  }
  if (type == "sinusoid") {
    c.check_known_keys({"type", "offset", "amplitude", "frequency", "phase"});
    return std::make_unique<SinusoidControl<double>>(read_sinusoid(c, n));
  }
  if (type == "pd") {
    c.check_known_keys({"type", "kp", "kd", "target", "hold_initial"});
    Sinusoid ref;  // hold the neutral pose unless a target is given
    ref.offset = ref.amplitude = ref.frequency_hz = ref.phase = Eigen::VectorXd::Zero(n);
    if (c.has("target")) ref = read_sinusoid(c.at("target"), n);
    return std::make_unique<PdControl<double>>(pd_position_index(model), vector_of_size(c, "kp", n, 0.0),
                                               vector_of_size(c, "kd", n, 0.0), ref,
                                               c.get_or<bool>("hold_initial", false));
  }
  if (type == "dataset") {
    c.check_known_keys({"type", "file"});
    if (!recorded || recorded->trajectories.empty())
      throw ConfigError(c.where("type") + ": controls of type 'dataset' need 'controls.file'");
    const Trajectory& tr =
        recorded->trajectories[static_cast<size_t>(trajectory_index) % recorded->trajectories.size()];
    if (!tr.has_tau()) throw DataError(c.path("file") + ": trajectory '" + tr.name + "' has no 'tau' dataset");
    if (tr.tau.cols() != n)
      throw DataError(c.path("file") + ":/trajectories/" + tr.name + "/tau: expected shape (T, nv=" +
                      std::to_string(n) + "), got (" + std::to_string(tr.tau.rows()) + ", " +
                      std::to_string(tr.tau.cols()) + ")");
    return std::make_unique<RecordedControl<double>>(Eigen::MatrixXd(tr.tau));
  }
  throw ConfigError(c.where("type") + ": key 'controls.type': unknown control type '" + type +
                    "' (zero, constant, sinusoid, pd, dataset)");
}

}  // namespace neuralsim
