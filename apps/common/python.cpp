#include "common/python.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>

#ifndef NEURALSIM_DEFAULT_PYTHON
#error "NEURALSIM_DEFAULT_PYTHON is set by CMakeLists.txt (cache variable NEURALSIM_PYTHON)"
#endif

namespace neuralsim {

std::string python_interpreter() {
  const char* env = std::getenv("NEURALSIM_PYTHON");
  return env && *env ? env : NEURALSIM_DEFAULT_PYTHON;
}

std::string helper_script(const std::string& name) { return std::string(NEURALSIM_SCRIPTS_DIR) + "/" + name; }

namespace {
// 'text' for the shell, with each ' written as '\''.
std::string shell_quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

bool draw_plot(const std::string& script, const std::vector<std::string>& args) {
  const std::string python = python_interpreter();
  const std::string path = helper_script(script);
  if (!std::filesystem::exists(path) || !std::filesystem::exists(python)) {
    spdlog::info("no plot drawn ({} or {} missing)", python, path);
    return false;
  }
  std::string cmd = shell_quoted(python) + " " + shell_quoted(path);
  for (const std::string& a : args) cmd += " " + shell_quoted(a);
  cmd += " > /dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    spdlog::info("no plot {} drawn (python3-matplotlib not installed?)", args.empty() ? script : args.back());
    return false;
  }
  return true;
}

}  // namespace neuralsim
