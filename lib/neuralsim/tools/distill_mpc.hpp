// distill_mpc: distill a model-predictive controller into a network
// (NeuralSim §IV-D; the work of the `distill-mpc` tool, docs/distill-mpc.md).
//
// Top to bottom: the system (the Laikago's convex MPC of `controls:`, or the
// double integrator of `linear:`) and `distill:` are read and checked, and
// the work is sized before anything is allocated; then
//   1. data: closed-loop episodes under the MPC with random commands and
//      pushes, recording what the MPC sees and its first forces (or an
//      existing dataset);
//   2. training: an MLP on those pairs by the training loop core (seeded
//      minibatch Adam, a checkpoint per epoch, resumable bit for bit), split
//      by episode into training and validation;
//   3. evaluation: the MPC and the network in closed loop under the same
//      unseen commands, pushes and initial states.
// With distill.evaluate.weights the network is read, and only 3 runs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/experiment/distill_systems.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/tools/run_context.hpp"
#include "neuralsim/train/training_loop.hpp"

namespace neuralsim {

struct DistillRequest {
  Config config;       // the experiment (docs/distill-mpc.md), overrides applied
  long long seed = 0;  // episodes' commands, pushes and states; initial weights; minibatch order
  // On --resume: the dataset an interrupted run generated (its generation is
  // deterministic, reading it is faster); empty: generate again.
  std::string previous_dataset;
  // Called with a generated dataset before training starts (a caller
  // persists it there, so that a run killed while training resumes from it).
  std::function<void(const DistillDataset&)> on_dataset;
};

// Closed-loop episodes of one controller, and their means.
struct ClosedLoopEvaluation {
  std::vector<EpisodeResult> episodes;
  int ok = 0;  // quadruped: survived; linear: stable
  double mean_err_a = 0, mean_err_b = 0, mean_err_c = 0;
  double mean_seconds_per_update = 0;
};

struct DistillResult : RunReport {
  std::string system;  // "quadruped", "linear"
  int num_features = 0, num_targets = 0;
  std::vector<std::string> feature_names, target_names;
  std::string network_name;  // the network's name in the weights file
  DistillDataset dataset;    // the training data (empty when only evaluating)
  std::string dataset_file;  // where it was read from (distill.data.file); empty: generated
  // Generated (by this run, or by the interrupted run it resumes): the episodes that ended early under the MPC.
  std::optional<int> data_episodes_failed;
  // Training (absent when only evaluating).
  std::optional<TrainingState> training;
  std::string network_description;
  long long num_parameters = 0, train_samples = 0, validation_samples = 0;
  double initial_validation_loss = 0;
  Eigen::VectorXd train_rmse, validation_rmse;  // per target, at the best parameters
  // The network: trained (best parameters) or read.
  std::shared_ptr<const nn::Mlp> network;
  // Closed loop under the same unseen episodes (absent with evaluate.episodes = 0 or when interrupted).
  std::optional<ClosedLoopEvaluation> mpc, with_network;
  double evaluation_duration = 0;
};

DistillResult distill_mpc(const DistillRequest& request, const RunContext& context = {});

}  // namespace neuralsim
