// The convex-MPC quadruped controller (control/quadruped_controller.hpp) as
// `controls:` kinds of the controller registry (issue 14):
//
//   controls: {type: mpc, ...}          the QP every MPC step
//   controls: {type: mpc_network, weights: FILE, ...}
//                                       a network in place of the QP
//
// The keys, their defaults and ranges are documented in docs/rollout.md
// ("MPC controllers"). Everything is checked when the controller is built
// (before any simulation): a key out of range, a model without a floating
// base or without the named feet, or a configuration the robot cannot stand
// on (the fewest stance feet of the gait times fz_max below m g, friction
// ≤ 0) is a ConfigError naming the key; a weights file whose network does
// not map the controller's features to its 12 forces is a DataError naming
// the file with the expected and actual sizes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/control/quadruped_controller.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/nn/mlp.hpp"

namespace neuralsim {

// `random_commands:` — a new command every `every` seconds, each entry drawn
// uniformly from its [lo, hi] (an entry without a range keeps the value of
// `command:`). Segment s of trajectory i depends only on (seed, i, s):
// the same at any thread count and in any order of evaluation.
struct RandomCommandSpec {
  double every = 2.0;  // [s], > 0
  std::array<double, 2> forward_speed{0, 0}, lateral_speed{0, 0}, yaw_rate{0, 0}, height{0.28, 0.28};
  std::uint64_t seed = 0;
  // The command of segment `segment` (t in [segment·every, (segment+1)·every))
  // of trajectory `trajectory_index`. Pure; no allocation.
  QuadrupedCommand command(int trajectory_index, long long segment) const;
};

// What a `controls: {type: mpc | mpc_network}` section says.
struct MpcControllerSpec {
  QuadrupedControllerOptions options;     // mpc_every from mpc.period and the step's dt
  std::vector<CommandSegment> schedule;   // `command:` / `schedule:` (at least one segment, from t = 0)
  std::optional<RandomCommandSpec> random;  // `random_commands:` (replaces the schedule)
  // mpc_network only: the network file (resolved against the config's
  // directory) and the network's name in it.
  std::string weights_path;
  std::string network_name;
  std::string weights_named_by;  // "FILE:LINE, key 'controls.weights'", for errors about the file
};

// Reads and checks a section (see the file comment). `network` selects the
// mpc_network keys. Throws ConfigError.
MpcControllerSpec read_mpc_controller_spec(const Config& section, const Model<double>& model, const StepOptions& step,
                                           bool network);

// The controller `rollout` steps: the QuadrupedController plus the command
// plan of one trajectory (its random commands, if any).
class MpcRolloutController : public Controller<double> {
 public:
  // `model` must outlive the controller. The network, if any, is shared
  // (read-only) between controllers; each has its own workspace.
  MpcRolloutController(const Model<double>& model, const MpcControllerSpec& spec, int trajectory_index,
                       std::shared_ptr<const nn::Mlp> network = nullptr);

  void compute(long long k, double t, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
               Eigen::VectorXd& u) override;

  // The command in force at time t (the random segment's, when random).
  QuadrupedCommand command_at(double t) const;
  const QuadrupedController& controller() const { return *controller_; }
  bool uses_network() const { return network_ != nullptr; }

 private:
  std::unique_ptr<QuadrupedController> controller_;
  std::optional<RandomCommandSpec> random_;
  int trajectory_index_ = 0;
  long long segment_ = -1;  // the random segment last installed
  std::shared_ptr<const nn::Mlp> network_;
  std::shared_ptr<nn::Workspace<double>> workspace_;
};

// The network of an mpc_network spec, checked against the controller it
// replaces the QP of: num_features() = 25 + 4·horizon inputs, 12 outputs.
// DataError naming the file and network otherwise (or if it cannot be read).
std::shared_ptr<const nn::Mlp> read_mpc_network(const MpcControllerSpec& spec);

// Registers `mpc` and `mpc_network`. `step` gives the simulation dt (the MPC
// period is read in seconds and converted to simulation steps).
void add_mpc_controllers(ControllerRegistry& registry, const StepOptions& step);

}  // namespace neuralsim
