#include "neuralsim/tools/rollout.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>

#include "neuralsim/augment/augmented_dynamics.hpp"
#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/experiment/mpc_controllers.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/lstm_file.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/tools/training_setup.hpp"
#include "neuralsim/train/baseline_models.hpp"
#include "neuralsim/io/work_size.hpp"

namespace neuralsim {
namespace rollout_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr long long kMaxTrajectories = 1000000;

void check_root(const Config& cfg) {
  cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "initial_states",
                        "controls", "noise", "output", "compare", "contact", "targets", "augment", "weights"});
}

// The trained model's file: --weights (relative to the working directory),
// else the config's `weights:` (relative to the config), else none.
std::string weights_path_of(const Config& cfg, const std::string& flag) {
  if (!flag.empty()) return flag;
  return cfg.has("weights") ? cfg.path("weights") : std::string();
}

// use_controls of a baseline whose file predates the field: its input is
// [q; q̇] (nq + nv values) or [q; q̇; u] (nq + 2 nv), never both.
bool inferred_use_controls(long long inputs, const Model<double>& model, const std::string& object) {
  if (inputs == model.nq + 2 * model.nv) return true;
  if (inputs == model.nq + model.nv) return false;
  throw DataError(object + ": expected " + std::to_string(model.nq + model.nv) + " inputs (q, qd) or " +
                  std::to_string(model.nq + 2 * model.nv) + " (q, qd, u) for model '" + model.name + "', got " +
                  std::to_string(inputs));
}

StateNames state_names(const Model<double>& model) {
  StateNames names;
  names.q_names = model.position_names();
  names.v_names = model.velocity_names();
  return names;
}

// The MLP baseline of a weights file, as train-augment trained it.
std::unique_ptr<WindowModel> read_mlp_baseline(const std::string& path, const std::string& kind,
                                               const Model<double>& model) {
  const std::vector<std::string> names = network_names(path);
  if (names != std::vector<std::string>{"mlp"})
    throw DataError(path + ":/networks: an MLP baseline file holds one network 'mlp', got [" +
                    [&] { std::string t; for (const std::string& n : names) t += (t.empty() ? "" : ", ") + n; return t; }() + "]");
  const NamedNetwork net = read_network(path, "mlp");
  const WeightsFileModel info = read_weights_file_model(path);
  const std::string object = path + ":/networks/mlp";
  MlpStateModelOptions o;
  o.nq = model.nq;
  o.nv = model.nv;
  o.use_controls = info.use_controls ? *info.use_controls : inferred_use_controls(net.network.input_dim(), model, object);
  o.predict_delta = kind == "mlp-delta";
  o.names = state_names(model);
  o.hidden_widths.clear();
  for (nn::Index l = 0; l + 1 < net.network.num_layers(); ++l)
    o.hidden_widths.push_back(static_cast<int>(net.network.layer_output_dim(l)));
  if (net.network.num_layers() > 1) o.activation = net.network.activation(0);
  NetworkExpectations expect;
  expect.inputs = model.nq + model.nv + (o.use_controls ? model.nv : 0);
  expect.outputs = model.nq + model.nv;
  check_network(net, expect, path);
  auto m = std::make_unique<MlpStateModel>(o);
  expect.input_names = m->input_names();
  expect.output_names = m->output_names();
  check_network(net, expect, path);
  try {
    m->set_network(net.network);
  } catch (const InvalidArgument& e) {
    throw DataError(object + ": " + e.what());
  }
  return m;
}

// The LSTM baseline of an LSTM file, as train-augment trained it.
std::unique_ptr<WindowModel> read_lstm_baseline(const std::string& path, const Model<double>& model) {
  const NamedLstm lstm = read_lstm_file(path);
  LstmStateModelOptions o;
  o.nq = model.nq;
  o.nv = model.nv;
  o.use_controls = lstm.use_controls ? *lstm.use_controls : inferred_use_controls(lstm.network.input_dim(), model, path);
  o.hidden = static_cast<int>(lstm.network.hidden_size());
  o.names = state_names(model);
  auto m = std::make_unique<LstmStateModel>(o);
  if (lstm.network.input_dim() != m->input_dim() || lstm.network.output_dim() != m->state_dim())
    throw DataError(path + ": expected an LSTM of " + std::to_string(m->input_dim()) + " inputs and " +
                    std::to_string(m->state_dim()) + " outputs for model '" + model.name + "', got " +
                    lstm.network.describe());
  if (!lstm.input_names.empty() && lstm.input_names != m->input_names())
    throw DataError(path + ": 'input_names' are not model '" + model.name + "''s coordinates (expected " +
                    m->input_names().front() + ", ...; got " + lstm.input_names.front() + ", ...)");
  m->set_network(lstm.network);
  return m;
}

// What --weights (or weights:) holds: the hybrid's networks, loaded into the
// experiment's blueprints, or a baseline (returned).
struct TrainedModelFile {
  std::string path, kind;  // kind: "" without weights, else trained_model_kind()'s
  std::unique_ptr<WindowModel> baseline;
};

// The experiment, with the networks of the weights file when it holds a
// hybrid's; a baseline's file gives `trained.baseline`.
Experiment load_rollout_experiment(const Config& cfg, const std::string& weights_flag, TrainedModelFile& trained) {
  Experiment exp = load_experiment(cfg);
  trained.path = weights_path_of(cfg, weights_flag);
  if (trained.path.empty()) return exp;
  const std::string& path = trained.path;
  trained.kind = trained_model_kind(path);
  if (trained.kind.empty()) {
    // Written before files said what they hold: a hybrid's networks, unless
    // it looks like an MLP baseline, which cannot be told from a hybrid
    // network that happens to be called "mlp".
    if (network_names(path) == std::vector<std::string>{"mlp"})
      throw DataError(path + ": the file does not say what it holds (no root attribute 'model': written before "
                             "#38); an MLP baseline cannot be told from a hybrid network named 'mlp': retrain it");
    trained.kind = "hybrid";
  }
  if (trained.kind == "hybrid") {
    if (exp.augment.empty())
      throw ConfigError(cfg.file() + ": weights " + path +
                        ": the config has no augment: section whose networks the weights would replace");
    load_augment_weights(exp.augment, path, &cfg);
  } else if (trained.kind == "lstm-delta") {
    trained.baseline = read_lstm_baseline(path, exp.model);
  } else {
    trained.baseline = read_mlp_baseline(path, trained.kind, exp.model);
  }
  return exp;
}

ModelSummary model_summary(const Experiment& exp, const TrainedModelFile& trained) {
  ModelSummary m{exp.model.name, exp.model.nq, exp.model.nv, integrator_name(exp.step.integrator),
                 exp.contact ? contact_model_name(exp.contact->model) : "", {}, trained.kind, trained.path};
  if (!trained.baseline)
    for (const AugmentBlueprint& bp : exp.augment) m.augmentations.push_back({bp.name, bp.network.num_parameters()});
  return m;
}


bool baseline_uses_controls(const WindowModel& m) {
  if (const auto* mlp = dynamic_cast<const MlpStateModel*>(&m)) return mlp->options().use_controls;
  return dynamic_cast<const LstmStateModel&>(m).options().use_controls;
}

// The config as the parameters of the trajectories a tool writes.
std::string parameters_json(const Config& cfg) {
  nlohmann::json params = nlohmann::json::object();
  params["config"] = cfg.to_json();
  return params.dump();
}

void add_observation_noise(Trajectory& tr, const Model<double>& model, double q_std, double qd_std,
                           std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    for (int i = 0; i < model.nq; ++i) tr.q(k, i) += q_std * n(rng);
    for (int i = 0; i < model.nv; ++i) tr.qd(k, i) += qd_std * n(rng);
    Eigen::VectorXd q = tr.q.row(k).transpose();
    normalize_configuration(model, q);
    tr.q.row(k) = q.transpose();
  }
}

// `targets: [{link, time, position: [x, y, z], tolerance}]`: positions a
// link must reach (Degrave's ball throw). Checked on every trajectory at the
// sample nearest to `time`.
struct LinkTarget {
  LinkRef link;
  double time = 0;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  double tolerance = 0;
};

std::vector<LinkTarget> read_targets(const Config& cfg, const Model<double>& model, double duration) {
  std::vector<LinkTarget> out;
  if (!cfg.has("targets")) return out;
  for (const Config& t : cfg.list("targets")) {
    t.check_known_keys({"link", "time", "position", "tolerance"});
    LinkTarget target;
    const std::string link = t.get<std::string>("link");
    const auto ref = find_link(model, link);
    if (!ref) t.fail("link", "no body or frame named '" + link + "'");
    target.link = *ref;
    target.time = t.get<double>("time");
    if (!(target.time >= 0 && target.time <= duration + 1e-12)) t.fail("time", "must lie in [0, sim.duration]");
    const std::vector<double> p = t.get<std::vector<double>>("position");
    if (p.size() != 3) t.fail("position", "expected [x, y, z]");
    target.position = Eigen::Vector3d(p[0], p[1], p[2]);
    target.tolerance = t.get<double>("tolerance");
    if (!(target.tolerance > 0)) t.fail("tolerance", "must be > 0");
    out.push_back(target);
  }
  return out;
}

std::vector<TargetCheck> check_targets(const Model<double>& model, const std::vector<LinkTarget>& targets,
                                       const TrajectorySet& set, const RunContext& context) {
  std::vector<TargetCheck> out;
  for (const Trajectory& tr : set.trajectories) {
    for (const LinkTarget& t : targets) {
      Eigen::Index k = 0;
      (tr.time.array() - t.time).abs().minCoeff(&k);
      Trajectory one;
      one.time = tr.time.segment(k, 1);
      one.q = tr.q.middleRows(k, 1);
      record_link_poses(model, {t.link}, one);
      const Eigen::Vector3d p = one.link_poses[t.link.first].row(0).head<3>().transpose();
      TargetCheck c{tr.name, t.link.first, tr.time[k], t.position, p, (p - t.position).norm(), t.tolerance, false};
      c.hit = c.distance <= t.tolerance;
      context.log(c.hit ? LogLevel::kInfo : LogLevel::kWarning,
                  format_printf("target %s: trajectory %s link %s at t = %.4g s is %.4g m from the target "
                                "(tolerance %.4g)",
                                c.hit ? "hit" : "missed", tr.name.c_str(), c.link.c_str(), c.time, c.distance,
                                t.tolerance));
      out.push_back(c);
    }
  }
  return out;
}

// What rollout reads of the config beyond the experiment, all checked
// before any work.
struct SimulationSetup {
  long long steps = 0;
  std::vector<InitialState> states;
  std::vector<LinkTarget> targets;
  TrajectorySet recorded;  // controls.file
  std::vector<std::string> data_notes;  // rows a CSV import of controls.file dropped: warnings
  std::vector<LinkRef> link_poses;
  double q_noise = 0, qd_noise = 0;
  std::vector<std::unique_ptr<Controller<double>>> controllers;
};

SimulationSetup read_simulation(const Config& cfg, const Experiment& exp, long long seed) {
  SimulationSetup s;
  const Model<double>& model = exp.model;
  const Config sim = cfg.at("sim");
  const double duration = sim.get<double>("duration");
  if (!(duration >= exp.step.dt))
    sim.fail("duration", "must be at least one time step (dt = " + std::to_string(exp.step.dt) + " s), got " +
                             std::to_string(duration));
  if (duration / exp.step.dt > 1e12) sim.fail("duration", "is more than 10^12 time steps");
  s.steps = std::llround(duration / exp.step.dt);
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  const Config states_section = cfg.has("initial_states") ? cfg.at("initial_states") : Config::parse("{}", cfg.file());
  s.states = read_initial_states(states_section, model, rng, kMaxTrajectories);
  apply_initial_state_parameters(exp, s.states);
  s.targets = read_targets(cfg, model, duration);
  const Config controls = cfg.has("controls") ? cfg.at("controls") : Config::parse("type: zero", cfg.file());
  if (controls.has("file")) {
    // A dataset controller plays sample k at step k (controllers.hpp).
    if (cfg.has("sim")) refuse_control_interpolation(cfg.at("sim"), exp.step, "rollout with controls of type 'dataset'");
    std::string source;
    s.recorded = load_trajectory_files(controls, "file", source, &s.data_notes);  // errors name the key
    TrajectoryExpectations expect;
    expect.nv = model.nv;
    expect.require_tau = true;
    validate_trajectories(s.recorded, expect, source);
  }
  s.link_poses = read_links(cfg, "output.link_poses", model);
  s.q_noise = cfg.get_in_range("noise.q_std", 0.0, 0, 1e6);
  s.qd_noise = cfg.get_in_range("noise.qd_std", 0.0, 0, 1e6);
  if (cfg.has("noise")) cfg.at("noise").check_known_keys({"q_std", "qd_std"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"file", "link_poses", "compare_file"});
  // Sized before anything is allocated: every sample of every trajectory is
  // kept, and written as one HDF5 file.
  const double per_sample = 8.0 * (1 + model.nq + 2 * model.nv + 7 * s.link_poses.size());
  check_memory(sim, "duration",
               std::to_string(s.states.size()) + " trajectories of " + std::to_string(s.steps + 1) + " samples",
               kHdf5OutputCopies * per_sample * static_cast<double>(s.states.size()) * static_cast<double>(s.steps + 1));
  // Every controller is built up front so config errors surface before any work.
  ControllerRegistry registry = standard_controllers();
  add_mpc_controllers(registry, exp.step);
  for (size_t k = 0; k < s.states.size(); ++k)
    s.controllers.push_back(registry.make(controls, model, static_cast<int>(k), &s.recorded));
  for (size_t k = 0; k < s.states.size(); ++k)
    if (!s.states[k].q.allFinite() || !s.states[k].qd.allFinite())
      states_section.fail("", "initial state " + std::to_string(k) + " is not finite");
  return s;
}

// One trajectory, or an empty one when the run was interrupted.
Trajectory simulate_one(const Experiment& exp, const SimulationSetup& s, size_t k, long long seed,
                        const std::function<bool()>& stop) {
  const Model<double>& model = exp.model;
  Stepper<double> stepper(model, exp.step);
  std::shared_ptr<ContactSystem<double>> contact;
  if (exp.contact) contact = install_contact(*exp.contact, model, stepper);
  std::shared_ptr<AugmentedDynamics<double>> networks;
  if (!exp.augment.empty()) networks = install_augmentation<double>(exp.augment, model, stepper, contact.get());
  Trajectory tr = simulate(stepper, s.states[k].q, s.states[k].qd, *s.controllers[k], s.steps, stop);
  if (tr.size() != s.steps + 1) return Trajectory();  // interrupted: only complete trajectories count
  char name[24];
  std::snprintf(name, sizeof(name), "%03zu", k);
  tr.name = name;
  record_link_poses(model, s.link_poses, tr);  // before noise: poses are the true state
  if (s.q_noise > 0 || s.qd_noise > 0) {
    std::mt19937_64 noise_rng(static_cast<uint64_t>(seed) * 1000003ULL + k);  // per-trajectory stream
    add_observation_noise(tr, model, s.q_noise, s.qd_noise, noise_rng);
  }
  return tr;
}

// Every rank's trajectories (or their error) to every rank.
void exchange_trajectories(const Communicator& comm, std::vector<Trajectory>& trajectories,
                           std::vector<std::string>& errors) {
  auto pack = [&](std::size_t k, ByteWriter& w) {
    const Trajectory& t = trajectories[k];
    w.put_string(errors[k]);
    w.put_string(t.name);
    w.put_eigen(t.time);
    w.put_eigen(t.q);
    w.put_eigen(t.qd);
    w.put_eigen(t.tau);
    w.put<std::uint64_t>(t.link_poses.size());
    for (const auto& [link, poses] : t.link_poses) {
      w.put_string(link);
      w.put_eigen(poses);
    }
  };
  auto unpack = [&](std::size_t k, ByteReader& in) {
    Trajectory& t = trajectories[k];
    errors[k] = in.get_string();
    t.name = in.get_string();
    t.time = in.get_eigen<Eigen::VectorXd>();
    t.q = in.get_eigen<RowMatrixXd>();
    t.qd = in.get_eigen<RowMatrixXd>();
    t.tau = in.get_eigen<RowMatrixXd>();
    const auto links = in.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < links; ++i) {
      const std::string link = in.get_string();
      t.link_poses[link] = in.get_eigen<RowMatrixXd>();
    }
  };
  exchange_owned(comm, trajectories.size(), pack, unpack);
}

}  // namespace rollout_detail

RolloutResult rollout(const RolloutRequest& request, const RunContext& context) {
  using namespace rollout_detail;
  const auto t_setup = Clock::now();
  const Config& cfg = request.config;
  check_root(cfg);
  TrainedModelFile trained;
  const Experiment exp = load_rollout_experiment(cfg, request.weights_path, trained);
  if (trained.baseline)
    throw ConfigError(cfg.file() + ": weights " + trained.path + " hold a " + trained.kind +
                      " baseline, which steps recorded states and controls, not a simulator: replay it on "
                      "recordings with rollout --compare DATA.h5");
  const Model<double>& model = exp.model;
  const SimulationSetup s = read_simulation(cfg, exp, request.seed);

  RolloutResult r;
  r.model = model_summary(exp, trained);
  r.num_requested = static_cast<long long>(s.states.size());
  r.warnings = exp.warnings;
  r.warnings.insert(r.warnings.end(), s.data_notes.begin(), s.data_notes.end());
  context.started();
  for (const std::string& n : exp.notes) context.info(n);
  for (const std::string& w : r.warnings) context.warn(w);
  r.timings["setup_s"] = seconds_since(t_setup);

  const auto t_sim = Clock::now();
  std::vector<Trajectory> trajectories(s.states.size());
  std::atomic<long long> done_steps{0};
  ProgressStage progress(context, "rollout", s.steps * static_cast<long long>(s.states.size()));
  // Trajectory k on rank k mod size; every rank then holds them all. A
  // diverged trajectory is reported by the lowest index that diverged.
  std::vector<std::string> errors(s.states.size());
  tbb::parallel_for(size_t(0), s.states.size(), [&](size_t k) {
    if (!owns(context.communicator, static_cast<long long>(k)) || context.stop_requested()) return;
    try {
      long long local = 0;
      auto stop = [&] {
        if (++local % 1000 == 0) progress.update(done_steps.fetch_add(1000) + 1000);
        return context.stop_requested();
      };
      trajectories[k] = simulate_one(exp, s, k, request.seed, stop);
    } catch (const NumericalError& e) {
      errors[k] = e.what();
    }
  });
  progress.finish();
  if (context.communicator) exchange_trajectories(*context.communicator, trajectories, errors);
  for (const std::string& e : errors)
    if (!e.empty()) {
      r.status = RunStatus::kDiverged;
      r.message = e;
      return r;
    }
  const double sim_s = seconds_since(t_sim);
  r.trajectories.meta = trajectory_metadata(model, "", parameters_json(cfg), request.seed);
  for (Trajectory& tr : trajectories)
    if (tr.size() > 0) r.trajectories.trajectories.push_back(std::move(tr));
  for (const auto& tr : r.trajectories.trajectories) r.num_samples += tr.size();
  const long long steps_done = r.num_samples - static_cast<long long>(r.trajectories.trajectories.size());
  r.steps_per_second = sim_s > 0 ? static_cast<double>(steps_done) / sim_s : 0.0;
  r.timings["simulate_s"] = sim_s;
  if (context.stop_agreed()) {
    r.status = RunStatus::kInterrupted;
    return r;
  }
  if (!s.targets.empty()) {
    r.targets = check_targets(model, s.targets, r.trajectories, context);
    for (const TargetCheck& t : r.targets)
      if (!t.hit) r.status = RunStatus::kTargetMissed;
  }
  return r;
}

// ---------------------------------------------------------------------------
// compare

namespace rollout_detail {

struct ComparisonSetup {
  std::vector<long long> horizons;
  std::optional<EvaluationWindows> windows;
  bool torque = false;
  DerivativeOptions torque_derivatives;
  // compare.markers: points fixed on links whose positions the recordings
  // hold under their data names (simid's link_positions entries).
  std::vector<LinkPositionChannel> markers;
};

ComparisonSetup read_comparison(const Config& cfg, const TrajectorySet& data, const Model<double>& model) {
  ComparisonSetup c;
  if (cfg.has("compare")) cfg.at("compare").check_known_keys({"horizons", "windows", "torque", "markers"});
  if (cfg.has("compare.markers")) {
    c.markers = read_link_positions(cfg.at("compare"), "markers", model);
    for (const Config& m : cfg.at("compare").list("markers"))
      if (m.has("weight")) m.fail("weight", "a compared marker has no weight (only simid's residuals weigh)");
  }
  for (double h : cfg.get_or<std::vector<double>>("compare.horizons", {10, 100, 1000})) {
    if (!(h >= 1 && h <= 1e12 && h == std::floor(h))) cfg.fail("compare.horizons", "horizons are sample counts >= 1");
    c.horizons.push_back(static_cast<long long>(h));
  }
  // Windows in seconds (restart from the measured state every T s, predict H s).
  if (cfg.has("compare.windows")) {
    const Config w = cfg.at("compare.windows");
    c.windows = read_evaluation_windows(w);
    check_windows_fit(w, *c.windows, {&data});
  }
  // Inverse-dynamics torque error of the config's model: `torque: true`, or
  // `torque: {derivatives: {...}}` / `{filter_window: n}` with simid's keys
  // and defaults (estimation_config.hpp: Savitzky–Golay on the recording's
  // time stamps unless told otherwise).
  c.torque_derivatives = default_derivative_options(&model);
  if (cfg.has("compare.torque")) {
    if (cfg.is_map("compare.torque")) {
      const Config t = cfg.at("compare.torque");
      t.check_known_keys({"derivatives", "filter_window"});
      c.torque = true;
      c.torque_derivatives = read_derivative_options(t, &model);
    } else {
      c.torque = cfg.get<bool>("compare.torque");
    }
  }
  return c;
}

void compare_torque(const Experiment& exp, const TrajectorySet& data, const DerivativeOptions& derivatives,
                    CompareResult& r, const RunContext& context) {
  std::string note;
  r.torque_derivatives = derivatives;
  r.torque = torque_error(exp.model, data, derivatives, &note, &exp.step.controls);  // at the control delay
  if (r.torque)
    context.info(format_printf("inverse-dynamics torque RMSE = %.6g over %lld samples", r.torque->rmse,
                               static_cast<long long>(r.torque->samples)));
  // RNEA sees neither contact forces nor networks: say so next to the number.
  if (r.torque && exp.contact) note += (note.empty() ? "" : "; ") + std::string("contact forces are not in the inverse dynamics");
  if (r.torque && !r.model.augmentations.empty())
    note += (note.empty() ? "" : "; ") + std::string("the torque error is of the physical model, without the augmentations");
  if (r.torque && !r.model.trained_model.empty() && r.model.trained_model != "hybrid")
    note += std::string(note.empty() ? "" : "; ") + "the torque error is of the config's physical model, not of the " +
            r.model.trained_model + " baseline";
  r.torque_note = note;
  if (!note.empty()) context.info(note);
}

// A trained baseline's window prediction: its free rollout from the
// measured state at the window's start under the recorded controls, as
// free_rollout does for a whole recording.
WindowPredictor baseline_predictor(const WindowModel& baseline, bool use_controls) {
  auto own = std::shared_ptr<WindowModel>(baseline.clone());  // a model has workspaces
  const Eigen::VectorXd x = own->initial_parameters();
  return [own, x, use_controls](const Trajectory& tr, int start, int length, Eigen::VectorXd& q, Eigen::VectorXd& qd,
                                const WindowSampleSink& on_sample) {
    const Eigen::MatrixXd controls = use_controls ? Eigen::MatrixXd(tr.tau.middleRows(start, length).transpose())
                                                  : Eigen::MatrixXd(0, length);
    Eigen::MatrixXd Q, QD;
    own->rollout(x, q, qd, controls, &Q, &QD);
    if (!Q.allFinite() || !QD.allFinite()) return false;
    for (int j = 0; j < length; ++j) on_sample(start + 1 + j, Q.col(j), QD.col(j));
    return true;
  };
}

}  // namespace rollout_detail

CompareResult compare(const CompareRequest& request, const RunContext& context) {
  using namespace rollout_detail;
  const Config& cfg = request.config;
  check_root(cfg);
  TrainedModelFile trained;
  const Experiment exp = load_rollout_experiment(cfg, request.weights_path, trained);
  const Model<double>& model = exp.model;
  std::vector<std::string> notes;
  const TrajectorySet data = load_trajectory_file(request.data_path, &notes);
  validate_against_model(data, model, request.data_path);
  if (cfg.has("sim")) check_control_timing(cfg.at("sim"), exp.step, data, request.data_path);
  const ComparisonSetup c = read_comparison(cfg, data, model);
  const bool use_controls = trained.baseline && baseline_uses_controls(*trained.baseline);
  if (trained.baseline) {
    if (use_controls)
      for (const Trajectory& t : data.trajectories)
        if (!t.has_tau())
          throw DataError(request.data_path + ":/trajectories/" + t.name + "/tau: missing; the " + trained.kind +
                          " baseline of " + trained.path + " reads the recorded controls");
  }
  // compare.markers (at their points), then output.link_poses (the
  // predicted poses, as a rollout writes them).
  std::vector<LinkRef> link_poses;
  std::vector<Eigen::Vector3d> points;
  const auto add = [&](const LinkRef& l, const Eigen::Vector3d& point) {
    const auto same = [&l](const LinkRef& other) { return other.first == l.first; };
    if (std::any_of(link_poses.begin(), link_poses.end(), same)) return;
    link_poses.push_back(l);
    points.push_back(point);
  };
  for (const LinkPositionChannel& m : c.markers) add({m.data_name(), m.body}, m.point);
  for (const LinkRef& l : read_links(cfg, "output.link_poses", model)) add(l, Eigen::Vector3d::Zero());
  // Task-space metrics: the predictions also get the poses of every link or
  // frame the recordings observe, so their errors are scored.
  std::vector<std::string> unknown_links;
  for (const Trajectory& t : data.trajectories)
    for (const auto& observed : t.link_poses) {
      const std::string& name = observed.first;
      const auto known = [&name](const LinkRef& l) { return l.first == name; };
      if (std::any_of(link_poses.begin(), link_poses.end(), known)) continue;
      if (const auto link = find_link(model, name))
        add(*link, Eigen::Vector3d::Zero());
      else if (std::find(unknown_links.begin(), unknown_links.end(), name) == unknown_links.end())
        unknown_links.push_back(name);
    }

  CompareResult r;
  r.model = model_summary(exp, trained);
  r.warnings = exp.warnings;
  for (const std::string& w : plausibility_warnings(data, model, request.data_path)) r.warnings.push_back(w);
  r.warnings.insert(r.warnings.end(), notes.begin(), notes.end());  // rows a CSV import dropped
  for (const std::string& name : unknown_links)
    r.warnings.push_back(request.data_path + ": link_poses/" + name +
                         " names no link or frame of the model (nor a compare.markers entry's data), so its "
                         "positions are not scored");
  context.started();
  for (const std::string& n : exp.notes) context.info(n);
  for (const std::string& w : r.warnings) context.warn(w);

  const auto t0 = Clock::now();
  std::vector<Trajectory> predicted(data.trajectories.size());
  tbb::parallel_for(size_t(0), data.trajectories.size(), [&](size_t k) {
    if (trained.baseline) {
      const std::unique_ptr<WindowModel> own = trained.baseline->clone();  // one per task: a model has workspaces
      // What train-augment's evaluation does (evaluate_rollouts), so the numbers agree.
      predicted[k] = free_rollout(*own, own->initial_parameters(), model, data.trajectories[k], use_controls);
    } else {
      predicted[k] = replay_recording(model, exp.step, exp.contact, data.trajectories[k], exp.augment);
    }
    record_link_poses(model, link_poses, predicted[k], points);
  });
  r.predictions.meta = trajectory_metadata(model, "", parameters_json(cfg), request.seed);
  for (size_t k = 0; k < predicted.size(); ++k) {
    r.per_trajectory.push_back(prediction_error(model, data.trajectories[k], predicted[k], c.horizons));
    r.mean_rmse_q += r.per_trajectory.back().rmse_q;
    r.mean_rmse_qd += r.per_trajectory.back().rmse_qd;
    r.predictions.trajectories.push_back(std::move(predicted[k]));
  }
  const double n = static_cast<double>(predicted.size());
  r.mean_rmse_q /= n;
  r.mean_rmse_qd /= n;
  for (const Trajectory& t : data.trajectories) {
    Trajectory still = no_motion_prediction(t);
    record_link_poses(model, link_poses, still, points);
    r.no_motion.push_back(prediction_error(model, t, still, c.horizons));
    r.no_motion_mean_rmse_q += r.no_motion.back().rmse_q / n;
    r.no_motion_mean_rmse_qd += r.no_motion.back().rmse_qd / n;
  }
  r.pooled = pooled_prediction_error(r.per_trajectory);
  r.no_motion_pooled = pooled_prediction_error(r.no_motion);
  r.timings["replay_s"] = seconds_since(t0);
  if (c.windows) {
    const auto t_windows = Clock::now();
    r.windows = trained.baseline ? evaluate_windows(model, data, *c.windows, baseline_predictor(*trained.baseline, use_controls))
                                 : evaluate_windows(model, exp.step, exp.contact, data, *c.windows, exp.augment);
    r.timings["windows_s"] = seconds_since(t_windows);
    const WindowStatistics& o = r.windows->overall;
    context.info(format_printf("%lld windows of %.4g s every %.4g s (%lld skipped): mean RMSE q = %.6g, median %.6g",
                               o.count, c.windows->horizon_s, c.windows->every_s, o.skipped, o.mean_rmse_q,
                               o.median_rmse_q));
  }
  if (c.torque) compare_torque(exp, data, c.torque_derivatives, r, context);
  context.info(format_printf("replayed %zu trajectories: mean RMSE q = %.6g, qd = %.6g", predicted.size(),
                             r.mean_rmse_q, r.mean_rmse_qd));
  return r;
}

}  // namespace neuralsim
