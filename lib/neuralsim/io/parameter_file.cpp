#include "neuralsim/io/parameter_file.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {

nlohmann::json parameter_records_json(const std::vector<ParameterRecord>& parameters) {
  using nlohmann::json;
  json values = json::object();
  auto number_or_null = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const ParameterRecord& p : parameters) {
    json entry{{"value", p.value}};
    if (p.std_error) entry["std_error"] = number_or_null(*p.std_error);
    if (p.initial) entry["initial"] = number_or_null(*p.initial);
    if (p.lower) entry["lower"] = number_or_null(*p.lower);
    if (p.upper) entry["upper"] = number_or_null(*p.upper);
    values[p.name] = entry;
  }
  return values;
}

void write_parameter_file(const std::string& path, const ParameterFile& file) {
  using nlohmann::json;
  json j = file.annotations.is_object() ? file.annotations : json::object();
  j["format"] = "neuralsim-parameters";
  j["model"] = file.model;
  json names = json::array();
  for (const ParameterRecord& p : file.parameters) names.push_back(p.name);
  j["parameters"] = parameter_records_json(file.parameters);
  j["names"] = names;
  json fixed = json::object();
  for (const FixedParameterRecord& p : file.fixed) fixed[p.name] = {{"value", p.value}, {"source", p.source}};
  j["fixed"] = fixed;
  // replace: a stray non-UTF-8 byte in a source or model name must not lose the file.
  write_text_atomic(path, j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

std::map<std::string, double> read_parameter_file(const std::string& path) {
  const std::string text = read_input_file(path, "parameter file", InputError::kData, 64u << 20);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
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
