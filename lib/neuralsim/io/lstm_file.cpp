#include "neuralsim/io/lstm_file.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {
namespace lstm_file_detail {

using nlohmann::json;
constexpr const char* kFormat = "neuralsim-lstm";
constexpr int kVersion = 2;
constexpr long long kMaxDim = 65536;

std::vector<double> values(const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw DataError(path + ": " + what); }

long long dimension(const json& j, const char* key, const std::string& path, long long lo) {
  if (!j.contains(key) || !j[key].is_number_integer()) bad(path, std::string("'") + key + "': expected an integer");
  const long long v = j[key].get<long long>();
  if (v < lo || v > kMaxDim)
    bad(path, std::string("'") + key + "': expected an integer in [" + std::to_string(lo) + ", " +
                  std::to_string(kMaxDim) + "], got " + std::to_string(v));
  return v;
}

Eigen::VectorXd numbers(const json& j, const char* key, long long n, const std::string& path, bool positive) {
  if (!j.contains(key) || !j[key].is_array()) bad(path, std::string("'") + key + "': expected a list of numbers");
  const json& a = j[key];
  if (static_cast<long long>(a.size()) != n)
    bad(path, std::string("'") + key + "': expected " + std::to_string(n) + " numbers, got " + std::to_string(a.size()));
  Eigen::VectorXd v(n);
  for (long long i = 0; i < n; ++i) {
    const json& x = a[static_cast<size_t>(i)];
    if (!x.is_number()) bad(path, std::string("'") + key + "'[" + std::to_string(i) + "]: expected a number");
    v[i] = x.get<double>();
    if (!std::isfinite(v[i]) || (positive && !(v[i] > 0)))
      bad(path, std::string("'") + key + "'[" + std::to_string(i) + "]: expected a finite number" +
                    (positive ? " > 0" : "") + ", got " + x.dump());
  }
  return v;
}

std::vector<std::string> names(const json& j, const char* key, long long n, const std::string& path) {
  if (!j.contains(key) || !j[key].is_array()) bad(path, std::string("'") + key + "': expected a list of names");
  const json& a = j[key];
  if (!a.empty() && static_cast<long long>(a.size()) != n)
    bad(path, std::string("'") + key + "': expected " + std::to_string(n) + " names (or none), got " +
                  std::to_string(a.size()));
  std::vector<std::string> out;
  for (const json& x : a) {
    if (!x.is_string()) bad(path, std::string("'") + key + "': expected strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace lstm_file_detail

void write_lstm_file(const std::string& path, const NamedLstm& lstm) {
  using namespace lstm_file_detail;
  if (lstm.model != "lstm-delta") throw InvalidArgument("write_lstm_file: unknown model '" + lstm.model + "'");
  const nn::Lstm& net = lstm.network;
  json j{{"format", kFormat},
               {"format_version", kVersion},
               {"input_dim", net.input_dim()},
               {"hidden_size", net.hidden_size()},
               {"output_dim", net.output_dim()},
               {"input_names", lstm.input_names},
               {"output_names", lstm.output_names},
               {"input_mean", values(net.input_mean())},
               {"input_std", values(net.input_std())},
               {"output_scale", values(net.output_scale())},
               {"output_offset", values(net.output_offset())},
               {"parameters", net.parameter_vector()},
               {"model", lstm.model}};
  if (lstm.use_controls) j["use_controls"] = *lstm.use_controls;
  write_text_atomic(path, j.dump(1) + "\n");
}

NamedLstm read_lstm_file(const std::string& path) {
  using namespace lstm_file_detail;
  const std::string text = read_input_file(path, "LSTM weights file", InputError::kData, 64u << 20);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    bad(path, std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    bad(path, std::string("'format': expected \"") + kFormat + "\"");
  if (!j.contains("format_version") || j["format_version"] != kVersion)
    bad(path, "'format_version': expected " + std::to_string(kVersion) +
                  " (a version 1 file has no output offset and cannot be replayed; retrain)");
  const long long nx = dimension(j, "input_dim", path, 1), H = dimension(j, "hidden_size", path, 1),
                  ny = dimension(j, "output_dim", path, 1);
  const long long count = nn::Lstm::parameter_count(nx, H, ny);
  if (count > 10'000'000)
    bad(path, "an LSTM of " + std::to_string(nx) + " -> " + std::to_string(H) + " -> " + std::to_string(ny) + " has " +
                  std::to_string(count) + " parameters, more than 10^7");
  NamedLstm out;
  out.network = nn::Lstm(nx, H, ny);
  out.input_names = names(j, "input_names", nx, path);
  out.output_names = names(j, "output_names", ny, path);
  out.network.set_input_normalization(numbers(j, "input_mean", nx, path, false), numbers(j, "input_std", nx, path, true));
  out.network.set_output_scaling(numbers(j, "output_scale", ny, path, false),
                                 numbers(j, "output_offset", ny, path, false));
  if (j.contains("model") && j["model"] != "lstm-delta")
    bad(path, "'model': expected \"lstm-delta\", got " + j["model"].dump());
  if (j.contains("use_controls")) {
    if (!j["use_controls"].is_boolean()) bad(path, "'use_controls': expected true or false, got " + j["use_controls"].dump());
    out.use_controls = j["use_controls"].get<bool>();
  }
  const Eigen::VectorXd p = numbers(j, "parameters", count, path, false);
  out.network.set_parameters(p.data());
  return out;
}

}  // namespace neuralsim
