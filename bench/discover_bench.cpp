// One point of discover's penalty path on experiment 1
// (configs/discover/double_pendulum_friction.yaml, docs/discover-results.md):
//   ProximalEpoch  one Adam epoch of the 146 candidate weights with the
//                  group soft threshold after every step (Adam's metric)
//   PathPoint      what the tool spends per point: epochs.per_point such
//                  epochs, then the relaxed refit (epochs.refit epochs with
//                  the dropped groups held at zero)
// on the shipped recordings (6 training trajectories of 300 samples,
// windows of 10 steps every 10 samples; the fits see no validation data,
// as in the tool).
#include <benchmark/benchmark.h>

#include <memory>

#include "neuralsim/experiment/discover_config.hpp"
#include "neuralsim/tools/training_setup.hpp"
#include "neuralsim/train/group_lasso.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"
#include "neuralsim/train/trainer.hpp"

namespace neuralsim {
namespace {

struct Experiment1 {
  TrainingSetup setup;
  DiscoverSpec spec;
  std::unique_ptr<HybridWindowModel> model;
  std::vector<ParameterGroup> groups;
  WindowLossWeights weights;
  Eigen::VectorXd x0;
};

const Experiment1& experiment1() {
  static const Experiment1 e = [] {
    Experiment1 x;
    const Config cfg =
        Config::load(std::string(NEURALSIM_SOURCE_DIR) + "/configs/discover/double_pendulum_friction.yaml");
    x.setup = read_training_setup(cfg, 1, {"discover"});
    x.spec = read_discover_section(cfg, x.setup.exp.model, nullptr);
    RolloutProblem p;
    p.model = x.setup.exp.model;
    p.step = x.setup.exp.step;
    p.augment = x.spec.candidates;
    x.model = std::make_unique<HybridWindowModel>(std::move(p));
    int offset = 0;
    for (const AugmentBlueprint& bp : x.spec.candidates) {
      for (ParameterGroup& g : network_groups(bp.network, offset, bp.name)) x.groups.push_back(std::move(g));
      offset += static_cast<int>(bp.network.num_parameters());
    }
    x.weights = loss_weights_from_data(x.setup.train_set);
    x.x0 = x.model->initial_parameters();
    return x;
  }();
  return e;
}

// A trainer of `epochs` epochs whose proximal step applies the penalty λ
// (or, for the refit, holds the groups of `zero` at zero).
std::unique_ptr<Trainer> trainer(const Experiment1& e, int epochs, double lambda, const std::vector<char>* zero) {
  TrainerOptions o = e.setup.options;
  o.epochs = epochs;
  o.adam.weight_decay = e.spec.upper_l2;
  const std::vector<ParameterGroup>* groups = &e.groups;
  if (zero)
    o.proximal = [groups, zero](Eigen::VectorXd& x, double, const Adam&) {
      for (std::size_t g = 0; g < groups->size(); ++g)
        if ((*zero)[g])
          for (int i : (*groups)[g].indices) x[i] = 0.0;
    };
  else
    o.proximal = [groups, lambda](Eigen::VectorXd& x, double step, const Adam& adam) {
      adam_group_soft_threshold(x, *groups, lambda, step, adam);
    };
  // As the tool's fits: no validation pass per epoch (a judge evaluates each point once).
  return std::make_unique<Trainer>(*e.model, e.setup.train_set, TrajectorySet{}, e.weights, o);
}

void BM_ProximalEpoch(benchmark::State& state) {
  const Experiment1& e = experiment1();
  auto t = trainer(e, 1, 1e-4, nullptr);
  for (auto _ : state) {
    TrainingState s = t->initial_state();
    s.x = e.x0;
    t->run_epoch(s);
    benchmark::DoNotOptimize(s.x.data());
  }
  state.counters["weights"] = static_cast<double>(e.x0.size());
}
BENCHMARK(BM_ProximalEpoch)->Unit(benchmark::kMillisecond);

void BM_PathPoint(benchmark::State& state) {
  const Experiment1& e = experiment1();
  auto path = trainer(e, e.spec.epochs_per_point, 1e-4, nullptr);
  std::vector<char> zero(e.groups.size(), 0);
  auto refit = trainer(e, e.spec.refit_epochs, 0, &zero);
  for (auto _ : state) {
    TrainingState s = path->initial_state();
    s.x = e.x0;
    path->run(s, [](const TrainingState&) { return true; });
    const std::vector<double> norms = group_norms(s.x, e.groups);
    for (std::size_t g = 0; g < norms.size(); ++g) zero[g] = norms[g] == 0;
    TrainingState r = refit->initial_state();
    r.x = s.x;
    refit->run(r, [](const TrainingState&) { return true; });
    benchmark::DoNotOptimize(r.x.data());
  }
  state.counters["epochs"] = e.spec.epochs_per_point + e.spec.refit_epochs;
}
BENCHMARK(BM_PathPoint)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace neuralsim

BENCHMARK_MAIN();
