#include "neuralsim/tools/checkpoint_json.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "neuralsim/tools/fingerprint.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim::checkpoint_json {

void bad(const std::string& path, const std::string& what) { throw DataError(path + ": invalid checkpoint: " + what); }

json read_document(const CheckpointStore& store, const char* format, int version, double max_bytes,
                   const std::string& capacity) {
  const std::string path = store.name();
  const std::optional<std::string> text = store.load(max_bytes, capacity);
  if (!text) throw DataError(path + ": no checkpoint to resume from (run without --resume first)");
  json j;
  try {
    j = json::parse(*text);
  } catch (const json::exception& e) {
    bad(path, std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string() || j["format"] != format)
    bad(path, std::string("format is not '") + format + "'");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<long long>() != version)
    bad(path, "version must be " + std::to_string(version) + " (written by another NeuralSim version?)");
  return j;
}

void check_fingerprint(const json& document, const Fingerprint& expected, const std::string& path) {
  const json& fp = member(document, "fingerprint", path, "checkpoint");
  if (!fp.is_object()) bad(path, "fingerprint must be a map");
  Fingerprint stored;
  for (auto it = fp.begin(); it != fp.end(); ++it) {
    if (!it.value().is_string()) bad(path, "fingerprint." + it.key() + " must be a string");
    stored[it.key()] = it.value().get<std::string>();
  }
  const std::string changed = fingerprint_difference(stored, expected);
  if (!changed.empty())
    throw ConfigError(path + ": checkpoint was written for a different run (changed: " + changed +
                      "); resume with the same config, data and seed, or use another --out");
}

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double read_number(const json& j, const std::string& path, const std::string& where, bool finite) {
  if (j.is_number()) {
    const double v = j.get<double>();
    if (finite && !std::isfinite(v)) bad(path, where + " must be finite");
    return v;
  }
  if (!finite && j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad(path, where + (finite ? " must be a finite number" : " must be a number, \"nan\" or \"inf\""));
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

double finite_number(const json& j, const char* key, const std::string& path, const std::string& where) {
  return read_number(member(j, key, path, where), path, where + "." + key, true);
}

double extrapolate(std::size_t none, std::size_t one, double count) {
  return static_cast<double>(none) + count * (static_cast<double>(one) - static_cast<double>(none));
}

json vector_json(const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

Eigen::VectorXd read_vector(const json& j, const char* key, Eigen::Index n, bool may_be_empty, const std::string& path) {
  const json& a = member(j, key, path, "checkpoint");
  if (!a.is_array()) bad(path, std::string(key) + " must be a list of numbers");
  if (a.empty() && may_be_empty) return Eigen::VectorXd();
  if (static_cast<Eigen::Index>(a.size()) != n)
    bad(path, std::string(key) + ": expected " + std::to_string(n) + " numbers, got " + std::to_string(a.size()));
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i)
    v[i] = read_number(a[static_cast<size_t>(i)], path, std::string(key) + "[" + std::to_string(i) + "]", true);
  return v;
}

}  // namespace neuralsim::checkpoint_json
