#include "neuralsim/io/mjcf_model.hpp"

#include <tinyxml2.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {
// Helpers of this file only, in a namespace of their own (unity builds put
// several files of the layer in one translation unit).
namespace mjcf_detail {

using tinyxml2::XMLElement;
using Pose = Eigen::Isometry3d;  // a frame placed in another: rotation R, translation p

constexpr double kPi = 3.14159265358979323846;

// A <default> class, flattened: its attributes per element tag, with the
// parent class's values where it sets none (MJCF reference, "default").
struct DefaultClass {
  std::string name;
  std::map<std::string, std::map<std::string, std::string>> attributes;  // tag -> attribute -> value
};

// How an attribute of a supported element is treated.
struct AttributeRules {
  std::set<std::string> read;      // mapped to our model
  std::set<std::string> silent;    // rendering or bookkeeping: no effect on the dynamics
  std::set<std::string> listed;    // no counterpart, no effect on the smooth dynamics: listed in the warning
};

const std::map<std::string, AttributeRules>& attribute_rules() {
  static const std::set<std::string> orientation = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
  auto with_orientation = [](std::set<std::string> s) {
    s.insert(orientation.begin(), orientation.end());
    return s;
  };
  static const std::map<std::string, AttributeRules> rules = {
      {"joint",
       {{"name", "class", "type", "pos", "axis", "range", "limited", "damping", "armature", "frictionloss", "stiffness",
         "springref", "ref"},
        {"group", "user"},
        {"solreflimit", "solimplimit", "solreffriction", "solimpfriction", "margin", "springdamper"}}},
      {"freejoint", {{"name"}, {"group"}, {}}},
      {"geom",
       {with_orientation({"name", "class", "type", "size", "pos", "fromto", "mass", "density", "shellinertia", "mesh",
                          "hfield", "contype", "conaffinity", "group", "fluidshape"}),
        {"rgba", "material", "user"},
        {"friction", "condim", "priority", "solmix", "solref", "solimp", "margin", "gap", "fitscale", "fluidcoef"}}},
      {"body", {with_orientation({"name", "childclass", "pos", "mocap"}), {"user"}, {}}},
      {"inertial", {with_orientation({"pos", "mass", "diaginertia", "fullinertia"}), {}, {}}},
      {"site", {with_orientation({"name", "class", "pos"}), {"type", "size", "group", "rgba", "material", "user"}, {"fromto"}}},
      {"motor",
       {{"name", "class", "joint", "gear", "ctrlrange", "ctrllimited", "tendon", "site", "jointinparent", "cranksite",
         "slidersite", "body"},
        {"group", "user"},
        {"forcerange", "forcelimited", "actuatorfrcrange", "cranklength", "lengthrange", "refsite"}}},
      {"option",
       {{"timestep", "gravity", "integrator", "density", "viscosity", "wind"},
        {},
        {"magnetic", "o_margin", "o_solref", "o_solimp", "impratio", "tolerance", "ls_tolerance", "noslip_tolerance",
         "mpr_tolerance", "iterations", "ls_iterations", "noslip_iterations", "mpr_iterations", "solver", "cone",
         "jacobian", "collision", "apirate", "sdf_iterations", "sdf_initpoints"}}},
      {"compiler",
       {{"angle", "eulerseq", "inertiafromgeom", "inertiagrouprange", "autolimits", "coordinate", "boundmass",
         "boundinertia", "balanceinertia", "settotalmass"},
        {"meshdir", "texturedir", "assetdir", "strippath", "discardvisual", "convexhull", "exactmeshinertia",
         "fusestatic", "usethread", "fitaabb", "lengthrange"},
        {}}},
  };
  return rules;
}

// The units of <compiler angle>, the Euler sequence and the inertia rules.
struct Compiler {
  bool degrees = true;  // MuJoCo's default
  std::string eulerseq = "xyz";
  std::string inertiafromgeom = "auto";
  int group_low = 0, group_high = 5;
  bool autolimits = false;  // MuJoCo 2.2's default
};

class MjcfReader {
 public:
  MjcfReader(const std::string& source, const MjcfOptions& options, std::vector<std::string>* warnings)
      : source_(source), options_(options), warnings_(warnings) {}

  MjcfModel read(const std::string& xml) {
    const XMLElement* root = parse_document(xml, source_, nullptr);
    if (std::string(root->Name()) != "mujoco")
      fail(root, "expected the root element <mujoco>, got <" + std::string(root->Name()) + ">");
    out_.model.name = root->Attribute("model") ? root->Attribute("model") : "MuJoCo Model";
    const std::vector<const XMLElement*> top = children(root, 0);
    // <compiler> first: its angle unit and Euler sequence apply to the whole file.
    for (const XMLElement* e : top)
      if (is(e, "compiler")) read_compiler(e);
    classes_["main"] = DefaultClass{"main", {}};
    for (const XMLElement* e : top) {
      const std::string tag = e->Name();
      if (tag == "compiler" || tag == "worldbody" || tag == "actuator") continue;
      if (tag == "option") read_option(e);
      else if (tag == "default") read_default(e, classes_["main"], true);
      else if (tag == "tendon" || tag == "equality")
        refuse(e, "<" + tag + "> constrains or drives the tree and has no counterpart here; ignoring it would change "
                  "the dynamics");
      else if (tag == "extension" || tag == "deformable")
        refuse(e, "<" + tag + "> (plugins, deformables) has no counterpart here");
      else if (tag == "sensor" || tag == "contact" || tag == "keyframe") list_children_or_self(e);
      else if (tag == "asset") read_asset(e);
      else if (tag == "size" || tag == "visual" || tag == "statistic" || tag == "custom") continue;
      else fail(e, "expected a MuJoCo section (compiler, option, default, asset, worldbody, actuator, ...), got <" + tag + ">");
    }
    replace_fluid(root);
    for (const XMLElement* e : top)
      if (is(e, "worldbody")) read_worldbody(e);
    for (const XMLElement* e : top)
      if (is(e, "actuator")) read_actuators(e);
    add_inertia_box_fluid();
    finish_listing();
    try {
      out_.model.validate(InertiaCheck::kJointSpace);  // the tools list its warnings (load_experiment)
    } catch (const ModelError& e) {
      throw ModelError(source_ + ": " + e.what());
    }
    return std::move(out_);
  }

 private:
  // ---- documents, includes, messages ----

  const XMLElement* parse_document(const std::string& xml, const std::string& path, const XMLElement* included_by) {
    auto doc = std::make_unique<tinyxml2::XMLDocument>();
    if (doc->Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS) {
      const std::string where = path + ":" + std::to_string(doc->ErrorLineNum());
      throw ConfigError(where + ": malformed XML: " + (doc->ErrorStr() ? doc->ErrorStr() : "parse error") +
                        (included_by ? " (included by " + location(included_by) + ")" : ""));
    }
    const XMLElement* root = doc->RootElement();
    if (!root) throw ConfigError(path + ":1: expected an XML element <mujoco>, got an empty document");
    paths_[doc.get()] = path;
    documents_.push_back(std::move(doc));
    return root;
  }

  std::string file_of(const XMLElement* e) const { return paths_.at(e->GetDocument()); }

  // "model.xml:12: <joint name="knee">"
  std::string location(const XMLElement* e) const {
    std::string s = file_of(e) + ":" + std::to_string(e->GetLineNum()) + ": <" + e->Name();
    if (const char* n = e->Attribute("name")) s += std::string(" name=\"") + n + "\"";
    return s + ">";
  }

  [[noreturn]] void fail(const XMLElement* e, const std::string& message) const {
    throw ConfigError(location(e) + ": " + message);
  }

  void refuse(const XMLElement* e, const std::string& why) const { fail(e, why); }

  static bool is(const XMLElement* e, const char* tag) { return std::string(e->Name()) == tag; }

  // The child elements of `e`, with each <include file="..."/> replaced by
  // the children of the included file's <mujoco> (MJCF reference, "include").
  std::vector<const XMLElement*> children(const XMLElement* e, int depth) {
    std::vector<const XMLElement*> out;
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      if (!is(c, "include")) {
        out.push_back(c);
        continue;
      }
      if (depth >= kMaxMjcfIncludeDepth)
        fail(c, "expected includes nested at most " + std::to_string(kMaxMjcfIncludeDepth) +
                    " deep, got deeper (a file that includes itself?)");
      const char* file = c->Attribute("file");
      if (!file || !*file) fail(c, "expected attribute file=\"...\", got none");
      const std::filesystem::path dir = std::filesystem::path(file_of(c)).parent_path();
      const std::filesystem::path rel(file);
      const std::string path = (rel.is_absolute() || dir.empty() ? rel : dir / rel).lexically_normal().string();
      std::string text;
      try {
        text = read_input_file(path, "included MJCF file", InputError::kConfig, kMaxMjcfBytes);
      } catch (const Error& err) {
        fail(c, err.what());
      }
      const XMLElement* root = parse_document(text, path, c);
      if (!is(root, "mujoco")) fail(root, "expected an included file's root element <mujoco>, got <" + std::string(root->Name()) + ">");
      for (const XMLElement* inner : children(root, depth + 1)) out.push_back(inner);
    }
    return out;
  }

  // ---- attributes ----

  // An attribute of `e`, or of its default class for `tag`.
  std::optional<std::string> attr(const XMLElement* e, const DefaultClass* cls, const char* name) const {
    if (const char* v = e->Attribute(name)) return std::string(v);
    if (cls) {
      const auto t = cls->attributes.find(e->Name());
      if (t != cls->attributes.end()) {
        const auto a = t->second.find(name);
        if (a != t->second.end()) return a->second;
      }
    }
    return std::nullopt;
  }

  std::vector<double> numbers(const XMLElement* e, const char* name, const std::string& text, size_t min_count,
                              size_t max_count) const {
    std::vector<double> v;
    const char* p = text.c_str();
    while (true) {
      while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
      if (!*p) break;
      char* end = nullptr;
      const double x = std::strtod(p, &end);
      if (end == p || !std::isfinite(x))
        fail(e, std::string("attribute ") + name + ": expected " + count_text(min_count, max_count) +
                    " finite numbers, got '" + text + "'");
      v.push_back(x);
      p = end;
    }
    if (v.size() < min_count || v.size() > max_count)
      fail(e, std::string("attribute ") + name + ": expected " + count_text(min_count, max_count) + " numbers, got " +
                  std::to_string(v.size()) + " ('" + text + "')");
    return v;
  }

  static std::string count_text(size_t lo, size_t hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  }

  std::optional<std::vector<double>> get_numbers(const XMLElement* e, const DefaultClass* cls, const char* name,
                                                 size_t min_count, size_t max_count) const {
    const auto t = attr(e, cls, name);
    if (!t) return std::nullopt;
    return numbers(e, name, *t, min_count, max_count);
  }

  double get_number(const XMLElement* e, const DefaultClass* cls, const char* name, double fallback) const {
    const auto v = get_numbers(e, cls, name, 1, 1);
    return v ? (*v)[0] : fallback;
  }

  Eigen::Vector3d get_vec3(const XMLElement* e, const DefaultClass* cls, const char* name,
                           const Eigen::Vector3d& fallback) const {
    const auto v = get_numbers(e, cls, name, 3, 3);
    return v ? Eigen::Vector3d((*v)[0], (*v)[1], (*v)[2]) : fallback;
  }

  std::string get_choice(const XMLElement* e, const DefaultClass* cls, const char* name,
                         const std::vector<std::string>& choices, const std::string& fallback) const {
    const auto v = attr(e, cls, name);
    if (!v) return fallback;
    for (const std::string& c : choices)
      if (*v == c) return c;
    std::string list;
    for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
    fail(e, std::string("attribute ") + name + ": expected one of " + list + ", got '" + *v + "'");
  }

  bool get_bool(const XMLElement* e, const DefaultClass* cls, const char* name, bool fallback) const {
    return get_choice(e, cls, name, {"true", "false"}, fallback ? "true" : "false") == "true";
  }

  // Checks the attributes written on `e` against the rules of `tag`: listed
  // ones go into the warning (refused under strict), unknown ones too.
  void check_attributes(const XMLElement* e, const std::string& tag) {
    const AttributeRules& r = attribute_rules().at(tag);
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
      const std::string n = a->Name();
      if (r.read.count(n) || r.silent.count(n)) continue;
      list(e, r.listed.count(n) ? "attribute " + n + " (no counterpart)" : "attribute " + n + " (not read)");
    }
  }

  // ---- the warning of what is not expressed ----

  void list(const XMLElement* e, const std::string& what) {
    if (options_.strict) fail(e, what + ": refused (strict: every element must have a counterpart)");
    listed_.push_back(location(e) + " " + what);
  }

  void list_children_or_self(const XMLElement* e) {
    bool any = false;
    for (const XMLElement* c : children(e, 0)) {
      list(c, "has no counterpart");
      any = true;
    }
    if (!any) list(e, "has no counterpart");
  }

  void finish_listing() {
    if (listed_.empty() || !warnings_) return;
    std::string w = source_ + ": " + std::to_string(listed_.size()) +
                    " MJCF element(s) or attribute(s) with no counterpart here, ignored (no effect on the smooth "
                    "dynamics; `strict: true` refuses them): ";
    for (size_t i = 0; i < listed_.size(); ++i) w += (i ? "; " : "") + listed_[i];
    warnings_->push_back(w);
  }

  void warn(const std::string& message) {
    if (warnings_) warnings_->push_back(message);
  }

  // ---- compiler, option, defaults, assets ----

  void read_compiler(const XMLElement* e) {
    check_attributes(e, "compiler");
    compiler_.degrees = get_choice(e, nullptr, "angle", {"degree", "radian"}, compiler_.degrees ? "degree" : "radian") == "degree";
    if (const auto seq = attr(e, nullptr, "eulerseq")) {
      if (seq->size() != 3 || seq->find_first_not_of("xyzXYZ") != std::string::npos)
        fail(e, "attribute eulerseq: expected 3 characters from xyzXYZ, got '" + *seq + "'");
      compiler_.eulerseq = *seq;
    }
    compiler_.inertiafromgeom = get_choice(e, nullptr, "inertiafromgeom", {"true", "false", "auto"}, compiler_.inertiafromgeom);
    if (const auto g = get_numbers(e, nullptr, "inertiagrouprange", 2, 2)) {
      compiler_.group_low = static_cast<int>((*g)[0]);
      compiler_.group_high = static_cast<int>((*g)[1]);
    }
    compiler_.autolimits = get_bool(e, nullptr, "autolimits", compiler_.autolimits);
    if (get_choice(e, nullptr, "coordinate", {"local", "global"}, "local") == "global")
      fail(e, "attribute coordinate: expected local, got 'global' (global coordinates are not supported)");
    if (get_number(e, nullptr, "boundmass", 0) != 0 || get_number(e, nullptr, "boundinertia", 0) != 0 ||
        get_bool(e, nullptr, "balanceinertia", false) || get_number(e, nullptr, "settotalmass", -1) > 0)
      fail(e, "boundmass, boundinertia, balanceinertia and settotalmass change the inertias and are not supported: "
              "expected them absent (or 0, false, -1)");
  }

  void read_option(const XMLElement* e) {
    check_attributes(e, "option");
    out_.sim.timestep = get_number(e, nullptr, "timestep", out_.sim.timestep);
    if (!(out_.sim.timestep > 0)) fail(e, "attribute timestep: expected a time step > 0, got " + *attr(e, nullptr, "timestep"));
    out_.model.gravity = get_vec3(e, nullptr, "gravity", out_.model.gravity);
    out_.sim.integrator = get_choice(e, nullptr, "integrator", {"Euler", "RK4", "implicit", "implicitfast"}, out_.sim.integrator);
    for (const char* fluid : {"density", "viscosity"}) {
      const double value = get_number(e, nullptr, fluid, 0);
      if (!(value >= 0 && std::isfinite(value)))
        fail(e, std::string("attribute ") + fluid + ": expected a finite value >= 0, got " + *attr(e, nullptr, fluid));
      (std::string(fluid) == "density" ? fluid_density_ : fluid_viscosity_) = value;
    }
    fluid_option_ = e;
    if (get_vec3(e, nullptr, "wind", Eigen::Vector3d::Zero()).norm() != 0)
      fail(e, "attribute wind: expected 0 0 0 (a moving medium has no counterpart here), got " + *attr(e, nullptr, "wind"));
    for (const XMLElement* c : children(e, 0)) {
      if (!is(c, "flag")) {
        list(c, "has no counterpart");
        continue;
      }
      for (const tinyxml2::XMLAttribute* a = c->FirstAttribute(); a; a = a->Next()) {
        const std::string n = a->Name(), v = a->Value();
        if (v != "enable" && v != "disable") fail(c, "attribute " + n + ": expected enable or disable, got '" + v + "'");
        if (n == "gravity" && v == "disable") gravity_disabled_ = true;
        else if (n == "contact") out_.sim.contact_disabled = v == "disable";
        else if ((n == "passive" || n == "actuation") && v == "disable")
          fail(c, "attribute " + n + "=\"disable\" has no counterpart here; ignoring it would change the dynamics");
        else if (n != "gravity") list(c, "attribute " + n + "=\"" + v + "\" (no counterpart)");
      }
    }
  }

  // <default class="..."> and its nested defaults; each class inherits its
  // parent's values (MJCF reference, "default").
  void read_default(const XMLElement* e, const DefaultClass& parent, bool is_main) {
    DefaultClass cls = parent;
    if (!is_main) {
      const char* name = e->Attribute("class");
      if (!name || !*name) fail(e, "expected attribute class=\"...\" on a nested default, got none");
      if (classes_.count(name)) fail(e, std::string("expected a new class name, got '") + name + "' again");
      cls.name = name;
    } else if (const char* name = e->Attribute("class")) {
      if (std::string(name) != "main") fail(e, std::string("expected the top-level default to be class main, got '") + name + "'");
    }
    for (const XMLElement* c : children(e, 0)) {
      const std::string tag = c->Name();
      if (tag == "default") continue;
      if (tag == "joint" || tag == "geom" || tag == "motor") {
        check_attributes(c, tag);
        for (const tinyxml2::XMLAttribute* a = c->FirstAttribute(); a; a = a->Next())
          cls.attributes[tag][a->Name()] = a->Value();
      } else if (tag == "site" || tag == "camera" || tag == "light" || tag == "mesh" || tag == "material" ||
                 tag == "tendon" || tag == "equality" || tag == "pair") {
        // Defaults of elements that are refused or listed where they are used.
      } else if (tag == "general" || tag == "position" || tag == "velocity" || tag == "cylinder" || tag == "muscle" ||
                 tag == "adhesion" || tag == "intvelocity" || tag == "damper") {
        // Refused where an actuator of this kind is used.
      } else {
        fail(c, "expected a defaultable element (joint, geom, motor, site, ...), got <" + tag + ">");
      }
    }
    const std::string name = is_main ? "main" : cls.name;
    classes_[name] = cls;
    for (const XMLElement* c : children(e, 0))
      if (is(c, "default")) read_default(c, classes_.at(name), false);
  }

  void read_asset(const XMLElement* e) {
    for (const XMLElement* c : children(e, 0))
      if (is(c, "hfield")) list(c, "has no counterpart (height fields are not collision shapes here)");
    // Meshes are reported where a geom uses one; textures and materials only render.
  }

  const DefaultClass* class_of(const XMLElement* e, const DefaultClass* inherited) const {
    if (const char* name = e->Attribute("class")) {
      const auto it = classes_.find(name);
      if (it == classes_.end()) fail(e, std::string("attribute class: expected a defined default class, got '") + name + "'");
      return &it->second;
    }
    return inherited;
  }

  // ---- frames ----

  double angle(double value) const { return compiler_.degrees ? value * kPi / 180.0 : value; }

  static Eigen::Matrix3d z_to_vector(Eigen::Vector3d v) {
    // MuJoCo's mju_quatZ2Vec: the smallest rotation taking +z to v.
    v.normalize();
    const Eigen::Vector3d z = Eigen::Vector3d::UnitZ();
    const Eigen::Vector3d axis = z.cross(v);
    const double s = axis.norm();
    if (s < 1e-10) return v.z() < 0 ? Eigen::Matrix3d(Eigen::AngleAxisd(kPi, Eigen::Vector3d::UnitX())) : Eigen::Matrix3d::Identity();
    return Eigen::AngleAxisd(std::atan2(s, v.z()), axis / s).toRotationMatrix();
  }

  // The orientation given by one of quat, axisangle, euler, xyaxes, zaxis
  // (MJCF reference, "Frame orientations"); identity when none is.
  Eigen::Matrix3d orientation(const XMLElement* e, const DefaultClass* cls) const {
    int given = 0;
    for (const char* a : {"quat", "axisangle", "euler", "xyaxes", "zaxis"}) given += attr(e, cls, a) ? 1 : 0;
    if (given > 1) fail(e, "expected at most one of quat, axisangle, euler, xyaxes, zaxis, got " + std::to_string(given));
    if (const auto q = get_numbers(e, cls, "quat", 4, 4)) {
      const Eigen::Quaterniond quat((*q)[0], (*q)[1], (*q)[2], (*q)[3]);  // w x y z
      if (!(quat.norm() > 1e-12)) fail(e, "attribute quat: expected a non-zero quaternion, got '" + *attr(e, cls, "quat") + "'");
      return quat.normalized().toRotationMatrix();
    }
    if (const auto a = get_numbers(e, cls, "axisangle", 4, 4)) {
      const Eigen::Vector3d axis((*a)[0], (*a)[1], (*a)[2]);
      if (!(axis.norm() > 1e-12)) fail(e, "attribute axisangle: expected a non-zero axis, got '" + *attr(e, cls, "axisangle") + "'");
      return Eigen::AngleAxisd(angle((*a)[3]), axis.normalized()).toRotationMatrix();
    }
    if (const auto eu = get_numbers(e, cls, "euler", 3, 3)) {
      // Lower-case axes rotate with the frame (intrinsic: post-multiplied),
      // upper-case ones are fixed (extrinsic: pre-multiplied).
      Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
      for (int i = 0; i < 3; ++i) {
        const char c = compiler_.eulerseq[i];
        const int k = (c == 'x' || c == 'X') ? 0 : (c == 'y' || c == 'Y') ? 1 : 2;
        const Eigen::Quaterniond qi(Eigen::AngleAxisd(angle((*eu)[i]), Eigen::Vector3d::Unit(k)));
        q = (c >= 'a') ? Eigen::Quaterniond(q * qi) : Eigen::Quaterniond(qi * q);
      }
      return q.toRotationMatrix();
    }
    if (const auto xy = get_numbers(e, cls, "xyaxes", 6, 6)) {
      Eigen::Vector3d x((*xy)[0], (*xy)[1], (*xy)[2]), y((*xy)[3], (*xy)[4], (*xy)[5]);
      if (!(x.norm() > 1e-12)) fail(e, "attribute xyaxes: expected a non-zero x axis, got '" + *attr(e, cls, "xyaxes") + "'");
      x.normalize();
      y -= x * x.dot(y);
      if (!(y.norm() > 1e-12)) fail(e, "attribute xyaxes: expected a y axis not parallel to x, got '" + *attr(e, cls, "xyaxes") + "'");
      y.normalize();
      Eigen::Matrix3d R;
      R << x, y, x.cross(y);
      return R;
    }
    if (const auto z = get_numbers(e, cls, "zaxis", 3, 3)) {
      const Eigen::Vector3d v((*z)[0], (*z)[1], (*z)[2]);
      if (!(v.norm() > 1e-12)) fail(e, "attribute zaxis: expected a non-zero vector, got '" + *attr(e, cls, "zaxis") + "'");
      return z_to_vector(v);
    }
    return Eigen::Matrix3d::Identity();
  }

  Pose frame(const XMLElement* e, const DefaultClass* cls) const {
    Pose P = Pose::Identity();
    P.linear() = orientation(e, cls);
    P.translation() = get_vec3(e, cls, "pos", Eigen::Vector3d::Zero());
    return P;
  }

  // The Featherstone transform X (parent coordinates -> child) of a pose.
  static Transform<double> transform(const Pose& P) { return Transform<double>(P.linear().transpose(), P.translation()); }

  // ---- bodies ----

  void read_worldbody(const XMLElement* e) {
    for (const XMLElement* c : children(e, 0)) {
      const std::string tag = c->Name();
      if (tag == "body") read_body(c, -1, Pose::Identity(), &classes_.at("main"), true);
      else if (tag == "geom") read_geom(c, -1, Pose::Identity(), &classes_.at("main"), nullptr);
      else read_body_extra(c, tag);
    }
  }

  // Children of a body or the worldbody other than bodies, joints, geoms
  // and inertials.
  void read_body_extra(const XMLElement* c, const std::string& tag) {
    if (tag == "site") list(c, "on the world has no counterpart (a site on a body becomes a frame)");
    else if (tag == "camera" || tag == "light") return;  // rendering only
    else if (tag == "composite" || tag == "plugin" || tag == "flexcomp" || tag == "frame" || tag == "replicate" ||
             tag == "attach")
      refuse(c, "<" + tag + "> has no counterpart here");
    else if (tag == "joint" || tag == "freejoint" || tag == "inertial")
      fail(c, "expected <" + tag + "> inside a <body>, got it in <worldbody>");
    else
      fail(c, "expected a body element (body, joint, freejoint, geom, inertial, site, camera, light), got <" + tag + ">");
  }

  struct GeomMass {
    Inertia<double> inertia;  // in the MuJoCo body frame
    bool any = false;
  };

  // A MuJoCo body: its joints become bodies of ours (see the header), then
  // its inertia, geoms and children attach to the last one.
  void read_body(const XMLElement* e, int parent, const Pose& parent_offset, const DefaultClass* childclass,
                 bool under_world) {
    check_attributes(e, "body");
    if (get_bool(e, nullptr, "mocap", false)) refuse(e, "attribute mocap=\"true\": mocap bodies have no counterpart here");
    if (const char* cc = e->Attribute("childclass")) {
      const auto it = classes_.find(cc);
      if (it == classes_.end()) fail(e, std::string("attribute childclass: expected a defined default class, got '") + cc + "'");
      childclass = &it->second;
    }
    const std::string name = e->Attribute("name") ? e->Attribute("name") : "body" + std::to_string(++unnamed_bodies_);
    const std::vector<const XMLElement*> kids = children(e, 0);
    std::vector<const XMLElement*> joints;
    const XMLElement* inertial = nullptr;
    for (const XMLElement* c : kids) {
      if (is(c, "joint") || is(c, "freejoint")) joints.push_back(c);
      if (is(c, "inertial")) {
        if (inertial) fail(c, "expected at most one <inertial> per body, got a second");
        inertial = c;
      }
    }
    // P: the MuJoCo body frame (before this body's joints move it) in the frame of our current body.
    Pose P = parent_offset * frame(e, nullptr);
    int body = parent;
    for (size_t k = 0; k < joints.size(); ++k) {
      const bool last = k + 1 == joints.size();
      const std::string body_name = last ? name : name + "/" + joint_name(joints[k], name, k);
      body = add_joint(joints[k], childclass, body, P, body_name, name, k, under_world && k == 0, joints.size());
    }
    if (joints.empty()) {
      Joint<double> j;
      j.name = name + "_weld";
      j.type = JointType::kFixed;
      j.origin = transform(P);
      body = out_.model.add_body(name, parent, j, Inertia<double>());
      P = Pose::Identity();
    }
    // After the joints, P is the MuJoCo body frame in our last body's frame.
    Inertia<double>& I = out_.model.bodies[body].inertia;
    const bool from_geoms = compiler_.inertiafromgeom == "true" || (compiler_.inertiafromgeom == "auto" && !inertial);
    if (inertial && !from_geoms) I = Inertia<double>::to_parent(transform(P), read_inertial(inertial));
    GeomMass gm;
    for (const XMLElement* c : kids) {
      const std::string tag = c->Name();
      if (tag == "geom") read_geom(c, body, P, childclass, from_geoms ? &gm : nullptr);
    }
    if (from_geoms && gm.any) I = Inertia<double>::to_parent(transform(P), gm.inertia);
    body_elements_.emplace_back(body, e);
    for (const XMLElement* c : kids) {
      const std::string tag = c->Name();
      if (tag == "body") read_body(c, body, P, childclass, false);
      else if (tag == "site") read_site(c, body, P, childclass);
      else if (tag != "geom" && tag != "joint" && tag != "freejoint" && tag != "inertial") read_body_extra(c, tag);
    }
  }

  // A named site on a body is a named frame of ours (a foot, an end
  // effector, a marker): what MuJoCo's site_xpos/site_xmat give. An unnamed
  // site has nothing to be called by and is listed.
  void read_site(const XMLElement* e, int body, const Pose& P, const DefaultClass* childclass) {
    const DefaultClass* cls = class_of(e, childclass);
    check_attributes(e, "site");
    const char* name = e->Attribute("name");
    if (!name) {
      list(e, "an unnamed site (nothing to call its frame by)");
      return;
    }
    if (out_.model.frame_index(name) >= 0) fail(e, std::string("attribute name: expected a name no other site has, got '") + name + "'");
    out_.model.add_frame(name, body, transform(P * frame(e, cls)));
  }

  std::string joint_name(const XMLElement* j, const std::string& body, size_t k) const {
    if (const char* n = j->Attribute("name")) return n;
    return body + "_joint" + std::to_string(k);
  }

  // Adds the body of our model that joint `je` moves, and updates P to the
  // MuJoCo body frame's pose in that new body's frame.
  int add_joint(const XMLElement* je, const DefaultClass* childclass, int parent, Pose& P, const std::string& body_name,
                const std::string& mj_body, size_t k, bool first_under_world, size_t count) {
    Joint<double> j;
    j.name = joint_name(je, mj_body, k);
    if (is(je, "freejoint")) {
      check_attributes(je, "freejoint");
      j.type = JointType::kFree;
    } else {
      const DefaultClass* cls = class_of(je, childclass);
      check_attributes(je, "joint");
      const std::string type = get_choice(je, cls, "type", {"hinge", "slide", "ball", "free"}, "hinge");
      j.type = type == "hinge" ? JointType::kRevolute
               : type == "slide" ? JointType::kPrismatic
               : type == "ball"  ? JointType::kSpherical
                                 : JointType::kFree;
      read_joint_dynamics(je, cls, j, type);
      if (j.type == JointType::kRevolute || j.type == JointType::kPrismatic || j.type == JointType::kSpherical) {
        const Eigen::Vector3d axis = get_vec3(je, cls, "axis", Eigen::Vector3d::UnitZ());
        if (!(axis.norm() > 1e-12)) fail(je, "attribute axis: expected a non-zero vector, got '" + *attr(je, cls, "axis") + "'");
        const Eigen::Vector3d a = axis.normalized();
        const Eigen::Vector3d pos = get_vec3(je, cls, "pos", Eigen::Vector3d::Zero());
        double ref = get_number(je, cls, "ref", 0);
        if (j.type == JointType::kSpherical) {
          if (attr(je, cls, "ref")) list(je, "attribute ref on a ball joint (no counterpart)");
          ref = 0;
        }
        if (j.type != JointType::kSpherical) j.axis = a;
        // MuJoCo moves the body by the joint's displacement from `ref`
        // (hinge: a rotation by q - ref about the axis through pos; slide: a
        // translation by (q - ref)·axis). The -ref part goes into the origin,
        // so that our q is MuJoCo's qpos.
        Pose origin = P;
        if (j.type == JointType::kPrismatic) {
          origin.translate(-ref * a);
          P = Pose::Identity();
        } else {
          origin.translate(pos);
          if (j.type == JointType::kRevolute) origin.rotate(Eigen::AngleAxisd(-angle(ref), a));
          P = Pose::Identity();
          P.translation() = -pos;
        }
        j.origin = transform(origin);
        return out_.model.add_body(body_name, parent, j, Inertia<double>());
      }
    }
    // A free joint: MuJoCo places the body at qpos directly in the world
    // (its body pose is only qpos0), so the origin is the identity.
    if (!first_under_world || count != 1 || parent != -1)
      fail(je, "expected a free joint alone in a body whose parent is the world, got it elsewhere");
    j.origin = Transform<double>();
    P = Pose::Identity();
    return out_.model.add_body(body_name, parent, j, Inertia<double>());
  }

  void read_joint_dynamics(const XMLElement* je, const DefaultClass* cls, Joint<double>& j, const std::string& type) {
    const bool angular = type == "hinge";
    JointDynamics<double>& d = j.dynamics;
    d.damping = get_number(je, cls, "damping", 0);
    d.armature = get_number(je, cls, "armature", 0);
    d.coulomb_friction = get_number(je, cls, "frictionloss", 0);
    for (const char* a : {"damping", "armature", "frictionloss", "stiffness"})
      if (get_number(je, cls, a, 0) < 0) fail(je, std::string("attribute ") + a + ": expected a value >= 0, got " + *attr(je, cls, a));
    if (d.coulomb_friction > 0)
      warn(location(je) + ": frictionloss (a constraint in MuJoCo) becomes a smooth Coulomb friction "
                          "-F·tanh(q̇/v_s) with v_s = 0.01 here");
    const double stiffness = get_number(je, cls, "stiffness", 0);
    if (stiffness != 0 && (type == "ball" || type == "free"))
      fail(je, "attribute stiffness: expected 0 on a " + type + " joint (no counterpart here), got " + *attr(je, cls, "stiffness"));
    d.spring_stiffness = stiffness;
    const double springref = get_number(je, cls, "springref", 0);
    d.spring_rest = angular ? angle(springref) : springref;
    if (const auto sd = get_numbers(je, cls, "springdamper", 2, 2))
      if ((*sd)[0] != 0 || (*sd)[1] != 0) fail(je, "attribute springdamper: expected 0 0 (no counterpart here)");
    // range and limited; MuJoCo 2.2 refuses a range without `limited` unless compiler autolimits.
    const std::string limited = get_choice(je, cls, "limited", {"true", "false", "auto"}, "auto");
    const auto range = get_numbers(je, cls, "range", 2, 2);
    bool is_limited = limited == "true";
    if (limited == "auto") {
      if (range && !compiler_.autolimits)
        fail(je, "attribute range: expected limited=\"true\" or \"false\" with it (or compiler autolimits=\"true\"), got "
                 "a range without limited");
      is_limited = range.has_value();
    }
    if (is_limited) {
      if (!range) fail(je, "attribute limited=\"true\": expected a range, got none");
      if (!((*range)[0] < (*range)[1])) fail(je, "attribute range: expected lower < upper, got '" + *attr(je, cls, "range") + "'");
      if (type == "hinge" || type == "slide") {
        j.lower = angular ? angle((*range)[0]) : (*range)[0];
        j.upper = angular ? angle((*range)[1]) : (*range)[1];
      } else {
        list(je, "attribute range on a " + type + " joint (no counterpart: limits are on 1-DoF joints)");
      }
    }
  }

  // <inertial>: mass, COM and the inertia about the COM, in the body frame.
  Inertia<double> read_inertial(const XMLElement* e) const {
    check_attributes_const(e, "inertial");
    const auto mass = get_numbers(e, nullptr, "mass", 1, 1);
    if (!mass) fail(e, "expected attribute mass, got none");
    if (!((*mass)[0] >= 0)) fail(e, "attribute mass: expected a value >= 0, got " + *attr(e, nullptr, "mass"));
    const Pose P = frame(e, nullptr);
    Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
    const auto diag = get_numbers(e, nullptr, "diaginertia", 3, 3);
    const auto full = get_numbers(e, nullptr, "fullinertia", 6, 6);
    if (diag && full) fail(e, "expected one of diaginertia and fullinertia, got both");
    if (!diag && !full) fail(e, "expected diaginertia or fullinertia, got neither");
    if (diag) {
      I.diagonal() << (*diag)[0], (*diag)[1], (*diag)[2];
    } else {
      const std::vector<double>& f = *full;  // Ixx Iyy Izz Ixy Ixz Iyz
      I << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
    }
    return Inertia<double>::from_com((*mass)[0], P.translation(), P.linear() * I * P.linear().transpose());
  }

  void check_attributes_const(const XMLElement* e, const std::string& tag) const {
    const AttributeRules& r = attribute_rules().at(tag);
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next())
      if (!r.read.count(a->Name()) && !r.silent.count(a->Name()))
        fail(e, std::string("attribute ") + a->Name() + ": expected one of pos, quat, axisangle, euler, xyaxes, zaxis, "
                                                        "mass, diaginertia, fullinertia, got it");
  }

  // A geom: its mass and inertia (when the body takes its inertia from
  // geoms) and its collision shape.
  void read_geom(const XMLElement* e, int body, const Pose& P, const DefaultClass* childclass, GeomMass* mass_sum) {
    const DefaultClass* cls = class_of(e, childclass);
    check_attributes(e, "geom");
    const std::string type =
        get_choice(e, cls, "type", {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"}, "sphere");
    if (get_bool(e, cls, "shellinertia", false))
      fail(e, "attribute shellinertia=\"true\": expected false (shell inertia is not supported; give the body an <inertial>)");
    const std::vector<double> size0 = get_numbers(e, cls, "size", 0, 3).value_or(std::vector<double>{});
    double s[3] = {0, 0, 0};
    for (size_t i = 0; i < size0.size(); ++i) s[i] = size0[i];
    Pose G = frame(e, cls);
    if (const auto ft = get_numbers(e, cls, "fromto", 6, 6)) {
      const Eigen::Vector3d a((*ft)[0], (*ft)[1], (*ft)[2]), b((*ft)[3], (*ft)[4], (*ft)[5]);
      if (!((b - a).norm() > 1e-12)) fail(e, "attribute fromto: expected two different points, got '" + *attr(e, cls, "fromto") + "'");
      if (type != "capsule" && type != "cylinder" && type != "box" && type != "ellipsoid")
        fail(e, "attribute fromto: expected it on a capsule, cylinder, box or ellipsoid, got a " + type);
      // As MuJoCo 2.2's compiler: the geom's z runs from `to` towards
      // `from`, its half-length is half the distance, and a box or an
      // ellipsoid takes size[0] for both transverse half-sizes.
      G = Pose::Identity();
      G.linear() = z_to_vector(a - b);
      G.translation() = 0.5 * (a + b);
      if (size0.empty()) fail(e, "attribute size: expected at least 1 number with fromto on a " + type + ", got none");
      if (type == "capsule" || type == "cylinder") {
        s[1] = 0.5 * (b - a).norm();
      } else {
        s[1] = s[0];
        s[2] = 0.5 * (b - a).norm();
      }
    }
    const size_t needed = type == "sphere" ? 1 : (type == "capsule" || type == "cylinder") ? 2 : (type == "box" || type == "ellipsoid") ? 3 : 0;
    if (!attr(e, cls, "fromto") && size0.size() < needed)
      fail(e, "attribute size: expected " + std::to_string(needed) + " numbers for a " + type + ", got " + std::to_string(size0.size()));
    for (size_t i = 0; i < needed; ++i)
      if (!(s[i] > 0)) fail(e, "attribute size: expected positive sizes for a " + type + ", got " + std::to_string(s[i]));
    const Pose placed = P * G;  // geom frame in our body frame
    if (get_choice(e, cls, "fluidshape", {"none", "ellipsoid"}, "none") == "ellipsoid" &&
        (fluid_density_ > 0 || fluid_viscosity_ > 0))
      refuse(e, "attribute fluidshape=\"ellipsoid\": MuJoCo's ellipsoid fluid model (added mass, Kutta and Magnus lift) "
                "has no counterpart here; expected none (the inertia-box model, which maps to body drag)");

    if (type == "mesh" || type == "hfield" || type == "sdf") {
      warn(location(e) + ": " + type + " geom skipped (not loaded; neither inertia nor collision shape)" +
           (mass_sum ? "; give the body an <inertial>" : ""));
      return;
    }
    if (mass_sum && type != "plane") {
      int group = static_cast<int>(get_number(e, cls, "group", 0));
      if (group >= compiler_.group_low && group <= compiler_.group_high) {
        double volume = 0;
        Eigen::Vector3d d = Eigen::Vector3d::Zero();  // principal moments per unit mass
        const double r = s[0];
        if (type == "sphere") {
          volume = 4.0 / 3.0 * kPi * r * r * r;
          d.setConstant(0.4 * r * r);
        } else if (type == "box") {
          volume = 8 * s[0] * s[1] * s[2];
          d << (s[1] * s[1] + s[2] * s[2]) / 3, (s[0] * s[0] + s[2] * s[2]) / 3, (s[0] * s[0] + s[1] * s[1]) / 3;
        } else if (type == "ellipsoid") {
          volume = 4.0 / 3.0 * kPi * s[0] * s[1] * s[2];
          d << (s[1] * s[1] + s[2] * s[2]) / 5, (s[0] * s[0] + s[2] * s[2]) / 5, (s[0] * s[0] + s[1] * s[1]) / 5;
        } else if (type == "cylinder") {
          const double h = 2 * s[1];
          volume = kPi * r * r * h;
          d << (3 * r * r + h * h) / 12, (3 * r * r + h * h) / 12, r * r / 2;
        } else {  // capsule: a cylinder and two hemispheres (MuJoCo's compiler)
          const double h = 2 * s[1];
          volume = kPi * r * r * h + 4.0 / 3.0 * kPi * r * r * r;
          const double sphere = 4 * r / (4 * r + 3 * h), cylinder = 1 - sphere;  // mass fractions
          const double transverse = cylinder * (3 * r * r + h * h) / 12 + sphere * (0.4 * r * r + h * (3 * r + 2 * h) / 8);
          d << transverse, transverse, cylinder * r * r / 2 + sphere * 0.4 * r * r;
        }
        double m = 0;
        if (const auto given = get_numbers(e, cls, "mass", 1, 1)) {
          m = (*given)[0];
          if (!(m >= 0)) fail(e, "attribute mass: expected a value >= 0, got " + *attr(e, cls, "mass"));
        } else {
          const double density = get_number(e, cls, "density", 1000);
          if (!(density >= 0)) fail(e, "attribute density: expected a value >= 0, got " + *attr(e, cls, "density"));
          m = density * volume;
        }
        const Eigen::Matrix3d R = G.linear();
        mass_sum->inertia = mass_sum->inertia +
                            Inertia<double>::from_com(m, G.translation(), R * (m * d).asDiagonal() * R.transpose());
        mass_sum->any = true;
      }
    }
    if (type == "ellipsoid") {
      warn(location(e) + ": ellipsoid geom has no collision shape here (inertia kept)");
      return;
    }
    Geometry g;
    g.name = e->Attribute("name") ? e->Attribute("name") : "";
    g.body = body;
    g.placement = placed;
    g.collision = get_number(e, cls, "contype", 1) != 0 || get_number(e, cls, "conaffinity", 1) != 0;
    if (type == "sphere") {
      g.type = Geometry::Type::kSphere;
      g.size = Eigen::Vector3d(s[0], 0, 0);
    } else if (type == "box") {
      g.type = Geometry::Type::kBox;
      g.size = Eigen::Vector3d(s[0], s[1], s[2]);
    } else if (type == "capsule" || type == "cylinder") {
      g.type = type == "capsule" ? Geometry::Type::kCapsule : Geometry::Type::kCylinder;
      g.size = Eigen::Vector3d(s[0], s[1], 0);
    } else {  // plane: the geom's +z is its normal
      g.type = Geometry::Type::kPlane;
      g.size = Eigen::Vector3d::UnitZ();
    }
    out_.model.geometries.push_back(g);
  }

  // ---- fluid ----

  // <option density/viscosity> with MuJoCo's default fluid model (every geom
  // fluidshape="none"): each body of mass ≥ mjMINVAL feels the forces of its
  // equivalent inertia box (the box of uniform density with the body's mass
  // and principal moments) along its principal axes at its COM:
  //   box_i = sqrt(6 (I_j + I_k − I_i) / m),  d = (box_x + box_y + box_z) / 3,
  //   Stokes drag: F_i = −3π d μ v_i,  τ_i = −π d³ μ ω_i;
  //   quadratic drag: F_i = −½ ρ box_j box_k |v_i| v_i,  τ_i = −ρ box_i (box_j⁴ + box_k⁴) |ω_i| ω_i / 64
  // (MuJoCo 2.2, engine_passive.c, mj_inertiaBoxFluidModel; MuJoCo docs,
  // "Computation: Fluid forces"). This is the diagonal damping of our body
  // drag (model.hpp, BodyDrag) when the principal axes are the body's axes,
  // so each body's coefficients are set from it, exactly.
  // MjcfOptions::density / viscosity replace the file's; fluid_option_
  // then names the element the fluid came from (or is null: no fluid).
  void replace_fluid(const XMLElement* root) {
    for (const auto& [name, replacement, value] :
         {std::make_tuple("density", options_.density, &fluid_density_),
          std::make_tuple("viscosity", options_.viscosity, &fluid_viscosity_)}) {
      if (!replacement) continue;
      if (!(*replacement >= 0 && std::isfinite(*replacement)))
        fail(root, std::string("the ") + name + " replacing <option " + name + ">: expected a finite value >= 0, got " +
                       std::to_string(*replacement));
      *value = *replacement;
    }
    if (!fluid_option_) fluid_option_ = root;
    if (!(fluid_density_ > 0 || fluid_viscosity_ > 0)) fluid_option_ = nullptr;
  }

  void add_inertia_box_fluid() {
    if (!fluid_option_) return;
    constexpr double kMinVal = 1e-15;  // mjMINVAL
    const double rho = fluid_density_, mu = fluid_viscosity_, pi = 3.14159265358979323846;
    for (const auto& [index, element] : body_elements_) {
      Body<double>& body = out_.model.bodies[index];
      const double m = body.inertia.mass;
      if (m < kMinVal) continue;
      const Eigen::Matrix3d I = body.inertia.inertia_about_com();
      const Eigen::Matrix3d off = I - Eigen::Matrix3d(I.diagonal().asDiagonal());
      if (off.cwiseAbs().maxCoeff() > 1e-9 * I.trace())
        fail(element, "<option density/viscosity>: the inertia-box fluid model acts along the body's principal axes, "
                      "expected them along the body frame's axes (the drag here is diagonal in body axes), got an "
                      "inertia about the COM with off-diagonal " + std::to_string(off.cwiseAbs().maxCoeff()) +
                      " (give the body an <inertial> with diaginertia and no rotation)");
      Eigen::Vector3d box;
      for (int i = 0; i < 3; ++i)
        box[i] = std::sqrt(std::max(kMinVal, I((i + 1) % 3, (i + 1) % 3) + I((i + 2) % 3, (i + 2) % 3) - I(i, i)) / m * 6);
      const double d = box.sum() / 3;
      body.drag.enabled = true;
      for (int i = 0; i < 3; ++i) {
        const double bj = box[(i + 1) % 3], bk = box[(i + 2) % 3];
        body.drag.linear[i] = 3 * pi * d * mu;
        body.drag.linear[3 + i] = pi * d * d * d * mu;
        body.drag.quadratic[i] = 0.5 * rho * bj * bk;
        body.drag.quadratic[3 + i] = rho * box[i] * (bj * bj * bj * bj + bk * bk * bk * bk) / 64;
      }
      // Two equal principal moments leave MuJoCo's principal axes in their
      // plane to rounding; the quadratic terms then differ unless the motion
      // stays along the body's axes.
      const Eigen::Vector3d p = I.diagonal();
      for (int i = 0; i < 3; ++i)
        if (rho > 0 && std::abs(p[i] - p[(i + 1) % 3]) <= 1e-9 * p.maxCoeff()) {
          warn(location(element) + ": two equal principal moments: MuJoCo's inertia-box axes in their plane are set "
                                   "by rounding, ours are the body's axes (quadratic fluid drag may differ)");
          break;
        }
    }
  }

  // ---- actuators ----

  void read_actuators(const XMLElement* e) {
    for (const XMLElement* c : children(e, 0)) {
      const std::string tag = c->Name();
      if (tag != "motor")
        refuse(c, "actuator <" + tag + "> has no counterpart here (only <motor> is supported); ignoring it would change "
                  "the dynamics");
      const DefaultClass* cls = class_of(c, &classes_.at("main"));
      check_attributes(c, "motor");
      for (const char* t : {"tendon", "site", "jointinparent", "cranksite", "slidersite", "body"})
        if (attr(c, cls, t)) fail(c, std::string("attribute ") + t + ": expected a joint transmission (joint=\"...\"), got " + t);
      const auto joint = attr(c, cls, "joint");
      if (!joint) fail(c, "expected attribute joint=\"...\", got none");
      MjcfActuator a;
      a.name = c->Attribute("name") ? c->Attribute("name") : "actuator" + std::to_string(out_.actuators.size());
      a.joint = out_.model.joint_index(*joint);
      if (a.joint < 0) fail(c, "attribute joint: expected the name of a joint, got '" + *joint + "'");
      Joint<double>& j = out_.model.joints[a.joint];
      for (const MjcfActuator& other : out_.actuators)
        if (other.joint == a.joint)
          fail(c, "attribute joint: expected a joint no other motor drives, got '" + *joint + "' (also driven by '" +
                      other.name + "')");
      if (j.nv != 1) fail(c, "attribute joint: expected a hinge or slide joint, got '" + *joint + "' (" + joint_type_name(j.type) + ")");
      const std::vector<double> gear = get_numbers(c, cls, "gear", 1, 6).value_or(std::vector<double>{1});
      a.gear = gear[0];
      // Our control is per velocity coordinate, scaled by the joint's gear
      // ratio (Stepper::forward_dynamics): the motor's ctrl is the control of
      // its joint's coordinate.
      j.dynamics.gear_ratio = a.gear;
      for (size_t i = 1; i < gear.size(); ++i)
        if (gear[i] != 0) fail(c, "attribute gear: expected one number (or zeros after the first) for a joint, got '" + *attr(c, cls, "gear") + "'");
      const std::string limited = get_choice(c, cls, "ctrllimited", {"true", "false", "auto"}, "auto");
      const auto range = get_numbers(c, cls, "ctrlrange", 2, 2);
      a.ctrl_limited = limited == "true" || (limited == "auto" && range && compiler_.autolimits);
      if (limited == "auto" && range && !compiler_.autolimits)
        fail(c, "attribute ctrlrange: expected ctrllimited=\"true\" or \"false\" with it (or compiler autolimits=\"true\"), "
                "got a ctrlrange without ctrllimited");
      if (a.ctrl_limited) {
        if (!range) fail(c, "attribute ctrllimited=\"true\": expected a ctrlrange, got none");
        if (!((*range)[0] < (*range)[1])) fail(c, "attribute ctrlrange: expected lower < upper, got '" + *attr(c, cls, "ctrlrange") + "'");
        a.ctrl_lower = (*range)[0];
        a.ctrl_upper = (*range)[1];
        j.effort = std::max(std::abs(a.ctrl_lower), std::abs(a.ctrl_upper)) * std::abs(a.gear);
      }
      out_.actuators.push_back(a);
    }
  }

  const std::string& source_;
  const MjcfOptions& options_;
  std::vector<std::string>* warnings_;
  std::vector<std::unique_ptr<tinyxml2::XMLDocument>> documents_;
  std::map<const tinyxml2::XMLDocument*, std::string> paths_;
  std::map<std::string, DefaultClass> classes_;
  Compiler compiler_;
  bool gravity_disabled_ = false;
  double fluid_density_ = 0, fluid_viscosity_ = 0;
  const XMLElement* fluid_option_ = nullptr;  // <option> (or <mujoco>) giving density or viscosity > 0
  std::vector<std::pair<int, const XMLElement*>> body_elements_;  // our body carrying each MuJoCo body's inertia
  int unnamed_bodies_ = 0;
  std::vector<std::string> listed_;
  MjcfModel out_;

 public:
  bool gravity_disabled() const { return gravity_disabled_; }
};

}  // namespace mjcf_detail

MjcfModel parse_mjcf_model(const std::string& xml, const std::string& source, const MjcfOptions& options,
                           std::vector<std::string>* warnings) {
  mjcf_detail::MjcfReader reader(source, options, warnings);
  MjcfModel m = reader.read(xml);
  if (reader.gravity_disabled()) m.model.gravity.setZero();
  return m;
}

MjcfModel load_mjcf_model(const std::string& path, const MjcfOptions& options, std::vector<std::string>* warnings) {
  const std::string text = read_input_file(path, "MJCF file", InputError::kModel, kMaxMjcfBytes);
  return parse_mjcf_model(text, path, options, warnings);
}

}  // namespace neuralsim
