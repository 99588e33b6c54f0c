// `simid --design-excitation` as a library call (excitation.hpp).
#include "neuralsim/tools/excitation.hpp"

#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/parameters/named_parameter.hpp"

namespace neuralsim {
namespace {

// A per-joint limit: absent → the model's; present → finite and > 0.
void read_bound(const Config& limits, const std::string& key, const std::vector<std::string>& joints,
                Eigen::VectorXd& into) {
  if (!limits.has(key)) return;
  const int nd = static_cast<int>(joints.size());
  into = read_coordinate_vector(limits, key, nd, 0, CoordinateValues::kListOrNumber);
  for (int j = 0; j < nd; ++j)
    if (!(into[j] > 0))
      limits.fail(key, "expected a positive limit for every joint, got " + std::to_string(into[j]) + " for '" +
                           joints[static_cast<size_t>(j)] + "'");
}

// `parameters:` (names simid can fit, model kinds) and `mount:` (a
// floating base's stand).
void read_named_and_mount(const Config& s, const Model<double>& model, ExcitationDesignOptions& o) {
  if (s.has("parameters")) {
    if (!s.is_list("parameters"))
      s.fail("parameters", "expected a list of parameter names (estimate.parameters names)");
    o.parameters = s.get<std::vector<std::string>>("parameters");
    for (size_t i = 0; i < o.parameters.size(); ++i) {
      const std::string key = "parameters." + std::to_string(i), &name = o.parameters[i];
      const std::optional<NamedParameter> p = resolve_named_parameter(name, model, false);
      if (!p) s.fail(key, unknown_parameter_message(name, model, false));
      if (p->kind != ParameterKind::kModel)
        s.fail(key, "'" + name +
                        "' is no model quantity the torques depend on: expected link.*, joint.* or gravity.* "
                        "names (a link's whole inertia enters through links)");
      for (size_t k = 0; k < i; ++k)
        if (o.parameters[k] == name) s.fail(key, "'" + name + "' is listed twice");
    }
  }
  const bool floating = !model.joints.empty() && model.joints.front().type == JointType::kFree;
  if (!s.has("mount")) return;
  if (!floating)
    s.fail("mount", "expected no mount: the model's root joint '" + model.joints.front().name +
                        "' is not free (a mount holds a floating base)");
  const Config m = s.at("mount");
  m.check_known_keys({"pose", "wrench", "force_noise", "torque_noise"});
  if (m.has("pose")) {
    o.mount.pose = read_coordinate_vector(m, "pose", 7, 0, CoordinateValues::kList);
    const double n = o.mount.pose.tail(4).norm();
    if (!(std::abs(n - 1) < 1e-6))
      m.fail("pose",
             "expected x y z qx qy qz qw with a unit quaternion, got a quaternion of norm " + std::to_string(n));
  }
  o.mount.wrench = m.get_or<bool>("wrench", false);
  o.mount.force_noise = m.get_in_range("force_noise", 1.0, 1e-12, 1e12);
  o.mount.torque_noise = m.get_in_range("torque_noise", 1.0, 1e-12, 1e12);
}

}  // namespace

ExcitationDesignOptions read_excitation_options(const Config& s, const Model<double>& model, long long seed,
                                                std::vector<std::string>* links) {
  s.check_known_keys({"period", "harmonics", "sample_rate", "check_refinement", "output_rate", "periods", "criterion",
                      "noise", "links", "joint_terms", "parameters", "mount", "limits", "start_at_rest", "margin",
                      "penalty", "initial_fill", "restarts", "max_iterations"});
  std::vector<int> coords;
  try {
    coords = excitation_coordinates(model);
  } catch (const InvalidArgument& e) {
    s.fail("", e.what());
  }
  const int nd = static_cast<int>(coords.size());
  std::vector<std::string> joints;
  for (int v : coords) joints.push_back(model.velocity_names()[static_cast<size_t>(v)]);
  ExcitationDesignOptions o;
  o.period = s.get_in_range("period", 10.0, 1e-3, 1e5);
  o.start_at_rest = s.get_or<bool>("start_at_rest", true);
  o.harmonics = static_cast<int>(s.get_int_in_range("harmonics", 5, o.start_at_rest ? 2 : 1, 100));
  o.sample_rate = s.get_in_range("sample_rate", 50.0, 1e-3, 1e5);
  if (o.period * o.sample_rate < 2 * o.harmonics + 1)
    s.fail("sample_rate", "expected at least 2·harmonics + 1 = " + std::to_string(2 * o.harmonics + 1) +
                              " samples per period (Nyquist), got period × sample_rate = " +
                              std::to_string(o.period * o.sample_rate));
  if (o.period * o.sample_rate > 1e6) s.fail("sample_rate", "expected at most 1e6 samples per period");
  o.check_refinement = static_cast<int>(s.get_int_in_range("check_refinement", 10, 1, 1000));
  o.output_rate = s.get_in_range("output_rate", o.sample_rate, 1e-3, 1e6);
  o.periods = static_cast<int>(s.get_int_in_range("periods", 1, 1, 10000));
  if (o.period * o.output_rate * o.periods > 1e8) s.fail("output_rate", "expected at most 1e8 output samples");
  o.criterion = s.get_choice("criterion", {"log_det", "condition"}, "log_det") == "log_det"
                    ? ExcitationCriterion::kLogDet
                    : ExcitationCriterion::kCondition;
  o.noise = read_coordinate_vector(s, "noise", nd, 1.0, CoordinateValues::kListOrNumber);
  for (int j = 0; j < nd; ++j)
    if (!(o.noise[j] > 0)) s.fail("noise", "expected a positive standard deviation for every joint, got " + std::to_string(o.noise[j]));
  o.margin = s.get_in_range("margin", 0.05, 0.0, 0.5);
  o.penalty = s.get_in_range("penalty", 1e4, 1e-6, 1e12);
  o.initial_fill = s.get_in_range("initial_fill", 0.5, 1e-3, 0.95);
  o.restarts = static_cast<int>(s.get_int_in_range("restarts", 1, 1, 1000));
  o.max_iterations = static_cast<int>(s.get_int_in_range("max_iterations", 200, 0, 1000000));
  o.seed = static_cast<unsigned long long>(seed);
  // Links by name (default: every body).
  std::vector<std::string> names;
  if (s.has("links")) {
    if (!s.is_list("links")) s.fail("links", "expected a list of link names");
    names = s.get<std::vector<std::string>>("links");
    if (names.empty()) o.link_inertias = false;
    for (size_t i = 0; i < names.size(); ++i) {
      const int b = model.body_index(names[i]);
      if (b < 0) s.fail("links." + std::to_string(i), "no link named '" + names[i] + "' in the model");
      for (int c : o.bodies)
        if (c == b) s.fail("links." + std::to_string(i), "link '" + names[i] + "' is listed twice");
      o.bodies.push_back(b);
    }
  } else {
    for (const Body<double>& b : model.bodies) names.push_back(b.name);
  }
  if (links) *links = names;
  read_named_and_mount(s, model, o);
  if (!o.link_inertias && o.parameters.empty() && !s.has("joint_terms"))
    s.fail("links", "expected at least one link, joint term or named parameter to identify");
  // Joint-local parameters identified beside the inertias.
  if (s.has("joint_terms")) {
    if (!s.is_list("joint_terms")) s.fail("joint_terms", "expected a list of armature, damping, friction, torque_offset");
    const std::vector<Config> terms = s.list("joint_terms");
    for (size_t i = 0; i < terms.size(); ++i) {
      const std::string key = "joint_terms." + std::to_string(i);
      const std::string name = s.get_choice(key, {"armature", "damping", "friction", "torque_offset"}, "");
      const ExcitationJointTerm t = name == "armature"  ? ExcitationJointTerm::kArmature
                                    : name == "damping" ? ExcitationJointTerm::kDamping
                                    : name == "friction" ? ExcitationJointTerm::kFriction
                                                         : ExcitationJointTerm::kTorqueOffset;
      for (ExcitationJointTerm u : o.joint_terms)
        if (u == t) s.fail(key, "'" + name + "' is listed twice");
      if (t == ExcitationJointTerm::kFriction)
        for (const Joint<double>& j : model.joints)
          if (j.nv > 0 && j.dynamics.friction_law == FrictionLaw::kStribeck)
            s.fail(key, "joint '" + j.name + "' has a Stribeck friction law, not linear in one friction level: the "
                        "friction term covers the tanh, atan and sigmoid laws");
      o.joint_terms.push_back(t);
    }
  }
  // Limits: the model's, replaced per key.
  o.limits = model_excitation_limits(model);
  if (s.has("limits")) {
    const Config l = s.at("limits");
    l.check_known_keys({"q_lower", "q_upper", "qd", "qdd", "tau"});
    if (l.has("q_lower"))
      o.limits.q_lower = read_coordinate_vector(l, "q_lower", nd, 0, CoordinateValues::kListOrNumber);
    if (l.has("q_upper"))
      o.limits.q_upper = read_coordinate_vector(l, "q_upper", nd, 0, CoordinateValues::kListOrNumber);
    read_bound(l, "qd", joints, o.limits.qd);
    read_bound(l, "qdd", joints, o.limits.qdd);
    read_bound(l, "tau", joints, o.limits.tau);
    for (int j = 0; j < nd; ++j)
      if (std::isfinite(o.limits.q_lower[j]) != std::isfinite(o.limits.q_upper[j]) ||
          !(o.limits.q_upper[j] > o.limits.q_lower[j]))
        l.fail(l.has("q_upper") ? "q_upper" : "q_lower",
               "expected q_lower < q_upper, both given, for joint '" + joints[static_cast<size_t>(j)] + "', got [" +
                   std::to_string(o.limits.q_lower[j]) + ", " + std::to_string(o.limits.q_upper[j]) + "]");
  }
  for (int j = 0; j < nd; ++j) {
    const ExcitationLimits& m = o.limits;
    if (!std::isfinite(m.q_lower[j]) && !std::isfinite(m.qd[j]) && !std::isfinite(m.qdd[j]) && !std::isfinite(m.tau[j]))
      s.fail("limits", "joint '" + joints[static_cast<size_t>(j)] +
                           "' has no limit (the model sets none and limits gives none of q_lower/q_upper, qd, qdd, "
                           "tau): its amplitude would grow without bound");
  }
  return o;
}

ExcitationRun design_excitation_from_config(const ExcitationRequest& request, const RunContext& context) {
  const Config& cfg = request.config;
  cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "data", "estimate", "output",
                        "contact", "excitation"});
  if (!cfg.has("excitation"))
    cfg.fail("excitation", "--design-excitation needs an 'excitation:' section (docs/simid.md, \"Excitation design\")");
  ExcitationRun run;
  const Experiment exp = load_experiment(cfg, false);
  run.model = exp.model;
  run.warnings = exp.warnings;
  const Config section = cfg.at("excitation");
  run.options = read_excitation_options(section, run.model, request.seed, &run.links);
  context.started();
  context.info(format_printf("excitation design: %d joints, %d harmonics, period %g s, criterion %s",
                             static_cast<int>(run.options.noise.size()), run.options.harmonics, run.options.period,
                             excitation_criterion_name(run.options.criterion)));
  try {
    run.result = design_excitation(run.model, run.options);
  } catch (const InvalidArgument& e) {  // what the design refuses: the key it concerns
    const std::string what = e.what();
    section.fail(what.find("mount") != std::string::npos       ? "mount"
                 : what.find("parameter") != std::string::npos ? "parameters"
                                                               : "limits",
                 what);
  }
  run.timings["design_s"] = run.result.seconds;
  if (run.result.repair_scale < 1)
    context.info(format_printf("excitation design: the optimum was scaled by %.4g to keep every limit on the fine grid",
                               run.result.repair_scale));
  return run;
}

}  // namespace neuralsim
