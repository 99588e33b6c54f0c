// Atomic output files: a reader (a sweep script, a CI job, a second run)
// sees either the previous complete file or the new complete file, never a
// half-written one, even when the run is killed or the disk fills up.
//
// The content goes to a hidden temp file in the same directory (rename is
// only atomic within one file system), is fsync'ed, and is then renamed over
// the final path. Failures are ConfigError naming the path: they almost
// always come from a bad --out (missing, read-only, not a directory).
#pragma once

#include <string>

namespace neuralsim {

// Creates `dir` and its missing parents; ConfigError naming the directory if
// that fails or if it exists as something other than a directory.
void ensure_directory(const std::string& dir);

// Replaces `path` with `content` atomically. The parent directory must exist.
void write_text_atomic(const std::string& path, const std::string& content);

// For writers that need a file name (HDF5): write to temp_path(), then
// commit(). If commit() is never reached (exception, early return) the
// destructor removes the temp file and the final path is left untouched.
class AtomicOutputPath {
 public:
  explicit AtomicOutputPath(std::string final_path);
  ~AtomicOutputPath();
  AtomicOutputPath(const AtomicOutputPath&) = delete;
  AtomicOutputPath& operator=(const AtomicOutputPath&) = delete;

  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }
  bool committed() const { return committed_; }

  // fsyncs the temp file and renames it to the final path. The temp file
  // must exist and be closed by its writer.
  void commit();

 private:
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace neuralsim
