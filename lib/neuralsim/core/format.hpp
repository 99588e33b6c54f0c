// Numbers in error messages: every digit needed to read the value back
// (17 significant digits), so that a message shows exactly what was read.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>

namespace neuralsim {

inline std::string format_number(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// printf-style formatting into a std::string (log lines of the library,
// which has no logging library of its own).
template <typename... Args>
std::string format_printf(const char* format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  if (n <= 0) return std::string();
  std::string s(static_cast<std::size_t>(n), '\0');
  std::snprintf(s.data(), s.size() + 1, format, args...);
  return s;
}

}  // namespace neuralsim
