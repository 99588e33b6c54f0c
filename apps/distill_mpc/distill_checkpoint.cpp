// distill-mpc's checkpoint; see distill_checkpoint.hpp.
#include "distill_mpc/distill_checkpoint.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/checkpoint_json.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim {
namespace distill_checkpoint_detail {

using nlohmann::json;
constexpr const char* kDistillFormat = "neuralsim-distill-checkpoint";
constexpr int kDistillVersion = 1;

using namespace checkpoint_json;

}  // namespace distill_checkpoint_detail

void write_distill_checkpoint(const std::string& path, const SupervisedState& s, long long num_parameters,
                              const DistillFingerprint& fingerprint) {
  using namespace distill_checkpoint_detail;
  json history = json::array();
  for (const SupervisedRecord& r : s.history)
    history.push_back({{"epoch", r.epoch},
                       {"train_loss", number(r.train_loss)},
                       {"validation_loss", number(r.validation_loss)},
                       {"learning_rate", number(r.learning_rate)},
                       {"gradient_norm", number(r.gradient_norm)},
                       {"seconds", r.seconds}});
  const json j{{"format", kDistillFormat},
               {"version", kDistillVersion},
               {"num_parameters", num_parameters},
               {"fingerprint", fingerprint},
               {"epoch", s.epoch},
               {"x", vector_json(s.x)},
               {"best_x", vector_json(s.best_x)},
               {"best_validation", number(s.best_validation)},
               {"best_epoch", s.best_epoch},
               {"adam_m", vector_json(s.adam_m)},
               {"adam_v", vector_json(s.adam_v)},
               {"adam_t", s.adam_t},
               {"history", history}};
  write_text_atomic(path, j.dump(1) + "\n");
}

SupervisedState read_distill_checkpoint(const std::string& path, long long n, const DistillFingerprint& fingerprint,
                                        int max_epochs) {
  using namespace distill_checkpoint_detail;
  const double limit = 8192.0 + 4 * 32.0 * static_cast<double>(n) + 256.0 * max_epochs;
  json j = read_document(path, kDistillFormat, kDistillVersion, limit,
                         "a checkpoint of " + std::to_string(n) + " parameters and " + std::to_string(max_epochs) +
                             " epochs");
  const long long stored_n = integer(j, "num_parameters", path, "checkpoint", 0, 1LL << 40);
  if (stored_n != n)
    throw ConfigError(path + ": checkpoint was written for a network of " + std::to_string(stored_n) +
                      " parameters, this run's has " + std::to_string(n) + "; use another --out or run without --resume");
  check_fingerprint(j, fingerprint, path);
  SupervisedState s;
  s.epoch = static_cast<int>(integer(j, "epoch", path, "checkpoint", 0, max_epochs));
  s.x = read_vector(j, "x", n, false, path);
  s.best_x = read_vector(j, "best_x", n, false, path);
  s.best_validation = read_number(member(j, "best_validation", path, "checkpoint"), path, "best_validation", false);
  if (std::isnan(s.best_validation)) bad(path, "best_validation must be a number or \"inf\"");
  s.best_epoch = static_cast<int>(integer(j, "best_epoch", path, "checkpoint", -1, std::max(0, s.epoch - 1)));
  s.adam_m = read_vector(j, "adam_m", n, true, path);
  s.adam_v = read_vector(j, "adam_v", n, true, path);
  if (s.adam_m.size() != s.adam_v.size()) bad(path, "adam_m and adam_v must have the same size");
  if ((s.adam_v.array() < 0).any()) bad(path, "adam_v (second moments) must be >= 0");
  s.adam_t = integer(j, "adam_t", path, "checkpoint", 0, 1LL << 50);
  const json& h = member(j, "history", path, "checkpoint");
  if (!h.is_array() || h.size() != static_cast<size_t>(s.epoch))
    bad(path, "history must hold one record per completed epoch (" + std::to_string(s.epoch) + ")");
  for (size_t k = 0; k < h.size(); ++k) {
    const std::string where = "history[" + std::to_string(k) + "]";
    SupervisedRecord r;
    r.epoch = static_cast<int>(integer(h[k], "epoch", path, where, 0, max_epochs));
    r.train_loss = read_number(member(h[k], "train_loss", path, where), path, where + ".train_loss", false);
    r.validation_loss = read_number(member(h[k], "validation_loss", path, where), path, where + ".validation_loss", false);
    r.learning_rate = read_number(member(h[k], "learning_rate", path, where), path, where + ".learning_rate", false);
    r.gradient_norm = read_number(member(h[k], "gradient_norm", path, where), path, where + ".gradient_norm", false);
    r.seconds = read_number(member(h[k], "seconds", path, where), path, where + ".seconds", false);
    s.history.push_back(r);
  }
  return s;
}

}  // namespace neuralsim
