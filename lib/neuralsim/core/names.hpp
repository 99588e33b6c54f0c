// Names in messages: the edit distance behind every "did you mean".
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace neuralsim {

// A name that is one dataset or file name inside a group or folder: not
// empty, not "." or "..", no '/'.
inline bool is_plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// Levenshtein distance (insertions, deletions, substitutions), one row of
// the dynamic program.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1u : 0u)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The candidate nearest to `name` within `max_distance` edits (the first of
// equals), or "".
inline std::string closest_name(const std::string& name, const std::vector<std::string>& candidates,
                                std::size_t max_distance) {
  std::string best;
  std::size_t best_d = max_distance + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace neuralsim
