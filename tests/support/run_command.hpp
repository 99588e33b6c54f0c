// Runs an app binary in a shell and captures its exit code and stderr, for
// end-to-end tests of the CLIs.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/files.hpp"

namespace neuralsim::testing {

struct CommandResult {
  int exit_code = -1;
  std::string err;  // stderr
};

inline std::string app_path(const std::string& app) { return std::string(NEURALSIM_BINARY_DIR) + "/" + app; }

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

}  // namespace neuralsim::testing
