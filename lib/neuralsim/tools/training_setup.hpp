// What the training tools (train-augment, discover) share: their config's
// common sections read and checked (experiment, `train:`, `data:`,
// `evaluate:`) before any work, and free rollouts of whole recordings.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/train_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/rollout_problem.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/run_context.hpp"
#include "neuralsim/train/trainer.hpp"

namespace neuralsim {

// Free rollouts of whole recordings from their first state under their
// recorded controls.
struct RolloutEvaluation {
  struct PerTrajectory {
    std::string name;
    bool diverged = false;
    double rmse_q = 0, rmse_qd = 0;
    std::vector<std::pair<long long, double>> rmse_q_by_horizon;  // NaN: longer than the trajectory
  };
  std::vector<PerTrajectory> per_trajectory;
  double mean_rmse_q = 0, mean_rmse_qd = 0;  // +inf when a rollout diverged
  std::map<long long, double> mean_rmse_q_by_horizon;
  int diverged = 0;
  TrajectorySet predictions;  // the rollouts that did not diverge
};

// Everything a training config says, read and checked before any work.
struct TrainingSetup {
  Experiment exp;
  TrainConfig tc;
  std::vector<long long> horizons;  // evaluate.horizons
  std::vector<std::string> data_notes;  // rows a CSV import dropped: warnings
  DataSplit data;  // data.test is only evaluated once, after training and selection
  TrainerOptions options;   // tc.trainer, max_samples applied to train_set
  TrajectorySet train_set;  // the training recordings the trainer sees
};

// Reads the experiment, `train:`, `data:` (recordings with τ unless
// train.controls: none) and `evaluate:`; `tool_keys` are the tool's own
// top-level keys (e.g. "augment"), every other one is refused.
TrainingSetup read_training_setup(const Config& cfg, long long seed, const std::vector<std::string>& tool_keys);

// What a training run's result depends on, for its checkpoint: the config's
// sections (not name, description, output, evaluate), the training and
// validation recordings and the seed.
Fingerprint training_fingerprint(const Config& cfg, const TrainingSetup& setup, long long seed);

// The hybrid simulator of an experiment with these networks (its model,
// step options and contact; physics frozen).
RolloutProblem hybrid_problem(const Experiment& exp, std::vector<AugmentBlueprint> augment);

// Input normalization of augmentation networks from data: the population
// mean and standard deviation of every input value the network reads at
// every sample of `train` (its state, recorded controls and time since the
// start), set as the network's (x - mean) / std, so that every input enters
// on one scale whatever its unit. A value constant on the data keeps std 1
// (a note says so); contact sites are skipped (their inputs exist only in
// contact). With only_flagged, only blueprints with normalize_from_data
// (no input_mean/input_std and no weights in the config); their flag is
// cleared. Used by train-augment (the hybrid's networks) and discover.
void normalize_augment_inputs(std::vector<AugmentBlueprint>& blueprints, const Model<double>& model,
                              const TrajectorySet& train, std::vector<std::string>& notes, bool only_flagged);

// The free rollout of one recording from its first state with the
// parameters x, under its recorded controls (`use_controls`) or none: the
// prediction at every recorded sample. NumericalError when it diverges.
Trajectory free_rollout(WindowModel& wm, const Eigen::VectorXd& x, const Model<double>& model, const Trajectory& tr,
                        bool use_controls);

// Free rollouts of every recording of `data` with the parameters x; errors
// per trajectory and horizon. A diverging rollout is a warning and +inf.
RolloutEvaluation evaluate_rollouts(WindowModel& model, const Eigen::VectorXd& x, const Model<double>& robot,
                                    const TrajectorySet& data, const std::vector<long long>& horizons,
                                    const RunContext& context);

// The prediction of a whole recording from its first state, at every
// recorded sample (NumericalError, or non-finite values, when it diverges).
using RecordingPredictor = std::function<Trajectory(const Trajectory& recorded)>;

// The errors of `predict` on every recording of `data`, scored exactly as
// evaluate_rollouts scores a trained model (same fields and horizons), so
// that reference rows and the model's rows are one computation.
RolloutEvaluation evaluate_predictions(const Model<double>& robot, const TrajectorySet& data,
                                       const std::vector<long long>& horizons, const RecordingPredictor& predict,
                                       const RunContext& context);

// The two rows every results table carries beside a trained model, so a
// reader sees when a model predicts nothing (issue #38):
//  - analytical_model: the experiment's model without networks, physical
//    parameters at their configured values, replayed open loop from each
//    recording's first state under its recorded controls (replay_recording,
//    the path of `rollout --compare`);
//  - no_motion: q held at its first recorded value, q̇ = 0
//    (no_motion_prediction, experiment/evaluation.hpp).
struct ReferenceEvaluations {
  RolloutEvaluation analytical_model, no_motion;
};
ReferenceEvaluations evaluate_references(const Experiment& exp, const TrajectorySet& data,
                                         const std::vector<long long>& horizons, const RunContext& context);

}  // namespace neuralsim
