#include "neuralsim/io/model_fields.hpp"

namespace neuralsim {

Eigen::Vector3d read_vec3(const Config& c, const std::string& key, const Eigen::Vector3d& fallback) {
  if (!c.has(key)) return fallback;
  const Eigen::VectorXd v = c.get<Eigen::VectorXd>(key);
  if (v.size() != 3) c.fail(key, "expected a list of 3 numbers, got " + std::to_string(v.size()));
  return v;
}

double read_non_negative(const Config& c, const std::string& key, double fallback) {
  const double v = c.get_or<double>(key, fallback);
  if (v < 0) c.fail(key, "must be >= 0, got " + std::to_string(v));
  return v;
}

Eigen::Matrix3d read_inertia(const Config& b) {
  Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
  if (!b.has("inertia")) return I;
  if (b.is_list("inertia")) {
    const Eigen::VectorXd v = b.get<Eigen::VectorXd>("inertia");
    if (v.size() == 3) return v.asDiagonal();
    if (v.size() != 6) b.fail("inertia", "expected [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]");
    I << v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2];
    return I;
  }
  const Config n = b.at("inertia");
  n.check_known_keys({"ixx", "iyy", "izz", "ixy", "ixz", "iyz"});
  const double ixx = n.get_or<double>("ixx", 0), iyy = n.get_or<double>("iyy", 0), izz = n.get_or<double>("izz", 0),
               ixy = n.get_or<double>("ixy", 0), ixz = n.get_or<double>("ixz", 0), iyz = n.get_or<double>("iyz", 0);
  I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  return I;
}

Eigen::Matrix3d inertia_about_com(const Config& b, double mass, const Eigen::Vector3d& com,
                                  const Eigen::Matrix3d& given) {
  if (!b.has("inertia_about")) return given;
  if (!b.has("inertia")) b.fail("inertia_about", "needs an 'inertia' to move");
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  if (b.is_list("inertia_about")) {
    p = read_vec3(b, "inertia_about", Eigen::Vector3d::Zero());
  } else if (b.get_choice("inertia_about", {"com", "origin"}, "") == "com") {
    return given;
  }
  const Eigen::Vector3d d = com - p;
  return given - mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
}

void read_joint_limits(const Config& l, Joint<double>& joint) {
  l.check_known_keys({"lower", "upper", "effort", "velocity"});
  joint.lower = l.get_limit("lower", -1e30);
  joint.upper = l.get_limit("upper", 1e30);
  joint.effort = l.get_limit("effort", 1e30);
  joint.velocity = l.get_limit("velocity", 1e30);
  if (!(joint.lower <= joint.upper)) l.fail("upper", "must be >= lower");
}

}  // namespace neuralsim
