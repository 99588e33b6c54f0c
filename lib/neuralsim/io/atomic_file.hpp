// Atomic output files: a reader (a sweep script, a CI job, a second run)
// sees either the previous complete file or the new complete file, never a
// half-written one, even when the run is killed or the disk fills up.
//
// Every output of every tool goes through write_text_atomic (HDF5 files are
// built in memory first: hdf5_output.hpp, hdf5::write_file_atomic), so
// a write error is found and reported in this one place. The content goes
// to a hidden temp file in the same directory (rename is only atomic within
// one file system), is fsync'ed and closed, and is then renamed over the
// final path; on any failure the temp file is removed and the final path is
// left as it was (so the previous checkpoint stays usable).
//
// Every failure (a full disk, an I/O error, a read-only directory, a quota,
// a missing directory) is a ConfigError (an output that cannot be written
// is a usage error, exit 2) with one line naming the final path and the
// operating system's reason:
//   out/weights.h5: cannot write: No space left on device
#pragma once

#include <string>

namespace neuralsim {

// Creates `dir` and its missing parents; ConfigError naming the directory if
// that fails or if it exists as something other than a directory.
void ensure_directory(const std::string& dir);

// Replaces `path` with `content` (any bytes) atomically. The parent
// directory must exist.
void write_text_atomic(const std::string& path, const std::string& content);

// The message of a failed write of `path` ("PATH: cannot write: REASON").
std::string cannot_write(const std::string& path, const std::string& reason);

}  // namespace neuralsim
