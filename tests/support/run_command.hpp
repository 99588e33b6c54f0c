// Runs an app binary in a shell and captures its exit code and stderr, for
// end-to-end tests of the CLIs.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace neuralsim::testing {

struct CommandResult {
  int exit_code = -1;
  std::string err;  // stderr
};

inline std::string app_path(const std::string& app) { return std::string(NEURALSIM_BINARY_DIR) + "/" + app; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` from the source directory (so configs' relative paths work).
inline CommandResult run_command(const std::string& command) {
  static int counter = 0;
  const std::string err_file = (std::filesystem::temp_directory_path() /
                                ("neuralsim_cmd_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                                   .string();
  const std::string full = "cd '" + std::string(NEURALSIM_SOURCE_DIR) + "' && " + command + " 2> '" + err_file + "' > /dev/null";
  const int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err_file);
  std::filesystem::remove(err_file);
  return r;
}

// A fresh, empty directory under the system temp dir.
inline std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("neuralsim_test_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace neuralsim::testing
