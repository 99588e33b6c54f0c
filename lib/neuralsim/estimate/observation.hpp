// What an estimator compares between simulation and data, with weights.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

struct LinkPositionChannel {
  std::string link;
  int body = -1;
  double weight = 1;
};

struct ObservationSpec {
  double q_weight = 1;   // per joint-position residual (tangent space for quaternions)
  double qd_weight = 0;  // per joint-velocity residual
  // Sensor latency of the joint channels in seconds (finite, >= 0): the
  // sample at t_k holds the model's q (q̇) at t_k − delay, interpolated
  // between simulated samples by a cubic Hermite in (q, q̇) (residual
  // formulations: estimate/residual_common.hpp). A fitted observe.q.delay /
  // observe.qd.delay replaces it.
  double q_delay = 0, qd_delay = 0;
  std::vector<LinkPositionChannel> link_positions;  // world position of a link origin vs. data link_poses

  int residuals_per_sample(const Model<double>& model) const {
    return (q_weight > 0 ? model.nv : 0) + (qd_weight > 0 ? model.nv : 0) +
           3 * static_cast<int>(link_positions.size());
  }

  // Throws DataError when a trajectory lacks a channel this spec compares.
  void check_available(const TrajectorySet& data, const std::string& source) const;
};

}  // namespace neuralsim
