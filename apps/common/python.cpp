#include "common/python.hpp"

#include <cstdlib>

#ifndef NEURALSIM_DEFAULT_PYTHON
#error "NEURALSIM_DEFAULT_PYTHON is set by CMakeLists.txt (cache variable NEURALSIM_PYTHON)"
#endif

namespace neuralsim {

std::string python_interpreter() {
  const char* env = std::getenv("NEURALSIM_PYTHON");
  return env && *env ? env : NEURALSIM_DEFAULT_PYTHON;
}

std::string helper_script(const std::string& name) { return std::string(NEURALSIM_SCRIPTS_DIR) + "/" + name; }

}  // namespace neuralsim
