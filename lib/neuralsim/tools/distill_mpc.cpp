#include "neuralsim/tools/distill_mpc.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/experiment/distill_config.hpp"
#include "neuralsim/experiment/mpc_controllers.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/tools/training_checkpoint.hpp"
#include "neuralsim/io/work_size.hpp"
#include "neuralsim/train/supervised.hpp"

namespace neuralsim {
namespace distill_mpc_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
using RowMatrixXd = DistillDataset::RowMatrixXd;

// Evaluation episodes use indices far from the training episodes', so their
// commands, pushes and initial states are new to the network.
constexpr int kEvaluationIndexOffset = 1'000'000;

std::string dataset_digest(const DistillDataset& d) {
  std::string bytes;
  auto add = [&](const double* p, Eigen::Index n) { bytes.append(reinterpret_cast<const char*>(p), sizeof(double) * n); };
  add(d.features.data(), d.features.size());
  add(d.targets.data(), d.targets.size());
  add(d.episode.data(), d.episode.size());
  return fnv1a_hex(bytes);
}

// Values finite but so large that the network's scaling would overflow
// (targets of 1e300): refused naming the dataset, before any training.
void check_dataset_scale(const DistillDataset& d, const std::string& file) {
  for (const auto& [name, m] : {std::pair{"features", &d.features}, std::pair{"targets", &d.targets}}) {
    const std::string problem = regression_scale_problem(*m);
    if (!problem.empty())
      throw DataError(file + ":/" + name + ": " + problem + "; expected means and standard deviations of at most " +
                      format_number(kMaxRegressionScale) + " (the network's normalization squares them)");
  }
}

void check_dataset_shape(const DistillDataset& d, const DistillSystem& sys, const std::string& file) {
  if (d.features.cols() != sys.num_features())
    throw DataError(file + ":/features: expected " + std::to_string(sys.num_features()) + " columns (the " + sys.kind() +
                    " controller's features), got " + std::to_string(d.features.cols()));
  if (d.targets.cols() != sys.num_targets())
    throw DataError(file + ":/targets: expected " + std::to_string(sys.num_targets()) + " columns (the MPC's " +
                    (sys.kind() == "linear" ? "first control" : "first-interval forces") + "), got " +
                    std::to_string(d.targets.cols()));
  check_dataset_scale(d, file);
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

ClosedLoopEvaluation summarize(std::vector<EpisodeResult> rs) {
  ClosedLoopEvaluation e;
  double secs = 0;
  long long updates = 0;
  for (const EpisodeResult& r : rs) {
    e.ok += r.ok;
    e.mean_err_a += r.err_a / rs.size();
    e.mean_err_b += r.err_b / rs.size();
    e.mean_err_c += r.err_c / rs.size();
    secs += r.update_seconds;
    updates += r.updates;
  }
  e.mean_seconds_per_update = updates ? secs / updates : 0.0;
  e.episodes = std::move(rs);
  return e;
}

// Everything read from the config and checked before any work.
struct Setup {
  DistillSpec spec;
  std::string eval_weights;
  std::optional<Experiment> exp;
  std::unique_ptr<DistillSystem> sys;
  bool train = true, generate = true;
};

std::unique_ptr<DistillSystem> quadruped_system(const Config& cfg, const Experiment& exp, const DistillSpec& spec,
                                                long long seed) {
  const Config controls = cfg.at("controls");
  controls.get_choice("type", {"mpc"}, "mpc");
  MpcControllerSpec mpc = read_mpc_controller_spec(controls, exp.model, exp.step, false);
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  if (!cfg.has("initial_states")) cfg.fail("initial_states", "missing: the robot's initial state(s)");
  std::vector<InitialState> states = read_initial_states(cfg.at("initial_states"), exp.model, rng, 100000);
  apply_initial_state_parameters(exp, states);
  if (states.empty()) cfg.fail("initial_states", "holds no state");
  for (size_t k = 0; k < states.size(); ++k)
    if (!states[k].q.allFinite() || !states[k].qd.allFinite())
      cfg.at("initial_states").fail("", "initial state " + std::to_string(k) + " is not finite");
  try {
    return make_quadruped_system(exp, std::move(mpc), std::move(states), spec.pushes, spec.evaluate.min_height);
  } catch (const ModelError& e) {
    controls.fail("feet", e.what());
  }
}

// Work sized before anything is allocated.
void check_size(const Config& cfg, const Setup& s) {
  const double per = static_cast<double>(s.sys->samples_per_episode(s.spec.data.duration));
  const double estimate = per * s.spec.data.episodes;
  if (estimate > static_cast<double>(s.spec.data.max_samples))
    cfg.at("distill").fail(cfg.has("distill.data.episodes") ? "data.episodes" : "data.duration",
                           "the run would record up to " + std::to_string(static_cast<long long>(estimate)) +
                               " samples (" + std::to_string(s.spec.data.episodes) + " episodes x " +
                               std::to_string(static_cast<long long>(per)) +
                               "), more than distill.data.max_samples = " + std::to_string(s.spec.data.max_samples));
  check_memory(cfg.at("distill"), "data.episodes",
               std::to_string(s.spec.data.episodes) + " episodes x " + std::to_string(static_cast<long long>(per)) +
                   " samples",
               // The dataset, and its HDF5 output (or its training copy: less).
               estimate * 8.0 * kHdf5OutputCopies * (s.sys->num_features() + s.sys->num_targets() + 2));
}

Setup read_setup(const Config& cfg, long long seed) {
  const bool linear = cfg.has("linear");
  if (linear)
    cfg.check_known_keys({"name", "description", "linear", "distill", "output"});
  else
    cfg.check_known_keys({"name", "description", "model", "params", "params_file", "sim", "contact",
                          "initial_states", "controls", "distill", "output"});
  if (cfg.has("output")) cfg.at("output").check_known_keys({"weights", "dataset", "plot"});
  if (!cfg.has("distill")) cfg.fail("distill", "missing: the distillation settings (docs/distill-mpc.md)");
  Setup s;
  s.spec = read_distill_spec(cfg, seed);
  if (cfg.has("distill.evaluate.weights")) s.eval_weights = cfg.at("distill.evaluate").path("weights");
  if (linear) {
    s.sys = make_linear_system(*s.spec.linear, s.spec.pushes, static_cast<std::uint64_t>(seed));
  } else {
    s.exp.emplace(load_experiment(cfg));
    s.sys = quadruped_system(cfg, *s.exp, s.spec, seed);
  }
  s.train = s.eval_weights.empty();
  s.generate = s.train && s.spec.data.file.empty();
  if (s.generate) check_size(cfg, s);
  return s;
}

// The generated dataset's failed episodes, in the result and its warnings
// (also for a dataset an interrupted run generated and saved).
void note_failed_episodes(const Setup& s, DistillResult& r) {
  const long long failed = r.dataset.episodes_failed;
  if (failed < 0) return;
  if (failed > 0)
    r.warnings.push_back(std::to_string(failed) + " of " + std::to_string(s.spec.data.episodes) +
                         " data episodes ended early under the MPC (fell or not stable)");
  r.data_episodes_failed = static_cast<int>(failed);
}

void generate_data(const Setup& s, DistillResult& r, const RunContext& context) {
  const auto t0 = Clock::now();
  context.info(format_printf("generating %d closed-loop episodes of %g s under the MPC (%s system)",
                             s.spec.data.episodes, s.spec.data.duration, s.sys->kind().c_str()));
  std::vector<EpisodeSamples> eps;
  ProgressStage progress(context, "data", s.spec.data.episodes);
  std::atomic<long long> done{0};
  const std::vector<EpisodeResult> gen =
      run_episodes(*s.sys, 0, s.spec.data.episodes, s.spec.data.duration, nullptr, &eps,
                   [&] { progress.update(done.fetch_add(1) + 1); }, context.stop, context.communicator);
  progress.finish();
  if (context.stop_agreed()) {
    r.status = RunStatus::kInterrupted;
    return;
  }
  int failed = 0;
  for (const EpisodeResult& e : gen) failed += !e.ok;
  r.dataset = assemble_dataset(*s.sys, eps);
  r.dataset.episodes_failed = failed;
  note_failed_episodes(s, r);
  if (r.dataset.size() == 0) throw NumericalError("the MPC produced no optimal solve in any data episode");
  r.timings["data_s"] = seconds_since(t0);
}

// Split by episode: the last validation_fraction of the episodes validate.
void split(const DistillDataset& d, double fraction, std::vector<Eigen::Index>& tr, std::vector<Eigen::Index>& va) {
  const double num_episodes = d.episode.size() ? d.episode.maxCoeff() + 1 : 0;
  const double first_val = std::floor(num_episodes * (1.0 - fraction));
  for (Eigen::Index k = 0; k < d.size(); ++k) (d.episode[k] < first_val || first_val < 1 ? tr : va).push_back(k);
  if (fraction > 0 && va.empty() && d.size() > 1) {
    // Too few episodes to split by episode: the last samples validate.
    const Eigen::Index nv = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(d.size() * fraction));
    tr.resize(static_cast<size_t>(d.size() - nv));
    for (Eigen::Index k = d.size() - nv; k < d.size(); ++k) va.push_back(k);
  }
}

RowMatrixXd rows(const RowMatrixXd& m, const std::vector<Eigen::Index>& idx) {
  RowMatrixXd r(static_cast<Eigen::Index>(idx.size()), m.cols());
  for (size_t i = 0; i < idx.size(); ++i) r.row(static_cast<Eigen::Index>(i)) = m.row(idx[i]);
  return r;
}

void train_network(const Config& cfg, const Setup& s, long long seed, DistillResult& r, const RunContext& context) {
  std::vector<Eigen::Index> tr, va;
  split(r.dataset, s.spec.data.validation_fraction, tr, va);
  if (r.dataset_file.empty()) check_dataset_scale(r.dataset, "the generated dataset");
  nn::Mlp mlp(s.sys->num_features(), s.spec.network.hidden, s.sys->num_targets(), s.spec.network.activation);
  RowMatrixXd xt = rows(r.dataset.features, tr), yt = rows(r.dataset.targets, tr);
  fit_regression_normalization(mlp, xt, yt);
  std::mt19937_64 init(splitmix64(static_cast<std::uint64_t>(seed) ^ 0x696e6974ULL));
  mlp.initialize(nn::Init::kXavierUniform, init);
  SupervisedOptions train_options = s.spec.train;
  train_options.communicator = context.communicator;
  SupervisedRegression reg(mlp, std::move(xt), std::move(yt), rows(r.dataset.features, va),
                           rows(r.dataset.targets, va), train_options);

  nlohmann::json cj = cfg.to_json();
  if (cj.contains("distill") && cj["distill"].is_object()) cj["distill"].erase("evaluate");
  TrainingCheckpointSpec spec;
  spec.num_parameters = reg.num_parameters();
  spec.fingerprint = config_digests(cj, {"name", "description", "output"});
  spec.fingerprint["dataset"] = dataset_digest(r.dataset);
  spec.fingerprint["seed"] = std::to_string(seed);
  spec.max_epochs = s.spec.train.epochs;
  TrainingState state = context.resume ? read_training_checkpoint(*context.checkpoint, spec) : reg.initial_state();
  if (context.resume)
    context.info("resuming from " + context.checkpoint->name() + " at epoch " + std::to_string(state.epoch));
  r.initial_validation_loss = reg.validation_loss(reg.initial_state().x);
  context.info(format_printf("training %s (%d parameters) on %lld samples (%lld validation), %d epochs",
                             mlp.describe().c_str(), reg.num_parameters(), static_cast<long long>(reg.num_train()),
                             static_cast<long long>(reg.num_validation()), s.spec.train.epochs));
  const auto t0 = Clock::now();
  {
    ProgressStage progress(context, "train", s.spec.train.epochs);
    try {
      reg.run(
          state,
          [&](const TrainingState& st) {
            if (context.checkpoint) write_training_checkpoint(*context.checkpoint, st, spec);
            progress.update(st.epoch);
            if (context.logs(LogLevel::kDebug))
              context.debug(format_printf("epoch %d: train %.6g, validation %.6g", st.history.back().epoch,
                                          st.history.back().train_loss, st.history.back().validation_loss));
            return !context.stop_requested();
          },
          context.stop);
    } catch (const NumericalError& e) {
      r.status = RunStatus::kDiverged;
      r.message = e.what();
    }
  }
  if (context.stop_agreed()) r.status = RunStatus::kInterrupted;
  r.timings["train_s"] = seconds_since(t0);
  const nn::Mlp best = reg.network_at(state.best_x);
  r.network_description = best.describe();
  r.num_parameters = reg.num_parameters();
  r.train_samples = reg.num_train();
  r.validation_samples = reg.num_validation();
  r.train_rmse = reg.rmse(state.best_x, false);
  r.validation_rmse = reg.rmse(state.best_x, true);
  r.network = std::make_shared<const nn::Mlp>(best);
  context.info(format_printf("best epoch %d: validation loss %.4g (initial %.4g); RMSE train %.4g, validation %.4g",
                             state.best_epoch, state.best_validation, r.initial_validation_loss, r.train_rmse.mean(),
                             r.validation_rmse.mean()));
  r.training = std::move(state);
}

void evaluate_closed_loop(const Setup& s, DistillResult& r, const RunContext& context) {
  const auto t0 = Clock::now();
  const int n = s.spec.evaluate.episodes;
  ProgressStage progress(context, "evaluate", 2LL * n);
  std::atomic<long long> done{0};
  const auto tick = [&] { progress.update(done.fetch_add(1) + 1); };
  std::vector<EpisodeResult> with_mpc = run_episodes(*s.sys, kEvaluationIndexOffset, n, s.spec.evaluate.duration,
                                                     nullptr, nullptr, tick, context.stop, context.communicator);
  std::vector<EpisodeResult> with_net = run_episodes(*s.sys, kEvaluationIndexOffset, n, s.spec.evaluate.duration,
                                                     r.network, nullptr, tick, context.stop, context.communicator);
  progress.finish();
  if (context.stop_agreed()) {
    r.status = RunStatus::kInterrupted;
    return;
  }
  r.mpc = summarize(std::move(with_mpc));
  r.with_network = summarize(std::move(with_net));
  r.evaluation_duration = s.spec.evaluate.duration;
  r.timings["evaluate_s"] = seconds_since(t0);
  const char* ok = s.sys->kind() == "linear" ? "stable" : "survived";
  context.info(format_printf("closed loop, %d episodes of %g s: %s %d with the MPC, %d with the network", n,
                             s.spec.evaluate.duration, ok, r.mpc->ok, r.with_network->ok));
}

}  // namespace distill_mpc_detail

DistillResult distill_mpc(const DistillRequest& request, const RunContext& context) {
  using namespace distill_mpc_detail;
  const auto t_start = Clock::now();
  const Config& cfg = request.config;
  const Setup s = read_setup(cfg, request.seed);
  if (context.resume && !context.checkpoint)
    throw InvalidArgument("distill_mpc: resume requested without a checkpoint store");
  // A resume without a checkpoint is refused before any work (not a fresh run).
  if (context.resume && !context.checkpoint->exists())
    throw DataError(context.checkpoint->name() + ": no checkpoint to resume from (run without --resume first)");
  DistillResult r;
  r.system = s.sys->kind();
  r.num_features = s.sys->num_features();
  r.num_targets = s.sys->num_targets();
  r.feature_names = s.sys->feature_names();
  r.target_names = s.sys->target_names();
  r.network_name = s.sys->network_name();
  if (!s.train) r.network = read_evaluation_network(s.eval_weights, *s.sys);
  bool have_dataset = false;
  if (s.train && !s.spec.data.file.empty()) {
    r.dataset = read_distill_dataset(s.spec.data.file);
    check_dataset_shape(r.dataset, *s.sys, s.spec.data.file);
    r.dataset_file = s.spec.data.file;
    have_dataset = true;
  } else if (s.generate && context.resume && !request.previous_dataset.empty()) {
    r.dataset = read_distill_dataset(request.previous_dataset);
    check_dataset_shape(r.dataset, *s.sys, request.previous_dataset);
    have_dataset = true;
    r.timings["data_s"] = 0;  // generated by the interrupted run (reading it is setup)
  }
  if (s.exp) r.warnings = s.exp->warnings;
  if (have_dataset && r.dataset_file.empty()) note_failed_episodes(s, r);
  context.started();
  if (s.exp) {
    for (const std::string& n : s.exp->notes) context.info(n);
    for (const std::string& w : s.exp->warnings) context.warn(w);
  }
  r.timings["setup_s"] = seconds_since(t_start);

  if (s.generate && !have_dataset) {
    generate_data(s, r, context);
    if (r.status != RunStatus::kOk) return r;
    if (request.on_dataset) request.on_dataset(r.dataset);
  }
  if (s.train) {
    context.info(format_printf("dataset: %lld samples of %lld features -> %lld targets",
                               static_cast<long long>(r.dataset.size()), static_cast<long long>(r.dataset.features.cols()),
                               static_cast<long long>(r.dataset.targets.cols())));
    train_network(cfg, s, request.seed, r, context);
    if (r.status != RunStatus::kOk) return r;
  }
  if (s.spec.evaluate.episodes > 0) evaluate_closed_loop(s, r, context);
  return r;
}

}  // namespace neuralsim
