#include "neuralsim/estimate/observation.hpp"

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

void ObservationSpec::check_available(const TrajectorySet& data, const std::string& source) const {
  for (const Trajectory& tr : data.trajectories)
    for (const auto& ch : link_positions)
      if (!tr.link_poses.count(ch.link))
        throw DataError(source + ":/trajectories/" + tr.name + "/link_poses/" + ch.link +
                        ": observation channel 'link_positions." + ch.link +
                        "' is not in the data (expected shape (T, 7))");
}

}  // namespace neuralsim
