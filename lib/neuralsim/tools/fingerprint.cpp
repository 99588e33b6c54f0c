#include "neuralsim/tools/fingerprint.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace neuralsim {
namespace {

struct Fnv1a {
  uint64_t h = 1469598103934665603ULL;
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 1099511628211ULL;
    }
  }
  void add(const std::string& s) {
    const uint64_t n = s.size();
    add(&n, sizeof n);
    add(s.data(), s.size());
  }
  template <class M>
  void add_matrix(const M& m) {
    const int64_t dims[2] = {static_cast<int64_t>(m.rows()), static_cast<int64_t>(m.cols())};
    add(dims, sizeof dims);
    if (m.size() > 0) add(m.data(), sizeof(double) * static_cast<size_t>(m.size()));
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
  }
};

}  // namespace

std::string fnv1a_hex(const std::string& bytes) {
  Fnv1a f;
  f.add(bytes.data(), bytes.size());
  return f.hex();
}

std::string trajectory_digest(const TrajectorySet& set) {
  Fnv1a f;
  for (const Trajectory& t : set.trajectories) {
    f.add(t.name);
    f.add_matrix(t.time);
    f.add_matrix(t.q);
    f.add_matrix(t.qd);
    f.add_matrix(t.tau);
    for (const auto& [name, pose] : t.link_poses) {
      f.add(name);
      f.add_matrix(pose);
    }
    for (const auto& [name, reading] : t.imus) {
      f.add("imu/" + name);
      f.add_matrix(reading);
    }
    for (const auto& [name, m] : {std::pair<const char*, const RowMatrixXd*>{"tau_measured", &t.tau_measured},
                                  {"current", &t.current}}) {
      if (m->size() == 0) continue;
      f.add(name);
      f.add_matrix(*m);
    }
  }
  return f.hex();
}

std::map<std::string, std::string> config_digests(const nlohmann::json& config,
                                                  const std::vector<std::string>& ignored) {
  std::map<std::string, std::string> out;
  if (!config.is_object()) return out;
  for (auto it = config.begin(); it != config.end(); ++it)
    if (std::find(ignored.begin(), ignored.end(), it.key()) == ignored.end())
      out["config." + it.key()] = fnv1a_hex(it.value().dump());
  return out;
}

std::string fingerprint_difference(const std::map<std::string, std::string>& a,
                                   const std::map<std::string, std::string>& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  std::string out;
  for (const std::string& k : keys) {
    const auto ia = a.find(k), ib = b.find(k);
    if (ia == a.end() || ib == b.end() || ia->second != ib->second) out += (out.empty() ? "" : ", ") + k;
  }
  return out;
}

}  // namespace neuralsim
