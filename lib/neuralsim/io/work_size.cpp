#include "neuralsim/io/work_size.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace neuralsim {

double memory_budget_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return std::min(0.5 * kib * 1024.0, 64.0 * (1ULL << 30));
    in.ignore(256, '\n');
  }
  return 8.0 * (1ULL << 30);
}

void check_memory(const Config& owner, const std::string& key, const std::string& what, double bytes) {
  const double budget = memory_budget_bytes();
  if (bytes <= budget) return;
  char text[160];
  std::snprintf(text, sizeof text, "%s would need about %.3g GB of memory; the limit on this machine is %.3g GB",
                what.c_str(), bytes / 1e9, budget / 1e9);
  owner.fail(key, text);
}

}  // namespace neuralsim
