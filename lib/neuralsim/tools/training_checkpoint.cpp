#include "neuralsim/tools/training_checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/tools/checkpoint_json.hpp"

namespace neuralsim {
namespace training_checkpoint_detail {

using nlohmann::json;
constexpr const char* kFormat = "neuralsim-training-checkpoint";
constexpr int kVersion = 1;
// The reader's ranges of two integers.
constexpr long long kMaxWindowSteps = 1LL << 30;
constexpr long long kMaxAdamSteps = 1LL << 50;

json record_json(const EpochRecord& r) {
  using namespace checkpoint_json;
  return {{"epoch", r.epoch},
          {"window_steps", r.window_steps},
          {"train_loss", number(r.train_loss)},
          {"validation_loss", number(r.validation_loss)},
          {"learning_rate", number(r.learning_rate)},
          {"gradient_norm", number(r.gradient_norm)},
          {"seconds_gradient", r.seconds_gradient},
          {"seconds_optimizer", r.seconds_optimizer},
          {"seconds_validation", r.seconds_validation}};
}

EpochRecord read_record(const json& r, const std::string& path, const std::string& where, int max_epochs) {
  using namespace checkpoint_json;
  EpochRecord rec;
  rec.epoch = static_cast<int>(integer(r, "epoch", path, where, 0, max_epochs));
  rec.window_steps = static_cast<int>(integer(r, "window_steps", path, where, 0, kMaxWindowSteps));
  rec.train_loss = read_number(member(r, "train_loss", path, where), path, where + ".train_loss", false);
  rec.validation_loss = read_number(member(r, "validation_loss", path, where), path, where + ".validation_loss", false);
  rec.learning_rate = read_number(member(r, "learning_rate", path, where), path, where + ".learning_rate", false);
  rec.gradient_norm = read_number(member(r, "gradient_norm", path, where), path, where + ".gradient_norm", false);
  rec.seconds_gradient = read_number(member(r, "seconds_gradient", path, where), path, where, true);
  rec.seconds_optimizer = read_number(member(r, "seconds_optimizer", path, where), path, where, true);
  rec.seconds_validation = read_number(member(r, "seconds_validation", path, where), path, where, true);
  return rec;
}

// What the writer writes.
std::string document(const TrainingState& s, const TrainingCheckpointSpec& spec) {
  using namespace checkpoint_json;
  json history = json::array();
  for (const EpochRecord& r : s.history) history.push_back(record_json(r));
  const json j{{"format", kFormat},
               {"version", kVersion},
               {"num_parameters", spec.num_parameters},
               {"parameter_names", spec.parameter_names},
               {"fingerprint", spec.fingerprint},
               {"epoch", s.epoch},
               {"x", vector_json(s.x)},
               {"best_x", vector_json(s.best_x)},
               {"best_validation", number(s.best_validation)},
               {"best_epoch", s.best_epoch},
               {"epochs_since_best", s.epochs_since_best},
               {"adam_m", vector_json(s.adam_m)},
               {"adam_v", vector_json(s.adam_v)},
               {"adam_t", s.adam_t},
               {"stopped_early", s.stopped_early},
               {"history", history}};
  // replace: a parameter name with a stray non-UTF-8 byte must not lose the checkpoint.
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

// The longest state the writer can be handed for `spec`, with `n`
// parameters and `records` epochs of history (the reader's ranges).
TrainingState largest_state(const TrainingCheckpointSpec& spec, Eigen::Index n, int records) {
  using checkpoint_json::kLongestNumber;
  TrainingState s;
  s.epoch = spec.max_epochs;
  s.x = s.best_x = s.adam_m = s.adam_v = Eigen::VectorXd::Constant(n, kLongestNumber);
  s.best_validation = kLongestNumber;
  s.best_epoch = -std::max(1, spec.max_epochs);  // as wide as -1 and as the last epoch
  s.epochs_since_best = spec.max_epochs;
  s.adam_t = kMaxAdamSteps;
  s.stopped_early = false;
  EpochRecord r;
  r.epoch = spec.max_epochs;
  r.window_steps = kMaxWindowSteps;
  r.train_loss = r.validation_loss = r.learning_rate = r.gradient_norm = kLongestNumber;
  r.seconds_gradient = r.seconds_optimizer = r.seconds_validation = kLongestNumber;
  s.history.assign(static_cast<size_t>(records), r);
  return s;
}

}  // namespace training_checkpoint_detail

double training_checkpoint_capacity(const TrainingCheckpointSpec& spec) {
  using namespace training_checkpoint_detail;
  const size_t none = document(largest_state(spec, 0, 0), spec).size();
  const size_t one_parameter = document(largest_state(spec, 1, 0), spec).size();
  const size_t one_record = document(largest_state(spec, 0, 1), spec).size();
  // The history holds at most one record more than the epochs (the reader's check).
  return checkpoint_json::extrapolate(none, one_parameter, static_cast<double>(spec.num_parameters)) +
         checkpoint_json::extrapolate(none, one_record, spec.max_epochs + 1.0) - static_cast<double>(none);
}

void write_training_checkpoint(CheckpointStore& store, const TrainingState& s, const TrainingCheckpointSpec& spec) {
  store.save(training_checkpoint_detail::document(s, spec));
}

TrainingState read_training_checkpoint(const CheckpointStore& store, const TrainingCheckpointSpec& spec) {
  using namespace training_checkpoint_detail;
  using namespace checkpoint_json;
  const std::string path = store.name();
  const long long n = spec.num_parameters;
  json j = read_document(store, kFormat, kVersion, training_checkpoint_capacity(spec),
                         "a checkpoint of " + std::to_string(n) + " parameters and " +
                             std::to_string(spec.max_epochs) + " epochs");
  const long long stored_n = integer(j, "num_parameters", path, "checkpoint", 0, 1LL << 40);
  if (stored_n != n || !j.contains("parameter_names") || j["parameter_names"] != json(spec.parameter_names))
    throw ConfigError(path + ": checkpoint was written for other parameters (" + std::to_string(stored_n) +
                      " parameters, this run has " + std::to_string(n) +
                      (stored_n == n ? " with other names" : "") + "); use another --out or run without --resume");
  check_fingerprint(j, spec.fingerprint, path);
  TrainingState s;
  s.epoch = static_cast<int>(integer(j, "epoch", path, "checkpoint", 0, spec.max_epochs));
  s.x = read_vector(j, "x", n, false, path);
  s.best_x = read_vector(j, "best_x", n, false, path);
  s.best_validation = read_number(member(j, "best_validation", path, "checkpoint"), path, "best_validation", false);
  if (std::isnan(s.best_validation)) bad(path, "best_validation must be a number or \"inf\"");
  s.best_epoch = static_cast<int>(integer(j, "best_epoch", path, "checkpoint", -1, std::max(0, s.epoch - 1)));
  s.epochs_since_best = static_cast<int>(integer(j, "epochs_since_best", path, "checkpoint", 0, s.epoch));
  s.adam_m = read_vector(j, "adam_m", n, true, path);
  s.adam_v = read_vector(j, "adam_v", n, true, path);
  if (s.adam_m.size() != s.adam_v.size()) bad(path, "adam_m and adam_v must have the same size");
  if ((s.adam_v.array() < 0).any()) bad(path, "adam_v (second moments) must be >= 0");
  s.adam_t = integer(j, "adam_t", path, "checkpoint", 0, kMaxAdamSteps);
  const json& early = member(j, "stopped_early", path, "checkpoint");
  if (!early.is_boolean()) bad(path, "stopped_early must be true or false");
  s.stopped_early = early.get<bool>();
  const json& h = member(j, "history", path, "checkpoint");
  if (!h.is_array()) bad(path, "history must be a list");
  if (h.size() > static_cast<size_t>(s.epoch) + 1)
    bad(path, "history holds " + std::to_string(h.size()) + " records for " + std::to_string(s.epoch) + " epochs");
  for (size_t k = 0; k < h.size(); ++k)
    s.history.push_back(read_record(h[k], path, "history[" + std::to_string(k) + "]", spec.max_epochs));
  return s;
}

std::string training_history_csv(const std::vector<EpochRecord>& history) {
  std::ostringstream s;
  s.precision(17);
  s << "epoch,window_steps,train_loss,validation_loss,learning_rate,gradient_norm,seconds_gradient,"
       "seconds_optimizer,seconds_validation\n";
  for (const EpochRecord& r : history)
    s << r.epoch << ',' << r.window_steps << ',' << r.train_loss << ',' << r.validation_loss << ',' << r.learning_rate
      << ',' << r.gradient_norm << ',' << r.seconds_gradient << ',' << r.seconds_optimizer << ','
      << r.seconds_validation << '\n';
  return s.str();
}

}  // namespace neuralsim
