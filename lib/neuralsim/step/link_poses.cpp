#include "neuralsim/step/link_poses.hpp"

#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

std::optional<LinkRef> find_link(const Model<double>& model, const std::string& name) {
  const int body = model.body_index(name), frame = model.frame_index(name);
  if (body < 0 && frame < 0) return std::nullopt;
  return LinkRef{name, body >= 0 ? body : -2 - frame};
}

void record_link_poses(const Model<double>& model, const std::vector<LinkRef>& links, Trajectory& tr) {
  if (links.empty()) return;
  Data<double> data(model);
  for (const auto& [name, index] : links) tr.link_poses[name].resize(tr.size(), 7);
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    forward_kinematics(model, data, Eigen::VectorXd(tr.q.row(k).transpose()));
    for (const auto& [name, index] : links) {
      const Transform<double> X =
          index >= 0 ? data.X_world[index] : frame_transform_world(model, data, -2 - index);
      const Eigen::Quaterniond rot(Eigen::Matrix3d(X.E.transpose()));
      tr.link_poses[name].row(k) << X.r.transpose(), rot.x(), rot.y(), rot.z(), rot.w();
    }
  }
}

}  // namespace neuralsim
