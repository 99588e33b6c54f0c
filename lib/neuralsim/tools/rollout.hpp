// rollout and compare: the work of the `rollout` tool (docs/rollout.md).
//
//   rollout: simulate the config's model from its initial states (a list,
//     or sampled in ranges with the seed) under its controls (zero,
//     constant, sinusoid, PD, recorded, the quadruped's MPC or its network),
//     with optional observation noise, link poses and reach targets.
//     Trajectories run in parallel, each into its own slot: the same result
//     at any thread count.
//   compare: replay recorded trajectories from their first state with their
//     recorded controls and report prediction errors per trajectory and
//     horizon, per window in seconds, and the inverse-dynamics torque error.
//
// Both take a model trained by train_augment (tools/train_augment.hpp):
// `weights_path`, else the config's `weights:` (relative to the config; the
// replay.yaml train-augment writes has it). What the file holds is read from
// the file (io/network_file.hpp, trained_model_kind): a hybrid's networks
// replace those of the config's `augment:`; an MLP or LSTM baseline is
// replayed by compare with the same free rollout as train-augment's
// evaluation (x̂_0 the recording's first state, its recorded controls), so
// the metrics agree with train-augment's to the last bit, and every trained
// model is scored on new data by one command. A baseline is not a simulator:
// rollout (without recordings) refuses it. compare.windows restarts it from
// the measured state at each window's start (its free rollout from there).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

struct RolloutRequest {
  Config config;             // the experiment (docs/rollout.md), overrides applied
  long long seed = 0;        // sampled initial states, observation noise, random commands
  std::string weights_path;  // non-empty: a trained model (a train-augment weights or LSTM file); else weights:
};

// A network of the config's augment: section.
struct AugmentationInfo {
  std::string name;
  long long parameters = 0;
};

// A link position a trajectory had to reach (`targets:`), and where it was.
struct TargetCheck {
  std::string trajectory, link;
  double time = 0;  // of the sample nearest to the target's time
  Eigen::Vector3d target = Eigen::Vector3d::Zero(), reached = Eigen::Vector3d::Zero();
  double distance = 0, tolerance = 0;
  bool hit = false;
};

// What both calls report about the model they ran.
struct ModelSummary {
  std::string model_name;
  int nq = 0, nv = 0;
  std::string integrator;
  std::string contact_model;  // empty without contact
  std::vector<AugmentationInfo> augmentations;  // the hybrid's networks (none for a baseline)
  std::string trained_model;  // the weights file's kind: hybrid | mlp-delta | mlp-direct | lstm-delta; "" = none
  std::string weights_path;   // that file (--weights, else the config's weights:)
};

struct RolloutResult : RunReport {
  ModelSummary model;
  // The complete trajectories ("000", "001", ...; an interrupted run keeps
  // those that finished). meta: the model, coordinate names, the config as
  // parameters and the seed; the caller sets meta.generator.
  TrajectorySet trajectories;
  long long num_requested = 0;  // trajectories asked for
  long long num_samples = 0;
  double steps_per_second = 0;
  std::vector<TargetCheck> targets;  // one per trajectory and target; status kTargetMissed when one is missed
};

RolloutResult rollout(const RolloutRequest& request, const RunContext& context = {});

struct CompareRequest {
  Config config;             // the model and its options (the config's controls and initial states are not used)
  long long seed = 0;        // recorded in the predictions' metadata
  std::string data_path;     // the recordings: HDF5, or a CSV-import description
  std::string weights_path;  // as in RolloutRequest
};

struct CompareResult : RunReport {
  ModelSummary model;
  TrajectorySet predictions;  // one per recording, with its name; meta as in RolloutResult
  std::vector<PredictionError> per_trajectory;
  double mean_rmse_q = 0, mean_rmse_qd = 0;  // the mean of the per-trajectory RMSEs
  PooledPredictionError pooled;               // over every sample of every trajectory
  // The no-motion reference (no_motion_prediction, experiment/evaluation.hpp:
  // q held at its first recorded value, q̇ = 0) scored the same way, so a
  // reader sees what predicting nothing scores on these recordings.
  std::vector<PredictionError> no_motion;
  double no_motion_mean_rmse_q = 0, no_motion_mean_rmse_qd = 0;
  PooledPredictionError no_motion_pooled;
  std::optional<WindowedEvaluation> windows;  // compare.windows
  std::optional<TorqueError> torque;          // compare.torque
  DerivativeOptions torque_derivatives;       // how its q̇, q̈ were estimated
  std::string torque_note;                    // why it is missing or what it leaves out
};

CompareResult compare(const CompareRequest& request, const RunContext& context = {});

}  // namespace neuralsim
