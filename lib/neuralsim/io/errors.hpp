// Error types shared by the library and the apps.
//
// Every CLI maps these to a documented exit code (README.md, "Exit codes"),
// so shell sweeps and CI jobs can tell a bad config from a diverged run.
#pragma once

#include <stdexcept>
#include <string>

namespace neuralsim {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 2,       // bad command line or config (also ConfigError)
  kExitData = 3,        // missing / mis-shaped / non-finite input data
  kExitNumerical = 4,   // simulation diverged, solver failed
  kExitCheckFailed = 5, // the run worked but a check it was asked to make failed (rollout targets)
  kExitInterrupted = 130,
};

// A malformed or inconsistent configuration. The message names the file,
// the key path and, when known, the line.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input data that cannot be used: the message names the file, the dataset
// path and the expected and actual shapes.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// NaN/Inf or a failed solve. The message says where (time, step, quantity).
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model description (YAML, URDF) that cannot be turned into a Model.
// Reported as a config error (exit 2).
class ModelError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

}  // namespace neuralsim
