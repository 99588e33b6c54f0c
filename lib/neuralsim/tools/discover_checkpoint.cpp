#include "neuralsim/tools/discover_checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/tools/checkpoint_json.hpp"

namespace neuralsim {
namespace discover_checkpoint_detail {

using nlohmann::json;
constexpr const char* kFormat = "neuralsim-discover-checkpoint";
constexpr int kVersion = 1;

json repetition_json(const DiscoverRepetition& r) {
  using namespace checkpoint_json;
  json points = json::array();
  for (const DiscoverPathPoint& p : r.points) {
    json norms = json::array();
    for (double v : p.norms) norms.push_back(number(v));
    points.push_back({{"lambda", number(p.lambda)},
                      {"train_loss", number(p.train_loss)},
                      {"validation_loss", number(p.validation_loss)},
                      {"validation_se", number(p.validation_se)},
                      {"selected_groups", p.selected_groups},
                      {"norms", norms}});
  }
  json selected = json::array();
  for (char c : r.selected) selected.push_back(c != 0);
  return {{"kind", r.kind},     {"index", r.index},   {"lambda_max", number(r.lambda_max)}, {"points", points},
          {"chosen", r.chosen}, {"selected", selected}, {"explained", number(r.explained)}};
}

DiscoverRepetition read_repetition(const json& j, const std::string& path, const std::string& where,
                                   const DiscoverCheckpointSpec& spec, bool complete) {
  using namespace checkpoint_json;
  if (!j.is_object()) bad(path, where + " must be an object");
  DiscoverRepetition r;
  const json& kind = member(j, "kind", path, where);
  if (!kind.is_string() || (kind != "seed" && kind != "bootstrap")) bad(path, where + ".kind must be seed or bootstrap");
  r.kind = kind.get<std::string>();
  r.index = static_cast<int>(integer(j, "index", path, where, 0, spec.repetitions));
  r.lambda_max = read_number(member(j, "lambda_max", path, where), path, where + ".lambda_max", true);
  const json& points = member(j, "points", path, where);
  if (!points.is_array() || points.size() > static_cast<std::size_t>(spec.max_points))
    bad(path, where + ".points must be a list of at most " + std::to_string(spec.max_points) + " points");
  for (std::size_t k = 0; k < points.size(); ++k) {
    const json& p = points[k];
    const std::string w = where + ".points[" + std::to_string(k) + "]";
    if (!p.is_object()) bad(path, w + " must be an object");
    DiscoverPathPoint pt;
    pt.lambda = read_number(member(p, "lambda", path, w), path, w + ".lambda", false);
    if (!(pt.lambda >= 0)) bad(path, w + ".lambda must be >= 0");
    pt.train_loss = read_number(member(p, "train_loss", path, w), path, w + ".train_loss", false);
    pt.validation_loss = read_number(member(p, "validation_loss", path, w), path, w + ".validation_loss", false);
    pt.validation_se = read_number(member(p, "validation_se", path, w), path, w + ".validation_se", false);
    pt.selected_groups = static_cast<int>(integer(p, "selected_groups", path, w, 0, spec.num_groups));
    const json& norms = member(p, "norms", path, w);
    if (!norms.is_array() || norms.size() != static_cast<std::size_t>(spec.num_groups))
      bad(path, w + ".norms must hold " + std::to_string(spec.num_groups) + " group norms");
    for (std::size_t g = 0; g < norms.size(); ++g) {
      const double v = read_number(norms[g], path, w + ".norms", true);
      if (v < 0) bad(path, w + ".norms must be >= 0");
      pt.norms.push_back(v);
    }
    r.points.push_back(std::move(pt));
  }
  r.chosen = static_cast<int>(integer(j, "chosen", path, where, complete ? 0 : -1,
                                      static_cast<long long>(r.points.size()) - 1));
  const json& selected = member(j, "selected", path, where);
  if (!selected.is_array() || (complete && selected.size() != static_cast<std::size_t>(spec.num_groups)))
    bad(path, where + ".selected must hold one flag per group");
  for (const json& s : selected) {
    if (!s.is_boolean()) bad(path, where + ".selected must hold true or false");
    r.selected.push_back(s.get<bool>() ? 1 : 0);
  }
  r.explained = read_number(member(j, "explained", path, where), path, where + ".explained", false);
  return r;
}

// What the writer writes.
std::string document(const DiscoverProgress& p, const DiscoverCheckpointSpec& spec) {
  using namespace checkpoint_json;
  json completed = json::array();
  for (const DiscoverRepetition& r : p.completed) completed.push_back(repetition_json(r));
  json j{{"format", kFormat},
         {"version", kVersion},
         {"fingerprint", spec.fingerprint},
         {"num_parameters", spec.num_parameters},
         {"num_groups", spec.num_groups},
         {"completed", completed},
         {"chosen_x", vector_json(p.chosen_x)}};
  if (p.partial) {
    j["partial"] = repetition_json(*p.partial);
    json xs = json::array();
    for (const Eigen::VectorXd& x : p.partial_x) xs.push_back(vector_json(x));
    j["partial_x"] = xs;
    j["partial_next_x"] = vector_json(p.partial_next_x);
  }
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

// The longest progress the writer can be handed for `spec` with
// `completed` repetitions and `n` parameters: every repetition (and one
// in progress besides) with the most points, every number and integer as
// long as the reader allows.
DiscoverProgress largest_progress(const DiscoverCheckpointSpec& spec, int completed, Eigen::Index n) {
  using checkpoint_json::kLongestNumber;
  DiscoverPathPoint point;
  point.lambda = point.train_loss = point.validation_loss = point.validation_se = kLongestNumber;
  point.selected_groups = spec.num_groups;
  point.norms.assign(static_cast<size_t>(spec.num_groups), kLongestNumber);
  DiscoverRepetition r;
  r.kind = "bootstrap";
  r.index = spec.repetitions;
  r.lambda_max = r.explained = kLongestNumber;
  r.points.assign(static_cast<size_t>(spec.max_points), point);
  r.chosen = -std::max(1, spec.max_points);  // as wide as -1 and as the last point
  r.selected.assign(static_cast<size_t>(spec.num_groups), 0);  // "false" is longer than "true"
  DiscoverProgress p;
  p.completed.assign(static_cast<size_t>(completed), r);
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(n, kLongestNumber);
  p.chosen_x = p.partial_next_x = x;
  p.partial = r;
  p.partial_x.assign(static_cast<size_t>(spec.max_points), x);
  return p;
}

double capacity(const DiscoverCheckpointSpec& spec) {
  const size_t none = document(largest_progress(spec, 0, 0), spec).size();
  const size_t one_repetition = document(largest_progress(spec, 1, 0), spec).size();
  const size_t one_parameter = document(largest_progress(spec, 0, 1), spec).size();
  return checkpoint_json::extrapolate(none, one_repetition, spec.repetitions) +
         checkpoint_json::extrapolate(none, one_parameter, static_cast<double>(spec.num_parameters)) -
         static_cast<double>(none);
}

}  // namespace discover_checkpoint_detail

void write_discover_checkpoint(CheckpointStore& store, const DiscoverProgress& p, const DiscoverCheckpointSpec& spec) {
  store.save(discover_checkpoint_detail::document(p, spec));
}

DiscoverProgress read_discover_checkpoint(const CheckpointStore& store, const DiscoverCheckpointSpec& spec) {
  using namespace discover_checkpoint_detail;
  using namespace checkpoint_json;
  const std::string path = store.name();
  json j = read_document(store, kFormat, kVersion, capacity(spec),
                         "a checkpoint of " + std::to_string(spec.repetitions) + " repetitions of " +
                             std::to_string(spec.max_points) + " points");
  check_fingerprint(j, spec.fingerprint, path);
  if (integer(j, "num_parameters", path, "checkpoint", 0, 1LL << 40) != spec.num_parameters ||
      integer(j, "num_groups", path, "checkpoint", 0, 1LL << 30) != spec.num_groups)
    throw ConfigError(path + ": checkpoint was written for other candidates (parameters or groups differ); use "
                             "another --out or run without --resume");
  DiscoverProgress p;
  const json& completed = member(j, "completed", path, "checkpoint");
  if (!completed.is_array() || completed.size() > static_cast<std::size_t>(spec.repetitions))
    bad(path, "completed must be a list of at most " + std::to_string(spec.repetitions) + " repetitions");
  for (std::size_t r = 0; r < completed.size(); ++r)
    p.completed.push_back(read_repetition(completed[r], path, "completed[" + std::to_string(r) + "]", spec, true));
  p.chosen_x = read_vector(j, "chosen_x", spec.num_parameters, true, path);
  if (!p.completed.empty() && p.chosen_x.size() == 0) bad(path, "chosen_x is missing after repetition 0");
  if (j.contains("partial")) {
    if (p.completed.size() >= static_cast<std::size_t>(spec.repetitions))
      bad(path, "a repetition in progress after the last one");
    p.partial = read_repetition(j["partial"], path, "partial", spec, false);
    if (p.partial->points.empty()) bad(path, "partial holds no point");
    const json& xs = member(j, "partial_x", path, "checkpoint");
    if (!xs.is_array() || xs.size() != p.partial->points.size())
      bad(path, "partial_x must hold the parameters of each of partial's " + std::to_string(p.partial->points.size()) +
                    " points");
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const json one{{"x", xs[k]}};
      p.partial_x.push_back(read_vector(one, "x", spec.num_parameters, false, path));
    }
    p.partial_next_x = read_vector(j, "partial_next_x", spec.num_parameters, false, path);
  }
  return p;
}

}  // namespace neuralsim
