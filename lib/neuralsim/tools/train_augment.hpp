// train_augment: train the neural augmentations of a hybrid simulator (and
// its physical parameters), or a data-driven baseline (MLP, LSTM), on
// recorded trajectories (the work of the `train-augment` tool;
// docs/train-augment.md).
//
// Top to bottom: the config (`augment:`, `train:`, `data:`) is read and
// checked against the model and the data; the trainer (train/trainer.hpp)
// runs its epochs, with a checkpoint after each (resumable bit for bit with
// Adam); the best parameters by validation loss are kept whatever ends the
// run; then free rollouts of every training and validation recording from
// its first state give the errors per horizon, and the test recordings
// (data.test), held out of training and selection, are scored once with the
// selected parameters. Beside each held-out split, two reference rows: the
// analytical model and the no-motion predictor.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/grad/gradient_check.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/lstm_file.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/tools/run_context.hpp"
#include "neuralsim/tools/training_setup.hpp"
#include "neuralsim/train/training_loop.hpp"

namespace neuralsim {

struct TrainAugmentRequest {
  Config config;       // the experiment (docs/train-augment.md), overrides applied
  long long seed = 0;  // minibatch order; networks are seeded by their blueprints
};

// The trained model in the form its files hold.
struct TrainedParameters {
  std::vector<AugmentBlueprint> networks;           // hybrid: the augment: networks with the trained weights
  std::vector<std::pair<std::string, double>> physical;  // hybrid: train.physical, trained values
  std::optional<NamedNetwork> mlp;                  // the MLP baseline
  WeightsFileModel mlp_model;                       // its kind ("mlp-delta" | "mlp-direct") and inputs
  std::optional<NamedLstm> lstm;                    // the LSTM baseline (with its kind and inputs)
};

struct TrainAugmentResult : RunReport {
  std::string model_name;    // the config's model
  std::string trained_model;  // "hybrid", "mlp", "lstm"
  std::string description;   // the window model's name
  int num_parameters = 0, num_physical = 0, num_network_weights = 0;
  std::string mode, optimizer;
  int window_steps = 0;
  int train_samples = 0;  // train.train_samples (0 = all)
  int num_train_trajectories = 0, num_validation_trajectories = 0, num_test_trajectories = 0;
  TrainingState state;            // epochs, best epoch, history, best parameters
  double initial_validation_loss = 0;
  TrainedParameters trained;      // at state.best_x
  std::optional<RolloutEvaluation> train, validation;  // not evaluated when interrupted
  // data.test, evaluated once with the selected parameters after training
  // (never seen by training, early stopping or selection); only when given.
  std::optional<RolloutEvaluation> test;
  // The reference rows of each evaluated held-out split (analytical model,
  // no motion): evaluate_references, tools/training_setup.hpp.
  std::optional<ReferenceEvaluations> validation_reference, test_reference;
};

TrainAugmentResult train_augment(const TrainAugmentRequest& request, const RunContext& context = {});

// ---------------------------------------------------------------- the trained model's files
// What train-augment writes of a trained model, read back exactly by
// `rollout --weights` (tools/rollout.hpp), each file saying what it holds:
// the hybrid's networks or the MLP baseline to `weights_path` (a network
// file, io/network_file.hpp, root attribute `model` = hybrid | mlp-delta |
// mlp-direct), the LSTM baseline to `lstm_path` (io/lstm_file.hpp). Returns
// the file written ("" when there are no networks: physical parameters only).
std::string write_trained_weights(const TrainedParameters& trained, const std::string& weights_path,
                                  const std::string& lstm_path);

// The rollout config (YAML) that replays the trained model as is, to be
// written into `out_dir` beside the weights: the training config's model,
// sim, contact and params_file sections (file paths made relative to
// out_dir), its params: with the trained physical values added (params:
// wins over params_file), its augment: blueprints for a hybrid (without
// per-entry weights or normalization: the weights file holds them), and
// `weights:` the written weights file relative to out_dir. So
// `rollout --config OUT/replay.yaml --compare DATA.h5` scores the trained
// model with no other input, and an edit of the networks is refused.
std::string replay_config_yaml(const Config& training_config, const TrainAugmentResult& result,
                               const std::string& out_dir, const std::string& weights_file);

// `train-augment --check-gradients`: the gradient of the training loss
// (mean over every training window at the final K, in the training mode)
// that the optimizer uses (reverse mode through the hybrid simulator; the
// networks' exact backward pass for the baselines) against central
// differences of the same loss, at the initial parameters. Every physical
// parameter is checked, and of the network weights `max_weights` chosen by
// the seed (all of them when there are no more). Status
// kGradientCheckFailed when a coordinate disagrees past the tolerance.
struct TrainingGradientCheckOptions {
  GradientCheckOptions check;  // its `coordinates` are chosen here
  int max_weights = 40;
  // Test only: multiplies this parameter's derivative by `derivative_scale`
  // before the comparison, to show that the check catches a wrong one.
  std::string scale_derivative_of;
  double derivative_scale = 1;
};
struct TrainingGradientCheck : RunReport {
  std::string trained_model;  // "hybrid", "mlp", "lstm"
  std::string mode;           // the training mode differentiated
  int window_steps = 0;  // K of the loss (the final one of a curriculum)
  int num_parameters = 0, num_physical = 0;
  GradientCheckSummary check;
};
TrainingGradientCheck check_training_gradient(const TrainAugmentRequest& request,
                                              const TrainingGradientCheckOptions& options = {},
                                              const RunContext& context = {});

}  // namespace neuralsim
