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

// Text taken from an input file (a CSV field, a YAML value, an HDF5 string,
// a JSON key) as it may appear in a one-line message: valid, printable
// UTF-8 is kept; control characters, DEL, C1 controls, invisible marks
// (byte-order mark, zero-width spaces, bidi overrides) and bytes that are
// not UTF-8 become \xNN or \uNNNN. A binary file's bytes cannot break the
// line, the terminal or a JSON summary.
inline std::string printable(const std::string& text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escape_byte = [&](unsigned char b) { out += {'\\', 'x', kHex[b >> 4], kHex[b & 15]}; };
  const auto n = text.size();
  for (std::size_t i = 0; i < n;) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b < 0x20 || b == 0x7f) escape_byte(b);
      else out += static_cast<char>(b);
      ++i;
      continue;
    }
    // One UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
    const int len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    char32_t cp = len == 2 ? b & 0x1f : len == 3 ? b & 0x0f : b & 0x07;
    bool valid = len > 0 && i + static_cast<std::size_t>(len) <= n;
    for (int k = 1; valid && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      valid = (c & 0xc0) == 0x80;
      cp = (cp << 6) | (c & 0x3f);
    }
    valid = valid && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
            !(cp >= 0xd800 && cp <= 0xdfff);
    if (!valid) {
      escape_byte(b);
      ++i;
      continue;
    }
    const bool invisible = (cp >= 0x80 && cp <= 0x9f) || cp == 0xfeff || (cp >= 0x200b && cp <= 0x200f) ||
                           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    if (invisible) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(text, i, static_cast<std::size_t>(len));
    }
    i += static_cast<std::size_t>(len);
  }
  return out;
}

// A message as one printable line: its line breaks become spaces (a message
// is one line, whatever it was built from), then printable().
inline std::string printable_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return printable(message);
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
