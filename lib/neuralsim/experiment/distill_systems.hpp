// The systems an MPC is distilled on (docs/distill-mpc.md): the Laikago's
// convex MPC in the simulator with contact and pushes, and the double
// integrator's linear MPC. Each runs closed-loop episodes under the MPC or
// under a network in its place, and records what the controller sees with
// the MPC's answer. Episodes run in parallel, each into its own slot: the
// same dataset at any thread count. (In experiment/, not control/: the
// quadruped's episodes step the experiment's model with its contact and the
// MPC controller of experiment/mpc_controllers.hpp.)
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "neuralsim/core/communicator.hpp"
#include "neuralsim/experiment/distill_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/mpc_controllers.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "neuralsim/nn/mlp.hpp"

namespace neuralsim {

// The samples of one episode.
struct EpisodeSamples {
  std::vector<double> features, targets, time;
  long long count = 0;
};

// One row of an episode's trace: three tracked quantities and their
// references (quadruped: height, forward speed, yaw rate; linear: position,
// velocity, control).
struct TraceRow {
  double t, a, a_ref, b, b_ref, c, c_ref;
};

struct EpisodeResult {
  bool ok = true;           // quadruped: did not fall; linear: stable at the end
  double fall_time = -1;    // the time it fell or diverged
  std::string reason;
  double err_a = 0, err_b = 0, err_c = 0;  // quadruped: RMS height, speed and yaw-rate errors; linear: RMS x, v, ‖x_T‖
  long long updates = 0;
  double update_seconds = 0;  // wall time of the controller calls that ran the MPC (or network)
  std::vector<TraceRow> trace;
};

class DistillSystem {
 public:
  virtual ~DistillSystem() = default;
  virtual std::string kind() const = 0;  // "quadruped", "linear"
  virtual int num_features() const = 0;
  virtual int num_targets() const = 0;
  virtual std::vector<std::string> feature_names() const = 0;
  virtual std::vector<std::string> target_names() const = 0;
  virtual std::string network_name() const = 0;  // in the weights file
  // Upper bound of the samples one episode of `duration` records.
  virtual long long samples_per_episode(double duration) const = 0;
  // Runs episode `index` for `duration` under the MPC (network == null) or
  // the network; records (features, MPC solution) when `samples` is set and
  // the trace when `trace`.
  virtual EpisodeResult run(int index, double duration, std::shared_ptr<const nn::Mlp> network,
                            EpisodeSamples* samples, bool trace) const = 0;
};

// The Laikago under the convex MPC of `spec`, from `states` (episode i
// starts from states[i mod n]) with `pushes`; it falls when the base drops
// below `min_height` or a body other than a foot touches the ground.
// ModelError when the spec's feet are not frames of the model.
std::unique_ptr<DistillSystem> make_quadruped_system(const Experiment& experiment, MpcControllerSpec spec,
                                                     std::vector<InitialState> states, PushOptions pushes,
                                                     double min_height);
// The double integrator of `spec`; initial states and pushes from `seed`.
std::unique_ptr<DistillSystem> make_linear_system(LinearSystemSpec spec, PushOptions pushes, std::uint64_t seed);

// Episodes first_index … first_index + episodes − 1 in parallel (each into
// its own slot). `on_episode` (may be empty) is called after each, from the
// worker; episodes not started when `stop` is set are left default. With a
// communicator, episode e runs on rank e mod size and every rank receives
// every episode's result and samples.
std::vector<EpisodeResult> run_episodes(const DistillSystem& system, int first_index, int episodes, double duration,
                                        std::shared_ptr<const nn::Mlp> network, std::vector<EpisodeSamples>* samples,
                                        const std::function<void()>& on_episode, const std::atomic<bool>* stop,
                                        const Communicator* communicator = nullptr);

// The episodes' samples as one dataset, in episode order.
DistillDataset assemble_dataset(const DistillSystem& system, const std::vector<EpisodeSamples>& episodes);

}  // namespace neuralsim
