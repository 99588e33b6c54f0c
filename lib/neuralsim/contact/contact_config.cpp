// Reading the `contact:` config section (reference: docs/contact.md).
#include <cmath>

#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/io/errors.hpp"

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

const char* contact_model_name(ContactModelType t) {
  switch (t) {
    case ContactModelType::kHuntCrossley: return "hunt_crossley";
    case ContactModelType::kPenalty: return "penalty";
    case ContactModelType::kImpulse: return "impulse";
  }
  return "?";
}

ContactSettings read_contact_settings(const Config& c, const Model<double>& model) {
  c.check_known_keys({"model", "ground", "parameters", "friction_model", "friction_cone", "pgs", "margin", "pairs",
                      "joint_limits", "point_sets"});
  ContactSettings s;
  c.check_one_of("model", {"hunt_crossley", "penalty", "impulse"});
  const std::string model_name = c.get_or("model", "hunt_crossley");
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
    for (const std::string& key : p.keys()) {
      ContactParameterId id;
      try {
        id = resolve_contact_parameter(key);
      } catch (const ConfigError& e) {
        throw ConfigError(p.where(key) + ": key 'contact.parameters." + key + "': " + e.what());
      }
      set_contact_parameter(s.parameters, id, p.get<double>(key));
    }
  }
  c.check_one_of("friction_model", {"coulomb", "viscous", "stribeck"});
  const std::string fm = c.get_or("friction_model", "coulomb");
  s.friction_model = fm == "viscous" ? FrictionModel::kViscous
                     : fm == "stribeck" ? FrictionModel::kStribeck
                                        : FrictionModel::kCoulomb;
  c.check_one_of("friction_cone", {"pyramid", "cone"});
  s.friction_cone = c.get_or("friction_cone", "pyramid") == "cone" ? FrictionCone::kCone : FrictionCone::kPyramid;
  if (c.has("pgs")) {
    const Config p = c.at("pgs");
    p.check_known_keys({"iterations", "tolerance", "warm_start", "erp", "cfm"});
    s.pgs.max_iterations = p.get_or<int>("iterations", s.pgs.max_iterations);
    if (s.pgs.max_iterations < 1) throw ConfigError(p.where("iterations") + ": key 'contact.pgs.iterations' must be >= 1");
    s.pgs.tolerance = p.get_or<double>("tolerance", s.pgs.tolerance);
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
  if (c.has("point_sets"))
    for (const Config& ps : c.list("point_sets")) s.point_sets.push_back(read_point_set(ps, model));

  const ContactParameters<double>& p = s.parameters;
  auto positive = [&](double v, const char* name) {
    if (!(v >= 0) || !std::isfinite(v))
      throw ConfigError(c.where("parameters") + ": contact parameter '" + name + "' must be finite and >= 0");
  };
  positive(p.stiffness, "stiffness");
  positive(p.damping, "damping");
  positive(p.friction, "friction");
  positive(p.restitution, "restitution");
  positive(p.cfm, "cfm");
  if (!(p.exponent > 0)) throw ConfigError(c.where("parameters") + ": contact parameter 'exponent' must be > 0");
  if (!(p.friction_velocity > 0))
    throw ConfigError(c.where("parameters") + ": contact parameter 'friction_velocity' must be > 0");
  if (!(p.erp >= 0 && p.erp <= 1)) throw ConfigError(c.where("parameters") + ": contact parameter 'erp' must be in [0, 1]");
  return s;
}

}  // namespace neuralsim
