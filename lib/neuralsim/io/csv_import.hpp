// Importing real-world CSV logs into a TrajectorySet, driven by a YAML
// description read through Config (reference: docs/data-format.md, "CSV
// import"; examples in configs/import/).
//
// Each CSV file becomes one trajectory named after the file stem. Every
// generalized coordinate is an affine combination of columns,
// `offset + sum(coeff * column)`, which covers unit changes, zero offsets and
// absolute-to-relative angle conversions without custom code.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/io/config.hpp"

namespace neuralsim {

// Sizes checked before anything is allocated (README, "Limits").
struct CsvImportLimits {
  static constexpr unsigned long long kMaxFileBytes = 1ULL << 30;  // one CSV file: 1 GiB
  static constexpr long long kMaxSamples = 100'000'000;           // one trajectory after resample_dt
};

// Loads the YAML file (top-level keys: `csv_import`, optional
// `description`) and imports the CSV files it describes; file patterns are
// relative to the YAML file's directory (or, given by --set, to the working
// directory). ConfigError for a bad description (file:line:column, key),
// DataError for bad or missing data (CSV file, line, column). Remarks
// (dropped duplicate time stamps, the end samples dropped by a derived qd)
// are appended to `notes` when not null.
//
// Without a time column (`sample_rate: Hz` or `dt: s`), sample k of a file is
// at t0 + k / sample_rate. Without velocity columns (`qd: {derive:
// savitzky_golay, window: W, order: P}` or `{derive: central_difference}`),
// q̇ is the derivative filter's (core/derivative_filter.hpp) on the imported
// positions and the W/2 samples at each end are dropped, as data.velocity
// drops them.
//
// With `split` in the description, the returned set is the training part
// and `validation` receives the validation part (same metadata); a split
// with `validation` null is a ConfigError at the split key, since the
// caller would silently lose that part.
TrajectorySet import_csv(const std::string& yaml_path, std::vector<std::string>* notes = nullptr,
                         TrajectorySet* validation = nullptr);

// Same, for the `csv_import` section of an already loaded config.
TrajectorySet import_csv(const Config& csv_import_section, std::vector<std::string>* notes = nullptr,
                         TrajectorySet* validation = nullptr);

}  // namespace neuralsim
