// Builds engine objects from an experiment config (YAML, see
// docs/config-reference.md): the model and its parameter overrides, the
// step options, initial states and controls. Shared by every app.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/trajectory.hpp"
#include "neuralsim/model/model.hpp"
#include "neuralsim/rollout/controls.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// `model:` section: {file: x.yaml} | {urdf: x.urdf, floating_base, merge_fixed_joints}
// | an inline model (generator: ... or bodies: ...). Then applies the model
// parameters among `params:` (name: value) and `params_file:` (JSON written
// by simid) from the root.
Model<double> load_experiment_model(const Config& root);

// Every named value of `params:` and `params_file:` (the file wins), with
// `source` naming where each came from for error messages. Three kinds of
// names: model parameters, contact.* and initial.qd.* (estimate/parameter_set.hpp).
struct ExperimentParameters {
  std::map<std::string, double> values;
  std::map<std::string, std::string> source;
};
ExperimentParameters read_experiment_parameters(const Config& root);
bool is_contact_parameter_name(const std::string& name);
bool is_initial_state_parameter_name(const std::string& name);

// The `contact:` section with contact.* values of params/params_file applied,
// or nothing when absent (contact.* values without a contact section are a
// ConfigError).
std::optional<ContactSettings> load_experiment_contact(const Config& root, const Model<double>& model);

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

// Applies initial.qd.<coordinate> values of params/params_file to every
// initial state (simid writes them when it optimizes a throw).
void apply_initial_state_parameters(const Config& root, const Model<double>& model,
                                    std::vector<InitialState>& states);

// Bodies or frames by name -> (name, body index or -2 - frame index).
// Unknown names are a ConfigError prefixed by `where`.
std::vector<std::pair<std::string, int>> resolve_links(const Model<double>& model,
                                                       const std::vector<std::string>& names,
                                                       const std::string& where);
// Fills tr.link_poses[name] (T x 7: x y z qx qy qz qw, world frame) from tr.q.
void record_link_poses(const Model<double>& model, const std::vector<std::pair<std::string, int>>& links,
                       Trajectory& tr);

// `controls:` section: type zero | constant | sinusoid | pd | dataset.
// `recorded` supplies the dataset's trajectories for type dataset (may be null).
std::unique_ptr<Controller<double>> make_controller(const Config& section, const Model<double>& model,
                                                    int trajectory_index,
                                                    const TrajectorySet* recorded);

}  // namespace neuralsim
