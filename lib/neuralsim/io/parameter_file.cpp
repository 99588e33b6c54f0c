#include "neuralsim/io/parameter_file.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

std::map<std::string, double> read_parameter_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw DataError(path + ": no such parameter file");
  if (std::filesystem::file_size(path, ec) > (64u << 20))
    throw DataError(path + ": parameter file is larger than 64 MiB");
  std::ifstream in(path);
  if (!in) throw DataError(path + ": cannot open parameter file");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": invalid JSON: " + e.what());
  }
  const bool simid_file = j.is_object() && j.contains("parameters");
  std::map<std::string, double> out;
  auto read_values = [&](const nlohmann::json& params, const std::string& key) {
    if (!params.is_object()) throw DataError(path + ": " + key + "expected an object of parameters");
    for (auto it = params.begin(); it != params.end(); ++it) {
      const nlohmann::json& v = it.value();
      const nlohmann::json* number = v.is_number()                                            ? &v
                                     : v.is_object() && v.contains("value") && v["value"].is_number() ? &v["value"]
                                                                                             : nullptr;
      if (!number)
        throw DataError(path + ": " + key + "parameter '" + it.key() + "': expected a number or {\"value\": number}");
      const double value = number->get<double>();
      if (!std::isfinite(value)) throw DataError(path + ": " + key + "parameter '" + it.key() + "' is not finite");
      out[it.key()] = value;
    }
  };
  // A simid params.json: the values it held fixed, then its estimates.
  if (simid_file && j.contains("fixed")) read_values(j["fixed"], "'fixed': ");
  read_values(simid_file ? j["parameters"] : j, simid_file ? "'parameters': " : "");
  return out;
}

}  // namespace neuralsim
