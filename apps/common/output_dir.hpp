// The output directory of one run (--out): what a tool may write, and the
// rule that a reused directory never mixes two runs.
//
//   - An empty --out, one longer than PATH_MAX allows (with room for the
//     names written in it) or with a directory name longer than NAME_MAX is
//     refused (exit 2); the directory is created if missing, and anything
//     the file system refuses about it is a usage error too.
//   - Temporary files left by a killed run (".<name>.<pid>.<n>.tmp", see
//     io/atomic_file.hpp) are removed at start.
//   - A directory holding another run's outputs (its summary.json, or the
//     in-progress marker of a run that never finished) is refused (exit 2)
//     unless the run resumes it (--resume) or replaces it (--force: the
//     earlier run's listed outputs are deleted first).
//   - While the run works, an in-progress marker (.neuralsim-run.json)
//     names it; summary.json, which lists every file the run wrote, is
//     written last and the marker removed after it.
//   - Output names from a config are plain file names inside the directory
//     (no '/', not '.' or '..'), never a reserved name (summary.json, the
//     checkpoint, the marker, the tool's own outputs).
#pragma once

#include <string>
#include <vector>

#include "neuralsim/io/config.hpp"

namespace neuralsim {

class OutputDirectory {
 public:
  enum class Reuse { kRefuse, kResume, kForce };

  // Takes the directory for this run (tools construct it once the config
  // and data are checked, so a bad input leaves --out untouched).
  OutputDirectory(std::string dir, const std::string& app, Reuse reuse);
  // A run that ends by an exception before anything was written leaves no
  // trace: the marker goes, and so does the directory if the run made it.
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const;

  // The file name at `key` of `owner` (or `fallback`): a plain file name
  // that is not one of `reserved` (nor summary.json or the marker), else
  // ConfigError naming the key. Checked before the directory is taken.
  static std::string configured_name(const Config& owner, const std::string& key, const std::string& fallback,
                                     const std::vector<std::string>& reserved = {});

  // ConfigError when `dir` cannot be an output directory by its name alone
  // (empty, too long): checked when a tool starts, before any work.
  static void check_path(const std::string& dir);

  // Called by RunSummary::write after summary.json is in place.
  void finish() const;

  static constexpr const char* kMarker = ".neuralsim-run.json";
  // The longest output name a config may give: ".<name>.<pid>.<n>.tmp" must fit NAME_MAX.
  static constexpr std::size_t kMaxOutputName = 200;

 private:
  void take(const std::string& app, Reuse reuse);

  std::string dir_;
  bool created_ = false;
  mutable bool finished_ = false;
};

}  // namespace neuralsim
