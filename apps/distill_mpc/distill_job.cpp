// distill-mpc's job (docs/distill-mpc.md): the two systems behind one
// interface (the Laikago's convex MPC in the simulator with contact and
// pushes; the double integrator's linear MPC), closed-loop data generation
// (episodes in parallel, each into its own slot: the same dataset at any
// thread count), supervised training with a checkpoint per epoch, and the
// closed-loop evaluation of the network against the MPC under the same
// commands, pushes and initial states.
#include "distill_mpc/distill_job.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <spdlog/spdlog.h>

#include "common/fingerprint.hpp"
#include "common/provenance.hpp"
#include "common/python.hpp"
#include "common/work_size.hpp"
#include "distill_mpc/distill_checkpoint.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/distill_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/mpc_controllers.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "neuralsim/io/network_file.hpp"

namespace neuralsim {
namespace distill_job_detail {

using nlohmann::json;
using RowMatrixXd = DistillDataset::RowMatrixXd;

// Evaluation episodes use indices far from the training episodes', so their
// commands, pushes and initial states are new to the network.
constexpr int kEvaluationIndexOffset = 1'000'000;

// The samples of one episode.
struct EpisodeSamples {
  std::vector<double> features, targets, time;
  long long count = 0;
};

// One row of the closed-loop trace (for the plot).
struct TraceRow {
  double t, a, a_ref, b, b_ref, c, c_ref;
};

struct EpisodeResult {
  bool ok = true;           // quadruped: did not fall; linear: stable at the end
  double fall_time = -1;    // quadruped: first time it fell
  std::string reason;
  double err_a = 0, err_b = 0, err_c = 0;  // RMS tracking errors (quadruped: height, speed, yaw rate)
  long long updates = 0;
  double update_seconds = 0;  // wall time of the controller calls that ran the MPC (or network)
  std::vector<TraceRow> trace;
};

// What the tool needs of a system: its sizes and names, an episode
// generator and an evaluation episode.
class DistillSystem {
 public:
  virtual ~DistillSystem() = default;
  virtual std::string kind() const = 0;
  virtual int num_features() const = 0;
  virtual int num_targets() const = 0;
  virtual std::vector<std::string> feature_names() const = 0;
  virtual std::vector<std::string> target_names() const = 0;
  virtual std::string network_name() const = 0;
  // Upper bound of the samples one episode of `duration` records.
  virtual long long samples_per_episode(double duration) const = 0;
  // Runs episode `index` for `duration` under the MPC (network == null) or
  // the network; records (features, MPC solution) when `samples` is set.
  virtual EpisodeResult run(int index, double duration, std::shared_ptr<const nn::Mlp> network,
                            EpisodeSamples* samples, bool trace) const = 0;
};

// ---------------------------------------------------------------- quadruped

class QuadrupedSystem : public DistillSystem {
 public:
  QuadrupedSystem(const Experiment& exp, MpcControllerSpec spec, std::vector<InitialState> states, PushOptions pushes,
                  double min_height)
      : exp_(exp), spec_(std::move(spec)), states_(std::move(states)), pushes_(pushes), min_height_(min_height) {
    for (const std::string& f : spec_.options.foot_frames) feet_.insert(exp_.model.frames[exp_.model.frame_index(f)].body);
  }
  std::string kind() const override { return "quadruped"; }
  int num_features() const override { return 25 + kNumLegs * spec_.options.mpc.horizon; }
  int num_targets() const override { return 3 * kNumLegs; }
  std::string network_name() const override { return "mpc_forces"; }
  std::vector<std::string> feature_names() const override {
    std::vector<std::string> n{"roll", "pitch", "com_height", "omega_x", "omega_y", "omega_z", "com_vx", "com_vy",
                               "com_vz", "cmd_forward_speed", "cmd_lateral_speed", "cmd_yaw_rate", "cmd_height"};
    const char* legs[] = {"FR", "FL", "RR", "RL"};
    for (const char* l : legs)
      for (const char* a : {"x", "y", "z"}) n.push_back(std::string("foot_") + l + "_" + a);
    for (int k = 0; k < spec_.options.mpc.horizon; ++k)
      for (const char* l : legs) n.push_back("stance_" + std::to_string(k) + "_" + l);
    return n;
  }
  std::vector<std::string> target_names() const override {
    std::vector<std::string> n;
    for (const char* l : {"FR", "FL", "RR", "RL"})
      for (const char* a : {"x", "y", "z"}) n.push_back(std::string("force_") + l + "_" + a);
    return n;
  }
  long long samples_per_episode(double duration) const override {
    const double steps = std::ceil(duration / exp_.step.dt);
    // One solve every mpc_every steps, plus one at each contact change (at
    // most 2 per leg and gait cycle), plus the first.
    const double period = spec_.options.gait.duty_factor >= 1 ? 1e300 : spec_.options.gait.period;
    return static_cast<long long>(steps / spec_.options.mpc_every + 2.0 * kNumLegs * (duration / period + 1) + 2);
  }

  EpisodeResult run(int index, double duration, std::shared_ptr<const nn::Mlp> network, EpisodeSamples* samples,
                    bool trace) const override {
    const Model<double>& model = exp_.model;
    EpisodeResult r;
    Stepper<double> stepper(model, exp_.step);
    std::shared_ptr<ContactSystem<double>> contact;
    if (exp_.contact) contact = install_contact(*exp_.contact, model, stepper);
    auto schedule = std::make_shared<const PushSchedule>(pushes_, index, duration);
    if (!schedule->pushes().empty()) stepper.hooks().push_back(push_force_hook(schedule, 0));
    MpcRolloutController ctrl(model, spec_, index, network);
    const InitialState& s0 = states_[static_cast<size_t>(index) % states_.size()];
    Eigen::VectorXd q = s0.q, qd = s0.qd, u = Eigen::VectorXd::Zero(model.nv);
    const long long steps = static_cast<long long>(std::llround(duration / exp_.step.dt));
    const int nf = num_features();
    double sa = 0, sb = 0, sc = 0;
    for (long long k = 0; k < steps; ++k) {
      const double t = k * exp_.step.dt;
      const auto t0 = Clock::now();
      ctrl.compute(k, t, q, qd, u);
      const QuadrupedController& c = ctrl.controller();
      if (c.mpc_updated()) {
        r.update_seconds += seconds_since(t0);
        ++r.updates;
        const Eigen::VectorXd& f = c.features();
        // Tracking errors as the MPC sees them (yaw frame): height, horizontal speed, yaw rate.
        const double ea = f[2] - f[12];
        const double eb = std::hypot(f[6] - f[9], f[7] - f[10]);
        const double ec = f[5] - f[11];
        sa += ea * ea;
        sb += eb * eb;
        sc += ec * ec;
        if (trace) r.trace.push_back({t, f[2], f[12], f[6], f[9], f[5], f[11]});
        if (samples && c.last_qp_status() == QpStatus::kOptimal) {
          samples->features.insert(samples->features.end(), f.data(), f.data() + nf);
          const Eigen::VectorXd& y = c.mpc_forces();
          samples->targets.insert(samples->targets.end(), y.data(), y.data() + y.size());
          samples->time.push_back(t);
          ++samples->count;
        }
      }
      try {
        stepper.step(q, qd, u, t);
      } catch (const NumericalError& e) {
        r.ok = false;
        r.fall_time = t;
        r.reason = std::string("diverged: ") + e.what();
        break;
      }
      std::string why;
      if (q[2] < min_height_) why = "base height " + std::to_string(q[2]) + " m below " + std::to_string(min_height_);
      if (contact)
        for (int i = 0; i < contact->num_contacts() && why.empty(); ++i) {
          const Contact<double>& ct = contact->contacts()[i];
          if (ct.distance >= 0) continue;
          for (int b : {ct.body_a, ct.body_b})
            if (b >= 0 && !feet_.count(b)) why = "body '" + model.bodies[b].name + "' touches the ground";
        }
      if (!why.empty()) {
        r.ok = false;
        r.fall_time = t;
        r.reason = why;
        break;
      }
    }
    const double n = std::max<long long>(1, r.updates);
    r.err_a = std::sqrt(sa / n);
    r.err_b = std::sqrt(sb / n);
    r.err_c = std::sqrt(sc / n);
    return r;
  }

 private:
  const Experiment& exp_;
  MpcControllerSpec spec_;
  std::vector<InitialState> states_;
  PushOptions pushes_;
  double min_height_;
  std::set<int> feet_;
};

// ---------------------------------------------------------------- linear

class LinearSystem : public DistillSystem {
 public:
  LinearSystem(LinearSystemSpec spec, PushOptions pushes, std::uint64_t seed)
      : spec_(std::move(spec)), pushes_(pushes), seed_(seed) {}
  std::string kind() const override { return "linear"; }
  int num_features() const override { return 2; }
  int num_targets() const override { return 1; }
  std::string network_name() const override { return "mpc_control"; }
  std::vector<std::string> feature_names() const override { return {"position", "velocity"}; }
  std::vector<std::string> target_names() const override { return {"force"}; }
  long long samples_per_episode(double duration) const override {
    return static_cast<long long>(std::ceil(duration / spec_.dt)) + 1;
  }

  EpisodeResult run(int index, double duration, std::shared_ptr<const nn::Mlp> network, EpisodeSamples* samples,
                    bool trace) const override {
    EpisodeResult r;
    LinearMpc mpc(spec_.mpc);
    std::mt19937_64 rng(splitmix64(splitmix64(seed_ ^ 0x6c696eULL) ^ static_cast<std::uint64_t>(index)));
    auto uniform = [&](const std::array<double, 2>& range) {
      return range[0] + (range[1] - range[0]) * nn::random::uniform01(rng);
    };
    Eigen::VectorXd x(2);
    x[0] = uniform(spec_.position);
    x[1] = uniform(spec_.velocity);
    // Pushes during the first 3/4 of the episode; the rest shows whether the
    // controller brings the state back to the origin.
    const PushSchedule schedule(pushes_, index, 0.75 * duration);
    std::unique_ptr<nn::Workspace<double>> ws;
    if (network) ws = std::make_unique<nn::Workspace<double>>(*network);
    const long long steps = static_cast<long long>(std::llround(duration / spec_.dt));
    double sa = 0, sb = 0;
    Eigen::VectorXd u(1);
    for (long long k = 0; k < steps; ++k) {
      const double t = k * spec_.dt;
      const auto t0 = Clock::now();
      bool optimal = true;
      if (network) {
        network->forward(x.data(), u.data(), *ws);
      } else {
        optimal = mpc.solve(x) == QpStatus::kOptimal;
        if (optimal) u = mpc.first_control();
      }
      r.update_seconds += seconds_since(t0);
      ++r.updates;
      if (samples && optimal && !network) {
        samples->features.insert(samples->features.end(), x.data(), x.data() + 2);
        samples->targets.push_back(u[0]);
        samples->time.push_back(t);
        ++samples->count;
      }
      // The actuator saturates at the MPC's limits, whoever commands it.
      if (spec_.mpc.u_min.size()) u[0] = std::clamp(u[0], spec_.mpc.u_min[0], spec_.mpc.u_max[0]);
      if (trace) r.trace.push_back({t, x[0], 0.0, x[1], 0.0, u[0], 0.0});
      sa += x[0] * x[0];
      sb += x[1] * x[1];
      x = spec_.mpc.A * x + spec_.mpc.B * (u[0] + schedule.force_at(t).x());
      if (!x.allFinite() || x.norm() > 1e12) {
        r.ok = false;
        r.reason = "diverged";
        r.fall_time = t;
        break;
      }
    }
    const double n = std::max<long long>(1, steps);
    r.err_a = std::sqrt(sa / n);
    r.err_b = std::sqrt(sb / n);
    r.err_c = x.norm();
    if (r.ok && !(std::abs(x[0]) <= spec_.stable_tolerance && std::abs(x[1]) <= spec_.stable_tolerance)) {
      r.ok = false;
      r.reason = "not at the origin at the end: x = " + std::to_string(x[0]) + ", v = " + std::to_string(x[1]);
    }
    return r;
  }

 private:
  LinearSystemSpec spec_;
  PushOptions pushes_;
  std::uint64_t seed_;
};

// ---------------------------------------------------------------- helpers

// Runs `episodes` episodes in parallel (each into its own slot, so the
// result does not depend on the thread count).
std::vector<EpisodeResult> run_episodes(const DistillSystem& sys, int first_index, int episodes, double duration,
                                        std::shared_ptr<const nn::Mlp> net, std::vector<EpisodeSamples>* samples,
                                        Progress* progress, std::atomic<long long>* done) {
  std::vector<EpisodeResult> results(static_cast<size_t>(episodes));
  if (samples) samples->assign(static_cast<size_t>(episodes), EpisodeSamples{});
  std::exception_ptr error;
  std::mutex m;
  tbb::parallel_for(0, episodes, [&](int e) {
    try {
      if (interrupt_requested()) return;
      EpisodeSamples* s = samples ? &(*samples)[static_cast<size_t>(e)] : nullptr;
      if (s) {
        const long long cap = sys.samples_per_episode(duration);
        s->features.reserve(static_cast<size_t>(cap * sys.num_features()));
        s->targets.reserve(static_cast<size_t>(cap * sys.num_targets()));
        s->time.reserve(static_cast<size_t>(cap));
      }
      results[static_cast<size_t>(e)] = sys.run(first_index + e, duration, net, s, e == 0);
      if (progress) progress->update(done->fetch_add(1) + 1);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
  return results;
}

DistillDataset assemble(const DistillSystem& sys, const std::vector<EpisodeSamples>& eps) {
  DistillDataset d;
  d.system = sys.kind();
  d.generator = "distill-mpc " + version_string();
  d.feature_names = sys.feature_names();
  d.target_names = sys.target_names();
  long long n = 0;
  for (const EpisodeSamples& e : eps) n += e.count;
  d.features.resize(n, sys.num_features());
  d.targets.resize(n, sys.num_targets());
  d.episode.resize(n);
  d.time.resize(n);
  long long row = 0;
  for (size_t e = 0; e < eps.size(); ++e)
    for (long long k = 0; k < eps[e].count; ++k, ++row) {
      d.features.row(row) = Eigen::Map<const Eigen::RowVectorXd>(eps[e].features.data() + k * sys.num_features(),
                                                                  sys.num_features());
      d.targets.row(row) =
          Eigen::Map<const Eigen::RowVectorXd>(eps[e].targets.data() + k * sys.num_targets(), sys.num_targets());
      d.episode[row] = static_cast<double>(e);
      d.time[row] = eps[e].time[static_cast<size_t>(k)];
    }
  return d;
}

std::string dataset_digest(const DistillDataset& d) {
  std::string bytes;
  auto add = [&](const double* p, Eigen::Index n) { bytes.append(reinterpret_cast<const char*>(p), sizeof(double) * n); };
  add(d.features.data(), d.features.size());
  add(d.targets.data(), d.targets.size());
  add(d.episode.data(), d.episode.size());
  return fnv1a_hex(bytes);
}

void check_dataset_shape(const DistillDataset& d, const DistillSystem& sys, const std::string& file) {
  if (d.features.cols() != sys.num_features())
    throw DataError(file + ":/features: expected " + std::to_string(sys.num_features()) + " columns (the " + sys.kind() +
                    " controller's features), got " + std::to_string(d.features.cols()));
  if (d.targets.cols() != sys.num_targets())
    throw DataError(file + ":/targets: expected " + std::to_string(sys.num_targets()) + " columns (the MPC's " +
                    (sys.kind() == "linear" ? "first control" : "first-interval forces") + "), got " +
                    std::to_string(d.targets.cols()));
}

std::string loss_csv(const std::vector<SupervisedRecord>& h) {
  std::ostringstream s;
  s.precision(17);
  s << "epoch,train_loss,validation_loss,learning_rate,gradient_norm,seconds\n";
  for (const SupervisedRecord& r : h)
    s << r.epoch << ',' << r.train_loss << ',' << r.validation_loss << ',' << r.learning_rate << ',' << r.gradient_norm
      << ',' << r.seconds << '\n';
  return s.str();
}

std::string trace_csv(const DistillSystem& sys, const EpisodeResult& mpc, const EpisodeResult& net) {
  std::ostringstream s;
  s.precision(10);
  if (sys.kind() == "linear")
    s << "controller,t,position,position_ref,velocity,velocity_ref,control,control_ref\n";
  else
    s << "controller,t,height,height_cmd,forward_velocity,forward_velocity_cmd,yaw_rate,yaw_rate_cmd\n";
  for (const auto& [name, r] : {std::pair<const char*, const EpisodeResult*>{"mpc", &mpc}, {"network", &net}})
    for (const TraceRow& t : r->trace)
      s << name << ',' << t.t << ',' << t.a << ',' << t.a_ref << ',' << t.b << ',' << t.b_ref << ',' << t.c << ','
        << t.c_ref << '\n';
  return s.str();
}

json evaluation_json(const DistillSystem& sys, const std::vector<EpisodeResult>& rs) {
  json per = json::array();
  int ok = 0;
  double a = 0, b = 0, c = 0, secs = 0;
  long long updates = 0;
  const bool linear = sys.kind() == "linear";
  for (const EpisodeResult& r : rs) {
    ok += r.ok;
    a += r.err_a / rs.size();
    b += r.err_b / rs.size();
    c += r.err_c / rs.size();
    secs += r.update_seconds;
    updates += r.updates;
    json j{{linear ? "stable" : "survived", r.ok}};
    if (linear) {
      j["rms_position"] = r.err_a;
      j["rms_velocity"] = r.err_b;
      j["final_state_norm"] = r.err_c;
    } else {
      j["height_rmse"] = r.err_a;
      j["velocity_rmse"] = r.err_b;
      j["yaw_rate_rmse"] = r.err_c;
    }
    if (!r.ok) {
      j["reason"] = r.reason;
      j["fall_time"] = r.fall_time;
    }
    per.push_back(j);
  }
  json out{{"episodes", rs.size()},
           {linear ? "stable" : "survived", ok},
           {"per_episode", per},
           {"mean_seconds_per_update", updates ? secs / updates : 0.0}};
  if (linear) {
    out["mean_rms_position"] = a;
    out["mean_rms_velocity"] = b;
    out["mean_final_state_norm"] = c;
  } else {
    out["mean_height_rmse"] = a;
    out["mean_velocity_rmse"] = b;
    out["mean_yaw_rate_rmse"] = c;
  }
  return out;
}

// The network of evaluate.weights, checked against the controller.
std::shared_ptr<const nn::Mlp> read_evaluation_network(const std::string& path, const DistillSystem& sys) {
  const std::vector<std::string> names = network_names(path);
  std::string name = sys.network_name();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    if (names.size() != 1)
      throw DataError(path + ": expected a network named '" + name + "' or exactly one network, got " +
                      std::to_string(names.size()));
    name = names.front();
  }
  NamedNetwork net = read_network(path, name);
  NetworkExpectations expect;
  expect.inputs = sys.num_features();
  expect.outputs = sys.num_targets();
  check_network(net, expect, path);
  return std::make_shared<const nn::Mlp>(std::move(net.network));
}

}  // namespace distill_job_detail

int run_distill_mpc(const AppOptions& opts, const DistillRequest& request) {
  using namespace distill_job_detail;
  const auto t_start = Clock::now();
  const Config cfg = Config::load(opts.config, opts.sets);
  const bool linear = cfg.has("linear");
  if (linear)
    cfg.check_known_keys({"name", "description", "linear", "distill", "output"});
  else
    cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "contact",
                          "initial_states", "controls", "distill", "output"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"weights", "dataset", "plot"});
  if (!cfg.has("distill")) cfg.fail("distill", "missing: the distillation settings (docs/distill-mpc.md)");
  const DistillSpec spec = read_distill_spec(cfg, opts.seed);
  std::string eval_weights;
  if (cfg.has("distill.evaluate.weights")) eval_weights = cfg.at("distill.evaluate").path("weights");

  // The system.
  std::optional<Experiment> exp;
  std::unique_ptr<DistillSystem> sys;
  if (linear) {
    sys = std::make_unique<LinearSystem>(*spec.linear, spec.pushes, static_cast<std::uint64_t>(opts.seed));
  } else {
    exp.emplace(load_experiment(cfg));
    const Config controls = cfg.at("controls");
    const std::string type = controls.get_choice("type", {"mpc"}, "mpc");
    (void)type;
    MpcControllerSpec mpc = read_mpc_controller_spec(controls, exp->model, exp->step, false);
    std::mt19937_64 rng(static_cast<std::uint64_t>(opts.seed));
    if (!cfg.has("initial_states")) cfg.fail("initial_states", "missing: the robot's initial state(s)");
    std::vector<InitialState> states = read_initial_states(cfg.at("initial_states"), exp->model, rng, 100000);
    apply_initial_state_parameters(*exp, states);
    if (states.empty()) cfg.fail("initial_states", "holds no state");
    for (size_t k = 0; k < states.size(); ++k)
      if (!states[k].q.allFinite() || !states[k].qd.allFinite())
        cfg.at("initial_states").fail("", "initial state " + std::to_string(k) + " is not finite");
    try {
      sys = std::make_unique<QuadrupedSystem>(*exp, std::move(mpc), std::move(states), spec.pushes,
                                              spec.evaluate.min_height);
    } catch (const ModelError& e) {
      controls.fail("feet", e.what());
    }
  }
  const std::string weights_name = OutputDirectory::configured_name(
      cfg, "output.weights", "weights.h5", {"checkpoint.json", "loss.csv", "closed_loop.csv", "closed_loop.png"});
  const std::string dataset_name = OutputDirectory::configured_name(
      cfg, "output.dataset", "dataset.h5", {"checkpoint.json", "loss.csv", "closed_loop.csv", "closed_loop.png", weights_name});
  const bool plot = plots_wanted(cfg, opts);

  // Work sized before anything is allocated.
  const bool train = eval_weights.empty();
  const bool generate = train && spec.data.file.empty();
  const std::string checkpoint = (std::filesystem::path(opts.out) / "checkpoint.json").string();
  const std::string out_dataset = (std::filesystem::path(opts.out) / dataset_name).string();
  if (generate) {
    const double per = static_cast<double>(sys->samples_per_episode(spec.data.duration));
    const double estimate = per * spec.data.episodes;
    if (estimate > static_cast<double>(spec.data.max_samples))
      cfg.at("distill").fail(cfg.has("distill.data.episodes") ? "data.episodes" : "data.duration",
                             "the run would record up to " + std::to_string(static_cast<long long>(estimate)) +
                                 " samples (" + std::to_string(spec.data.episodes) + " episodes x " +
                                 std::to_string(static_cast<long long>(per)) + "), more than distill.data.max_samples = " +
                                 std::to_string(spec.data.max_samples));
    check_memory(cfg.at("distill"), "data.episodes",
                 std::to_string(spec.data.episodes) + " episodes x " + std::to_string(static_cast<long long>(per)) +
                     " samples",
                 estimate * 8.0 * 2.0 * (sys->num_features() + sys->num_targets() + 2));
  }
  std::shared_ptr<const nn::Mlp> given_net;
  if (!train) given_net = read_evaluation_network(eval_weights, *sys);
  DistillDataset dataset;
  bool have_dataset = false;
  if (train && !spec.data.file.empty()) {
    dataset = read_distill_dataset(spec.data.file);
    check_dataset_shape(dataset, *sys, spec.data.file);
    have_dataset = true;
  } else if (generate && request.resume && std::filesystem::exists(checkpoint) &&
             std::filesystem::exists(out_dataset)) {
    // The dataset of the interrupted run (generation is deterministic; reading is faster).
    dataset = read_distill_dataset(out_dataset);
    check_dataset_shape(dataset, *sys, out_dataset);
    have_dataset = true;
  }

  const OutputDirectory out(opts.out, "distill-mpc",
                            request.resume ? OutputDirectory::Reuse::kResume
                            : opts.force   ? OutputDirectory::Reuse::kForce
                                           : OutputDirectory::Reuse::kRefuse);
  RunSummary summary("distill-mpc", opts, cfg, out);
  if (exp) {
    for (const std::string& n : exp->notes) spdlog::info("{}", n);
    for (const std::string& w : exp->warnings) {
      spdlog::warn("{}", w);
      summary.add_warning(w);
    }
  }
  summary.timings()["setup_s"] = seconds_since(t_start);
  json& metrics = summary.metrics();
  metrics["system"] = sys->kind();
  metrics["num_features"] = sys->num_features();
  metrics["num_targets"] = sys->num_targets();
  begin_cooperative_interrupts();

  // 1. Data.
  if (generate && !have_dataset) {
    const auto t0 = Clock::now();
    spdlog::info("generating {} closed-loop episodes of {} s under the MPC ({} system)", spec.data.episodes,
                 spec.data.duration, sys->kind());
    std::vector<EpisodeSamples> eps;
    Progress progress("data", spec.data.episodes);
    std::atomic<long long> done{0};
    const std::vector<EpisodeResult> gen =
        run_episodes(*sys, 0, spec.data.episodes, spec.data.duration, nullptr, &eps, &progress, &done);
    progress.finish();
    if (interrupt_requested()) {
      summary.set_status("interrupted");
      summary.write();
      return kExitInterrupted;
    }
    int failed = 0;
    for (const EpisodeResult& r : gen) failed += !r.ok;
    if (failed)
      summary.add_warning(std::to_string(failed) + " of " + std::to_string(gen.size()) +
                          " data episodes ended early under the MPC (fell or not stable)");
    dataset = assemble(*sys, eps);
    if (dataset.size() == 0) throw NumericalError("the MPC produced no optimal solve in any data episode");
    summary.timings()["data_s"] = seconds_since(t0);
    metrics["data_episodes_failed"] = failed;
  }
  if (train) {
    if (generate) {
      write_distill_dataset(out.path(dataset_name), dataset);
      summary.add_output(out.path(dataset_name));
    }
    metrics["dataset"] = {{"samples", dataset.size()}, {"file", generate ? out.path(dataset_name) : spec.data.file}};
    spdlog::info("dataset: {} samples of {} features -> {} targets", dataset.size(), dataset.features.cols(),
                 dataset.targets.cols());
  }

  // 2. Training.
  std::shared_ptr<const nn::Mlp> net = given_net;
  std::string status = "ok";
  if (train) {
    // Split by episode: the last validation_fraction of the episodes validate.
    const double num_episodes = dataset.episode.size() ? dataset.episode.maxCoeff() + 1 : 0;
    const double first_val = std::floor(num_episodes * (1.0 - spec.data.validation_fraction));
    std::vector<Eigen::Index> tr, va;
    for (Eigen::Index k = 0; k < dataset.size(); ++k) (dataset.episode[k] < first_val || first_val < 1 ? tr : va).push_back(k);
    if (spec.data.validation_fraction > 0 && va.empty() && dataset.size() > 1) {
      // Too few episodes to split by episode: the last samples validate.
      const Eigen::Index nv = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(dataset.size() * spec.data.validation_fraction));
      tr.resize(static_cast<size_t>(dataset.size() - nv));
      for (Eigen::Index k = dataset.size() - nv; k < dataset.size(); ++k) va.push_back(k);
    }
    auto rows = [&](const RowMatrixXd& m, const std::vector<Eigen::Index>& idx) {
      RowMatrixXd r(static_cast<Eigen::Index>(idx.size()), m.cols());
      for (size_t i = 0; i < idx.size(); ++i) r.row(static_cast<Eigen::Index>(i)) = m.row(idx[i]);
      return r;
    };
    RowMatrixXd xt = rows(dataset.features, tr), yt = rows(dataset.targets, tr);
    RowMatrixXd xv = rows(dataset.features, va), yv = rows(dataset.targets, va);
    nn::Mlp mlp(sys->num_features(), spec.network.hidden, sys->num_targets(), spec.network.activation);
    fit_regression_normalization(mlp, xt, yt);
    std::mt19937_64 init(splitmix64(static_cast<std::uint64_t>(opts.seed) ^ 0x696e6974ULL));
    mlp.initialize(nn::Init::kXavierUniform, init);
    SupervisedRegression reg(mlp, std::move(xt), std::move(yt), std::move(xv), std::move(yv), spec.train);

    json cj = cfg.to_json();
    if (cj.contains("distill") && cj["distill"].is_object()) cj["distill"].erase("evaluate");
    DistillFingerprint fp = config_digests(cj, {"name", "description", "output"});
    fp["dataset"] = dataset_digest(dataset);
    fp["seed"] = std::to_string(opts.seed);
    SupervisedState state = request.resume && std::filesystem::exists(checkpoint)
                                ? read_distill_checkpoint(checkpoint, reg.num_parameters(), fp, spec.train.epochs)
                                : reg.initial_state();
    if (request.resume) spdlog::info("resuming from {} at epoch {}", checkpoint, state.epoch);
    const double initial_validation = reg.validation_loss(reg.initial_state().x);
    spdlog::info("training {} ({} parameters) on {} samples ({} validation), {} epochs", mlp.describe(),
                 reg.num_parameters(), reg.num_train(), reg.num_validation(), spec.train.epochs);
    const auto t0 = Clock::now();
    Progress progress("train", spec.train.epochs);
    std::string error;
    try {
      reg.run(
          state,
          [&](const SupervisedState& s) {
            write_distill_checkpoint(out.path("checkpoint.json"), s, reg.num_parameters(), fp);
            progress.update(s.epoch);
            spdlog::debug("epoch {}: train {:.6g}, validation {:.6g}", s.history.back().epoch,
                          s.history.back().train_loss, s.history.back().validation_loss);
            return !interrupt_requested();
          },
          interrupt_flag());
    } catch (const NumericalError& e) {
      status = "diverged";
      error = e.what();
    }
    progress.finish();
    if (interrupt_requested()) status = "interrupted";
    summary.timings()["train_s"] = seconds_since(t0);
    const nn::Mlp best = reg.network_at(state.best_x);
    write_networks(out.path(weights_name), {{sys->network_name(), best, sys->feature_names(), sys->target_names()}});
    summary.add_output(out.path(weights_name));
    write_text_atomic(out.path("loss.csv"), loss_csv(state.history));
    summary.add_output(out.path("loss.csv"));
    if (std::filesystem::exists(out.path("checkpoint.json"))) summary.add_output(out.path("checkpoint.json"));
    const Eigen::VectorXd rmse_t = reg.rmse(state.best_x, false), rmse_v = reg.rmse(state.best_x, true);
    auto vec = [](const Eigen::VectorXd& v) {
      json a = json::array();
      for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(finite_or_null(v[i]));
      return a;
    };
    metrics["training"] = {{"network", best.describe()},
                           {"num_parameters", reg.num_parameters()},
                           {"train_samples", reg.num_train()},
                           {"validation_samples", reg.num_validation()},
                           {"epochs_completed", state.epoch},
                           {"best_epoch", state.best_epoch},
                           {"initial_validation_loss", finite_or_null(initial_validation)},
                           {"best_validation_loss", finite_or_null(state.best_validation)},
                           {"final_train_loss", state.history.empty() ? json(nullptr)
                                                                      : finite_or_null(state.history.back().train_loss)},
                           {"train_rmse", vec(rmse_t)},
                           {"validation_rmse", vec(rmse_v)},
                           {"train_rmse_mean", finite_or_null(rmse_t.mean())},
                           {"validation_rmse_mean", finite_or_null(rmse_v.mean())}};
    if (!error.empty()) metrics["error"] = error;
    spdlog::info("best epoch {}: validation loss {:.4g} (initial {:.4g}); RMSE train {:.4g}, validation {:.4g}",
                 state.best_epoch, state.best_validation, initial_validation, rmse_t.mean(), rmse_v.mean());
    net = std::make_shared<const nn::Mlp>(best);
    if (status != "ok") {
      summary.set_status(status);
      summary.write();
      if (status == "diverged") throw NumericalError(error + " (the best weights so far were written to " + out.dir() + ")");
      return kExitInterrupted;
    }
  }

  // 3. Closed-loop evaluation: the MPC and the network under the same
  // commands, pushes and initial states.
  if (spec.evaluate.episodes > 0) {
    const auto t0 = Clock::now();
    Progress progress("evaluate", 2LL * spec.evaluate.episodes);
    std::atomic<long long> done{0};
    const auto with_mpc = run_episodes(*sys, kEvaluationIndexOffset, spec.evaluate.episodes, spec.evaluate.duration,
                                       nullptr, nullptr, &progress, &done);
    const auto with_net = run_episodes(*sys, kEvaluationIndexOffset, spec.evaluate.episodes, spec.evaluate.duration,
                                       net, nullptr, &progress, &done);
    progress.finish();
    if (interrupt_requested()) {
      summary.set_status("interrupted");
      summary.write();
      return kExitInterrupted;
    }
    json ev{{"duration", spec.evaluate.duration}, {"mpc", evaluation_json(*sys, with_mpc)},
            {"network", evaluation_json(*sys, with_net)}};
    const double tm = ev["mpc"]["mean_seconds_per_update"].get<double>();
    const double tn = ev["network"]["mean_seconds_per_update"].get<double>();
    ev["speedup_per_update"] = tn > 0 ? json(tm / tn) : json(nullptr);
    metrics["evaluation"] = ev;
    summary.timings()["evaluate_s"] = seconds_since(t0);
    const std::string ok_key = linear ? "stable" : "survived";
    spdlog::info("closed loop, {} episodes of {} s: {} {} with the MPC, {} with the network", spec.evaluate.episodes,
                 spec.evaluate.duration, ok_key, ev["mpc"][ok_key].get<int>(), ev["network"][ok_key].get<int>());
    write_text_atomic(out.path("closed_loop.csv"), trace_csv(*sys, with_mpc[0], with_net[0]));
    summary.add_output(out.path("closed_loop.csv"));
    if (plot) {
      draw_plot("plot_distill.py", {out.path("closed_loop.csv"), out.path("loss.csv"), out.path("closed_loop.png")});
      if (std::filesystem::exists(out.path("closed_loop.png"))) summary.add_output(out.path("closed_loop.png"));
    }
  }
  summary.set_status(status);
  summary.write();
  return kExitOk;
}

}  // namespace neuralsim
