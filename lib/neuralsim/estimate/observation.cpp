#include "neuralsim/estimate/observation.hpp"

#include <cmath>
#include <sstream>
#include <tuple>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

std::vector<int> ObservationSpec::coordinates(const Model<double>& model, int channel) const {
  std::vector<int> out;
  for (int j = 0; j < static_cast<int>(model.joints.size()); ++j) {
    if (!observes(channel, j)) continue;
    for (int k = 0; k < model.joints[j].nv; ++k) out.push_back(model.joints[j].idx_v + k);
  }
  return out;
}

void ObservationSpec::check_available(const TrajectorySet& data, const std::string& source) const {
  auto require = [&](const Trajectory& tr, const std::string& link, const char* channel, const char* columns) {
    if (!tr.link_poses.count(link))
      throw DataError(source + ":/trajectories/" + tr.name + "/link_poses/" + link + ": observation channel '" +
                      channel + "." + link + "' is not in the data (expected shape (T, 7): " + columns + ")");
  };
  for (const Trajectory& tr : data.trajectories) {
    for (const auto& ch : imus)
      if (!tr.imus.count(ch.name))
        throw DataError(source + ":/trajectories/" + tr.name + "/imu/" + ch.name + ": observation channel 'imus." +
                        ch.name + "' is not in the data (expected shape (T, 6): gyro xyz, accelerometer xyz)");
    auto require_matrix = [&](const RowMatrixXd& m, const JointForceChannel& ch, const char* dataset,
                              const char* channel, const char* unit) {
      if (ch.observed() && m.size() == 0)
        throw DataError(source + ":/trajectories/" + tr.name + "/" + dataset + ": observation channel '" + channel +
                        "' is not in the data (expected shape (T, nv), " + unit + ")");
    };
    require_matrix(tr.tau_measured, joint_torques, "tau_measured", "joint_torques", "N·m or N");
    require_matrix(tr.current, motor_currents, "current", "motor_currents", "A");
    for (const auto& ch : link_positions)
      require(tr, ch.data_name(), "link_positions", "x y z, then qx qy qz qw or NaN");
    for (const auto& ch : link_orientations) {
      require(tr, ch.link, "link_orientations", "x y z qx qy qz qw");
      const RowMatrixXd& pose = tr.link_poses.at(ch.link);
      for (Eigen::Index k = 0; k < pose.rows(); ++k) {
        const double norm = pose.row(k).segment<4>(3).norm();
        if (std::isnan(norm) || (norm >= 0.5 && norm <= 2)) continue;  // missing, or a quaternion
        std::ostringstream msg;
        msg << source << ":/trajectories/" << tr.name << "/link_poses/" << ch.link << ": row " << k
            << ": expected a unit quaternion in columns 3-6 (qx qy qz qw) for link_orientations, got norm " << norm;
        throw DataError(msg.str());
      }
    }
  }
}

ObservationSpec::Missing ObservationSpec::count_missing(const Model<double>& model, const TrajectorySet& data) const {
  Missing m;
  auto add = [&](const std::string& channel, long long entries, long long missing) {
    m.observed += entries;
    m.missing += missing;
    if (missing > 0) m.per_channel[channel] += missing;
  };
  const int joints = static_cast<int>(model.joints.size());
  for (const Trajectory& tr : data.trajectories)
    for (Eigen::Index k = 0; k < tr.size(); ++k) {
      for (int j = 0; j < joints; ++j) {
        const Joint<double>& joint = model.joints[j];
        if (q_weight > 0 && observes(0, j)) {
          bool missing = false;
          for (int c = 0; c < joint.nq; ++c) missing = missing || std::isnan(tr.q(k, joint.idx_q + c));
          add("q", joint.nv, missing ? joint.nv : 0);
        }
        if (qd_weight > 0 && observes(1, j))
          for (int c = 0; c < joint.nv; ++c) add("qd", 1, std::isnan(tr.qd(k, joint.idx_v + c)) ? 1 : 0);
      }
      for (const auto& ch : link_positions) {
        const auto pose = tr.link_poses.find(ch.data_name());
        if (pose == tr.link_poses.end()) continue;
        for (int c = 0; c < 3; ++c) add("link_positions." + ch.data_name(), 1, std::isnan(pose->second(k, c)) ? 1 : 0);
      }
      for (const auto& ch : link_orientations) {
        const auto pose = tr.link_poses.find(ch.link);
        if (pose == tr.link_poses.end()) continue;
        add("link_orientations." + ch.link, 3, pose->second.row(k).segment<4>(3).hasNaN() ? 3 : 0);
      }
      for (const auto& [ch, m, name] : {std::tuple<const JointForceChannel*, const RowMatrixXd*, const char*>{
                                            &joint_torques, &tr.tau_measured, "joint_torques"},
                                        {&motor_currents, &tr.current, "motor_currents"}}) {
        if (!ch->observed() || m->size() == 0) continue;
        for (const int j : ch->joints)
          add(name, 1, std::isnan((*m)(k, model.joints[static_cast<size_t>(j)].idx_v)) ? 1 : 0);
      }
      for (const auto& ch : imus) {
        const auto reading = tr.imus.find(ch.name);
        if (reading == tr.imus.end()) continue;
        for (int c = 0; c < 6; ++c) add("imus." + ch.name, 1, std::isnan(reading->second(k, c)) ? 1 : 0);
      }
    }
  return m;
}

std::string ObservationSpec::Missing::summary() const {
  std::ostringstream s;
  s << missing << " of " << observed << " observed entries are missing (NaN)";
  const char* separator = ": ";
  for (const auto& [channel, n] : per_channel) {
    s << separator << channel << " " << n;
    separator = ", ";
  }
  return s.str();
}

void check_complete_state(const Trajectory& tr, Eigen::Index sample, const std::string& source,
                          const std::string& why) {
  for (const auto& [name, m] : {std::pair<const char*, const RowMatrixXd*>{"q", &tr.q}, {"qd", &tr.qd}})
    for (Eigen::Index c = 0; c < m->cols(); ++c)
      if (std::isnan((*m)(sample, c)))
        throw DataError(source + ":/trajectories/" + tr.name + "/" + name + ": a missing sample (NaN) at row " +
                        std::to_string(sample) + ", column " + std::to_string(c) + ", where " + why +
                        " from the recorded state: expected a complete state there (move the start, or fill it)");
}

void check_complete_starts(const TrajectorySet& data, long long every, const std::string& source,
                           const std::string& why) {
  for (const Trajectory& tr : data.trajectories)
    for (Eigen::Index k = 0; k < tr.size(); k += std::max<long long>(1, every))
      check_complete_state(tr, k, source, why);
}

}  // namespace neuralsim
