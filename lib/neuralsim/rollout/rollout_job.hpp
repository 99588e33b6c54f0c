// The `rollout` tool: simulate a model from initial states under controls
// and write the trajectories, or (--compare) replay recorded trajectories
// and report prediction errors. The app only parses the command line.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/io/app.hpp"
#include "neuralsim/io/trajectory.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

struct RolloutRequest {
  std::string compare_path;  // empty: simulate; else replay this HDF5 file
};

// Runs the job described by opts.config; writes into opts.out; returns the
// exit code (throws the error types of errors.hpp for run_app to map).
int run_rollout(const AppOptions& opts, const RolloutRequest& request);

// Prediction error of a model on one recorded trajectory: replays it from
// its first state with its recorded controls at its own time stamps.
struct ReplayError {
  std::string name;
  Trajectory predicted;
  double rmse_q = 0, rmse_qd = 0;
  std::vector<std::pair<long long, double>> rmse_q_by_horizon;  // (samples, RMSE of q)
};
ReplayError replay_trajectory(const Model<double>& model, const StepOptions& options, const Trajectory& recorded,
                              const std::vector<long long>& horizons);

}  // namespace neuralsim
