#include "neuralsim/io/yaml_model.hpp"

#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/dh_model.hpp"
#include "neuralsim/io/input_file.hpp"
#include "neuralsim/io/model_fields.hpp"

namespace neuralsim {
namespace {

Transform<double> read_origin(const Config& c) {
  c.check_known_keys({"xyz", "rpy"});
  const Eigen::Vector3d xyz = read_vec3(c, "xyz", Eigen::Vector3d::Zero());
  const Eigen::Vector3d rpy = read_vec3(c, "rpy", Eigen::Vector3d::Zero());
  // Origin maps parent coordinates to joint-frame coordinates: E = Rᵀ.
  return Transform<double>(rpy_rotation<double>(rpy[0], rpy[1], rpy[2]).transpose(), xyz);
}

void read_geometry(const Config& b, int body, Model<double>& model) {
  if (!b.has("geometry")) return;
  for (const Config& g : b.list("geometry")) {
    g.check_known_keys({"name", "type", "radius", "size", "length", "normal", "origin"});
    Geometry geom;
    geom.body = body;
    geom.name = g.get_or("name", "");
    const std::string type = g.get_choice("type", {"sphere", "box", "capsule", "cylinder", "plane"}, "");
    if (type == "sphere") {
      geom.type = Geometry::Type::kSphere;
      geom.size[0] = read_non_negative(g, "radius", 0);
    } else if (type == "box") {
      geom.type = Geometry::Type::kBox;
      geom.size = 0.5 * read_vec3(g, "size", Eigen::Vector3d::Zero());
    } else if (type == "capsule" || type == "cylinder") {
      geom.type = type == "capsule" ? Geometry::Type::kCapsule : Geometry::Type::kCylinder;
      geom.size[0] = read_non_negative(g, "radius", g.get<double>("radius"));
      geom.size[1] = 0.5 * read_non_negative(g, "length", g.get<double>("length"));
    } else {
      geom.type = Geometry::Type::kPlane;
      geom.size = read_vec3(g, "normal", Eigen::Vector3d::UnitZ());
    }
    if (g.has("origin")) {
      const Transform<double> X = read_origin(g.at("origin"));
      geom.placement.linear() = X.E.transpose();
      geom.placement.translation() = X.r;
    }
    model.geometries.push_back(geom);
  }
}

// ---- generators: built-in systems with a few parameters ----

struct LinkSpec {
  std::string name, joint;
  int parent = -1;
  JointType type = JointType::kRevolute;
  Eigen::Vector3d axis = Eigen::Vector3d::UnitY();
  Eigen::Vector3d length_axis = Eigen::Vector3d(0, 0, -1);
  double length = 0;  // 0: no length
  double com_fraction = -1;
  double mass = 0;
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();
  bool origin_at_parent_length = false;
  double damping = 0, friction = 0;
};

int add_link(Model<double>& model, const LinkSpec& s) {
  Joint<double> j;
  j.name = s.joint;
  j.type = s.type;
  j.axis = s.axis;
  j.dynamics.damping = s.damping;
  j.dynamics.coulomb_friction = s.friction;
  const int i = model.add_body(s.name, s.parent, j, Inertia<double>::from_com(s.mass, Eigen::Vector3d::Zero(), s.inertia));
  if (s.length > 0) {
    Body<double>& b = model.bodies[i];
    b.length_spec.enabled = true;
    b.length_spec.axis = s.length_axis;
    b.length_spec.com_fraction = s.com_fraction;
    b.length = s.length;
  }
  model.origin_follows_parent_length[i] = s.origin_at_parent_length;
  return i;
}

// Per-link lists (`lengths: [3, 4]`) or one value for every link.
double per_link(const Config& c, const char* list_key, const char* key, int links, int i, double fallback) {
  if (c.has(list_key)) {
    const std::vector<double> v = c.get<std::vector<double>>(list_key);
    if (static_cast<int>(v.size()) != links)
      c.fail(list_key, "expected a list of " + std::to_string(links) + " numbers, got " + std::to_string(v.size()));
    return v[i];
  }
  return c.get_or<double>(key, fallback);
}

// Links hanging along -z from revolute joints about y (q = 0 hangs down).
void generate_chain(const Config& c, int links, bool point_mass, Model<double>& model) {
  const double damping = read_non_negative(c, "damping", 0), friction = read_non_negative(c, "friction", 0);
  for (int i = 0; i < links; ++i) {
    LinkSpec s;
    s.name = "link" + std::to_string(i + 1);
    s.joint = "joint" + std::to_string(i + 1);
    s.parent = i - 1;
    s.length = per_link(c, "lengths", "length", links, i, 1.0);
    s.mass = per_link(c, "masses", "mass", links, i, 1.0);
    if (!(s.length > 0)) c.fail(c.has("lengths") ? "lengths" : "length", "lengths must be > 0");
    if (s.mass < 0) c.fail(c.has("masses") ? "masses" : "mass", "masses must be >= 0");
    s.com_fraction = point_mass ? 1.0 : 0.5;
    if (!point_mass) {
      const double inertia = s.mass * s.length * s.length / 12.0;  // slender rod about its COM
      s.inertia = Eigen::Vector3d(inertia, inertia, 1e-6 * s.mass).asDiagonal();
    }
    s.origin_at_parent_length = i > 0;
    s.damping = damping;
    s.friction = friction;
    add_link(model, s);
  }
}

void generate_cartpole(const Config& c, Model<double>& model) {
  LinkSpec cart;
  cart.name = "cart";
  cart.joint = "slider";
  cart.type = JointType::kPrismatic;
  cart.axis = Eigen::Vector3d::UnitX();
  cart.mass = read_non_negative(c, "cart_mass", 1.0);
  cart.inertia = Eigen::Vector3d::Constant(0.01).asDiagonal();
  cart.damping = read_non_negative(c, "cart_damping", 0.0);
  add_link(model, cart);
  LinkSpec pole;  // q = 0: pole upright (+z)
  pole.name = "pole";
  pole.joint = "hinge";
  pole.parent = 0;
  pole.mass = read_non_negative(c, "pole_mass", 0.1);
  pole.length = c.get_or<double>("pole_length", 1.0);
  if (!(pole.length > 0)) c.fail("pole_length", "must be > 0");
  pole.length_axis = Eigen::Vector3d::UnitZ();
  pole.com_fraction = 0.5;
  const double inertia = pole.mass * pole.length * pole.length / 12.0;
  pole.inertia = Eigen::Vector3d(inertia, inertia, 1e-6).asDiagonal();
  pole.damping = read_non_negative(c, "pole_damping", 0.0);
  add_link(model, pole);
}

// Planar swimmer: x/y slides and yaw for the head, then revolute joints about
// z; links extend along +x (as in DeepMind control's swimmer). Gravity is
// along -z, normal to the plane of motion.
void generate_swimmer(const Config& c, Model<double>& model) {
  const int links = static_cast<int>(c.get_int_in_range("links", 5, 1, 100));
  const double length = c.get_or<double>("length", 0.1), mass = read_non_negative(c, "mass", 0.1);
  const double damping = read_non_negative(c, "damping", 0.0), radius = read_non_negative(c, "radius", 0.01);
  if (!(length > 0)) c.fail("length", "must be > 0");
  LinkSpec sx;
  sx.name = "slider_x";
  sx.joint = "root_x";
  sx.type = JointType::kPrismatic;
  sx.axis = Eigen::Vector3d::UnitX();
  add_link(model, sx);
  LinkSpec sy = sx;
  sy.name = "slider_y";
  sy.joint = "root_y";
  sy.parent = 0;
  sy.axis = Eigen::Vector3d::UnitY();
  add_link(model, sy);
  for (int i = 0; i < links; ++i) {
    LinkSpec s;
    s.name = "segment" + std::to_string(i);
    s.joint = i == 0 ? "root_yaw" : "joint" + std::to_string(i);
    s.parent = i + 1;
    s.axis = Eigen::Vector3d::UnitZ();
    s.origin_at_parent_length = i > 0;
    s.damping = i > 0 ? damping : 0.0;
    s.mass = mass;
    s.length = length;
    s.length_axis = Eigen::Vector3d::UnitX();
    s.com_fraction = 0.5;
    const double il = mass * length * length / 12.0, ir = 0.5 * mass * radius * radius;
    s.inertia = Eigen::Vector3d(ir, il, il).asDiagonal();
    add_link(model, s);
  }
}

const char* friction_law_name(FrictionLaw law) {
  switch (law) {
    case FrictionLaw::kTanh: return "tanh";
    case FrictionLaw::kAtan: return "atan";
    case FrictionLaw::kStribeck: return "stribeck";
    case FrictionLaw::kSigmoid: return "sigmoid";
  }
  return "tanh";
}

// friction_law (tanh | atan | stribeck | sigmoid; absent: the joint's current
// law), the Stribeck law's static level (default: the Coulomb level, i.e. no
// Stribeck peak) and velocity, and the sigmoid law's slope (required with
// the law: no default would match a published model) and shift (default 0).
void read_friction_law(const Config& jn, Joint<double>& joint) {
  const std::string where = "joint '" + joint.name + "': ";
  const std::string law = jn.get_or<std::string>("friction_law", friction_law_name(joint.dynamics.friction_law));
  if (law == "tanh") {
    joint.dynamics.friction_law = FrictionLaw::kTanh;
  } else if (law == "atan") {
    joint.dynamics.friction_law = FrictionLaw::kAtan;
  } else if (law == "stribeck") {
    joint.dynamics.friction_law = FrictionLaw::kStribeck;
  } else if (law == "sigmoid") {
    joint.dynamics.friction_law = FrictionLaw::kSigmoid;
  } else {
    jn.fail("friction_law", where + "unknown friction law '" + law + "' (valid: tanh, atan, stribeck, sigmoid)");
  }
  const bool stribeck = joint.dynamics.friction_law == FrictionLaw::kStribeck;
  const bool sigmoid = joint.dynamics.friction_law == FrictionLaw::kSigmoid;
  for (const char* key : {"friction_static", "stribeck_velocity"})
    if (jn.has(key) && !stribeck) jn.fail(key, where + "used only with friction_law: stribeck (the law is " + law + ")");
  for (const char* key : {"friction_slope", "friction_shift"})
    if (jn.has(key) && !sigmoid) jn.fail(key, where + "used only with friction_law: sigmoid (the law is " + law + ")");
  if (sigmoid) {
    if (jn.has("friction_law") && !jn.has("friction_slope"))
      jn.fail("friction_law", where + "friction_law: sigmoid needs friction_slope (the logistic's slope, > 0, s/rad)");
    const double slope = jn.get_or<double>("friction_slope", joint.dynamics.friction_slope);
    if (!(slope > 0)) jn.fail("friction_slope", where + "must be > 0, got " + std::to_string(slope));
    joint.dynamics.friction_slope = slope;
    joint.dynamics.friction_shift =
        jn.get_or<double>("friction_shift", jn.has("friction_law") ? 0.0 : joint.dynamics.friction_shift);
  }
  if (!stribeck) return;
  const double fs = jn.get_or<double>("friction_static", jn.has("friction_law") ? joint.dynamics.coulomb_friction
                                                                               : joint.dynamics.friction_static);
  if (!(fs >= 0)) jn.fail("friction_static", where + "must be >= 0, got " + std::to_string(fs));
  const double vst = jn.get_or<double>("stribeck_velocity",
                                       jn.has("friction_law") ? 0.1 : joint.dynamics.stribeck_velocity);
  if (!(vst > 0)) jn.fail("stribeck_velocity", where + "must be > 0, got " + std::to_string(vst));
  joint.dynamics.friction_static = fs;
  joint.dynamics.stribeck_velocity = vst;
}

// `rotor: {inertia: Ir}`: a motor rotor on the parent link spinning at
// gear_ratio·q̇ (Joint::has_rotor). 1-DoF joints only.
void read_rotor(const Config& jn, Joint<double>& joint) {
  if (!jn.has("rotor")) return;
  if (joint.type != JointType::kRevolute && joint.type != JointType::kPrismatic)
    jn.fail("rotor", "joint '" + joint.name + "': a rotor needs a revolute or prismatic joint, got " +
                         joint_type_name(joint.type));
  if (!jn.is_map("rotor")) jn.fail("rotor", "joint '" + joint.name + "': expected {inertia: Ir}");
  const Config r = jn.at("rotor");
  r.check_known_keys({"inertia"});
  const double Ir = r.get<double>("inertia");
  if (!(Ir >= 0)) r.fail("inertia", "joint '" + joint.name + "': rotor inertia must be >= 0, got " + std::to_string(Ir));
  joint.has_rotor = true;
  joint.dynamics.rotor_inertia = Ir;
}

// `drag: {linear: [6], quadratic: [6]}`: the body's diagonal damping
// (model/model.hpp, BodyDrag), coefficients per body axis x, y, z, rx, ry,
// rz; an omitted list is zeros. Declaring the block makes the body dragged
// (and its 12 coefficients named parameters) even when they are all 0.
void read_body_drag(const Config& b, Body<double>& body) {
  if (!b.has("drag")) return;
  if (!b.is_map("drag")) b.fail("drag", "link '" + body.name + "': expected {linear: [6 numbers], quadratic: [6 numbers]}");
  const Config d = b.at("drag");
  d.check_known_keys({"linear", "quadratic"});
  body.drag.enabled = true;
  for (const char* key : {"linear", "quadratic"}) {
    if (!d.has(key)) continue;
    const Eigen::VectorXd v = d.get<Eigen::VectorXd>(key);
    if (v.size() != 6)
      d.fail(key, "link '" + body.name + "': expected a list of 6 numbers (x, y, z, rx, ry, rz), got " +
                      std::to_string(v.size()));
    for (int k = 0; k < 6; ++k)
      if (!(v[k] >= 0)) d.fail(key, "link '" + body.name + "': drag coefficients must be >= 0, got " + std::to_string(v[k]));
    (std::string(key) == "linear" ? body.drag.linear : body.drag.quadratic) = v;
  }
}

void read_joint(const Config& jn, const std::string& body_name, Joint<double>& joint, bool& origin_at_parent_length) {
  jn.check_known_keys({"name", "type", "axis", "origin", "damping", "friction", "friction_velocity",
                       "friction_law", "friction_static", "stribeck_velocity", "friction_slope", "friction_shift",
                       "spring", "armature", "gear_ratio", "torque_offset", "rotor", "limits"});
  joint.name = jn.get_or("name", body_name + "_joint");
  const std::string type = jn.get_or("type", "revolute");
  try {
    joint.type = joint_type_from_name(type);
  } catch (const ModelError& e) {
    jn.fail("type", e.what());
  }
  const Eigen::Vector3d axis = read_vec3(jn, "axis", Eigen::Vector3d::UnitZ());
  if (axis.norm() < 1e-12) jn.fail("axis", "must be non-zero");
  joint.axis = axis.normalized();
  if (jn.has("origin") && !jn.is_map("origin")) {
    if (jn.get<std::string>("origin") != "parent_length")
      jn.fail("origin", "expected {xyz, rpy} or 'parent_length'");
    origin_at_parent_length = true;
  } else if (jn.has("origin")) {
    joint.origin = read_origin(jn.at("origin"));
  }
  joint.dynamics.damping = read_non_negative(jn, "damping", 0);
  joint.dynamics.coulomb_friction = read_non_negative(jn, "friction", 0);
  joint.dynamics.friction_velocity = jn.get_or<double>("friction_velocity", 0.01);
  if (!(joint.dynamics.friction_velocity > 0))
    jn.fail("friction_velocity", "joint '" + joint.name + "': must be > 0");
  read_friction_law(jn, joint);
  joint.dynamics.armature = read_non_negative(jn, "armature", 0);
  joint.dynamics.gear_ratio = jn.get_or<double>("gear_ratio", 1);
  joint.dynamics.torque_offset = jn.get_or<double>("torque_offset", 0);
  read_rotor(jn, joint);
  if (jn.has("spring")) {
    const Config sp = jn.at("spring");
    sp.check_known_keys({"stiffness", "rest"});
    joint.dynamics.spring_stiffness = read_non_negative(sp, "stiffness", 0);
    joint.dynamics.spring_rest = sp.get_or<double>("rest", 0);
  }
  if (jn.has("limits")) {
    read_joint_limits(jn.at("limits"), joint);
  }
}

void read_bodies(const Config& node, Model<double>& model, std::vector<Config>& sources) {
  if (!node.has("bodies") || node.list("bodies").empty())
    node.fail("bodies", "a model needs 'generator', 'dh' or a non-empty 'bodies' list");
  for (const Config& b : node.list("bodies")) {
    b.check_known_keys({"name", "parent", "joint", "mass", "com", "inertia", "inertia_about", "length", "geometry",
                        "drag"});
    const std::string name = b.get<std::string>("name");
    const std::string parent_name = b.get_or("parent", "world");
    const int parent = parent_name == "world" ? -1 : model.body_index(parent_name);
    if (parent_name != "world" && parent < 0)
      b.fail("parent", "unknown body '" + parent_name + "' (bodies must be listed after their parent)");
    Joint<double> joint;
    bool origin_at_parent_length = false;
    if (b.has("joint")) {
      read_joint(b.at("joint"), name, joint, origin_at_parent_length);
    } else {
      joint.type = JointType::kFixed;
      joint.name = name + "_joint";
    }
    const double mass = read_non_negative(b, "mass", 0);
    const Eigen::Vector3d com = read_vec3(b, "com", Eigen::Vector3d::Zero());
    // The COM that `length.com_fraction` will give, for the parallel-axis shift.
    Eigen::Vector3d com_for_shift = com;
    if (b.has("length") && b.at("length").has("com_fraction") && b.at("length").has("value")) {
      const Config len = b.at("length");
      const Eigen::Vector3d axis = read_vec3(len, "axis", Eigen::Vector3d(0, 0, -1));
      if (axis.norm() >= 1e-12)
        com_for_shift = axis.normalized() * (len.get<double>("value") * len.get<double>("com_fraction"));
    }
    const Inertia<double> inertia =
        Inertia<double>::from_com(mass, com, inertia_about_com(b, mass, com_for_shift, read_inertia(b)));
    int idx = -1;
    try {
      idx = model.add_body(name, parent, joint, inertia);
    } catch (const ModelError& e) {
      b.fail("name", e.what());
    }
    if (b.has("length")) {
      const Config len = b.at("length");
      len.check_known_keys({"value", "axis", "com_fraction"});
      Body<double>& body = model.bodies[idx];
      body.length_spec.enabled = true;
      const Eigen::Vector3d axis = read_vec3(len, "axis", Eigen::Vector3d(0, 0, -1));
      if (axis.norm() < 1e-12) len.fail("axis", "must be non-zero");
      body.length_spec.axis = axis.normalized();
      body.length_spec.com_fraction = len.get_or<double>("com_fraction", -1);
      body.length = len.get<double>("value");
      if (!(body.length > 0)) len.fail("value", "must be > 0");
      if (b.has("com") && body.length_spec.com_fraction >= 0)
        b.fail("com", "give either 'com' or 'length.com_fraction', not both");
    }
    if (origin_at_parent_length) {
      if (parent < 0 || !model.bodies[parent].length_spec.enabled)
        b.fail("joint.origin", "'parent_length' needs a parent body with a 'length'");
      model.origin_follows_parent_length[idx] = true;
    }
    read_geometry(b, idx, model);
    read_body_drag(b, model.bodies[idx]);
    sources.push_back(b);
  }
}

// Every link's inertia, once the whole tree is known (lengths applied): a
// link that is not a physical 3-D body may still be valid in a planar chain
// (inertia_check.hpp), and rounding is judged against the model's inertias.
// A failure names the link's own entry in the file.
void check_link_inertias(const Model<double>& model, const std::vector<Config>& sources) {
  for (int i = 0; i < model.num_bodies() && i < static_cast<int>(sources.size()); ++i) {
    const std::string problem = link_inertia_problem(model, i, InertiaCheck::kJointSpace);
    if (problem.empty()) continue;
    const Config& b = sources[static_cast<size_t>(i)];
    const bool shifted = b.has("inertia_about") &&
                         (b.is_list("inertia_about") || b.get<std::string>("inertia_about") != "com");
    b.fail(b.has("inertia") ? "inertia" : "mass",
           problem + (shifted ? " (after moving it from 'inertia_about' to the COM)" : ""));
  }
}

}  // namespace

const std::vector<std::string>& joint_dynamics_keys() {
  static const std::vector<std::string> keys = {"damping", "friction", "friction_velocity", "friction_law",
                                                "friction_static", "stribeck_velocity", "friction_slope",
                                                "friction_shift", "armature",
                                                "gear_ratio", "torque_offset", "rotor"};
  return keys;
}

void apply_joint_dynamics(const Config& joints, Model<double>& model) {
  for (const auto& [name, jn] : joints.items()) {
    int found = -1;
    for (int i = 0; i < model.num_bodies(); ++i)
      if (model.joints[i].name == name) found = i;
    if (found < 0) {
      std::string list;
      for (int i = 0; i < model.num_bodies(); ++i)
        if (joint_nv(model.joints[i].type) > 0) list += (list.empty() ? "" : ", ") + model.joints[i].name;
      joints.fail(name, "no joint named '" + name + "' in model '" + model.name + "' (joints: " + list + ")");
    }
    Joint<double>& joint = model.joints[found];
    if (joint_nv(joint.type) != 1)
      joints.fail(name, "joint '" + name + "' is not a 1-DoF joint (friction, damping and rotor terms are per DoF)");
    jn.check_known_keys(joint_dynamics_keys());
    const std::string where = "joint '" + name + "': ";
    JointDynamics<double>& d = joint.dynamics;
    if (jn.has("damping")) d.damping = read_non_negative(jn, "damping", 0);
    if (jn.has("friction")) d.coulomb_friction = read_non_negative(jn, "friction", 0);
    if (jn.has("friction_velocity")) {
      d.friction_velocity = jn.get<double>("friction_velocity");
      if (!(d.friction_velocity > 0)) jn.fail("friction_velocity", where + "must be > 0");
    }
    read_friction_law(jn, joint);
    if (jn.has("armature")) d.armature = read_non_negative(jn, "armature", 0);
    if (jn.has("gear_ratio")) d.gear_ratio = jn.get<double>("gear_ratio");
    if (jn.has("torque_offset")) d.torque_offset = jn.get<double>("torque_offset");
    read_rotor(jn, joint);
  }
}

Model<double> build_yaml_model(const Config& node) {
  Model<double> model;
  std::vector<Config> sources;  // each body's entry in `bodies`
  model.name = node.get_or("name", "model");
  model.gravity = read_vec3(node, "gravity", Eigen::Vector3d(0, 0, -9.81));
  if (node.has("generator")) {
    const std::string gen =
        node.get_choice("generator", {"pendulum", "double_pendulum", "chain", "cartpole", "swimmer"}, "");
    if (gen == "pendulum" || gen == "double_pendulum" || gen == "chain") {
      node.check_known_keys({"generator", "name", "gravity", "links", "point_mass", "length", "lengths", "mass",
                             "masses", "damping", "friction", "joints"});
      const int fixed_links = gen == "pendulum" ? 1 : gen == "double_pendulum" ? 2 : 0;
      if (fixed_links && node.has("links")) node.fail("links", "the " + gen + " generator has a fixed number of links");
      const int links = fixed_links ? fixed_links : static_cast<int>(node.get_int_in_range("links", 5, 1, 1000));
      if (!node.has("name")) model.name = gen == "chain" ? (links == 1 ? "pendulum" : "chain") : gen;
      generate_chain(node, links, node.get_or<bool>("point_mass", gen != "chain"), model);
    } else if (gen == "cartpole") {
      node.check_known_keys({"generator", "name", "gravity", "cart_mass", "pole_mass", "pole_length",
                             "cart_damping", "pole_damping", "joints"});
      if (!node.has("name")) model.name = "cartpole";
      generate_cartpole(node, model);
    } else {
      node.check_known_keys({"generator", "name", "gravity", "links", "length", "mass", "damping", "radius",
                             "joints"});
      if (!node.has("name")) model.name = "swimmer";
      generate_swimmer(node, model);
    }
    // Per-joint dynamics of a generated model (friction law, rotor, offset).
    if (node.has("joints")) apply_joint_dynamics(node.at("joints"), model);
  } else if (node.has("dh")) {
    node.check_known_keys({"name", "gravity", "dh", "joints"});
    read_dh_chain(node.at("dh"), model, sources);
    if (node.has("joints")) apply_joint_dynamics(node.at("joints"), model);
  } else {
    node.check_known_keys({"name", "gravity", "bodies"});
    read_bodies(node, model, sources);
  }
  // Apply lengths now that children exist (moves COMs and child origins).
  for (int i = 0; i < model.num_bodies(); ++i)
    if (model.bodies[i].length_spec.enabled) model.set_link_length(i, model.bodies[i].length);
  check_link_inertias(model, sources);
  try {
    model.validate(InertiaCheck::kJointSpace);  // the tools list its warnings (load_experiment)
  } catch (const ModelError& e) {
    node.fail("", e.what());
  }
  return model;
}

Model<double> load_yaml_model(const std::string& path) {
  const Config root =
      Config::parse(read_input_file(path, "model file", InputError::kModel, Config::kMaxConfigBytes), path);
  return build_yaml_model(root.has("model") ? root.at("model") : root);
}

Model<double> parse_yaml_model(const std::string& yaml_text, const std::string& source) {
  const Config root = Config::parse(yaml_text, source);
  return build_yaml_model(root.has("model") ? root.at("model") : root);
}

}  // namespace neuralsim
