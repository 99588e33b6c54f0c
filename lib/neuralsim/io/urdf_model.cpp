#include "neuralsim/io/urdf_model.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <unordered_map>

// TinyXML (1) rather than tinyxml2 for the pre-pass: urdfdom's own header
// includes it and urdfdom::urdfdom_model already links it, so no extra
// dependency or CMake change is needed.
#include <tinyxml.h>
#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <mutex>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {
namespace {

// ---- pre-pass over the XML ----
//
// urdfdom 3.0 rejects two things the shipped models contain, failing the
// whole file: <capsule> geometry (swimmer05) and a <limit> without `effort`
// or `velocity` (swimmer05's slides). It also stores child joints in name
// order, not file order. The pre-pass removes capsules (recorded here and
// added back as primitives), fills in unlimited effort/velocity, and records
// the file order of joints so body numbering follows the file.

struct CapsuleEntry {
  std::string link, name;
  bool collision = true;
  Eigen::Vector3d xyz = Eigen::Vector3d::Zero(), rpy = Eigen::Vector3d::Zero();
  double radius = 0, length = 0;
};

struct XmlPrepass {
  std::string xml;  // what urdfdom parses
  std::unordered_map<std::string, int> joint_order;
  std::vector<CapsuleEntry> capsules;
};

double parse_double(const char* text, const std::string& what) {
  std::istringstream in(text ? text : "");
  double v = 0;
  if (!(in >> v)) throw ModelError(what + ": expected a number, got '" + (text ? text : "") + "'");
  return v;
}

Eigen::Vector3d parse_vec3(const char* text, const std::string& what) {
  Eigen::Vector3d v = Eigen::Vector3d::Zero();
  if (!text) return v;
  std::istringstream in(text);
  if (!(in >> v[0] >> v[1] >> v[2])) throw ModelError(what + ": expected 3 numbers, got '" + text + "'");
  return v;
}

// Removes <visual>/<collision> elements whose geometry is a <capsule> and
// records them.
void take_capsules(TiXmlElement* link, const char* tag, XmlPrepass& out) {
  const std::string link_name = link->Attribute("name") ? link->Attribute("name") : "";
  TiXmlElement* e = link->FirstChildElement(tag);
  while (e) {
    TiXmlElement* next = e->NextSiblingElement(tag);
    const TiXmlElement* geometry = e->FirstChildElement("geometry");
    const TiXmlElement* capsule = geometry ? geometry->FirstChildElement("capsule") : nullptr;
    if (capsule) {
      const std::string what = "link '" + link_name + "' capsule";
      CapsuleEntry c;
      c.link = link_name;
      c.name = e->Attribute("name") ? e->Attribute("name") : "";
      c.collision = std::string(tag) == "collision";
      c.radius = parse_double(capsule->Attribute("radius"), what + " radius");
      c.length = parse_double(capsule->Attribute("length"), what + " length");
      if (const TiXmlElement* origin = e->FirstChildElement("origin")) {
        c.xyz = parse_vec3(origin->Attribute("xyz"), what + " origin xyz");
        c.rpy = parse_vec3(origin->Attribute("rpy"), what + " origin rpy");
      }
      out.capsules.push_back(c);
      link->RemoveChild(e);
    }
    e = next;
  }
}

// A missing effort/velocity means "no limit" (our default 1e30), which
// urdfdom cannot express, so the attribute is filled in with that value.
void complete_limit(TiXmlElement* joint) {
  TiXmlElement* limit = joint->FirstChildElement("limit");
  if (!limit) return;
  for (const char* key : {"effort", "velocity"})
    if (!limit->Attribute(key)) limit->SetAttribute(key, "1e30");
}

// A joint as the XML states it, before urdfdom builds its tree (which
// neither detects a cycle nor a second parent: the traversal would then
// visit a link twice).
struct JointEdge {
  std::string name, parent, child;
};

std::string describe_edge(const JointEdge& e) { return "'" + e.name + "' (" + e.parent + " -> " + e.child + ")"; }

// The joints must form a tree: no directed cycle (depth-first search over
// links, iterative so that a long chain cannot exhaust the stack), and no
// link that is the child of two joints (a closed chain).
void check_tree(const std::vector<JointEdge>& edges) {
  std::unordered_map<std::string, std::vector<size_t>> out;  // link -> joints leaving it, in file order
  for (size_t k = 0; k < edges.size(); ++k) out[edges[k].parent].push_back(k);
  enum class Mark { kNew, kOnPath, kDone };
  std::unordered_map<std::string, Mark> mark;
  for (const JointEdge& root : edges) {  // file order: the same cycle is named on every platform
    const std::string& start = root.parent;
    if (mark[start] != Mark::kNew) continue;
    // Path of (link, index of the next joint to follow); joints[i] led to path[i + 1].
    std::vector<std::pair<std::string, size_t>> path{{start, 0}};
    std::vector<size_t> joints;
    mark[start] = Mark::kOnPath;
    while (!path.empty()) {
      auto& [link, next] = path.back();
      const auto leaving = out.find(link);
      if (leaving == out.end() || next >= leaving->second.size()) {
        mark[link] = Mark::kDone;
        path.pop_back();
        if (!joints.empty()) joints.pop_back();
        continue;
      }
      const size_t k = leaving->second[next++];
      const std::string& child = edges[k].child;
      if (mark[child] == Mark::kOnPath) {
        size_t first = 0;
        while (path[first].first != child) ++first;
        std::string cycle, links;
        for (size_t i = first; i < joints.size(); ++i) cycle += describe_edge(edges[joints[i]]) + ", ";
        cycle += describe_edge(edges[k]);
        for (size_t i = first; i < path.size(); ++i) links += (i > first ? ", " : "") + path[i].first;
        throw ModelError("joints " + cycle + " form a kinematic cycle through links " + links +
                         "; expected a tree (every link the child of at most one joint)");
      }
      if (mark[child] == Mark::kNew) {
        mark[child] = Mark::kOnPath;
        joints.push_back(k);
        path.emplace_back(child, 0);
      }
    }
  }
  std::unordered_map<std::string, size_t> seen;
  for (size_t k = 0; k < edges.size(); ++k) {
    const auto [it, first] = seen.emplace(edges[k].child, k);
    if (!first)
      throw ModelError("link '" + edges[k].child + "' is the child of two joints, " + describe_edge(edges[it->second]) +
                       " and " + describe_edge(edges[k]) +
                       " (a closed kinematic chain); expected a tree (every link the child of at most one joint)");
  }
}

XmlPrepass prepass(const std::string& xml) {
  TiXmlDocument doc;
  doc.Parse(xml.c_str());
  if (doc.Error())
    throw ModelError("XML error at line " + std::to_string(doc.ErrorRow()) + ": " + doc.ErrorDesc());
  TiXmlElement* robot = doc.FirstChildElement("robot");
  if (!robot) throw ModelError("no <robot> element");
  XmlPrepass out;
  for (TiXmlElement* link = robot->FirstChildElement("link"); link; link = link->NextSiblingElement("link")) {
    take_capsules(link, "visual", out);
    take_capsules(link, "collision", out);
  }
  int index = 0;
  std::vector<JointEdge> edges;
  for (TiXmlElement* joint = robot->FirstChildElement("joint"); joint; joint = joint->NextSiblingElement("joint")) {
    if (joint->Attribute("name")) out.joint_order.emplace(joint->Attribute("name"), index++);
    complete_limit(joint);
    const TiXmlElement* parent = joint->FirstChildElement("parent");
    const TiXmlElement* child = joint->FirstChildElement("child");
    if (parent && child && parent->Attribute("link") && child->Attribute("link"))
      edges.push_back({joint->Attribute("name") ? joint->Attribute("name") : "", parent->Attribute("link"),
                       child->Attribute("link")});
  }
  check_tree(edges);
  TiXmlPrinter printer;
  doc.Accept(&printer);
  out.xml = printer.CStr();
  return out;
}

// ---- conversions ----

Eigen::Matrix3d rotation(const urdf::Rotation& r) {
  return Eigen::Quaterniond(r.w, r.x, r.y, r.z).normalized().toRotationMatrix();
}

Eigen::Vector3d vec3(const urdf::Vector3& v) { return Eigen::Vector3d(v.x, v.y, v.z); }

// A URDF pose (child frame placed in the parent) as X: parent -> child.
Transform<double> pose_transform(const urdf::Pose& p) {
  const Eigen::Matrix3d R = rotation(p.rotation);
  return Transform<double>(R.transpose(), vec3(p.position));
}

Transform<double> rpy_transform(const Eigen::Vector3d& xyz, const Eigen::Vector3d& rpy) {
  return Transform<double>(rpy_rotation<double>(rpy[0], rpy[1], rpy[2]).transpose(), xyz);
}

// The pose of frame B in frame A, for X = X_AB (A -> B).
Eigen::Isometry3d to_isometry(const Transform<double>& X) {
  Eigen::Isometry3d iso = Eigen::Isometry3d::Identity();
  iso.linear() = X.E.transpose();
  iso.translation() = X.r;
  return iso;
}

// <inertial>: mass, COM and the inertia tensor given in the frame rotated by
// <origin rpy>, hence I_link = R I Rᵀ before the parallel-axis shift.
Inertia<double> link_inertia(const urdf::Link& link) {
  if (!link.inertial) return Inertia<double>();
  const urdf::Inertial& in = *link.inertial;
  Eigen::Matrix3d I;
  I << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  const Eigen::Matrix3d R = rotation(in.origin.rotation);
  return Inertia<double>::from_com(in.mass, vec3(in.origin.position), R * I * R.transpose());
}

JointType joint_type(const urdf::Joint& j) {
  switch (j.type) {
    case urdf::Joint::REVOLUTE:
    case urdf::Joint::CONTINUOUS: return JointType::kRevolute;
    case urdf::Joint::PRISMATIC: return JointType::kPrismatic;
    case urdf::Joint::FIXED: return JointType::kFixed;
    case urdf::Joint::FLOATING: return JointType::kFree;
    case urdf::Joint::PLANAR: throw ModelError("joint '" + j.name + "': planar joints are not supported");
    default: throw ModelError("joint '" + j.name + "': unknown joint type");
  }
}

// Type, axis, dynamics and limits; the origin is set by the caller.
Joint<double> make_joint(const urdf::Joint& uj) {
  Joint<double> j;
  j.name = uj.name;
  j.type = joint_type(uj);
  if (j.type == JointType::kRevolute || j.type == JointType::kPrismatic) {
    const Eigen::Vector3d axis = vec3(uj.axis);
    if (axis.norm() < 1e-12) throw ModelError("joint '" + uj.name + "': axis must be non-zero");
    j.axis = axis.normalized();
  }
  if (uj.dynamics) {
    j.dynamics.damping = uj.dynamics->damping;
    j.dynamics.coulomb_friction = uj.dynamics->friction;
  }
  if (uj.limits) {
    j.effort = uj.limits->effort;
    j.velocity = uj.limits->velocity;
    // A continuous joint's <limit> carries no position bounds (urdfdom reports 0, 0).
    if (uj.type != urdf::Joint::CONTINUOUS) {
      j.lower = uj.limits->lower;
      j.upper = uj.limits->upper;
    }
  }
  return j;
}

// "package://pkg/meshes/a.obj" -> "meshes/a.obj", "file:///x" -> "/x";
// relative paths are relative to the URDF's directory.
std::string resolve_mesh_path(const std::string& uri, const std::filesystem::path& dir) {
  std::string p = uri;
  const std::string package = "package://", file = "file://";
  if (p.compare(0, package.size(), package) == 0) {
    p = p.substr(package.size());
    const size_t slash = p.find('/');
    p = slash == std::string::npos ? p : p.substr(slash + 1);
  } else if (p.compare(0, file.size(), file) == 0) {
    p = p.substr(file.size());
  }
  const std::filesystem::path path(p);
  return (path.is_absolute() ? path : dir / path).lexically_normal().string();
}

// ---- tree traversal ----

class UrdfBuilder {
 public:
  UrdfBuilder(const urdf::ModelInterface& urdf, const XmlPrepass& pre, const std::string& source,
              const UrdfOptions& options, std::vector<std::string>* warnings)
      : urdf_(urdf), pre_(pre), source_(source), options_(options), warnings_(warnings),
        keep_(options.keep_fixed_links.begin(), options.keep_fixed_links.end()),
        dir_(std::filesystem::path(source).parent_path()) {}

  Model<double> build() {
    model_.name = urdf_.getName();
    model_.gravity = Eigen::Vector3d(0, 0, -9.81);
    const urdf::LinkConstSharedPtr root = urdf_.getRoot();
    if (!root) throw ModelError("no root link");
    if (root->name == "world") {
      if (options_.floating_base) warn(source_ + ": root link is 'world', so floating_base is ignored");
      add_link(*root, -1, Transform<double>());
    } else {
      Joint<double> j;
      j.name = options_.floating_base ? "floating_base" : "fixed_base";
      j.type = options_.floating_base ? JointType::kFree : JointType::kFixed;
      add_link(*root, model_.add_body(root->name, -1, j, Inertia<double>()), Transform<double>());
    }
    model_.validate(InertiaCheck::kJointSpace);  // the tools list its warnings (load_experiment)
    return std::move(model_);
  }

 private:
  // Adds `link` to `body` (-1 = world: its inertia has no effect and is
  // dropped), placed by X_bl (body -> link), then its subtree.
  void add_link(const urdf::Link& link, int body, const Transform<double>& X_bl) {
    if (body >= 0) {
      Inertia<double>& I = model_.bodies[body].inertia;
      I = I + Inertia<double>::to_parent(X_bl, link_inertia(link));
    }
    add_geometries(link, body, X_bl);
    for (const urdf::Joint* joint : children_in_file_order(link)) add_child(*joint, body, X_bl);
  }

  void add_child(const urdf::Joint& uj, int body, const Transform<double>& X_bl) {
    const urdf::LinkConstSharedPtr child = urdf_.getLink(uj.child_link_name);
    if (!child) throw ModelError("joint '" + uj.name + "': unknown child link '" + uj.child_link_name + "'");
    const Transform<double> X_bc = pose_transform(uj.parent_to_joint_origin_transform) * X_bl;
    if (merges(uj, body)) {
      model_.add_frame(child->name, body, X_bc);
      add_link(*child, body, X_bc);
      return;
    }
    Joint<double> j = make_joint(uj);
    j.origin = X_bc;
    add_link(*child, model_.add_body(child->name, body, j, Inertia<double>()), Transform<double>());
  }

  // Links fixed to the world stay bodies: the world has no Body to merge into.
  bool merges(const urdf::Joint& uj, int body) const {
    return uj.type == urdf::Joint::FIXED && options_.merge_fixed_joints && body >= 0 &&
           keep_.count(uj.child_link_name) == 0;
  }

  std::vector<const urdf::Joint*> children_in_file_order(const urdf::Link& link) const {
    std::vector<const urdf::Joint*> joints;
    for (const auto& j : link.child_joints) joints.push_back(j.get());
    auto order = [this](const urdf::Joint* j) {
      const auto it = pre_.joint_order.find(j->name);
      return it == pre_.joint_order.end() ? -1 : it->second;
    };
    std::stable_sort(joints.begin(), joints.end(),
                     [&](const urdf::Joint* a, const urdf::Joint* b) { return order(a) < order(b); });
    return joints;
  }

  void add_geometries(const urdf::Link& link, int body, const Transform<double>& X_bl) {
    for (const auto& v : link.visual_array)
      if (v && v->geometry) add_geometry(*v->geometry, v->origin, name_or(v->name, link.name), false, body, X_bl);
    for (const auto& c : link.collision_array)
      if (c && c->geometry) add_geometry(*c->geometry, c->origin, name_or(c->name, link.name), true, body, X_bl);
    for (const CapsuleEntry& c : pre_.capsules) {
      if (c.link != link.name) continue;
      Geometry g = placed(name_or(c.name, link.name), c.collision, body, X_bl, rpy_transform(c.xyz, c.rpy));
      g.type = Geometry::Type::kCapsule;
      g.size = Eigen::Vector3d(c.radius, 0.5 * c.length, 0);
      model_.geometries.push_back(g);
    }
  }

  static std::string name_or(const std::string& name, const std::string& fallback) {
    return name.empty() ? fallback : name;
  }

  static Geometry placed(const std::string& name, bool collision, int body, const Transform<double>& X_bl,
                         const Transform<double>& X_lg) {
    Geometry g;
    g.name = name;
    g.collision = collision;
    g.body = body;
    g.placement = to_isometry(X_bl) * to_isometry(X_lg);
    return g;
  }

  void add_geometry(const urdf::Geometry& ug, const urdf::Pose& origin, const std::string& name, bool collision,
                    int body, const Transform<double>& X_bl) {
    Geometry g = placed(name, collision, body, X_bl, pose_transform(origin));
    switch (ug.type) {
      case urdf::Geometry::SPHERE:
        g.type = Geometry::Type::kSphere;
        g.size[0] = static_cast<const urdf::Sphere&>(ug).radius;
        break;
      case urdf::Geometry::BOX:
        g.type = Geometry::Type::kBox;
        g.size = 0.5 * vec3(static_cast<const urdf::Box&>(ug).dim);
        break;
      case urdf::Geometry::CYLINDER: {
        const auto& cyl = static_cast<const urdf::Cylinder&>(ug);
        g.type = Geometry::Type::kCylinder;
        g.size = Eigen::Vector3d(cyl.radius, 0.5 * cyl.length, 0);
        break;
      }
      case urdf::Geometry::MESH: {
        const auto& mesh = static_cast<const urdf::Mesh&>(ug);
        g.type = Geometry::Type::kMesh;
        g.size = vec3(mesh.scale);
        g.mesh_file = resolve_mesh_path(mesh.filename, dir_);
        warn_if_missing(mesh.filename, g.mesh_file);
        break;
      }
    }
    model_.geometries.push_back(g);
  }

  // Meshes are never loaded, so a missing one costs nothing but a warning
  // (once per file: the Laikago legs share meshes).
  void warn_if_missing(const std::string& uri, const std::string& path) {
    const std::string problem = input_file_problem(path);
    if (problem.empty() || !warned_.insert(path).second) return;
    warn(source_ + ": mesh file '" + uri + "' (looked for '" + path + "') " + problem +
         "; skipped, primitives and inertia are kept");
  }

  void warn(const std::string& message) {
    if (warnings_) warnings_->push_back(message);
  }

  const urdf::ModelInterface& urdf_;
  const XmlPrepass& pre_;
  const std::string& source_;
  const UrdfOptions& options_;
  std::vector<std::string>* warnings_;
  const std::set<std::string> keep_;
  const std::filesystem::path dir_;
  std::set<std::string> warned_;
  Model<double> model_;
};

// urdfdom reports through console_bridge (to stderr by default) and may
// still return a model after an error: an <inertial> it cannot parse is
// dropped and the link becomes massless. Its errors are collected instead
// and turned into one ModelError; console_bridge's handler is process-wide,
// hence the lock.
class UrdfdomMessages : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) errors += (errors.empty() ? "" : "; ") + text;
  }
  std::string errors;
};

urdf::ModelInterfaceSharedPtr parse_with_urdfdom(const std::string& xml) {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  UrdfdomMessages messages;
  console_bridge::useOutputHandler(&messages);
  urdf::ModelInterfaceSharedPtr urdf;
  try {
    urdf = urdf::parseURDF(xml);
  } catch (const std::exception& e) {
    console_bridge::restorePreviousOutputHandler();
    throw ModelError(std::string("invalid URDF: ") + e.what());
  }
  console_bridge::restorePreviousOutputHandler();
  if (!messages.errors.empty()) throw ModelError("invalid URDF: " + messages.errors);
  if (!urdf) throw ModelError("invalid URDF");
  return urdf;
}

}  // namespace

Model<double> build_urdf_model(const std::string& xml, const std::string& source, const UrdfOptions& options,
                               std::vector<std::string>* warnings) {
  try {
    const XmlPrepass pre = prepass(xml);
    const urdf::ModelInterfaceSharedPtr urdf = parse_with_urdfdom(pre.xml);
    return UrdfBuilder(*urdf, pre, source, options, warnings).build();
  } catch (const ModelError& e) {
    // Every message names the source, once, here.
    throw ModelError(source + ": " + e.what());
  }
}

Model<double> load_urdf_model(const std::string& path, const UrdfOptions& options,
                              std::vector<std::string>* warnings) {
  const std::string text = read_input_file(path, "URDF file", InputError::kModel, kMaxUrdfBytes);
  return build_urdf_model(text, path, options, warnings);
}

}  // namespace neuralsim
