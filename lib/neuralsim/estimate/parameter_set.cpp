#include "neuralsim/estimate/parameter_set.hpp"

#include <cmath>

#include "neuralsim/io/errors.hpp"

namespace neuralsim {

namespace {

constexpr const char* kInitialVelocityPrefix = "initial.qd.";

// Resolves `name` to a model, contact or initial-velocity parameter and
// returns its current value (the default initial value).
double resolve(const std::string& name, const Model<double>& model, const ContactParameters<double>* contact,
               EstimatedParameter& p) {
  if (name.rfind("contact.", 0) == 0) {
    if (!contact)
      throw ConfigError("parameter '" + name + "' is a contact parameter, but the experiment has no 'contact:' section");
    p.kind = ParameterKind::kContact;
    p.contact = resolve_contact_parameter(name);
    return get_contact_parameter(*contact, p.contact);
  }
  if (name.rfind("initial.", 0) == 0) {
    const std::vector<std::string> coords = model.velocity_names();
    const std::string coord = name.rfind(kInitialVelocityPrefix, 0) == 0 ? name.substr(11) : "";
    for (size_t i = 0; i < coords.size(); ++i)
      if (coords[i] == coord) {
        p.kind = ParameterKind::kInitialVelocity;
        p.velocity_index = static_cast<int>(i);
        return 0.0;
      }
    std::string list;
    for (const auto& c : coords) list += (list.empty() ? "" : ", ") + std::string(kInitialVelocityPrefix) + c;
    throw ConfigError("unknown initial-state parameter '" + name + "' (valid: " + list + ")");
  }
  p.kind = ParameterKind::kModel;
  try {
    p.ref = resolve_parameter(model, name);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) + "; also estimable: initial.qd.<velocity coordinate>" +
                      (contact ? ", contact.<parameter>" : ""));
  }
  return get_parameter(model, p.ref);
}

}  // namespace

ParameterSet ParameterSet::from_config(const Config& owner, const std::string& key, const Model<double>& model,
                                       const ContactParameters<double>* contact) {
  ParameterSet set;
  const std::vector<Config> items = owner.list(key);
  if (items.empty()) throw ConfigError(owner.where(key) + ": key '" + key + "': no parameters to estimate");
  for (const Config& c : items) {
    c.check_known_keys({"name", "initial", "range", "bounds", "scale", "transform"});
    EstimatedParameter p;
    p.name = c.get<std::string>("name");
    double current = 0;
    try {
      current = resolve(p.name, model, contact, p);
    } catch (const ConfigError& e) {
      throw ConfigError(c.where("name") + ": " + e.what());
    }
    for (const auto& other : set.params_)
      if (other.name == p.name) throw ConfigError(c.where("name") + ": parameter '" + p.name + "' listed twice");
    const std::string where = c.where("") + ": parameter '" + p.name + "': ";
    if (c.has("bounds")) {
      const std::vector<double> b = c.get<std::vector<double>>("bounds");
      if (b.size() != 2) throw ConfigError(where + "bounds must be [lower, upper]");
      p.lower = b[0];
      p.upper = b[1];
      if (std::isnan(p.lower) || std::isnan(p.upper)) throw ConfigError(where + "bounds must not be NaN");
      if (!(p.lower < p.upper))
        throw ConfigError(where + "bounds are inverted or empty: [" + std::to_string(p.lower) + ", " +
                          std::to_string(p.upper) + "]");
    }
    if (c.has("range")) {
      const std::vector<double> r = c.get<std::vector<double>>("range");
      if (r.size() != 2 || !(r[0] < r[1]) || !std::isfinite(r[0]) || !std::isfinite(r[1]))
        throw ConfigError(where + "range must be finite [low, high] with low < high");
      p.range_low = r[0];
      p.range_high = r[1];
    } else if (std::isfinite(p.lower) && std::isfinite(p.upper)) {
      p.range_low = p.lower;
      p.range_high = p.upper;
    }
    p.transformation = transformation_from_name(c.get_or("transform", "identity"));
    if (p.transformation == Transformation::kLog && p.lower < 0)
      throw ConfigError(where + "a log transform needs a positive lower bound");
    if (p.transformation == Transformation::kLog && !(p.lower > 0)) p.lower = 0;
    p.scale = c.get_or<double>("scale", 1.0);
    if (!(p.scale > 0) || !std::isfinite(p.scale)) throw ConfigError(where + "scale must be > 0");
    if (c.has("initial")) {
      p.initial = c.get<double>("initial");
    } else if (!std::isnan(p.range_low)) {
      p.initial = 0.5 * (p.range_low + p.range_high);
    } else {
      p.initial = current;  // the model's (or contact system's) own value
    }
    if (!(p.initial >= p.lower && p.initial <= p.upper))
      throw ConfigError(where + "initial value " + std::to_string(p.initial) + " is outside the bounds");
    if (p.transformation == Transformation::kLog && !(p.initial > 0))
      throw ConfigError(where + "a log transform needs a positive initial value");
    set.params_.push_back(p);
  }
  return set;
}

std::vector<std::string> ParameterSet::names() const {
  std::vector<std::string> n;
  for (const auto& p : params_) n.push_back(p.name);
  return n;
}

double ParameterSet::variable_lower(int i) const {
  const auto& p = params_[i];
  if (p.transformation == Transformation::kLog)
    return p.lower > 0 ? std::log(p.lower) / p.scale : -std::numeric_limits<double>::infinity();
  return p.lower / p.scale;
}

double ParameterSet::variable_upper(int i) const {
  const auto& p = params_[i];
  if (p.transformation == Transformation::kLog)
    return std::isfinite(p.upper) ? std::log(p.upper) / p.scale : std::numeric_limits<double>::infinity();
  return p.upper / p.scale;
}

std::vector<double> ParameterSet::initial_variables() const {
  std::vector<double> x(size());
  for (int i = 0; i < size(); ++i) x[i] = variable(i, params_[i].initial);
  return x;
}

}  // namespace neuralsim
