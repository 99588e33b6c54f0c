// Parameter files: named values as the tools write them (params.json:
// {"format": "neuralsim-parameters", "model": ..., "parameters": {"name":
// {"value": v, ...}}, "names": [...], "fixed": {"name": {"value": v,
// "source": ...}}, ...}) or a flat {"name": v}. Read by every tool that
// takes `params_file:`; written by simid and train-augment, through the one
// writer below.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace neuralsim {

// One parameter as the file records it. The optional fields are written
// when set; a standard error that is NaN (not determined by the data) and
// bounds that are infinite are written as null.
struct ParameterRecord {
  std::string name;
  double value = 0;
  std::optional<double> std_error, initial, lower, upper;
};

// A value the run held fixed, and where it came from ("config.yaml:12").
struct FixedParameterRecord {
  std::string name;
  double value = 0;
  std::string source;
};

struct ParameterFile {
  std::string model;                         // the model's name
  std::vector<ParameterRecord> parameters;   // estimated or trained, in order ("names")
  std::vector<FixedParameterRecord> fixed;   // the rest of the model as the run set it
  nlohmann::json annotations = nlohmann::json::object();  // more top-level keys (cost, seed, provenance, ...)
};

// The "parameters" object of the file: {"name": {"value": v, ...}}.
nlohmann::json parameter_records_json(const std::vector<ParameterRecord>& parameters);

// Writes `file` atomically as JSON. read_parameter_file(path) gives back
// every fixed and estimated value.
void write_parameter_file(const std::string& path, const ParameterFile& file);

// Every value, by name. DataError naming the file for a missing file,
// invalid JSON, a file over 64 MiB, a non-numeric or non-finite value.
std::map<std::string, double> read_parameter_file(const std::string& path);

}  // namespace neuralsim
