// One training epoch of train-augment's experiment 1 (the swimmer in a
// viscous medium, configs/train/swimmer_drag_hybrid.yaml), split into its
// parts:
//   WindowLoss      the loss of one window (K = 20 steps, no gradient)
//   WindowGradient  the loss and its reverse-mode gradient (815 weights)
//   AdamStep        one optimizer update of the 815 parameters
//   Epoch           one whole epoch of the Trainer (180 windows, minibatches
//                   of 8, validation on the 3 held-out trajectories)
// The ground truth is simulated here from swimmer_drag_truth.yaml with the
// library (no files), exactly as `rollout --seed 1` does.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/train/hybrid_window_model.hpp"
#include "neuralsim/train/trainer.hpp"
#include "neuralsim/train/training_data.hpp"

namespace neuralsim {
namespace {

struct Experiment1 {
  TrajectorySet train, validation;
  std::unique_ptr<HybridWindowModel> model;
  TrainerOptions options;
  WindowLossWeights weights;
};

TrajectorySet ground_truth() {
  const Config cfg = Config::load(std::string(NEURALSIM_SOURCE_DIR) + "/configs/train/swimmer_drag_truth.yaml");
  const Experiment exp = load_experiment(cfg);
  std::mt19937_64 rng(1);
  const std::vector<InitialState> states = read_initial_states(cfg.at("initial_states"), exp.model, rng, 1000);
  const ControllerRegistry registry = standard_controllers();
  TrajectorySet set;
  const long long steps = std::llround(cfg.get<double>("sim.duration") / exp.step.dt);
  for (size_t k = 0; k < states.size(); ++k) {
    Stepper<double> stepper(exp.model, exp.step);
    auto aug = install_augmentation<double>(exp.augment, exp.model, stepper);
    auto controller = registry.make(cfg.at("controls"), exp.model, static_cast<int>(k), nullptr);
    set.trajectories.push_back(simulate(stepper, states[k].q, states[k].qd, *controller, steps, [] { return false; }));
  }
  return set;
}

const Experiment1& experiment1() {
  static const Experiment1 e = [] {
    Experiment1 x;
    TrajectorySet all = ground_truth();
    x.validation.trajectories.assign(all.trajectories.end() - 3, all.trajectories.end());
    for (size_t k = 0; k + 3 < all.trajectories.size(); ++k) {
      Trajectory t = all.trajectories[k];
      const Eigen::Index n = 200;
      t.time.conservativeResize(n);
      t.q.conservativeResize(n, Eigen::NoChange);
      t.qd.conservativeResize(n, Eigen::NoChange);
      t.tau.conservativeResize(n, Eigen::NoChange);
      x.train.trajectories.push_back(std::move(t));
    }
    const Config cfg = Config::load(std::string(NEURALSIM_SOURCE_DIR) + "/configs/train/swimmer_drag_hybrid.yaml");
    const Experiment exp = load_experiment(cfg);
    RolloutProblem p;
    p.model = exp.model;
    p.step = exp.step;
    p.augment = exp.augment;
    x.model = std::make_unique<HybridWindowModel>(std::move(p));
    x.options.window_steps = 20;
    x.options.window_stride = 10;
    x.options.batch_size = 8;
    x.options.epochs = 1000000;
    x.options.validation_steps = 100;
    x.options.schedule.base = 0.01;
    x.weights = loss_weights_from_data(x.train);
    return x;
  }();
  return e;
}

TrainingWindow first_window() {
  WindowOptions o;
  o.steps = 20;
  o.stride = 10;
  return make_windows(experiment1().train, o).front();
}

void BM_Experiment1_WindowLoss(benchmark::State& state) {
  const Experiment1& e = experiment1();
  auto model = e.model->clone();
  const Eigen::VectorXd x = model->initial_parameters();
  const TrainingWindow w = first_window();
  for (auto _ : state) benchmark::DoNotOptimize(model->loss(x, w, TrainingMode::kUnrolled, e.weights, nullptr));
  state.counters["steps"] = w.steps();
}

void BM_Experiment1_WindowGradient(benchmark::State& state) {
  const Experiment1& e = experiment1();
  auto model = e.model->clone();
  const Eigen::VectorXd x = model->initial_parameters();
  const TrainingWindow w = first_window();
  Eigen::VectorXd g;
  for (auto _ : state) benchmark::DoNotOptimize(model->loss(x, w, TrainingMode::kUnrolled, e.weights, &g));
  state.counters["parameters"] = static_cast<double>(g.size());
}

void BM_Experiment1_AdamStep(benchmark::State& state) {
  const int n = experiment1().model->num_parameters();
  Adam adam(n);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n), g = Eigen::VectorXd::Constant(n, 1e-3);
  for (auto _ : state) {
    adam.step(x, g, 1e-3);
    benchmark::DoNotOptimize(x.data());
  }
}

void BM_Experiment1_Epoch(benchmark::State& state) {
  const Experiment1& e = experiment1();
  Trainer trainer(*e.model, e.train, e.validation, e.weights, e.options);
  TrainingState s = trainer.initial_state();
  for (auto _ : state) trainer.run_epoch(s);
  const EpochRecord& r = s.history.back();
  state.counters["gradient_s"] = r.seconds_gradient;
  state.counters["optimizer_s"] = r.seconds_optimizer;
  state.counters["validation_s"] = r.seconds_validation;
}

BENCHMARK(BM_Experiment1_WindowLoss)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Experiment1_WindowGradient)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Experiment1_AdamStep)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Experiment1_Epoch)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace neuralsim

BENCHMARK_MAIN();
