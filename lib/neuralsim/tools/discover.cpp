#include "neuralsim/tools/discover.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/core/communicator.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/discover_config.hpp"
#include "neuralsim/tools/discover_checkpoint.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/train/group_lasso.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"

namespace neuralsim {
namespace discover_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
constexpr double kInf = std::numeric_limits<double>::infinity();

// The penalty's groups over the candidates' parameter vector, and what each means.
struct Groups {
  std::vector<ParameterGroup> groups;
  std::vector<DiscoverGroup> info;
  std::vector<int> output_group;  // per site
  Eigen::VectorXd decay_mask;     // 1 on the layers after the first
};

Groups make_groups(const std::vector<AugmentBlueprint>& candidates, const std::vector<std::string>& sites, int P) {
  Groups g;
  g.decay_mask = Eigen::VectorXd::Zero(P);
  int offset = 0;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const AugmentBlueprint& bp = candidates[k];
    const nn::Mlp& net = bp.network;
    std::vector<ParameterGroup> mine = network_groups(net, offset, bp.name);
    // Input value i of the network → (input, value).
    std::vector<std::pair<std::string, int>> values;
    for (const AugmentInput& in : bp.inputs)
      for (int v = 0; v < in.size; ++v) values.push_back({in.name, in.size > 1 ? v : -1});
    for (std::size_t i = 0; i < mine.size(); ++i) {
      DiscoverGroup d;
      d.site = static_cast<int>(k);
      if (i + 1 < mine.size()) {
        d.input = values[i].first;
        d.value = values[i].second;
        d.label = sites[k] + " <- " + d.input + (d.value >= 0 ? "[" + std::to_string(d.value) + "]" : "");
      } else {
        d.label = sites[k] + " (output)";
        g.output_group.push_back(static_cast<int>(g.groups.size()));
      }
      g.groups.push_back(std::move(mine[i]));
      g.info.push_back(std::move(d));
    }
    for (nn::Index l = 1; l < net.num_layers(); ++l)
      for (nn::Index w = net.weight_offset(l); w < net.bias_offset(l); ++w) g.decay_mask[offset + w] = 1.0;
    offset += static_cast<int>(net.num_parameters());
  }
  if (offset != P) throw InvalidArgument("discover: the candidates hold " + std::to_string(offset) +
                                         " weights, the hybrid model " + std::to_string(P));
  check_groups(g.groups, P);
  return g;
}

// What every repetition shares.
struct Shared {
  const TrainingSetup* setup = nullptr;
  const DiscoverSpec* spec = nullptr;
  std::vector<AugmentBlueprint> candidates;  // normalized
  Groups groups;
  WindowLossWeights weights;
  long long seed = 0;
  int num_repetitions() const { return spec->seeds + spec->bootstrap; }
  int points_per_repetition() const {
    return 2 + (spec->lambdas.empty() ? spec->points : static_cast<int>(spec->lambdas.size()));
  }
  long long epochs_per_repetition() const {
    return spec->dense_epochs +
           static_cast<long long>(points_per_repetition() - 2) * (spec->epochs_per_point + spec->refit_epochs);
  }
};

// The networks of repetition r: seeds 1 … seeds−1 re-draw the first layers;
// output layers start at zero (the hybrid starts as the analytical model).
std::vector<AugmentBlueprint> repetition_networks(const Shared& sh, int r) {
  std::vector<AugmentBlueprint> bps = sh.candidates;
  const int offset = r < sh.spec->seeds ? r : 0;
  for (std::size_t k = 0; k < bps.size(); ++k) {
    nn::Mlp& net = bps[k].network;
    std::mt19937_64 engine(splitmix64(sh.spec->network_seed + k) ^ splitmix64(static_cast<std::uint64_t>(offset)));
    net.initialize(sh.spec->init, engine);
    std::vector<double> p(static_cast<std::size_t>(net.num_parameters()));
    net.get_parameters(p.data());
    const nn::Index last = net.num_layers() - 1;
    for (nn::Index i = net.weight_offset(last); i < net.num_parameters(); ++i) p[static_cast<std::size_t>(i)] = 0.0;
    net.set_parameters(p.data());
  }
  return bps;
}

// Repetition r's training recordings: all of them, or a bootstrap resample
// (trajectories drawn with replacement).
TrajectorySet repetition_data(const Shared& sh, int r) {
  const TrajectorySet& all = sh.setup->train_set;
  if (r < sh.spec->seeds) return all;
  TrajectorySet out;
  out.meta = all.meta;
  std::mt19937_64 engine(splitmix64(static_cast<std::uint64_t>(sh.seed)) ^ splitmix64(0xb007ull + r));
  const std::uint64_t n = all.trajectories.size();
  for (std::uint64_t i = 0; i < n; ++i) {
    Trajectory t = all.trajectories[engine() % n];
    t.name += "#" + std::to_string(i);
    out.trajectories.push_back(std::move(t));
  }
  return out;
}

void zero_outputs(Eigen::VectorXd& x, const Groups& g) {
  for (int og : g.output_group)
    for (int i : g.groups[static_cast<std::size_t>(og)].indices) x[i] = 0.0;
}

// Selected groups at a point: non-zero input groups of sites whose output
// group is non-zero, and those output groups.
std::vector<char> selected_at(const DiscoverPathPoint& p, const Groups& g) {
  std::vector<char> sel(g.groups.size(), 0);
  if (std::isinf(p.lambda)) return sel;
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    const int out = g.output_group[static_cast<std::size_t>(g.info[i].site)];
    sel[i] = p.norms[i] > 0 && p.norms[static_cast<std::size_t>(out)] > 0;
  }
  return sel;
}

DiscoverPathPoint make_point(double lambda, double train_loss, const Trainer::ValidationStatistics& validation,
                             const Eigen::VectorXd& x, const Groups& g) {
  DiscoverPathPoint p;
  p.lambda = lambda;
  p.train_loss = train_loss;
  p.validation_loss = validation.mean;
  p.validation_se = validation.standard_error;
  p.norms = group_norms(x, g.groups);
  const std::vector<char> sel = selected_at(p, g);
  p.selected_groups = static_cast<int>(std::count(sel.begin(), sel.end(), 1));
  return p;
}

// The chosen point: the largest penalty whose validation loss is within the
// selection rule's threshold (experiment/discover_config.hpp); the
// analytical point (λ = ∞) included.
void choose(DiscoverRepetition& rep, const Groups& g, const DiscoverSpec& spec) {
  double best = kInf, se = 0;
  for (const DiscoverPathPoint& p : rep.points)
    if (p.validation_loss < best) {
      best = p.validation_loss;
      se = p.validation_se;
    }
  const double analytical = rep.points.back().validation_loss;
  const double threshold = spec.rule == DiscoverSpec::Rule::kExplained
                               ? best + spec.tolerance * (analytical - best)
                           : spec.rule == DiscoverSpec::Rule::kOneStandardError ? (best + se) * (1.0 + spec.tolerance)
                                                                                : best * (1.0 + spec.tolerance);
  rep.chosen = static_cast<int>(rep.points.size()) - 1;  // analytical
  for (int i = static_cast<int>(rep.points.size()) - 1; i >= 0; --i)
    if (rep.points[static_cast<std::size_t>(i)].validation_loss <= threshold) {
      rep.chosen = i;
      break;
    }
  const DiscoverPathPoint& c = rep.points[static_cast<std::size_t>(rep.chosen)];
  rep.explained = analytical > 0 && std::isfinite(analytical) ? 1.0 - c.validation_loss / analytical : 0.0;
  rep.selected = rep.explained >= spec.min_improvement ? selected_at(c, g) : std::vector<char>(g.groups.size(), 0);
}

// glmnet's λ_max for the sites: the smallest penalty at which every output
// layer at zero is optimal (KKT: ‖∇_out L‖ ≤ λ c_out) given the dense first
// layers x. With the outputs zero no gradient reaches the input groups, so
// the whole model is then zero.
double auto_lambda_max(Trainer& trainer, const Eigen::VectorXd& x, const Groups& g,
                       const std::vector<ParameterGroup>& weighted) {
  Eigen::VectorXd z = x, grad;
  zero_outputs(z, g);
  trainer.training_loss(z, &grad);
  std::vector<ParameterGroup> outputs;
  for (int og : g.output_group) outputs.push_back(weighted[static_cast<std::size_t>(og)]);
  const double l = group_lasso_lambda_max(grad, outputs);
  if (!(l > 0) || !std::isfinite(l))
    throw NumericalError("discover: the penalty path has no scale: the loss gradient with respect to the "
                         "candidates' output layers is " + format_number(l) +
                         " at the dense fit; give discover.penalty.lambda_max or lambdas");
  return l;
}

// One repetition, run or continued from `partial` (its points and their
// parameters). `on_point` is called after every path point (checkpoints),
// `on_epoch` after every epoch (progress; false stops).
struct RepetitionRun {
  DiscoverRepetition rep;
  std::vector<Eigen::VectorXd> xs;  // the model evaluated at each point (penalized points: the relaxed refit)
  Eigen::VectorXd next_x;           // where the next penalized point starts (the last penalized solution)
  bool complete = false;
};

using PointCallback = std::function<void(const RepetitionRun&)>;

RepetitionRun run_repetition(const Shared& sh, int r, const DiscoverProgress* resume, const PointCallback& on_point,
                             const std::function<bool()>& on_epoch, const std::atomic<bool>* stop) {
  const DiscoverSpec& spec = *sh.spec;
  const TrainingSetup& setup = *sh.setup;
  HybridWindowModel model(hybrid_problem(setup.exp, repetition_networks(sh, r)));
  const TrajectorySet train = repetition_data(sh, r);

  auto lambda = std::make_shared<double>(0.0);
  TrainerOptions o = setup.options;
  o.communicator = nullptr;  // a repetition runs on one process
  o.seed = static_cast<std::uint64_t>(sh.seed) + static_cast<std::uint64_t>(r);
  o.adam.weight_decay = spec.upper_l2;
  o.decay_mask = sh.groups.decay_mask;
  o.patience = 0;
  o.epochs = spec.dense_epochs;
  // The fits see no validation data (it would be evaluated after every
  // epoch and not used: a point keeps its last iterate); `judge` evaluates
  // each point on it.
  const TrajectorySet none;
  Trainer judge(model, train, setup.data.validation, sh.weights, o);
  Trainer dense(model, train, none, sh.weights, o);
  o.epochs = spec.epochs_per_point;
  // Adaptive group lasso (Wang & Leng, "A note on adaptive group lasso",
  // CSDA 2008): each group's weight divided by its norm in the dense fit
  // (relative to the mean norm), to the power `adaptive`, so that groups the
  // dense fit leans on are shrunk less; selection then does not depend on
  // how strongly a site's output moves the loss per unit weight.
  auto groups = std::make_shared<std::vector<ParameterGroup>>(sh.groups.groups);
  const auto adapt = [&](const Eigen::VectorXd& dense_x) {
    if (!(spec.adaptive > 0)) return;
    const std::vector<double> norms = group_norms(dense_x, sh.groups.groups);
    double mean = 0;
    for (double v : norms) mean += v / static_cast<double>(norms.size());
    if (!(mean > 0)) return;
    for (std::size_t g = 0; g < norms.size(); ++g)
      (*groups)[g].weight = sh.groups.groups[g].weight * std::pow(mean / std::max(norms[g], 1e-6 * mean), spec.adaptive);
  };
  o.proximal = [lambda, groups](Eigen::VectorXd& x, double step, const Adam& adam) {
    adam_group_soft_threshold(x, *groups, *lambda, step, adam);
  };
  Trainer path(model, train, none, sh.weights, o);
  // The relaxed fit of a point (Meinshausen, "Relaxed lasso", CSDA 2007):
  // the point's support refitted without penalty, the other groups held at
  // zero, so that the validation losses compare supports, not shrinkage.
  auto support = std::make_shared<std::vector<char>>();
  o.epochs = std::max(spec.refit_epochs, 1);
  o.proximal = [support, groups](Eigen::VectorXd& x, double, const Adam&) {  // holds the dropped groups at zero
    for (std::size_t g = 0; g < groups->size(); ++g)
      if (!(*support)[g])
        for (int i : (*groups)[g].indices) x[i] = 0.0;
  };
  Trainer refit(model, train, none, sh.weights, o);

  RepetitionRun run;
  DiscoverRepetition& rep = run.rep;
  rep.kind = r < spec.seeds ? "seed" : "bootstrap";
  rep.index = r < spec.seeds ? r : r - spec.seeds;
  run.next_x = model.initial_parameters();
  if (resume && resume->partial) {
    rep.points = resume->partial->points;
    rep.lambda_max = resume->partial->lambda_max;
    run.xs = resume->partial_x;
    run.next_x = resume->partial_next_x;
    adapt(run.xs.front());
  }
  // A fit starts from parameters alone (fresh Adam moments): what a
  // checkpoint holds is enough to continue to the same bits.
  const auto fit = [&](Trainer& trainer, Eigen::VectorXd& x) {
    TrainingState s = trainer.initial_state();
    s.x = x;
    trainer.run(s, [&](const TrainingState&) { return on_epoch(); }, stop);
    if (static_cast<int>(s.history.size()) < trainer.options().epochs) return false;  // stopped
    x = s.x;
    return true;
  };
  const auto add_point = [&](double l, const Eigen::VectorXd& selected_by, const Eigen::VectorXd& evaluated) {
    DiscoverPathPoint p = make_point(l, judge.training_loss(evaluated, nullptr),
                                     judge.validation_statistics(evaluated), selected_by, sh.groups);
    rep.points.push_back(std::move(p));
    run.xs.push_back(evaluated);
  };
  if (rep.points.empty()) {
    if (!fit(dense, run.next_x)) return run;
    add_point(0.0, run.next_x, run.next_x);
    adapt(run.next_x);
    if (spec.lambdas.empty())
      rep.lambda_max = spec.lambda_max > 0 ? spec.lambda_max : auto_lambda_max(dense, run.next_x, sh.groups, *groups);
    on_point(run);
  }
  std::vector<double> lambdas =
      spec.lambdas.empty() ? regularization_path(rep.lambda_max, spec.ratio, spec.points) : spec.lambdas;
  std::reverse(lambdas.begin(), lambdas.end());  // solved from the smallest penalty upwards
  for (std::size_t k = rep.points.size() - 1; k < lambdas.size(); ++k) {
    *lambda = lambdas[k];
    Eigen::VectorXd x = run.next_x;
    if (!fit(path, x)) return run;
    Eigen::VectorXd relaxed = x;
    if (spec.refit_epochs > 0) {
      const std::vector<double> norms = group_norms(x, sh.groups.groups);
      support->assign(norms.size(), 0);
      for (std::size_t g = 0; g < norms.size(); ++g) (*support)[g] = norms[g] > 0;
      if (!fit(refit, relaxed)) return run;
    }
    add_point(lambdas[k], x, relaxed);
    run.next_x = x;
    on_point(run);
  }
  // The analytical model closes the path (λ = ∞).
  Eigen::VectorXd z = run.next_x;
  zero_outputs(z, sh.groups);
  add_point(kInf, z, z);
  choose(rep, sh.groups, spec);
  run.complete = true;
  return run;
}

void pack_repetition(ByteWriter& w, const DiscoverRepetition& r) {
  w.put_string(r.kind);
  w.put<std::int64_t>(r.index);
  w.put(r.lambda_max);
  w.put<std::uint64_t>(r.points.size());
  for (const DiscoverPathPoint& p : r.points) {
    w.put(p.lambda);
    w.put(p.train_loss);
    w.put(p.validation_loss);
    w.put(p.validation_se);
    w.put<std::int64_t>(p.selected_groups);
    w.put_vector(p.norms);
  }
  w.put<std::int64_t>(r.chosen);
  w.put_string(std::string(r.selected.begin(), r.selected.end()));
  w.put(r.explained);
}

DiscoverRepetition unpack_repetition(ByteReader& rd) {
  DiscoverRepetition r;
  r.kind = rd.get_string();
  r.index = static_cast<int>(rd.get<std::int64_t>());
  r.lambda_max = rd.get<double>();
  const std::uint64_t n = rd.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < n; ++k) {
    DiscoverPathPoint p;
    p.lambda = rd.get<double>();
    p.train_loss = rd.get<double>();
    p.validation_loss = rd.get<double>();
    p.validation_se = rd.get<double>();
    p.selected_groups = static_cast<int>(rd.get<std::int64_t>());
    p.norms = rd.get_vector();
    r.points.push_back(std::move(p));
  }
  r.chosen = static_cast<int>(rd.get<std::int64_t>());
  const std::string sel = rd.get_string();
  r.selected.assign(sel.begin(), sel.end());
  r.explained = rd.get<double>();
  return r;
}

// Frequencies, importances at repetition 0's chosen point, entry points on
// its path, the selection and the verdict.
void summarize(DiscoverResult& res, const Shared& sh, const Eigen::VectorXd& chosen_x, Trainer& evaluator) {
  const DiscoverSpec& spec = *sh.spec;
  const Groups& g = sh.groups;
  const DiscoverRepetition& rep0 = res.repetitions.front();
  const DiscoverPathPoint& chosen = rep0.points[static_cast<std::size_t>(rep0.chosen)];
  res.analytical_validation_loss = rep0.points.back().validation_loss;
  res.dense_validation_loss = rep0.points.front().validation_loss;
  res.chosen_validation_loss = chosen.validation_loss;
  res.chosen_lambda = chosen.lambda;
  res.explained = rep0.explained;
  res.groups = g.info;
  const double n = static_cast<double>(res.repetitions.size());
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    DiscoverGroup& d = res.groups[i];
    for (const DiscoverRepetition& r : res.repetitions) d.frequency += r.selected[i] ? 1.0 / n : 0.0;
    d.norm = chosen.norms[i];
    d.entry_lambda = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t k = 0; k + 1 < rep0.points.size(); ++k)
      if (selected_at(rep0.points[k], g)[i]) d.entry_lambda = rep0.points[k].lambda;  // increasing λ: the last wins
    if (d.norm > 0 && !std::isinf(chosen.lambda)) {
      Eigen::VectorXd x = chosen_x;
      for (int j : g.groups[i].indices) x[j] = 0.0;
      d.removal_increase = (evaluator.validation_loss(x) - chosen.validation_loss) / chosen.validation_loss;
    }
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < res.groups.size(); ++i)
    if (!std::isnan(res.groups[i].entry_lambda)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const DiscoverGroup &x = res.groups[a], &y = res.groups[b];
    if (x.entry_lambda != y.entry_lambda) return x.entry_lambda > y.entry_lambda;
    return rep0.points.front().norms[a] > rep0.points.front().norms[b];
  });
  for (std::size_t k = 0; k < order.size(); ++k) res.groups[order[k]].entry_rank = static_cast<int>(k) + 1;
  for (std::size_t i = 0; i < res.groups.size(); ++i) {
    DiscoverGroup& d = res.groups[i];
    const DiscoverGroup& out = res.groups[static_cast<std::size_t>(g.output_group[static_cast<std::size_t>(d.site)])];
    d.selected = d.frequency > 0 && d.frequency >= spec.frequency && out.frequency >= spec.frequency;
  }
  bool any = false;
  for (int og : g.output_group) any = any || res.groups[static_cast<std::size_t>(og)].selected;
  res.explained_by_candidates = any;
  const std::string losses = format_printf(" (validation loss: analytical %.4g, chosen %.4g, dense %.4g)",
                                           res.analytical_validation_loss, res.chosen_validation_loss,
                                           res.dense_validation_loss);
  if (any) {
    res.verdict = format_printf("the candidates explain %.0f%% of the analytical model's validation loss",
                                100.0 * res.explained) + losses;
  } else if (rep0.explained >= spec.min_improvement) {
    res.verdict = "no candidate is selected consistently over the repetitions" + losses;
  } else {
    const double dense_gain = 1.0 - res.dense_validation_loss / res.analytical_validation_loss;
    res.verdict = format_printf("no candidate explains the residual: the chosen point improves the analytical "
                                "model's validation loss by %.1f%% (the dense candidates by %.1f%%; selection needs "
                                "%.0f%%); either the analytical model is right or the defect is at none of the "
                                "candidate sites",
                                100.0 * rep0.explained, 100.0 * dense_gain, 100.0 * spec.min_improvement) + losses;
  }
}

// The selected sites with their selected inputs, as fresh blueprints
// (normalization of the selected values kept).
std::vector<AugmentBlueprint> pruned_blueprints(const DiscoverResult& res, const Shared& sh, const Model<double>& model,
                                                const RunContext& context) {
  std::vector<AugmentBlueprint> out;
  for (std::size_t k = 0; k < sh.candidates.size(); ++k) {
    const AugmentBlueprint& c = sh.candidates[k];
    if (!res.groups[static_cast<std::size_t>(sh.groups.output_group[k])].selected) continue;
    AugmentBlueprint bp;
    bp.name = c.name;
    bp.site = c.site;
    bp.mode = c.mode;
    std::vector<double> mean, stdev;
    int value = 0;
    for (const AugmentInput& in : c.inputs) {
      bool keep = false;
      for (const DiscoverGroup& d : res.groups)
        keep = keep || (d.site == static_cast<int>(k) && d.input == in.name && d.selected);
      if (keep) {
        bp.inputs.push_back(in);
        for (int v = 0; v < in.size; ++v) {
          mean.push_back(c.network.input_mean()[value + v]);
          stdev.push_back(c.network.input_std()[value + v]);
        }
      }
      value += in.size;
    }
    if (bp.inputs.empty()) {
      context.warn("site " + res.sites[k] + " is selected with no input (a constant offset); its first candidate "
                   "input is kept so that train-augment can read it");
      bp.inputs.push_back(c.inputs.front());
      for (int v = 0; v < c.inputs.front().size; ++v) {
        mean.push_back(c.network.input_mean()[v]);
        stdev.push_back(c.network.input_std()[v]);
      }
    }
    bp.network = nn::Mlp(total_input_size(bp.inputs), sh.spec->hidden, site_output_dim(bp.site, model),
                         sh.spec->activation, nn::Activation::kIdentity);
    std::mt19937_64 engine(splitmix64(sh.spec->network_seed + k));
    bp.network.initialize(sh.spec->init, engine);
    bp.network.set_output_scaling(c.network.output_scale(), c.network.output_offset());
    const Eigen::Index m = static_cast<Eigen::Index>(mean.size());
    bp.network.set_input_normalization(Eigen::Map<const Eigen::VectorXd>(mean.data(), m),
                                       Eigen::Map<const Eigen::VectorXd>(stdev.data(), m));
    out.push_back(std::move(bp));
  }
  return out;
}

// The pruned model retrained without penalty, its networks starting at
// zero output (the analytical model); free rollouts of the validation
// recordings with both.
void retrain(DiscoverResult& res, const Shared& sh, const std::function<bool()>& on_epoch, const RunContext& context) {
  const TrainingSetup& setup = *sh.setup;
  const Model<double>& model = setup.exp.model;
  const auto t0 = Clock::now();
  HybridWindowModel pruned(hybrid_problem(setup.exp, res.pruned));
  const Groups groups = make_groups(res.pruned, std::vector<std::string>(res.pruned.size()), pruned.num_parameters());
  TrainerOptions o = setup.options;
  o.epochs = sh.spec->retrain_epochs;
  o.communicator = context.communicator;
  Trainer trainer(pruned, setup.train_set, setup.data.validation, sh.weights, o);
  TrainingState s = trainer.initial_state();
  zero_outputs(s.x, groups);
  const Eigen::VectorXd analytical_x = s.x;
  trainer.run(s, [&](const TrainingState&) { return on_epoch(); }, context.stop);
  if (context.stop_agreed()) {
    res.status = RunStatus::kInterrupted;
    return;
  }
  res.retrained_validation_loss = s.best_validation;
  res.pruned = pruned.blueprints_at(s.best_x);
  res.analytical_rollouts =
      evaluate_rollouts(pruned, analytical_x, model, setup.data.validation, setup.horizons, context);
  res.retrained_rollouts = evaluate_rollouts(pruned, s.best_x, model, setup.data.validation, setup.horizons, context);
  if (!setup.data.test.trajectories.empty()) {
    res.test = evaluate_rollouts(pruned, s.best_x, model, setup.data.test, setup.horizons, context);
    res.test_reference = evaluate_references(setup.exp, setup.data.test, setup.horizons, context);
    context.info(format_printf("test recordings (scored once): free-rollout RMSE q %.4g (analytical model %.4g, "
                               "no motion %.4g)",
                               res.test->mean_rmse_q, res.test_reference->analytical_model.mean_rmse_q,
                               res.test_reference->no_motion.mean_rmse_q));
  }
  res.timings["retrain_s"] = seconds_since(t0);
  context.info(format_printf("retrained pruned model: validation loss %.4g (analytical %.4g, dense candidates %.4g); "
                             "free-rollout RMSE q on validation %.4g (analytical %.4g)",
                             *res.retrained_validation_loss, res.analytical_validation_loss,
                             res.dense_validation_loss, res.retrained_rollouts->mean_rmse_q,
                             res.analytical_rollouts->mean_rmse_q));
}

}  // namespace discover_detail
}  // namespace neuralsim

namespace neuralsim {

DiscoverResult discover(const DiscoverRequest& request, const RunContext& context) {
  using namespace discover_detail;
  const auto t_start = Clock::now();
  const Config& cfg = request.config;
  TrainingSetup setup = read_training_setup(cfg, request.seed, {"discover"});
  const Model<double>& model = setup.exp.model;
  if (setup.tc.model != TrainedModel::kHybrid) cfg.at("train").fail("model", "discover trains hybrid models only");
  if (setup.tc.physical.size() > 0)
    cfg.at("train").fail("physical", "discover keeps the physical parameters fixed (fit them with simid first)");
  if (setup.options.optimizer != TrainerOptions::Optimizer::kAdam)
    cfg.at("train").fail("optimizer", "discover's proximal steps need adam");
  const DiscoverSpec spec = read_discover_section(cfg, model, setup.exp.contact ? &*setup.exp.contact : nullptr);
  if (setup.data.validation.trajectories.empty())
    cfg.at("data").fail("", "discover chooses the penalty by validation: give validation recordings "
                            "(data.validation or data.validation_fraction)");
  // Discover selects its penalty on validation; the test recordings score
  // the model it selects, once, which only a retrain produces.
  if (!setup.data.test.trajectories.empty() && spec.retrain_epochs <= 0)
    cfg.at("data").fail(cfg.at("data").has("test") ? "test" : "test_fraction",
                        "the test recordings score the retrained pruned model: expected discover.retrain.epochs > 0, "
                        "got " + std::to_string(spec.retrain_epochs));

  Shared sh;
  sh.setup = &setup;
  sh.spec = &spec;
  sh.seed = request.seed;
  sh.candidates = spec.candidates;
  sh.weights = loss_weights_from_data(setup.train_set);
  std::vector<std::string> notes;
  normalize_augment_inputs(sh.candidates, model, setup.train_set, notes, /*only_flagged=*/false);
  DiscoverResult res;
  res.model_name = model.name;
  for (const AugmentBlueprint& bp : sh.candidates) res.sites.push_back(describe_site(bp.site, model));
  HybridWindowModel probe(hybrid_problem(setup.exp, sh.candidates));
  res.num_parameters = probe.num_parameters();
  sh.groups = make_groups(sh.candidates, res.sites, res.num_parameters);
  TrainerOptions eval_options = setup.options;
  eval_options.communicator = nullptr;
  Trainer evaluator(probe, setup.train_set, setup.data.validation, sh.weights, eval_options);
  res.planned_repetitions = sh.num_repetitions();
  res.num_train_trajectories = static_cast<int>(setup.train_set.trajectories.size());
  res.num_validation_trajectories = static_cast<int>(setup.data.validation.trajectories.size());
  res.num_test_trajectories = static_cast<int>(setup.data.test.trajectories.size());

  DiscoverCheckpointSpec ck;
  ck.fingerprint = training_fingerprint(cfg, setup, request.seed);
  ck.num_parameters = res.num_parameters;
  ck.num_groups = static_cast<int>(sh.groups.groups.size());
  ck.max_points = sh.points_per_repetition();
  ck.repetitions = res.planned_repetitions;
  if (context.resume && !context.checkpoint) throw InvalidArgument("discover: resume requested without a checkpoint store");
  DiscoverProgress progress = context.resume ? read_discover_checkpoint(*context.checkpoint, ck) : DiscoverProgress{};

  res.warnings = setup.exp.warnings;
  res.warnings.insert(res.warnings.end(), setup.data_notes.begin(), setup.data_notes.end());  // rows a CSV import dropped
  context.started();
  for (const std::string& m : setup.exp.notes) context.info(m);
  for (const std::string& m : notes) context.info(m);
  for (const std::string& w : res.warnings) context.warn(w);
  context.info(format_printf("discover: %zu candidate sites, %zu groups, %d weights; %d repetitions of a path of %d "
                             "points on %d trajectories (%d validation)",
                             sh.candidates.size(), sh.groups.groups.size(), res.num_parameters,
                             res.planned_repetitions, ck.max_points - 2, res.num_train_trajectories,
                             res.num_validation_trajectories));
  if (context.resume)
    context.info("resuming from " + context.checkpoint->name() + " after " +
                 std::to_string(progress.completed.size()) + " repetitions");
  res.timings["setup_s"] = seconds_since(t_start);

  const auto t_path = Clock::now();
  const long long per_rep = sh.epochs_per_repetition();
  long long epochs_done = static_cast<long long>(progress.completed.size()) * per_rep;
  if (progress.partial)
    epochs_done += spec.dense_epochs + static_cast<long long>(progress.partial->points.size() - 1) *
                                           (spec.epochs_per_point + spec.refit_epochs);
  const int R = res.planned_repetitions;
  const Communicator* comm = context.communicator;
  const int size = comm ? comm->size() : 1;
  ProgressStage stage(context, "discover", R * per_rep + spec.retrain_epochs);
  const auto on_epoch = [&] {
    stage.update(++epochs_done);
    return !context.stop_requested();
  };
  const auto save = [&] {
    if (context.checkpoint) write_discover_checkpoint(*context.checkpoint, progress, ck);
  };
  // One process: a checkpoint after every path point; several: after every
  // round of `size` repetitions (repetition r on rank r mod size).
  const PointCallback on_point = [&](const RepetitionRun& run) {
    if (size > 1) return;
    progress.partial = run.rep;
    progress.partial_x = run.xs;
    progress.partial_next_x = run.next_x;
    save();
  };
  bool interrupted = false;
  while (static_cast<int>(progress.completed.size()) < R) {
    const int first = static_cast<int>(progress.completed.size());
    const int count = std::min(size, R - first);
    std::vector<RepetitionRun> runs(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
      if (owns(comm, first + i))
        runs[static_cast<std::size_t>(i)] =
            run_repetition(sh, first + i, size == 1 ? &progress : nullptr, on_point, on_epoch, context.stop);
    if (comm)
      exchange_owned(
          *comm, static_cast<std::size_t>(count),
          [&](std::size_t i, ByteWriter& w) {
            w.put<std::uint8_t>(runs[i].complete ? 1 : 0);
            pack_repetition(w, runs[i].rep);
            w.put<std::uint64_t>(runs[i].xs.size());
            for (const Eigen::VectorXd& x : runs[i].xs) w.put_eigen(x);
          },
          [&](std::size_t i, ByteReader& rd) {
            runs[i].complete = rd.get<std::uint8_t>() != 0;
            runs[i].rep = unpack_repetition(rd);
            runs[i].xs.resize(rd.get<std::uint64_t>());
            for (Eigen::VectorXd& x : runs[i].xs) x = rd.get_eigen<Eigen::VectorXd>();
          },
          first);
    for (const RepetitionRun& run : runs) interrupted = interrupted || !run.complete;
    if (interrupted) break;
    for (int i = 0; i < count; ++i) {
      RepetitionRun& run = runs[static_cast<std::size_t>(i)];
      if (first + i == 0) progress.chosen_x = run.xs[static_cast<std::size_t>(run.rep.chosen)];
      progress.completed.push_back(std::move(run.rep));
    }
    progress.partial.reset();
    progress.partial_x.clear();
    progress.partial_next_x.resize(0);
    save();
    const DiscoverRepetition& last = progress.completed.back();
    context.info(format_printf("repetition %d/%d (%s %d): lambda_max %.4g, chosen lambda %.4g, %d groups selected, "
                               "explains %.1f%%",
                               static_cast<int>(progress.completed.size()), R, last.kind.c_str(), last.index,
                               last.lambda_max, last.points[static_cast<std::size_t>(last.chosen)].lambda,
                               static_cast<int>(std::count(last.selected.begin(), last.selected.end(), 1)),
                               100.0 * last.explained));
  }
  res.timings["path_s"] = seconds_since(t_path);
  res.repetitions = progress.completed;
  if (res.repetitions.empty()) {
    res.status = RunStatus::kInterrupted;
    res.verdict = "interrupted before the first repetition completed";
    return res;
  }
  summarize(res, sh, progress.chosen_x, evaluator);
  if (interrupted) {
    res.status = RunStatus::kInterrupted;
    res.verdict += format_printf(" [interrupted after %zu of %d repetitions]", res.repetitions.size(), R);
  }
  res.pruned = pruned_blueprints(res, sh, model, context);
  context.info("verdict: " + res.verdict);
  if (!interrupted && !res.pruned.empty() && spec.retrain_epochs > 0) retrain(res, sh, on_epoch, context);
  if (!interrupted && res.pruned.empty() && !setup.data.test.trajectories.empty()) {
    // Nothing selected: the selected model is the analytical one.
    res.test_reference = evaluate_references(setup.exp, setup.data.test, setup.horizons, context);
    res.test = res.test_reference->analytical_model;
  }
  res.augment_yaml = augment_section_yaml(
      res.pruned, model,
      res.pruned.empty() ? "discover selected nothing: " + res.verdict
                         : "discover's selection: " + res.verdict + ". For a train-augment config.");
  return res;
}

}  // namespace neuralsim
