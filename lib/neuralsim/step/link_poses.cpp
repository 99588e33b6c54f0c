#include "neuralsim/step/link_poses.hpp"

#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

std::optional<LinkRef> find_link(const Model<double>& model, const std::string& name) {
  const int body = model.body_index(name), frame = model.frame_index(name);
  if (body < 0 && frame < 0) return std::nullopt;
  return LinkRef{name, body >= 0 ? body : -2 - frame};
}

void record_link_poses(const Model<double>& model, const std::vector<LinkRef>& links, Trajectory& tr,
                       const std::vector<Eigen::Vector3d>& points) {
  if (links.empty()) return;
  if (!points.empty() && points.size() != links.size())
    throw InvalidArgument("record_link_poses: " + std::to_string(points.size()) + " points for " +
                          std::to_string(links.size()) + " links");
  Data<double> data(model);
  for (const auto& [name, index] : links) tr.link_poses[name].resize(tr.size(), 7);
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    forward_kinematics(model, data, Eigen::VectorXd(tr.q.row(k).transpose()));
    for (size_t i = 0; i < links.size(); ++i) {
      const auto& [name, index] = links[i];
      const Transform<double> X = index >= 0 ? data.X_world[index] : frame_transform_world(model, data, -2 - index);
      const Eigen::Quaterniond rot(Eigen::Matrix3d(X.E.transpose()));
      // The point in world coordinates, r + Eᵀ p (as body_point_world, for a frame too).
      const Eigen::Vector3d p = points.empty() ? X.r : Eigen::Vector3d(X.r + X.E.transpose() * points[i]);
      tr.link_poses[name].row(k) << p.transpose(), rot.x(), rot.y(), rot.z(), rot.w();
    }
  }
}

}  // namespace neuralsim
