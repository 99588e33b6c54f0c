#include "neuralsim/experiment/contact_config.hpp"

#include <cmath>

#include "neuralsim/contact/collision_detection.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

Eigen::Vector3d vec3(const Config& c, const std::string& key) {
  const Eigen::VectorXd v = c.get<Eigen::VectorXd>(key);
  if (v.size() != 3)
    throw ConfigError(c.where(key) + ": key '" + c.prefix() + "." + key + "': expected 3 numbers, got " +
                      std::to_string(v.size()));
  return v;
}

int body_of(const Config& c, const std::string& key, const Model<double>& model) {
  const std::string name = c.get<std::string>(key);
  const int b = model.body_index(name);
  if (b < 0) {
    std::string list;
    for (const auto& body : model.bodies) list += (list.empty() ? "" : ", ") + body.name;
    throw ConfigError(c.where(key) + ": key '" + c.prefix() + "." + key + "': unknown body '" + name +
                      "' (bodies: " + list + ")");
  }
  return b;
}

PointSet read_point_set(const Config& c, const Model<double>& model) {
  c.check_known_keys({"name", "body", "points", "grid"});
  PointSet ps;
  ps.body = body_of(c, "body", model);
  ps.name = c.get_or("name", model.bodies[ps.body].name);
  if (c.has("points")) {
    const size_t n = c.to_json()["points"].size();
    for (size_t k = 0; k < n; ++k) ps.points.push_back(vec3(c, "points." + std::to_string(k)));
  }
  if (c.has("grid")) {
    // A uniform grid from `min` to `max` (inclusive) with `spacing`, in body
    // coordinates; a zero extent along an axis gives a planar grid.
    const Config g = c.at("grid");
    g.check_known_keys({"min", "max", "spacing"});
    const Eigen::Vector3d lo = vec3(g, "min"), hi = vec3(g, "max");
    const double s = g.get<double>("spacing");
    if (!(s > 0)) throw ConfigError(g.where("spacing") + ": key '" + g.prefix() + ".spacing' must be > 0");
    int count[3];
    for (int k = 0; k < 3; ++k) {
      if (hi[k] < lo[k]) throw ConfigError(g.where("max") + ": key '" + g.prefix() + ".max' must be >= min");
      count[k] = static_cast<int>(std::floor((hi[k] - lo[k]) / s + 1e-9)) + 1;
    }
    if (static_cast<long>(count[0]) * count[1] * count[2] > 100000)
      throw ConfigError(g.where("spacing") + ": grid of " + g.prefix() + " has more than 100000 points");
    for (int i = 0; i < count[0]; ++i)
      for (int j = 0; j < count[1]; ++j)
        for (int k = 0; k < count[2]; ++k) ps.points.push_back(lo + s * Eigen::Vector3d(i, j, k));
  }
  if (ps.points.empty()) throw ConfigError(c.where("") + ": a point set needs 'points' or 'grid'");
  return ps;
}

}  // namespace

ContactSettings read_contact_settings(const Config& c, const Model<double>& model) {
  c.check_known_keys({"model", "ground", "parameters", "friction_model", "friction_cone", "pgs", "margin", "pairs",
                      "joint_limits", "point_sets", "gradient"});
  ContactSettings s;
  const std::string model_name = c.get_choice("model", {"hunt_crossley", "penalty", "impulse"}, "hunt_crossley");
  s.model = model_name == "impulse" ? ContactModelType::kImpulse
            : model_name == "penalty" ? ContactModelType::kPenalty
                                      : ContactModelType::kHuntCrossley;
  if (s.model == ContactModelType::kPenalty) {
    // Penalty units differ from Hunt–Crossley (N/m², N·s/m²); defaults that
    // give a similar ~1 mm static depth for a few kg per contact.
    s.parameters.stiffness = 1e7;
    s.parameters.damping = 1e5;
  }
  if (s.model == ContactModelType::kImpulse) s.margin = 0.01;

  const nlohmann::json j = c.to_json();
  if (j.contains("ground")) {
    if (j["ground"].is_boolean()) {
      s.ground.enabled = j["ground"].get<bool>();
    } else {
      const Config g = c.at("ground");
      g.check_known_keys({"enabled", "height", "normal"});
      s.ground.enabled = g.get_or<bool>("enabled", true);
      s.ground.height = g.get_or<double>("height", 0.0);
      if (g.has("normal")) {
        const Eigen::Vector3d n = vec3(g, "normal");
        if (n.norm() < 1e-12) throw ConfigError(g.where("normal") + ": key 'contact.ground.normal' must be non-zero");
        s.ground.normal = n.normalized();
      }
    }
  }
  if (c.has("parameters")) {
    const Config p = c.at("parameters");
    for (const auto& [key, value] : p.items()) {
      const auto id = find_contact_parameter(key);
      if (!id) {
        std::string list;
        for (const auto& n : contact_parameter_names()) list += (list.empty() ? "" : ", ") + n;
        value.fail("", "unknown contact parameter '" + key + "' (valid: " + list + ")");
      }
      set_contact_parameter(s.parameters, *id, value.get<double>(""));
    }
  }
  const std::string fm = c.get_choice("friction_model", {"coulomb", "viscous", "stribeck"}, "coulomb");
  s.friction_model = fm == "viscous" ? FrictionModel::kViscous
                     : fm == "stribeck" ? FrictionModel::kStribeck
                                        : FrictionModel::kCoulomb;
  s.friction_cone =
      c.get_choice("friction_cone", {"pyramid", "cone"}, "pyramid") == "cone" ? FrictionCone::kCone : FrictionCone::kPyramid;
  if (c.has("pgs")) {
    const Config p = c.at("pgs");
    p.check_known_keys({"iterations", "tolerance", "warm_start", "erp", "cfm"});
    s.pgs.max_iterations = static_cast<int>(p.get_int_in_range("iterations", s.pgs.max_iterations, 1, 100000));
    s.pgs.tolerance = p.get_in_range("tolerance", s.pgs.tolerance, 0, 1);
    s.pgs.warm_start = p.get_or<bool>("warm_start", s.pgs.warm_start);
    // erp and cfm are named parameters; the pgs section may set them too.
    s.parameters.erp = p.get_or<double>("erp", s.parameters.erp);
    s.parameters.cfm = p.get_or<double>("cfm", s.parameters.cfm);
  }
  c.check_range("margin", 0, 1);
  s.margin = c.get_or<double>("margin", s.margin);
  if (c.has("pairs")) {
    const Config p = c.at("pairs");
    p.check_known_keys({"self_collision"});
    s.self_collision = p.get_or<bool>("self_collision", false);
  }
  s.joint_limits = c.get_or<bool>("joint_limits", true);
  const std::string gradient = c.get_choice("gradient", {"nodes", "taped", "implicit"}, "nodes");
  s.gradient = gradient == "taped"      ? ContactGradient::kTaped
               : gradient == "implicit" ? ContactGradient::kImplicit
                                        : ContactGradient::kNodes;
  if (s.gradient == ContactGradient::kImplicit && s.model != ContactModelType::kImpulse)
    c.fail("gradient", "implicit differentiates the impulse model's PGS solve at its solution; this contact model "
                       "is a force law (use nodes or taped)");
  if (c.has("point_sets"))
    for (const Config& ps : c.list("point_sets")) s.point_sets.push_back(read_point_set(ps, model));

  const std::string problem = contact_parameters_problem(s.parameters);
  if (!problem.empty()) c.fail("parameters", problem);
  return s;
}

std::optional<ContactSettings> read_contact_section(const Config& root, const Model<double>& model,
                                                    std::vector<std::string>& notes,
                                                    std::vector<std::string>& warnings) {
  if (!root.has("contact")) return std::nullopt;
  ContactSettings settings = read_contact_settings(root.at("contact"), model);
  const ContactGeometry<double> geometry(model, settings);
  notes.push_back(std::string("contact: model ") + contact_model_name(settings.model) + ", " +
                  std::to_string(geometry.pairs().size()) + " pairs, up to " + std::to_string(geometry.max_contacts()) +
                  " contacts");
  for (const std::string& pair : geometry.skipped_pairs()) warnings.push_back("contact: ignoring " + pair);
  return settings;
}

}  // namespace neuralsim
