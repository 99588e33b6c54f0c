#include "discover/discover_job.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/evaluation_json.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/tools/discover.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;

json number_or_string(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? json("never") : json(v > 0 ? "inf" : "-inf");
}

json groups_json(const DiscoverResult& r) {
  json out = json::array();
  for (const DiscoverGroup& g : r.groups) {
    json j{{"site", r.sites[static_cast<std::size_t>(g.site)]},
           {"label", g.label},
           {"norm", g.norm},
           {"validation_loss_increase_when_removed", g.removal_increase},
           {"entry_lambda", number_or_string(g.entry_lambda)},
           {"entry_rank", g.entry_rank},
           {"selection_frequency", g.frequency},
           {"selected", g.selected}};
    if (g.input.empty()) {
      j["group"] = "output";
    } else {
      j["group"] = "input";
      j["input"] = g.input;
      if (g.value >= 0) j["value"] = g.value;
    }
    out.push_back(j);
  }
  return out;
}

json selected_labels(const DiscoverRepetition& rep, const DiscoverResult& r) {
  json out = json::array();
  for (std::size_t i = 0; i < rep.selected.size(); ++i)
    if (rep.selected[i]) out.push_back(r.groups[i].label);
  return out;
}

json path_json(const DiscoverRepetition& rep, bool with_norms, const DiscoverResult& r) {
  json points = json::array();
  for (const DiscoverPathPoint& p : rep.points) {
    json j{{"lambda", number_or_string(p.lambda)},
           {"train_loss", finite_or_null(p.train_loss)},
           {"validation_loss", finite_or_null(p.validation_loss)},
           {"selected_groups", p.selected_groups}};
    if (with_norms) j["group_norms"] = p.norms;
    points.push_back(j);
  }
  return {{"kind", rep.kind},
          {"index", rep.index},
          {"lambda_max", rep.lambda_max},
          {"chosen_point", rep.chosen},
          {"chosen_lambda", number_or_string(rep.points[static_cast<std::size_t>(rep.chosen)].lambda)},
          {"explained", rep.explained},
          {"selected", selected_labels(rep, r)},
          {"points", points}};
}

// Sites, then their inputs, by importance: one line each.
std::string table(const DiscoverResult& r) {
  std::ostringstream s;
  s << "discover: " << r.verdict << "\n\n";
  s << format_printf("%-58s %9s %9s %9s %6s %5s %s\n", "group", "norm", "removal", "entry_l", "rank", "freq",
                     "selected");
  std::vector<std::size_t> order(r.groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const DiscoverGroup &x = r.groups[a], &y = r.groups[b];
    if (x.site != y.site) return x.site < y.site;
    if (x.input.empty() != y.input.empty()) return x.input.empty();
    return x.frequency != y.frequency ? x.frequency > y.frequency : x.norm > y.norm;
  });
  for (std::size_t i : order) {
    const DiscoverGroup& g = r.groups[i];
    const std::string entry = std::isnan(g.entry_lambda) ? "never" : format_printf("%.3g", g.entry_lambda);
    s << format_printf("%-58s %9.3g %+8.1f%% %9s %6d %5.2f %s\n", g.label.c_str(), g.norm,
                       100.0 * g.removal_increase, entry.c_str(), g.entry_rank, g.frequency,
                       g.selected ? "yes" : "");
  }
  s << "\nnorm: group norm at the chosen penalty (repetition 0); removal: change of the validation loss when the\n"
       "group is zeroed there; entry_l: largest penalty of the path where it is selected; freq: selection\n"
       "frequency over "
    << r.repetitions.size() << " repetitions.\n";
  return s.str();
}

void metrics(const DiscoverResult& r, json& m) {
  m["verdict"] = r.verdict;
  m["explained_by_candidates"] = r.explained_by_candidates;
  m["explained_fraction"] = r.explained;
  m["num_candidate_sites"] = r.sites.size();
  m["num_groups"] = r.groups.size();
  m["num_network_weights"] = r.num_parameters;
  m["repetitions_completed"] = r.repetitions.size();
  m["repetitions_planned"] = r.planned_repetitions;
  m["num_train_trajectories"] = r.num_train_trajectories;
  m["num_validation_trajectories"] = r.num_validation_trajectories;
  m["validation_loss"] = {{"analytical", finite_or_null(r.analytical_validation_loss)},
                          {"dense_candidates", finite_or_null(r.dense_validation_loss)},
                          {"chosen", finite_or_null(r.chosen_validation_loss)}};
  if (r.retrained_validation_loss) m["validation_loss"]["retrained_pruned"] = finite_or_null(*r.retrained_validation_loss);
  m["chosen_lambda"] = number_or_string(r.chosen_lambda);
  json sites = json::array(), inputs = json::array();
  for (const AugmentBlueprint& bp : r.pruned) {
    sites.push_back(bp.name);
    for (const AugmentInput& in : bp.inputs) inputs.push_back(bp.name + " <- " + in.name);
  }
  m["selected_sites"] = sites;
  m["selected_inputs"] = inputs;
  if (r.analytical_rollouts && r.retrained_rollouts)
    m["validation_rollout_rmse_q"] = {{"analytical", finite_or_null(r.analytical_rollouts->mean_rmse_q)},
                                      {"retrained_pruned", finite_or_null(r.retrained_rollouts->mean_rmse_q)}};
  // data.test: the retrained pruned model, scored once, with the reference rows.
  m["num_test_trajectories"] = r.num_test_trajectories;
  if (r.test) m["test"] = held_out_json(*r.test, r.test_reference);
}

}  // namespace

RunReport run_discover(ToolRun& run) {
  DiscoverResult r = discover({run.config(), run.options().seed}, run.context());
  if (!run.writes() || r.repetitions.empty()) return r;
  json doc{{"model", r.model_name},
           {"verdict", r.verdict},
           {"sites", r.sites},
           {"groups", groups_json(r)},
           {"path", path_json(r.repetitions.front(), true, r)}};
  json reps = json::array();
  for (const DiscoverRepetition& rep : r.repetitions) reps.push_back(path_json(rep, false, r));
  doc["repetitions"] = reps;
  json& m = run.summary().metrics();
  metrics(r, m);
  doc["summary"] = m;
  run.write_text("discovery.json", doc.dump(1) + "\n");
  run.write_text("discovery.txt", table(r));
  run.write_text("augment.yaml", r.augment_yaml);
  if (r.retrained_validation_loss && !r.pruned.empty()) {
    write_augment_weights(run.path("weights.h5"), r.pruned);
    run.add_output(run.path("weights.h5"));
  }
  write_discover_report(r, run);
  if (run.plots_wanted()) {
    run.plot("plot_discovery.py", {run.path("discovery.json"), "importance"}, "importance.png");
    run.plot("plot_discovery.py", {run.path("discovery.json"), "path"}, "path.png");
  }
  return r;
}

}  // namespace neuralsim
