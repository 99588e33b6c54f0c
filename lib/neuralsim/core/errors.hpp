// The library's error types. They say what went wrong and where (file, key,
// line, dataset, time, coordinate); they carry no exit codes. Only the app
// layer (apps/common/exit_codes.hpp) maps each type to the documented code.
#pragma once

#include <stdexcept>
#include <string>

#include "neuralsim/core/format.hpp"

namespace neuralsim {

// Base of every error the library throws on purpose. Its message is one
// printable line whatever input text it quotes (printable_line(): line
// breaks become spaces; other control characters and bytes that are not
// UTF-8 are escaped).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(printable_line(message)) {}
  explicit Error(const char* message) : Error(std::string(message)) {}
};

// A configuration value that is missing, malformed or out of range. The
// message names the file, the dotted key path and, when known, the line and
// column, with the expected against the actual value.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// Input data that cannot be used: the message names the file, the dataset
// path and the expected against the actual shape or value.
class DataError : public Error {
 public:
  using Error::Error;
};

// A model description that cannot be turned into a physical Model (unknown
// joint type, parent order, negative mass, non-physical inertia).
class ModelError : public Error {
 public:
  using Error::Error;
};

// NaN/Inf in a simulation or a failed solve. The message says where (time,
// step, quantity).
class NumericalError : public Error {
 public:
  using Error::Error;
};

// A caller broke a documented precondition of a library function (sizes of
// q, q̇ and τ against the model, a hook an integrator cannot run). Input is
// checked before it reaches the engine, so this is a bug in the caller.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Entry-point argument checks, as Pinocchio's PINOCCHIO_CHECK_ARGUMENT_SIZE:
// one integer comparison in the hot path, the message built only on failure.
[[noreturn]] __attribute__((noinline, cold)) inline void throw_size_mismatch(const char* function,
                                                                            const char* argument, long actual,
                                                                            long expected) {
  throw InvalidArgument(std::string(function) + ": " + argument + " has size " + std::to_string(actual) +
                        ", the model needs " + std::to_string(expected));
}

inline void check_argument_size(const char* function, const char* argument, long actual, long expected) {
  if (__builtin_expect(actual != expected, 0)) throw_size_mismatch(function, argument, actual, expected);
}

}  // namespace neuralsim
