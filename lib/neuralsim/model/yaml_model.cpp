#include "neuralsim/model/yaml_model.hpp"

#include <cmath>
#include <sstream>

#include "neuralsim/io/errors.hpp"

namespace neuralsim {
namespace {

std::string where(const YAML::Node& n, const std::string& source) {
  std::ostringstream s;
  s << source;
  if (n.Mark().line >= 0) s << ":" << n.Mark().line + 1;
  return s.str();
}

[[noreturn]] void fail(const YAML::Node& n, const std::string& source, const std::string& key,
                       const std::string& msg) {
  throw ModelError(where(n, source) + ": key '" + key + "': " + msg);
}

template <class T>
T get(const YAML::Node& parent, const std::string& key, const std::string& source, const T& def,
      bool required = false) {
  const YAML::Node n = parent[key];
  if (!n) {
    if (required) throw ModelError(where(parent, source) + ": missing required key '" + key + "'");
    return def;
  }
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    fail(n, source, key, "cannot read value '" + YAML::Dump(n) + "'");
  }
}

Eigen::Vector3d get_vec3(const YAML::Node& parent, const std::string& key, const std::string& source,
                         const Eigen::Vector3d& def) {
  const YAML::Node n = parent[key];
  if (!n) return def;
  if (!n.IsSequence() || n.size() != 3) fail(n, source, key, "expected a list of 3 numbers");
  Eigen::Vector3d v;
  for (int i = 0; i < 3; ++i) {
    try {
      v[i] = n[i].as<double>();
    } catch (const YAML::Exception&) {
      fail(n, source, key, "expected a list of 3 numbers");
    }
  }
  return v;
}

Transform<double> read_origin(const YAML::Node& n, const std::string& source) {
  if (!n) return Transform<double>();
  const Eigen::Vector3d xyz = get_vec3(n, "xyz", source, Eigen::Vector3d::Zero());
  const Eigen::Vector3d rpy = get_vec3(n, "rpy", source, Eigen::Vector3d::Zero());
  // Origin maps parent coordinates to joint-frame coordinates: E = Rᵀ.
  return Transform<double>(rpy_rotation<double>(rpy[0], rpy[1], rpy[2]).transpose(), xyz);
}

Eigen::Matrix3d read_inertia(const YAML::Node& body, const std::string& source) {
  const YAML::Node n = body["inertia"];
  Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
  if (!n) return I;
  if (n.IsSequence()) {
    if (n.size() == 3) {
      for (int i = 0; i < 3; ++i) I(i, i) = n[i].as<double>();
      return I;
    }
    if (n.size() != 6) fail(n, source, "inertia", "expected [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]");
    I << n[0].as<double>(), n[3].as<double>(), n[4].as<double>(),  //
        n[3].as<double>(), n[1].as<double>(), n[5].as<double>(),   //
        n[4].as<double>(), n[5].as<double>(), n[2].as<double>();
    return I;
  }
  const double ixx = get<double>(n, "ixx", source, 0), iyy = get<double>(n, "iyy", source, 0),
               izz = get<double>(n, "izz", source, 0), ixy = get<double>(n, "ixy", source, 0),
               ixz = get<double>(n, "ixz", source, 0), iyz = get<double>(n, "iyz", source, 0);
  I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  return I;
}

void read_geometry(const YAML::Node& list, int body, const std::string& source, Model<double>& model) {
  if (!list) return;
  for (const YAML::Node& g : list) {
    Geometry geom;
    geom.body = body;
    geom.name = get<std::string>(g, "name", source, "");
    const std::string type = get<std::string>(g, "type", source, "", true);
    if (type == "sphere") {
      geom.type = Geometry::Type::kSphere;
      geom.size[0] = get<double>(g, "radius", source, 0, true);
    } else if (type == "box") {
      geom.type = Geometry::Type::kBox;
      geom.size = 0.5 * get_vec3(g, "size", source, Eigen::Vector3d::Zero());
    } else if (type == "capsule" || type == "cylinder") {
      geom.type = type == "capsule" ? Geometry::Type::kCapsule : Geometry::Type::kCylinder;
      geom.size[0] = get<double>(g, "radius", source, 0, true);
      geom.size[1] = 0.5 * get<double>(g, "length", source, 0, true);
    } else if (type == "plane") {
      geom.type = Geometry::Type::kPlane;
      geom.size = get_vec3(g, "normal", source, Eigen::Vector3d::UnitZ());
    } else {
      fail(g, source, "type", "unknown geometry type '" + type + "' (sphere, box, capsule, cylinder, plane)");
    }
    const Transform<double> X = read_origin(g["origin"], source);
    geom.placement.linear() = X.E.transpose();
    geom.placement.translation() = X.r;
    model.geometries.push_back(geom);
  }
}

void check_keys(const YAML::Node& n, const std::string& source, const std::vector<std::string>& allowed) {
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (!ok) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw ModelError(where(it->first, source) + ": unknown key '" + key + "' (allowed: " + list + ")");
    }
  }
}

// ---- generators: each returns the explicit `bodies:` form ----

YAML::Node vec(double x, double y, double z) {
  YAML::Node n(YAML::NodeType::Sequence);
  n.push_back(x);
  n.push_back(y);
  n.push_back(z);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

// A link hanging along -z from a revolute joint about y (q = 0 hangs down).
YAML::Node hanging_link(const std::string& name, const std::string& parent, const std::string& joint,
                        double length, double mass, bool point_mass, double damping,
                        double friction, bool origin_at_parent_length) {
  YAML::Node b;
  b["name"] = name;
  b["parent"] = parent;
  YAML::Node j;
  j["name"] = joint;
  j["type"] = "revolute";
  j["axis"] = vec(0, 1, 0);
  if (origin_at_parent_length) j["origin"] = "parent_length";
  if (damping != 0) j["damping"] = damping;
  if (friction != 0) j["friction"] = friction;
  b["joint"] = j;
  b["mass"] = mass;
  YAML::Node len;
  len["value"] = length;
  len["axis"] = vec(0, 0, -1);
  len["com_fraction"] = point_mass ? 1.0 : 0.5;
  b["length"] = len;
  if (!point_mass) {
    const double i = mass * length * length / 12.0;  // slender rod about its COM
    b["inertia"] = vec(i, i, 1e-6 * mass);
  }
  return b;
}

YAML::Node gen_chain(const YAML::Node& n, const std::string& source, int default_links,
                     bool default_point_mass) {
  const int links = get<int>(n, "links", source, default_links);
  if (links < 1 || links > 1000) fail(n, source, "links", "must be in [1, 1000]");
  const bool point_mass = get<bool>(n, "point_mass", source, default_point_mass);
  const double damping = get<double>(n, "damping", source, 0);
  const double friction = get<double>(n, "friction", source, 0);
  YAML::Node out;
  out["name"] = get<std::string>(n, "name", source, links == 1 ? "pendulum" : "chain");
  YAML::Node bodies(YAML::NodeType::Sequence);
  for (int i = 0; i < links; ++i) {
    const std::string idx = std::to_string(i + 1);
    // Per-link lists (lengths: [3, 4]) or one value for all links.
    auto pick = [&](const char* list_key, const char* key, double def) {
      if (n[list_key]) {
        if (!n[list_key].IsSequence() || static_cast<int>(n[list_key].size()) != links)
          fail(n[list_key], source, list_key, "expected a list of " + std::to_string(links) + " numbers");
        return n[list_key][i].as<double>();
      }
      return get<double>(n, key, source, def);
    };
    const double length = pick("lengths", "length", 1.0);
    const double mass = pick("masses", "mass", 1.0);
    bodies.push_back(hanging_link("link" + idx, i == 0 ? "world" : "link" + std::to_string(i),
                                  "joint" + idx, length, mass, point_mass, damping, friction, i > 0));
  }
  out["bodies"] = bodies;
  return out;
}

YAML::Node gen_cartpole(const YAML::Node& n, const std::string& source) {
  const double cart_mass = get<double>(n, "cart_mass", source, 1.0);
  const double pole_mass = get<double>(n, "pole_mass", source, 0.1);
  const double pole_length = get<double>(n, "pole_length", source, 1.0);
  YAML::Node out;
  out["name"] = "cartpole";
  YAML::Node cart;
  cart["name"] = "cart";
  cart["parent"] = "world";
  cart["joint"]["name"] = "slider";
  cart["joint"]["type"] = "prismatic";
  cart["joint"]["axis"] = vec(1, 0, 0);
  cart["joint"]["damping"] = get<double>(n, "cart_damping", source, 0.0);
  cart["mass"] = cart_mass;
  cart["inertia"] = vec(0.01, 0.01, 0.01);
  YAML::Node pole;
  pole["name"] = "pole";
  pole["parent"] = "cart";
  pole["joint"]["name"] = "hinge";
  pole["joint"]["type"] = "revolute";
  pole["joint"]["axis"] = vec(0, 1, 0);
  pole["joint"]["damping"] = get<double>(n, "pole_damping", source, 0.0);
  pole["mass"] = pole_mass;
  // q = 0: pole upright (+z).
  pole["length"]["value"] = pole_length;
  pole["length"]["axis"] = vec(0, 0, 1);
  pole["length"]["com_fraction"] = 0.5;
  const double i = pole_mass * pole_length * pole_length / 12.0;
  pole["inertia"] = vec(i, i, 1e-6);
  YAML::Node bodies(YAML::NodeType::Sequence);
  bodies.push_back(cart);
  bodies.push_back(pole);
  out["bodies"] = bodies;
  return out;
}

// Planar swimmer: x/y slides and yaw for the head, then revolute joints about
// z; links extend along +x (as in DeepMind control's swimmer). Gravity is
// along -z, normal to the plane of motion.
YAML::Node gen_swimmer(const YAML::Node& n, const std::string& source) {
  const int links = get<int>(n, "links", source, 5);
  if (links < 1 || links > 100) fail(n, source, "links", "must be in [1, 100]");
  const double length = get<double>(n, "length", source, 0.1);
  const double mass = get<double>(n, "mass", source, 0.1);
  const double damping = get<double>(n, "damping", source, 0.0);
  YAML::Node out;
  out["name"] = "swimmer";
  YAML::Node bodies(YAML::NodeType::Sequence);
  auto massless = [&](const std::string& name, const std::string& parent, const std::string& jname,
                      const std::string& type, YAML::Node axis) {
    YAML::Node b;
    b["name"] = name;
    b["parent"] = parent;
    b["joint"]["name"] = jname;
    b["joint"]["type"] = type;
    b["joint"]["axis"] = axis;
    b["mass"] = 0.0;
    bodies.push_back(b);
  };
  massless("slider_x", "world", "root_x", "prismatic", vec(1, 0, 0));
  massless("slider_y", "slider_x", "root_y", "prismatic", vec(0, 1, 0));
  for (int i = 0; i < links; ++i) {
    YAML::Node b;
    b["name"] = "segment" + std::to_string(i);
    b["parent"] = i == 0 ? "slider_y" : "segment" + std::to_string(i - 1);
    b["joint"]["name"] = i == 0 ? "root_yaw" : "joint" + std::to_string(i);
    b["joint"]["type"] = "revolute";
    b["joint"]["axis"] = vec(0, 0, 1);
    if (i > 0) {
      b["joint"]["origin"] = "parent_length";
      if (damping != 0) b["joint"]["damping"] = damping;
    }
    b["mass"] = mass;
    b["length"]["value"] = length;
    b["length"]["axis"] = vec(1, 0, 0);
    b["length"]["com_fraction"] = 0.5;
    const double r = get<double>(n, "radius", source, 0.01);
    const double il = mass * length * length / 12.0, ir = 0.5 * mass * r * r;
    b["inertia"] = vec(ir, il, il);
    bodies.push_back(b);
  }
  out["bodies"] = bodies;
  YAML::Node g = vec(0, 0, -9.81);
  out["gravity"] = g;
  return out;
}

}  // namespace

YAML::Node expand_model_generator(const YAML::Node& node, const std::string& source) {
  if (!node["generator"]) return node;
  const std::string gen = get<std::string>(node, "generator", source, "");
  YAML::Node out;
  if (gen == "pendulum") {
    YAML::Node n = YAML::Clone(node);
    n["links"] = 1;
    out = gen_chain(n, source, 1, true);
    out["name"] = "pendulum";
  } else if (gen == "double_pendulum") {
    YAML::Node n = YAML::Clone(node);
    n["links"] = 2;
    out = gen_chain(n, source, 2, true);
    out["name"] = "double_pendulum";
  } else if (gen == "chain") {
    out = gen_chain(node, source, 5, false);
  } else if (gen == "cartpole") {
    out = gen_cartpole(node, source);
  } else if (gen == "swimmer") {
    out = gen_swimmer(node, source);
  } else {
    fail(node["generator"], source, "generator",
         "unknown generator '" + gen + "' (pendulum, double_pendulum, chain, cartpole, swimmer)");
  }
  if (node["name"]) out["name"] = node["name"];
  if (node["gravity"]) out["gravity"] = node["gravity"];
  return out;
}

Model<double> build_yaml_model(const YAML::Node& input, const std::string& source) {
  const YAML::Node root = input["model"] ? input["model"] : input;
  const YAML::Node node = expand_model_generator(root, source);
  Model<double> model;
  model.name = get<std::string>(node, "name", source, "model");
  model.gravity = get_vec3(node, "gravity", source, Eigen::Vector3d(0, 0, -9.81));
  const YAML::Node bodies = node["bodies"];
  if (!bodies || !bodies.IsSequence() || bodies.size() == 0)
    throw ModelError(where(node, source) + ": a model needs 'generator' or a non-empty 'bodies' list");
  for (const YAML::Node& b : bodies) {
    check_keys(b, source, {"name", "parent", "joint", "mass", "com", "inertia", "length", "geometry"});
    const std::string name = get<std::string>(b, "name", source, "", true);
    const std::string parent_name = get<std::string>(b, "parent", source, "world");
    const int parent = parent_name == "world" ? -1 : model.body_index(parent_name);
    if (parent_name != "world" && parent < 0)
      fail(b["parent"], source, "parent", "unknown body '" + parent_name + "' (bodies must be listed after their parent)");

    Joint<double> joint;
    bool origin_at_parent_length = false;
    const YAML::Node jn = b["joint"];
    if (jn) {
      check_keys(jn, source, {"name", "type", "axis", "origin", "damping", "friction", "friction_velocity",
                              "spring", "armature", "gear_ratio", "torque_offset", "limits"});
      joint.name = get<std::string>(jn, "name", source, name + "_joint");
      try {
        joint.type = joint_type_from_name(get<std::string>(jn, "type", source, "revolute"));
      } catch (const ModelError& e) {
        fail(jn["type"], source, "joint.type", e.what());
      }
      Eigen::Vector3d axis = get_vec3(jn, "axis", source, Eigen::Vector3d::UnitZ());
      if (axis.norm() < 1e-12) fail(jn["axis"], source, "joint.axis", "must be non-zero");
      joint.axis = axis.normalized();
      if (jn["origin"] && jn["origin"].IsScalar() && jn["origin"].as<std::string>() == "parent_length") {
        origin_at_parent_length = true;
      } else {
        joint.origin = read_origin(jn["origin"], source);
      }
      joint.dynamics.damping = get<double>(jn, "damping", source, 0);
      joint.dynamics.coulomb_friction = get<double>(jn, "friction", source, 0);
      joint.dynamics.friction_velocity = get<double>(jn, "friction_velocity", source, 0.01);
      joint.dynamics.armature = get<double>(jn, "armature", source, 0);
      joint.dynamics.gear_ratio = get<double>(jn, "gear_ratio", source, 1);
      joint.dynamics.torque_offset = get<double>(jn, "torque_offset", source, 0);
      if (jn["spring"]) {
        joint.dynamics.spring_stiffness = get<double>(jn["spring"], "stiffness", source, 0);
        joint.dynamics.spring_rest = get<double>(jn["spring"], "rest", source, 0);
      }
      if (jn["limits"]) {
        joint.lower = get<double>(jn["limits"], "lower", source, -1e30);
        joint.upper = get<double>(jn["limits"], "upper", source, 1e30);
        joint.effort = get<double>(jn["limits"], "effort", source, 1e30);
        joint.velocity = get<double>(jn["limits"], "velocity", source, 1e30);
      }
    } else {
      joint.type = JointType::kFixed;
      joint.name = name + "_joint";
    }

    const double mass = get<double>(b, "mass", source, 0);
    if (!(mass >= 0)) fail(b["mass"], source, "mass", "must be >= 0");
    const Eigen::Vector3d com = get_vec3(b, "com", source, Eigen::Vector3d::Zero());
    const Eigen::Matrix3d I_com = read_inertia(b, source);
    const int idx = model.add_body(name, parent, joint, Inertia<double>::from_com(mass, com, I_com));

    if (const YAML::Node len = b["length"]) {
      Body<double>& body = model.bodies[idx];
      body.length_spec.enabled = true;
      body.length_spec.axis = get_vec3(len, "axis", source, Eigen::Vector3d(0, 0, -1)).normalized();
      body.length_spec.com_fraction = get<double>(len, "com_fraction", source, -1);
      body.length = get<double>(len, "value", source, 0, true);
      if (!(body.length > 0)) fail(len, source, "length.value", "must be > 0");
      if (b["com"] && body.length_spec.com_fraction >= 0)
        fail(b["com"], source, "com", "give either 'com' or 'length.com_fraction', not both");
    }
    if (origin_at_parent_length) {
      if (parent < 0 || !model.bodies[parent].length_spec.enabled)
        fail(jn["origin"], source, "joint.origin", "'parent_length' needs a parent body with a 'length'");
      model.origin_follows_parent_length[idx] = true;
    }
    read_geometry(b["geometry"], idx, source, model);
  }
  // Apply lengths now that children exist (moves COMs and child origins).
  for (int i = 0; i < model.num_bodies(); ++i)
    if (model.bodies[i].length_spec.enabled) model.set_link_length(i, model.bodies[i].length);
  model.validate();
  return model;
}

Model<double> load_yaml_model(const std::string& path) {
  YAML::Node node;
  try {
    node = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ModelError(path + ": cannot open model file");
  } catch (const YAML::ParserException& e) {
    throw ModelError(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": " + e.msg);
  }
  return build_yaml_model(node, path);
}

}  // namespace neuralsim
