// World poses of links along a trajectory: what an observation of link
// positions (motion capture, a target to reach) is compared with.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// A body or a frame, by name: (name, body index, or -2 - frame index).
using LinkRef = std::pair<std::string, int>;

// The body or frame called `name`, or nothing.
std::optional<LinkRef> find_link(const Model<double>& model, const std::string& name);

// Fills tr.link_poses[name] (T x 7: x y z qx qy qz qw, world frame) from tr.q.
// `points` (empty, or one per link): a point fixed in each link's frame (a
// marker; link coordinates) whose world position is recorded in x y z
// instead of the link origin's, beside the link's orientation.
void record_link_poses(const Model<double>& model, const std::vector<LinkRef>& links, Trajectory& tr,
                       const std::vector<Eigen::Vector3d>& points = {});

}  // namespace neuralsim
