// Numbers in error messages: every digit needed to read the value back
// (17 significant digits), so that a message shows exactly what was read.
#pragma once

#include <sstream>
#include <string>

namespace neuralsim {

inline std::string format_number(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

}  // namespace neuralsim
