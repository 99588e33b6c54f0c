#include "neuralsim/tools/identify_checkpoint.hpp"

#include <cmath>
#include <limits>

#include "neuralsim/tools/checkpoint_json.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;
constexpr const char* kSimidFormat = "neuralsim-simid-checkpoint";
constexpr int kSimidVersion = 2;

int small_integer(const json& j, const char* key, const std::string& path, const std::string& where, int lo, int hi) {
  using namespace checkpoint_json;  // function scope: the file is also compiled in unity batches
  return static_cast<int>(integer(j, key, path, where, lo, hi));
}

// What the writer writes.
std::string simid_document(const BasinHoppingState& s, const ParameterSet& params, const Fingerprint& fingerprint);

// The longest state the writer can be handed: `rounds` rounds of history and
// a best result of `max_iterations` iterations and `num_states` nuisance
// states, every number as long as a double's text gets, every integer as
// wide as the reader allows, and room for Ceres's one-line report
// (BriefReport: about 130 characters; 1024 allowed).
BasinHoppingState largest_simid_state(const ParameterSet& params, int rounds, int max_iterations, int num_states) {
  using checkpoint_json::kLongestNumber;
  BasinHoppingState s;
  s.next_round = -(1 << 30);
  s.has_best = true;
  s.best.x.assign(static_cast<size_t>(params.size()), kLongestNumber);
  s.best.states.assign(static_cast<size_t>(num_states), kLongestNumber);
  s.best.cost = s.best.initial_cost = s.best.seconds = kLongestNumber;
  s.best.iterations = s.best.continuity.rounds = -(1 << 30);
  s.best.cost_history.assign(static_cast<size_t>(max_iterations) + 1, kLongestNumber);
  s.best.usable = false;
  s.best.report.assign(1024, '~');
  RoundRecord r;
  r.round = r.usable_solves = -(1 << 30);
  r.best_cost = r.round_best_cost = r.spread = r.seconds = kLongestNumber;
  s.history.assign(static_cast<size_t>(rounds), r);
  return s;
}

// The largest checkpoint the writer writes for `params`, `max_rounds`,
// `max_iterations` and `num_states`.
double simid_capacity(const ParameterSet& params, const Fingerprint& fingerprint, int max_rounds, int max_iterations,
                      int num_states) {
  const size_t none =
      simid_document(largest_simid_state(params, 0, max_iterations, num_states), params, fingerprint).size();
  const size_t one =
      simid_document(largest_simid_state(params, 1, max_iterations, num_states), params, fingerprint).size();
  return checkpoint_json::extrapolate(none, one, max_rounds);
}

}  // namespace

json local_result_json(const LocalResult& r) {
  return {{"x", r.x}, {"cost", r.cost}, {"initial_cost", r.initial_cost}, {"iterations", r.iterations},
          {"cost_history", r.cost_history}, {"usable", r.usable}, {"report", r.report}, {"seconds", r.seconds},
          {"continuity_rounds", r.continuity.rounds}};
}

json history_json(const std::vector<RoundRecord>& history) {
  json h = json::array();
  for (const auto& r : history)
    h.push_back({{"round", r.round}, {"best_cost", r.best_cost}, {"round_best_cost", r.round_best_cost},
                 {"spread", r.spread}, {"usable_solves", r.usable_solves}, {"seconds", r.seconds}});
  return h;
}

namespace {

std::string simid_document(const BasinHoppingState& s, const ParameterSet& params, const Fingerprint& fingerprint) {
  json j{{"format", kSimidFormat}, {"version", kSimidVersion}, {"next_round", s.next_round}, {"has_best", s.has_best},
         {"parameter_names", params.names()}, {"fingerprint", fingerprint}, {"history", history_json(s.history)}};
  if (s.has_best) j["best"] = local_result_json(s.best);
  if (s.has_best && !s.best.states.empty()) j["best"]["states"] = s.best.states;
  // Costs of unusable solves may be inf; JSON has no inf, so keep them out.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

void write_identify_checkpoint(CheckpointStore& store, const BasinHoppingState& s, const ParameterSet& params,
                            const Fingerprint& fingerprint) {
  store.save(simid_document(s, params, fingerprint));
}

BasinHoppingState read_identify_checkpoint(const CheckpointStore& store, const ParameterSet& params,
                                           const Fingerprint& fingerprint, int max_rounds, int max_iterations,
                                           int num_states) {
  using namespace checkpoint_json;  // function scope: the file is also compiled in unity batches
  const std::string path = store.name();
  json j = read_document(store, kSimidFormat, kSimidVersion,
                         simid_capacity(params, fingerprint, max_rounds, max_iterations, num_states),
                         "a simid checkpoint of " + std::to_string(params.size()) + " parameters and " +
                             std::to_string(max_rounds) + " rounds");
  if (!j.contains("parameter_names") || !j["parameter_names"].is_array() ||
      j["parameter_names"] != json(params.names()))
    throw ConfigError(path + ": checkpoint was written for other parameters (" +
                      (j.contains("parameter_names") ? j["parameter_names"].dump() : std::string("none")) +
                      "); use another --out or run without --resume");
  check_fingerprint(j, fingerprint, path);
  BasinHoppingState s;
  s.next_round = small_integer(j, "next_round", path, "checkpoint", 0, max_rounds);
  if (!j.contains("has_best") || !j["has_best"].is_boolean()) bad(path, "has_best must be true or false");
  s.has_best = j["has_best"].get<bool>();
  if (s.has_best) {
    const json& b = j.contains("best") ? j["best"] : json();
    if (!b.is_object() || !b.contains("x") || !b["x"].is_array() || b["x"].size() != static_cast<size_t>(params.size()))
      bad(path, "best.x must hold " + std::to_string(params.size()) + " numbers");
    for (int i = 0; i < params.size(); ++i) {
      if (!b["x"][i].is_number()) bad(path, "best.x[" + std::to_string(i) + "] must be a number");
      const double x = b["x"][i].get<double>();
      if (!std::isfinite(x) || x < params.variable_lower(i) || x > params.variable_upper(i))
        bad(path, "best.x[" + std::to_string(i) + "] = " + std::to_string(x) + " (" + params[i].name() +
                      ") is not finite or outside its bounds");
      s.best.x.push_back(x);
    }
    if (num_states > 0) {
      if (!b.contains("states") || !b["states"].is_array() || b["states"].size() != static_cast<size_t>(num_states))
        bad(path, "best.states must hold " + std::to_string(num_states) + " numbers (the fit's nuisance states)");
      for (size_t k = 0; k < b["states"].size(); ++k) {
        const json& v = b["states"][k];
        if (!v.is_number() || !std::isfinite(v.get<double>()))
          bad(path, "best.states[" + std::to_string(k) + "] must be a finite number");
        s.best.states.push_back(v.get<double>());
      }
    }
    s.best.cost = finite_number(b, "cost", path, "best");
    s.best.initial_cost = b.contains("initial_cost") && b["initial_cost"].is_number() ? b["initial_cost"].get<double>() : s.best.cost;
    s.best.iterations = b.contains("iterations") && b["iterations"].is_number_integer() ? b["iterations"].get<int>() : 0;
    // The convergence trace (absent in checkpoints of earlier versions).
    if (b.contains("cost_history")) {
      const json& h = b["cost_history"];
      if (!h.is_array() || h.size() > static_cast<size_t>(max_iterations) + 1)
        bad(path, "best.cost_history must hold at most " + std::to_string(max_iterations + 1) + " numbers");
      for (size_t k = 0; k < h.size(); ++k) {
        if (!h[k].is_number()) bad(path, "best.cost_history[" + std::to_string(k) + "] must be a number");
        s.best.cost_history.push_back(h[k].get<double>());
      }
    }
    // Multiple shooting's penalty rounds: the analysis weighs the joints as
    // the solve ended (factor 10^rounds; absent in earlier versions: 0).
    if (b.contains("continuity_rounds")) {
      s.best.continuity.rounds = small_integer(b, "continuity_rounds", path, "best", 0, 22);
      for (int k = 0; k < s.best.continuity.rounds; ++k) s.best.continuity.factor *= 10;
    }
    s.best.usable = true;
    s.best.report = b.contains("report") && b["report"].is_string() ? b["report"].get<std::string>() : "";
  }
  if (!j.contains("history") || !j["history"].is_array() || j["history"].size() != static_cast<size_t>(s.next_round))
    bad(path, "history must hold one entry per completed round (" + std::to_string(s.next_round) + ")");
  for (size_t k = 0; k < j["history"].size(); ++k) {
    const json& r = j["history"][k];
    const std::string where = "history[" + std::to_string(k) + "]";
    RoundRecord rec;
    rec.round = small_integer(r, "round", path, where, static_cast<int>(k), static_cast<int>(k));
    rec.best_cost = r.contains("best_cost") && r["best_cost"].is_number() ? r["best_cost"].get<double>()
                                                                          : std::numeric_limits<double>::infinity();
    rec.round_best_cost = r.contains("round_best_cost") && r["round_best_cost"].is_number()
                              ? r["round_best_cost"].get<double>()
                              : rec.best_cost;
    rec.spread = finite_number(r, "spread", path, where);
    rec.usable_solves = small_integer(r, "usable_solves", path, where, 0, 1 << 30);
    rec.seconds = finite_number(r, "seconds", path, where);
    s.history.push_back(rec);
  }
  return s;
}

}  // namespace neuralsim
