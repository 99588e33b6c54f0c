// Prediction errors of a model on recorded trajectories: RMSE per
// trajectory, per horizon (the first N samples) and of observed link
// positions. The predictions themselves come from the one replay routine
// (step/replay.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

struct PredictionError {
  std::string name;
  // sqrt(Σ_k |q_k ⊖ q̂_k|² / (T·nv)) over all T samples (tangent space for
  // quaternions), and likewise for q̇.
  double rmse_q = 0, rmse_qd = 0;
  // (N, RMSE of q over the first min(N, T) samples) for each horizon N.
  std::vector<std::pair<long long, double>> rmse_q_by_horizon;
};

PredictionError prediction_error(const Model<double>& model, const Trajectory& recorded, const Trajectory& predicted,
                                 const std::vector<long long>& horizons = {});

// RMSE in metres of the observed link positions over every sample but the
// first (where the prediction starts from the data); 0 without links.
double link_position_rmse(const std::vector<std::string>& links, const Trajectory& recorded,
                          const Trajectory& predicted);

// Replays `recorded` open loop from its first state (the recording's time
// stamps and controls) with `model`, its options, optional contact and
// neural augmentations (a hybrid model).
Trajectory replay_recording(const Model<double>& model, const StepOptions& options,
                            const std::optional<ContactSettings>& contact, const Trajectory& recorded,
                            const std::vector<AugmentBlueprint>& augment = {});

}  // namespace neuralsim
