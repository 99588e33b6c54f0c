#include "neuralsim/experiment/configurations.hpp"

#include <algorithm>
#include <cmath>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/experiment/estimation_config.hpp"

namespace neuralsim {

std::vector<ConfigurationEntry> read_configurations(const Config& root) {
  std::vector<ConfigurationEntry> out;
  if (!root.has("configurations")) return out;
  if (root.has("data"))
    root.fail("data", "with 'configurations:' each configuration gives its own data (configurations.<i>.data)");
  const std::vector<Config> items = root.list("configurations");
  if (items.size() < 2)
    root.fail("configurations", "expected at least two configurations, got " + std::to_string(items.size()) +
                                    " (one configuration: give its model, params and data at the top level)");
  for (const Config& item : items) {
    item.check_known_keys({"name", "model", "contact", "params", "params_file", "data"});
    const std::string name = item.get<std::string>("name");
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    });
    if (!plain) item.fail("name", "expected a plain name of letters, digits, '_' and '-' (it prefixes the "
                                  "configuration's trajectory names), got '" + name + "'");
    for (const ConfigurationEntry& e : out)
      if (e.name == name) item.fail("name", "configuration '" + name + "' is named twice");
    if (!item.has("data")) item.fail("data", "missing: every configuration gives its own data");
    if (item.has("params") && !item.is_map("params")) item.fail("params", "expected a map of parameter names to numbers");
    out.push_back({name, root.with_entries_of(item, {"params"})});
  }
  return out;
}

JointParameters joint_parameters(const Config& est, const std::vector<ConfigurationEntry>& configurations,
                                 const std::vector<const ParameterSet*>& local, std::vector<std::string>* warnings) {
  std::vector<std::string> all;
  for (const ConfigurationEntry& c : configurations) all.push_back(c.name);
  const size_t C = configurations.size();
  JointParameters out;
  out.columns.resize(C);
  std::vector<EstimatedParameter> joint;
  std::vector<size_t> cursor(C, 0);  // the next entry of each configuration's own set
  const std::vector<Config> items = est.list("parameters");
  for (const Config& item : items) {
    const std::vector<std::string> applies = entry_configurations(item, all);
    const bool per_configuration = item.get_or<bool>("per_configuration", false);
    const bool inertial = item.get_or<std::string>("transform", "identity") == "log_cholesky";
    const size_t count = inertial ? 10 : 1;  // a log-Cholesky block: ten coordinates (read_parameter_set)
    size_t shared_first = joint.size();
    bool first = true;
    for (size_t c = 0; c < C; ++c) {
      if (std::find(applies.begin(), applies.end(), configurations[c].name) == applies.end()) continue;
      const ParameterSet& set = *local[c];
      for (size_t k = 0; k < count; ++k) {
        const EstimatedParameter& p = set[static_cast<int>(cursor[c] + k)];
        if (per_configuration || first) {
          EstimatedParameter q = p;
          if (per_configuration) q.target.name += "@" + configurations[c].name;
          for (const EstimatedParameter& other : joint)
            if (other.name() == q.name())
              item.fail("name", "parameter '" + q.name() + "' is listed twice in the joint fit");
          out.columns[c].push_back(static_cast<int>(joint.size()));
          out.shared.push_back(1);
          joint.push_back(q);
        } else {
          const size_t j = shared_first + k;
          out.columns[c].push_back(static_cast<int>(j));
          ++out.shared[j];
          if (warnings && std::abs(p.initial - joint[j].initial) > 1e-12 * std::max(1.0, std::abs(p.initial)))
            warnings->push_back(item.where("name") + ": shared parameter '" + p.name() + "' starts at " +
                                format_number(joint[j].initial) + " (configuration '" + applies.front() +
                                "'), and configuration '" + configurations[c].name + "' holds " +
                                format_number(p.initial) + ": the fit starts from the first");
        }
      }
      cursor[c] += count;
      first = false;
    }
  }
  for (size_t c = 0; c < C; ++c)
    if (out.columns[c].empty())
      est.fail("parameters", "configuration '" + configurations[c].name + "' has no parameter to fit: list it in an "
                             "entry's configurations or drop it");
  if (std::none_of(out.shared.begin(), out.shared.end(), [](int n) { return n > 1; }))
    est.fail("parameters", "the configurations share no parameter, so a joint fit is " + std::to_string(C) +
                           " separate fits: fit them one at a time, or share a parameter (an entry without "
                           "per_configuration that applies to several configurations)");
  try {
    out.joint = ParameterSet(joint);
  } catch (const InvalidArgument& e) {
    est.fail("parameters", e.what());
  }
  return out;
}

}  // namespace neuralsim
