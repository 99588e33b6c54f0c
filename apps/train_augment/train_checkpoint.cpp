#include "train_augment/train_checkpoint.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/checkpoint_json.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim {
namespace {

using nlohmann::json;
constexpr const char* kTrainFormat = "neuralsim-train-checkpoint";
constexpr int kTrainVersion = 1;

json record_json(const EpochRecord& r) {
  using namespace checkpoint_json;  // function scope: the file is also compiled in unity batches
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

}  // namespace

void write_train_checkpoint(const std::string& path, const TrainerState& s,
                            const std::vector<std::string>& parameter_names, const Fingerprint& fingerprint) {
  using namespace checkpoint_json;  // function scope: the file is also compiled in unity batches
  json history = json::array();
  for (const EpochRecord& r : s.history) history.push_back(record_json(r));
  const json j{{"format", kTrainFormat},
               {"version", kTrainVersion},
               {"parameter_names", parameter_names},
               {"fingerprint", fingerprint},
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
  write_text_atomic(path, j.dump(1) + "\n");
}

TrainerState read_train_checkpoint(const std::string& path, const std::vector<std::string>& names,
                                   const Fingerprint& fingerprint, int max_epochs) {
  using namespace checkpoint_json;  // function scope: the file is also compiled in unity batches
  // Three vectors of the parameters and a history: generous, but bounded.
  const double limit = 4096.0 + 3 * 32.0 * names.size() + 256.0 * max_epochs + 64.0 * names.size();
  json j = read_document(path, kTrainFormat, kTrainVersion, limit,
                         "a checkpoint of " + std::to_string(names.size()) + " parameters and " +
                             std::to_string(max_epochs) + " epochs");
  if (!j.contains("parameter_names") || j["parameter_names"] != json(names))
    throw ConfigError(path + ": checkpoint was written for other parameters (" +
                      std::to_string(j.contains("parameter_names") && j["parameter_names"].is_array()
                                         ? j["parameter_names"].size()
                                         : 0) +
                      " names, expected " + std::to_string(names.size()) +
                      "); use another --out or run without --resume");
  check_fingerprint(j, fingerprint, path);
  const Eigen::Index n = static_cast<Eigen::Index>(names.size());
  TrainerState s;
  s.epoch = static_cast<int>(integer(j, "epoch", path, "checkpoint", 0, max_epochs));
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
  s.adam_t = integer(j, "adam_t", path, "checkpoint", 0, 1LL << 50);
  const json& early = member(j, "stopped_early", path, "checkpoint");
  if (!early.is_boolean()) bad(path, "stopped_early must be true or false");
  s.stopped_early = early.get<bool>();
  const json& h = member(j, "history", path, "checkpoint");
  if (!h.is_array()) bad(path, "history must be a list");
  if (h.size() > static_cast<size_t>(s.epoch) + 1)
    bad(path, "history holds " + std::to_string(h.size()) + " records for " + std::to_string(s.epoch) + " epochs");
  for (size_t k = 0; k < h.size(); ++k) {
    const std::string where = "history[" + std::to_string(k) + "]";
    const json& r = h[k];
    EpochRecord rec;
    rec.epoch = static_cast<int>(integer(r, "epoch", path, where, 0, max_epochs));
    rec.window_steps = static_cast<int>(integer(r, "window_steps", path, where, 1, 1LL << 30));
    rec.train_loss = read_number(member(r, "train_loss", path, where), path, where + ".train_loss", false);
    rec.validation_loss = read_number(member(r, "validation_loss", path, where), path, where + ".validation_loss", false);
    rec.learning_rate = read_number(member(r, "learning_rate", path, where), path, where + ".learning_rate", false);
    rec.gradient_norm = read_number(member(r, "gradient_norm", path, where), path, where + ".gradient_norm", false);
    rec.seconds_gradient = read_number(member(r, "seconds_gradient", path, where), path, where, true);
    rec.seconds_optimizer = read_number(member(r, "seconds_optimizer", path, where), path, where, true);
    rec.seconds_validation = read_number(member(r, "seconds_validation", path, where), path, where, true);
    s.history.push_back(rec);
  }
  return s;
}

}  // namespace neuralsim
