// Builds engine objects from an experiment config (YAML, see
// docs/config-reference.md): the model and its parameter overrides, the
// step options, initial states and controls. Shared by every app.
#pragma once

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/io/config.hpp"
#include "neuralsim/io/trajectory.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/rollout/controls.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// `model:` section: {file: x.yaml} | {urdf: x.urdf, floating_base, merge_fixed_joints}
// | an inline model (generator: ... or bodies: ...). Then applies `params:`
// (name: value) and `params_file:` (JSON written by simid) from the root.
Model<double> load_experiment_model(const Config& root);

// Reads a parameter file: {"parameters": {"name": {"value": v, ...}}} (as
// simid writes it) or a flat {"name": v}. Throws ConfigError/DataError.
std::map<std::string, double> read_parameter_file(const std::string& path);
// Sets parameters by name; unknown names are a ConfigError listing valid ones.
void apply_parameters(Model<double>& model, const std::map<std::string, double>& values,
                      const std::string& source);

// `sim:` section: integrator, dt, substeps.
StepOptions read_step_options(const Config& sim);

struct InitialState {
  Eigen::VectorXd q, qd;
};
// `initial_states:` section: {list: [{q, qd}, ...]} or
// {count, q_low, q_high, qd_low, qd_high} sampled uniformly with `rng`.
std::vector<InitialState> read_initial_states(const Config& section, const Model<double>& model,
                                              std::mt19937_64& rng);

// `controls:` section: type zero | constant | sinusoid | pd | dataset.
// `recorded` supplies the dataset's trajectories for type dataset (may be null).
std::unique_ptr<Controller<double>> make_controller(const Config& section, const Model<double>& model,
                                                    int trajectory_index,
                                                    const TrajectorySet* recorded);

}  // namespace neuralsim
