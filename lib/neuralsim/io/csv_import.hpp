// Importing real-world CSV logs into a TrajectorySet, driven by a YAML
// description (reference: docs/data-format.md, "CSV import"; examples in
// configs/import/).
//
// Each CSV file becomes one trajectory named after the file stem. Every
// generalized coordinate is an affine combination of columns,
// `offset + sum(coeff * column)`, which covers unit changes, zero offsets and
// absolute-to-relative angle conversions without custom code.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "neuralsim/io/trajectory.hpp"

namespace neuralsim {

// Loads the YAML file and imports the CSV files it describes; relative paths
// in it are relative to the YAML file's directory.
// Throws ConfigError for a bad description (file, key path and line in the
// message) and DataError for bad or missing data (CSV file, line, column).
TrajectorySet import_csv(const std::string& yaml_path);

// Same, for an already loaded description: either a document with a top-level
// `csv_import` key or that key's value. `base_dir` resolves relative paths,
// `source_name` names the description in error messages.
TrajectorySet import_csv(const YAML::Node& desc, const std::string& base_dir,
                         const std::string& source_name);

}  // namespace neuralsim
