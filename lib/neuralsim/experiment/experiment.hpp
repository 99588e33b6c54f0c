// An experiment config turned into engine objects: the model, its contact
// settings and step options, with the named values of `params:` and
// `params_file:` routed to each (reference: docs/simid.md, docs/contact.md,
// docs/models.md). Shared by every tool, so no tool reads a config its own
// way. Errors are ConfigError / DataError naming the file, key and line.
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/augment/blueprint.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/parameters/named_parameter.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/step/link_poses.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// One value of `params:` or `params_file:` (the file wins over the map).
struct ExperimentParameter {
  NamedParameter target;
  double value = 0;
  std::string source;  // "config.yaml:12" or "out/params.json", for messages
};

struct Experiment {
  Model<double> model;                     // `model:`, with params applied and validated
  std::optional<ContactSettings> contact;  // `contact:`, with contact.* params applied
  StepOptions step;                        // `sim:`
  std::vector<AugmentBlueprint> augment;   // `augment:` (experiment/augment_config.hpp), in list order
  std::vector<ExperimentParameter> parameters;
  std::vector<std::string> notes;     // what a tool may log at info level
  std::vector<std::string> warnings;  // and at warning level (also for summary.json)
};

// Reads `model:`, `contact:`, `sim:` (required unless `require_sim` is
// false), `params:`, `params_file:` and `augment:` from the config root.
// The parameter file is read once.
Experiment load_experiment(const Config& root, bool require_sim = true);

// `model:` section: {file: x.yaml} | {urdf: x.urdf, floating_base,
// merge_fixed_joints} | {mjcf: x.xml, strict} | an inline model (generator:
// ... or bodies: ...). URDF and MJCF warnings (missing meshes, MJCF elements
// with no counterpart) are appended to `warnings` when not null. An MJCF
// file's <option timestep/integrator> are written to `sim_defaults` when not
// null (the defaults of the `sim:` section); other models leave it as is.
Model<double> load_model_section(const Config& model_section, std::vector<std::string>* warnings = nullptr,
                                 StepOptions* sim_defaults = nullptr);

// `sim:` section: integrator, dt, substeps, check_finite, controls
// (duration is the tool's). dt must be finite and > 0. Keys not given take
// `defaults`' values. `controls: {interpolation, period, tick_values,
// delay}` says what a replay applies between recorded control samples
// (step/control_signal.hpp): the names are checked, a period is only for
// `hold` and must be a positive multiple of the integration step
// dt / substeps; `delay` (seconds, finite, >= 0, default 0) is the
// actuation latency: the replay applies u(t − delay).
StepOptions read_step_options(const Config& sim, const StepOptions& defaults = {});

// With an interpolation other than zero_order_hold, the integration step
// dt / substeps must divide the sample interval of every uniformly sampled
// trajectory of `data` (read from `source`), so that substeps and control
// ticks line up with the samples: else a ConfigError on sim.dt (or
// sim.substeps) with the expected and the actual step. A control delay
// (sim.controls.delay) must be shorter than every trajectory of `data`
// with two samples or more: else a ConfigError on sim.controls.delay.
void check_control_timing(const Config& sim, const StepOptions& options, const TrajectorySet& data,
                          const std::string& source);

// The same check of a delay from another key (`owner`'s `key`, e.g. the
// upper bound of a fitted controls.delay): `delay` seconds must be shorter
// than every trajectory of `data` with two samples or more.
void check_delay_within_data(const Config& owner, const std::string& key, double delay, const TrajectorySet& data,
                             const std::string& source);

// For a tool path that replays recorded controls without interpolation
// (`what`, e.g. "rollout with controls of type 'dataset'"): a ConfigError on
// sim.controls.interpolation unless it is zero_order_hold, and on
// sim.controls.delay unless it is 0, rather than silently ignoring them.
void refuse_control_interpolation(const Config& sim, const StepOptions& options, const std::string& what);

// For a tool path that replays recorded controls without a delay (`what`,
// e.g. "window training (train-augment, discover)"): a ConfigError on
// sim.controls.delay (or on sim.controls when params: set controls.delay)
// unless the delay is 0.
void refuse_control_delay(const Config& sim, const StepOptions& options, const std::string& what);

struct InitialState {
  Eigen::VectorXd q, qd;
};
// `initial_states:` section: {list: [{q, qd}, ...]} or {count, q_low,
// q_high, qd_low, qd_high} sampled uniformly with `rng`. At most
// `max_count` states (a sized limit, checked before anything is allocated).
std::vector<InitialState> read_initial_states(const Config& section, const Model<double>& model,
                                              std::mt19937_64& rng, long long max_count);
// Applies the experiment's initial.qd.<coordinate> values to every state.
void apply_initial_state_parameters(const Experiment& experiment, std::vector<InitialState>& states);

// The bodies or frames named by the list at `key` of `owner`.
std::vector<LinkRef> read_links(const Config& owner, const std::string& key, const Model<double>& model);

// How a vector with one value per coordinate may be written: always as a
// list of exactly n numbers; where documented (gains, control signals,
// sampling ranges: docs/rollout.md, "Per-coordinate values") also as one
// number, without brackets, for every coordinate. A list of another length
// (`q: [0.3]` for two coordinates) is a ConfigError, never broadcast.
enum class CoordinateValues { kList, kListOrNumber };
// The vector at `key` (`fallback` for every coordinate when absent).
Eigen::VectorXd read_coordinate_vector(const Config& c, const std::string& key, int n, double fallback,
                                       CoordinateValues form);

// Controller kinds by name (`controls: {type: ...}`). The standard kinds
// are zero, constant, sinusoid, pd and dataset; tools add their own (the
// MPC controllers). No global state: each tool builds its registry.
class ControllerRegistry {
 public:
  // `recorded` holds the trajectories of `controls.file` (type dataset).
  using Factory = std::function<std::unique_ptr<Controller<double>>(
      const Config& section, const Model<double>& model, int trajectory_index, const TrajectorySet* recorded)>;
  void add(const std::string& type, Factory factory);
  std::unique_ptr<Controller<double>> make(const Config& section, const Model<double>& model,
                                           int trajectory_index, const TrajectorySet* recorded) const;
  std::vector<std::string> types() const;

 private:
  std::vector<std::pair<std::string, Factory>> factories_;
};

ControllerRegistry standard_controllers();

}  // namespace neuralsim
