// distill-mpc's checkpoint; see distill_checkpoint.hpp.
#include "distill_mpc/distill_checkpoint.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/fingerprint.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim {
namespace distill_checkpoint_detail {

using nlohmann::json;
constexpr const char* kFormat = "neuralsim-distill-checkpoint";
constexpr int kVersion = 1;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw DataError(path + ": invalid checkpoint: " + what);
}

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double read_number(const json& j, const std::string& path, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad(path, where + " must be a number, \"nan\" or \"inf\"");
}

const json& member(const json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) bad(path, where + "." + key + " is missing");
  return j[key];
}

long long integer(const json& j, const char* key, const std::string& path, const std::string& where, long long lo,
                  long long hi) {
  const json& v = member(j, key, path, where);
  if (!v.is_number_integer()) bad(path, where + "." + key + " must be an integer");
  const long long x = v.get<long long>();
  if (x < lo || x > hi)
    bad(path, where + "." + key + " = " + std::to_string(x) + " is outside [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
  return x;
}

json vec(const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

Eigen::VectorXd read_vec(const json& j, const char* key, Eigen::Index n, bool may_be_empty, const std::string& path) {
  const json& a = member(j, key, path, "checkpoint");
  if (!a.is_array()) bad(path, std::string(key) + " must be a list of numbers");
  if (a.empty() && may_be_empty) return Eigen::VectorXd();
  if (static_cast<Eigen::Index>(a.size()) != n)
    bad(path, std::string(key) + ": expected " + std::to_string(n) + " numbers, got " + std::to_string(a.size()));
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const json& x = a[static_cast<size_t>(i)];
    if (!x.is_number()) bad(path, std::string(key) + "[" + std::to_string(i) + "] must be a finite number");
    v[i] = x.get<double>();
    if (!std::isfinite(v[i])) bad(path, std::string(key) + "[" + std::to_string(i) + "] must be finite");
  }
  return v;
}

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
  const json j{{"format", kFormat},
               {"version", kVersion},
               {"num_parameters", num_parameters},
               {"fingerprint", fingerprint},
               {"epoch", s.epoch},
               {"x", vec(s.x)},
               {"best_x", vec(s.best_x)},
               {"best_validation", number(s.best_validation)},
               {"best_epoch", s.best_epoch},
               {"adam_m", vec(s.adam_m)},
               {"adam_v", vec(s.adam_v)},
               {"adam_t", s.adam_t},
               {"history", history}};
  write_text_atomic(path, j.dump(1) + "\n");
}

SupervisedState read_distill_checkpoint(const std::string& path, long long n, const DistillFingerprint& fingerprint,
                                        int max_epochs) {
  using namespace distill_checkpoint_detail;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw DataError(path + ": no checkpoint to resume from (run without --resume first)");
  const auto size = std::filesystem::file_size(path, ec);
  const double limit = 8192.0 + 4 * 32.0 * static_cast<double>(n) + 256.0 * max_epochs;
  if (ec || static_cast<double>(size) > limit)
    bad(path, "is " + std::to_string(size) + " bytes, more than a checkpoint of " + std::to_string(n) +
                  " parameters and " + std::to_string(max_epochs) + " epochs can hold");
  std::ifstream in(path);
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    bad(path, std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    bad(path, std::string("format is not '") + kFormat + "'");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion)
    bad(path, "version must be " + std::to_string(kVersion));
  const long long stored_n = integer(j, "num_parameters", path, "checkpoint", 0, 1LL << 40);
  if (stored_n != n)
    throw ConfigError(path + ": checkpoint was written for a network of " + std::to_string(stored_n) +
                      " parameters, this run's has " + std::to_string(n) + "; use another --out or run without --resume");
  DistillFingerprint stored;
  const json& fp = member(j, "fingerprint", path, "checkpoint");
  if (!fp.is_object()) bad(path, "fingerprint must be a map");
  for (auto it = fp.begin(); it != fp.end(); ++it) {
    if (!it.value().is_string()) bad(path, "fingerprint." + it.key() + " must be a string");
    stored[it.key()] = it.value().get<std::string>();
  }
  const std::string changed = fingerprint_difference(stored, fingerprint);
  if (!changed.empty())
    throw ConfigError(path + ": checkpoint was written for a different run (changed: " + changed +
                      "); resume with the same config, data and seed, or use another --out");
  SupervisedState s;
  s.epoch = static_cast<int>(integer(j, "epoch", path, "checkpoint", 0, max_epochs));
  s.x = read_vec(j, "x", n, false, path);
  s.best_x = read_vec(j, "best_x", n, false, path);
  s.best_validation = read_number(member(j, "best_validation", path, "checkpoint"), path, "best_validation");
  if (std::isnan(s.best_validation)) bad(path, "best_validation must be a number or \"inf\"");
  s.best_epoch = static_cast<int>(integer(j, "best_epoch", path, "checkpoint", -1, std::max(0, s.epoch - 1)));
  s.adam_m = read_vec(j, "adam_m", n, true, path);
  s.adam_v = read_vec(j, "adam_v", n, true, path);
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
    r.train_loss = read_number(member(h[k], "train_loss", path, where), path, where + ".train_loss");
    r.validation_loss = read_number(member(h[k], "validation_loss", path, where), path, where + ".validation_loss");
    r.learning_rate = read_number(member(h[k], "learning_rate", path, where), path, where + ".learning_rate");
    r.gradient_norm = read_number(member(h[k], "gradient_norm", path, where), path, where + ".gradient_norm");
    r.seconds = read_number(member(h[k], "seconds", path, where), path, where + ".seconds");
    s.history.push_back(r);
  }
  return s;
}

}  // namespace neuralsim
