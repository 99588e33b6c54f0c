// Fields that every YAML model description reads the same way (explicit
// bodies, Denavit–Hartenberg tables): vectors, non-negative numbers,
// rotational inertias, the point they are taken about, and joint limits.
// Each failure names the file, line and key (Config::fail).
#pragma once

#include <Eigen/Core>
#include <string>

#include "neuralsim/io/config.hpp"
#include "neuralsim/model/joint.hpp"

namespace neuralsim {

// A list of 3 numbers under `key`, or `fallback` when the key is absent.
Eigen::Vector3d read_vec3(const Config& c, const std::string& key, const Eigen::Vector3d& fallback);
// A number >= 0 under `key`, or `fallback` when the key is absent.
double read_non_negative(const Config& c, const std::string& key, double fallback);

// Rotational inertia under `inertia`: [ixx, iyy, izz], [ixx, iyy, izz, ixy,
// ixz, iyz] or {ixx: .., iyy: .., ...}; zero when absent.
Eigen::Matrix3d read_inertia(const Config& link);

// `inertia_about`: the point the link's `inertia` is taken about, in link
// coordinates — `com` (the default), `origin` (the link frame's origin, as
// manufacturers often publish it) or [x, y, z]. Returns the tensor moved to
// the COM c by the parallel-axis theorem (Featherstone, RBDA, eq. 2.63):
//   I_c = I_p − m (dᵀd 𝟙 − d dᵀ),  d = c − p,
// so a tensor that is too small for its mass and offset comes out
// non-physical and is refused by the model's inertia check.
Eigen::Matrix3d inertia_about_com(const Config& link, double mass, const Eigen::Vector3d& com,
                                  const Eigen::Matrix3d& given);

// `limits: {lower, upper, effort, velocity}` (±.inf allowed; upper >= lower).
void read_joint_limits(const Config& limits, Joint<double>& joint);

}  // namespace neuralsim
