#include "neuralsim/experiment/estimation_config.hpp"

#include <cmath>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The ten log-Cholesky entries of `link.<body>.inertial`, starting at the
// link's current (physical) inertia.
void add_log_cholesky_block(const Config& c, const std::string& name, const Model<double>& model,
                            std::vector<EstimatedParameter>& out) {
  c.check_known_keys({"name", "transform"});
  const std::string body_name = name.substr(5, name.size() - 5 - std::string(".inertial").size());
  const int body = model.body_index(body_name);
  if (body < 0) c.fail("name", "no link named '" + body_name + "'");
  if (!(model.bodies[body].inertia.mass > 0)) c.fail("name", "link '" + body_name + "' has no mass to start from");
  Eigen::Matrix<double, 10, 1> theta;
  try {
    theta = log_cholesky_from_inertia(model.bodies[body].inertia, "link '" + body_name + "'");
  } catch (const ModelError& e) {
    c.fail("name", e.what());
  }
  for (int k = 0; k < 10; ++k) {
    const std::string coord = "link." + body_name + ".log_cholesky." + log_cholesky_coordinate_names()[k];
    EstimatedParameter p;
    p.target = *resolve_named_parameter(coord, model, false);
    p.transformation = Transformation::kLogCholesky;
    p.initial = theta[k];
    out.push_back(p);
  }
}

}  // namespace

ParameterSet read_parameter_set(const Config& owner, const std::string& key, const Model<double>& model,
                                const ContactParameters<double>* contact) {
  std::vector<EstimatedParameter> params;
  const std::vector<Config> items = owner.list(key);
  if (items.empty()) owner.fail(key, "no parameters to estimate");
  for (const Config& c : items) {
    c.check_known_keys({"name", "initial", "range", "bounds", "scale", "transform"});
    const std::string name = c.get<std::string>("name");
    for (const auto& other : params)
      if (other.name() == name) c.fail("name", "parameter '" + name + "' listed twice");
    const std::string transform = c.get_choice("transform", {"identity", "log", "log_cholesky"}, "identity");
    const bool inertial = name.rfind("link.", 0) == 0 && name.size() > 14 &&
                          name.compare(name.size() - 9, 9, ".inertial") == 0;
    if (inertial != (transform == "log_cholesky"))
      c.fail("transform", "the log_cholesky transform and a 'link.<body>.inertial' name go together");
    if (inertial) {
      add_log_cholesky_block(c, name, model, params);
      continue;
    }
    const auto target = resolve_named_parameter(name, model, contact != nullptr);
    if (!target || target->kind == ParameterKind::kLogCholesky)
      c.fail("name", target ? "estimate a log-Cholesky block as 'link.<body>.inertial' with transform log_cholesky"
                            : unknown_parameter_message(name, model, contact != nullptr));
    EstimatedParameter p;
    p.target = *target;
    p.transformation = transform == "log" ? Transformation::kLog : Transformation::kIdentity;
    if (c.has("bounds")) {
      if (!c.is_list("bounds") || c.list("bounds").size() != 2) c.fail("bounds", "expected [lower, upper]");
      p.lower = c.get_limit("bounds.0", 0);
      p.upper = c.get_limit("bounds.1", 0);
      if (!(p.lower < p.upper)) c.fail("bounds", "are inverted or empty: [" + number(p.lower) + ", " + number(p.upper) + "]");
    }
    if (c.has("range")) {
      const std::vector<double> r = c.get<std::vector<double>>("range");
      if (r.size() != 2 || !(r[0] < r[1])) c.fail("range", "expected finite [low, high] with low < high");
      p.range_low = r[0];
      p.range_high = r[1];
    } else if (std::isfinite(p.lower) && std::isfinite(p.upper)) {
      p.range_low = p.lower;
      p.range_high = p.upper;
    }
    if (p.transformation == Transformation::kLog) {
      if (p.lower < 0) c.fail("bounds", "a log transform needs a lower bound >= 0, got " + number(p.lower));
      p.lower = std::max(p.lower, 0.0);
    }
    p.scale = c.get_or<double>("scale", 1.0);
    if (!(p.scale > 0)) c.fail("scale", "must be > 0, got " + number(p.scale));
    if (c.has("initial")) {
      p.initial = c.get<double>("initial");
    } else if (!std::isnan(p.range_low)) {
      p.initial = 0.5 * (p.range_low + p.range_high);
    } else {
      p.initial = named_parameter_value(p.target, model, contact, nullptr);  // the model's own value
    }
    const std::string initial_key = c.has("initial") ? "initial" : "name";
    if (!(p.initial >= p.lower && p.initial <= p.upper))
      c.fail(initial_key, "initial value " + number(p.initial) + " is outside the bounds [" + number(p.lower) + ", " +
                              number(p.upper) + "]");
    if (p.transformation == Transformation::kLog && !(p.initial > 0))
      c.fail(initial_key, "a log transform needs a positive initial value, got " + number(p.initial));
    params.push_back(p);
  }
  try {
    return ParameterSet(std::move(params));
  } catch (const InvalidArgument& e) {
    owner.fail(key, e.what());  // the checks above catch every case first
  }
}

ObservationSpec read_observation(const Config& c, const Model<double>& model) {
  c.check_known_keys({"q", "qd", "link_positions"});
  ObservationSpec spec;
  spec.q_weight = c.get_in_range("q", 1.0, 0, 1e12);
  spec.qd_weight = c.get_in_range("qd", 0.0, 0, 1e12);
  if (c.has("link_positions")) {
    for (const Config& l : c.list("link_positions")) {
      l.check_known_keys({"link", "weight"});
      LinkPositionChannel ch;
      ch.link = l.get<std::string>("link");
      ch.body = model.body_index(ch.link);
      if (ch.body < 0) l.fail("link", "unknown link '" + ch.link + "'");
      ch.weight = l.get_in_range("weight", 1.0, 0, 1e12);
      spec.link_positions.push_back(ch);
    }
  }
  if (spec.residuals_per_sample(model) == 0) c.fail("", "nothing is observed (all weights are zero)");
  return spec;
}

}  // namespace neuralsim
