#include "common/python.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
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

std::optional<std::string> draw_plot(const std::string& script, const std::vector<std::string>& args) {
  const std::string python = python_interpreter();
  const std::string path = helper_script(script);
  if (!std::filesystem::exists(path) || !std::filesystem::exists(python)) {
    spdlog::info("no plot drawn ({} or {} missing)", python, path);
    return std::nullopt;
  }
  std::string cmd = shell_quoted(python) + " " + shell_quoted(path);
  for (const std::string& a : args) cmd += " " + shell_quoted(a);
  cmd += " - 2> /dev/null";
  std::string png;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe) {
    char buffer[1 << 16];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) png.append(buffer, n);
  }
  if (!pipe || ::pclose(pipe) != 0 || png.empty()) {
    spdlog::info("no plot drawn by {} (python3-matplotlib not installed?)", script);
    return std::nullopt;
  }
  return png;
}

}  // namespace neuralsim
