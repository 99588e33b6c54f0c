// Every file a tool reads is checked here before it is opened: a config, a
// model (YAML, URDF), a data file (HDF5, CSV, distillation dataset), a
// parameter or weights file, a checkpoint, an earlier run's summary.
//
// Opening a FIFO blocks until a writer appears, a character device may
// never end (/dev/zero), a directory or a socket cannot be read at all: so
// a path must name a readable regular file (symbolic links followed), and a
// bounded one when the caller gives a size. The error says what the path
// is, with the error type the caller's kind of input calls for:
//
//   model.urdf: URDF file is a FIFO (named pipe), expected a regular file
//   data.h5: data file does not exist
//   p.json: parameter file is 80000000 bytes, more than the 64 MiB limit of a parameter file
//
// One line each, the path and `what` as given (a hostile name is escaped).
#pragma once

#include <cstdint>
#include <string>

namespace neuralsim {

// Which error a bad input file is: ConfigError (a config, an output
// directory's files), ModelError (a model) or DataError (data, parameters,
// weights, checkpoints). Exit codes 2, 2 and 3 in the tools.
enum class InputError { kConfig, kModel, kData };

inline constexpr std::uintmax_t kNoSizeLimit = UINTMAX_MAX;

// What is wrong with reading `path` as a regular file: "" when nothing is,
// else "does not exist", "is a directory", "is a FIFO (named pipe)", "is a
// character device", "is a block device", "is a socket", "is not readable
// (Permission denied)", "is a loop of symbolic links", ... For callers that
// only warn (a URDF's mesh files, which are never opened).
std::string input_file_problem(const std::string& path);

// Throws the `error` type, "<path>: <what> <problem>[ (<origin>)]", when
// `path` is not a readable regular file of at most `max_bytes`; returns its
// size. `what` names the kind of file ("config file", "URDF file");
// `origin` says who named the path (Config::named_by), or "".
std::uintmax_t check_input_file(const std::string& path, const std::string& what, InputError error,
                                std::uintmax_t max_bytes = kNoSizeLimit, const std::string& origin = "");

// check_input_file, then the whole content, read through the descriptor
// that was checked (the path cannot be swapped for a FIFO in between) and
// never more than `max_bytes` (a file that grows while it is read).
std::string read_input_file(const std::string& path, const std::string& what, InputError error,
                            std::uintmax_t max_bytes, const std::string& origin = "");

// "16 MiB", "64 MiB", "1234 bytes": a limit as messages and docs state it.
std::string format_byte_limit(std::uintmax_t bytes);

}  // namespace neuralsim
