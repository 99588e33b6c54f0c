#include "neuralsim/estimate/observation.hpp"

#include "neuralsim/io/errors.hpp"

namespace neuralsim {

ObservationSpec ObservationSpec::from_config(const Config& c, const Model<double>& model) {
  c.check_known_keys({"q", "qd", "link_positions"});
  ObservationSpec spec;
  spec.q_weight = c.get_or<double>("q", 1.0);
  spec.qd_weight = c.get_or<double>("qd", 0.0);
  if (spec.q_weight < 0 || spec.qd_weight < 0) throw ConfigError(c.where("") + ": observation weights must be >= 0");
  if (c.has("link_positions")) {
    for (const Config& l : c.list("link_positions")) {
      LinkPositionChannel ch;
      ch.link = l.get<std::string>("link");
      ch.body = model.body_index(ch.link);
      if (ch.body < 0) throw ConfigError(l.where("link") + ": unknown link '" + ch.link + "'");
      ch.weight = l.get_or<double>("weight", 1.0);
      spec.link_positions.push_back(ch);
    }
  }
  if (spec.residuals_per_sample(model) == 0)
    throw ConfigError(c.where("") + ": nothing is observed (all weights are zero)");
  return spec;
}

void ObservationSpec::check_available(const TrajectorySet& data, const std::string& source) const {
  for (const Trajectory& tr : data.trajectories)
    for (const auto& ch : link_positions)
      if (!tr.link_poses.count(ch.link))
        throw DataError(source + ":/trajectories/" + tr.name + "/link_poses/" + ch.link +
                        ": observation channel 'link_positions." + ch.link +
                        "' is not in the data (expected shape (T, 7))");
}

}  // namespace neuralsim
