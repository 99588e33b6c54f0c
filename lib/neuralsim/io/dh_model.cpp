#include "neuralsim/io/dh_model.hpp"

#include <Eigen/Geometry>
#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/model_fields.hpp"

namespace neuralsim {
namespace {

struct DhRow {
  double a = 0, alpha = 0, d = 0, theta = 0;
};

double finite_number(const Config& c, const char* key) {
  const double v = c.get_or<double>(key, 0.0);
  if (!std::isfinite(v)) c.fail(key, "expected a finite number, got " + std::to_string(v));
  return v;
}

DhRow read_row(const Config& c) {
  return {finite_number(c, "a"), finite_number(c, "alpha"), finite_number(c, "d"), finite_number(c, "theta")};
}

Eigen::Isometry3d rot_x(double angle) { return Eigen::Isometry3d(Eigen::AngleAxisd(angle, Eigen::Vector3d::UnitX())); }
Eigen::Isometry3d rot_z(double angle) { return Eigen::Isometry3d(Eigen::AngleAxisd(angle, Eigen::Vector3d::UnitZ())); }
Eigen::Isometry3d trans(double x, double z) {
  return Eigen::Isometry3d(Eigen::Translation3d(x, 0, z));
}

// Craig's link transform: RotX(α) TransX(a) RotZ(θ) TransZ(d).
Eigen::Isometry3d modified_transform(const DhRow& r) {
  return rot_x(r.alpha) * trans(r.a, 0) * rot_z(r.theta) * trans(0, r.d);
}
// Denavit–Hartenberg's link transform: RotZ(θ) TransZ(d) TransX(a) RotX(α).
Eigen::Isometry3d standard_transform(const DhRow& r) {
  return rot_z(r.theta) * trans(0, r.d) * trans(r.a, 0) * rot_x(r.alpha);
}

// A pose (child in parent) as a Plücker transform parent → child.
Transform<double> to_transform(const Eigen::Isometry3d& pose) {
  return Transform<double>(pose.linear().transpose(), pose.translation());
}

Eigen::Isometry3d read_base(const Config& dh) {
  if (!dh.has("base")) return Eigen::Isometry3d::Identity();
  const Config b = dh.at("base");
  b.check_known_keys({"xyz", "rpy"});
  const Eigen::Vector3d xyz = read_vec3(b, "xyz", Eigen::Vector3d::Zero());
  const Eigen::Vector3d rpy = read_vec3(b, "rpy", Eigen::Vector3d::Zero());
  Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
  pose.linear() = rpy_rotation<double>(rpy[0], rpy[1], rpy[2]);
  pose.translation() = xyz;
  if (!pose.matrix().allFinite()) b.fail("xyz", "expected finite numbers");
  return pose;
}

// The link's inertia about its COM, given in `frame` (a pose in the body
// frame), moved into the body frame.
Inertia<double> read_link_inertia(const Config& link, const Eigen::Isometry3d& frame) {
  const double mass = read_non_negative(link, "mass", 0);
  const Eigen::Vector3d com = read_vec3(link, "com", Eigen::Vector3d::Zero());
  if (!std::isfinite(mass) || !com.allFinite()) link.fail(link.has("com") ? "com" : "mass", "expected finite numbers");
  const Eigen::Matrix3d I = inertia_about_com(link, mass, com, read_inertia(link));
  if (!I.allFinite()) link.fail("inertia", "expected finite numbers");
  const Eigen::Matrix3d R = frame.linear();
  return Inertia<double>::from_com(mass, frame * com, R * I * R.transpose());
}

int add_dh_body(Model<double>& model, const Config& c, const std::string& name, int parent, const Joint<double>& joint,
                const Inertia<double>& inertia) {
  try {
    return model.add_body(name, parent, joint, inertia);
  } catch (const ModelError& e) {
    c.fail("name", e.what());
  }
}

}  // namespace

void read_dh_chain(const Config& dh, Model<double>& model, std::vector<Config>& sources) {
  dh.check_known_keys({"convention", "base", "links", "end_frame"});
  if (!dh.has("convention")) dh.fail("convention", "required: 'standard' or 'modified' (docs/models.md)");
  const bool modified = dh.get_choice("convention", {"standard", "modified"}, "") == "modified";
  if (!dh.is_list("links") || dh.list("links").empty()) dh.fail("links", "expected a non-empty list of DH rows");
  const std::vector<Config> links = dh.list("links");
  if (links.size() > 1000) dh.fail("links", "at most 1000 links, got " + std::to_string(links.size()));
  // Standard convention: the fixed part of row i becomes joint i+1's origin.
  Eigen::Isometry3d next_origin = read_base(dh);
  int parent = -1;
  for (const Config& link : links) {
    link.check_known_keys({"name", "joint", "type", "a", "alpha", "d", "theta", "mass", "com", "inertia",
                           "inertia_about", "limits"});
    const std::string name = link.get<std::string>("name");
    Joint<double> joint;
    joint.name = link.get_or("joint", name + "_joint");
    const std::string type = link.get_choice("type", {"revolute", "prismatic", "fixed"}, "revolute");
    joint.type = type == "revolute" ? JointType::kRevolute : type == "prismatic" ? JointType::kPrismatic : JointType::kFixed;
    joint.axis = Eigen::Vector3d::UnitZ();
    if (link.has("limits")) read_joint_limits(link.at("limits"), joint);
    const DhRow row = read_row(link);
    // Body frame → the frame the inertials are given in.
    Eigen::Isometry3d inertial_frame = Eigen::Isometry3d::Identity();
    if (modified) {
      joint.origin = to_transform(next_origin * modified_transform(row));
      next_origin = Eigen::Isometry3d::Identity();
    } else {
      joint.origin = to_transform(next_origin);
      next_origin = standard_transform(row);
      inertial_frame = next_origin;
    }
    parent = add_dh_body(model, link, name, parent, joint, read_link_inertia(link, inertial_frame));
    sources.push_back(link);
  }
  if (!dh.has("end_frame")) return;
  const Config end = dh.at("end_frame");
  end.check_known_keys(modified ? std::vector<std::string>{"name", "a", "alpha", "d", "theta"}
                                : std::vector<std::string>{"name"});
  Joint<double> fixed;
  fixed.type = JointType::kFixed;
  const std::string name = end.get_or("name", "end_frame");
  fixed.name = name + "_joint";
  fixed.origin = to_transform(modified ? modified_transform(read_row(end)) : next_origin);
  add_dh_body(model, end, name, parent, fixed, Inertia<double>());
  sources.push_back(end);
}

}  // namespace neuralsim
