// The documented exit codes of every NeuralSim tool (README.md, "Exit
// codes"), and the one place that maps the library's error types to them.
// Shell sweeps and CI jobs rely on these to tell a bad config from bad data
// from a diverged run.
#pragma once

#include <exception>

namespace neuralsim {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,     // a bug: any exception the library does not document
  kExitUsage = 2,        // bad command line or config (ConfigError, ModelError)
  kExitData = 3,         // missing / mis-shaped / non-finite input data (DataError)
  kExitNumerical = 4,    // simulation diverged, solver failed (NumericalError)
  kExitCheckFailed = 5,  // the run worked but a check it was asked to make failed (rollout targets)
  kExitInterrupted = 130,
};

// ConfigError, ModelError -> 2; DataError -> 3; NumericalError -> 4;
// anything else (InvalidArgument included: input reaching the engine
// unchecked is a bug) -> 1.
ExitCode exit_code_for(const std::exception& e);

}  // namespace neuralsim
