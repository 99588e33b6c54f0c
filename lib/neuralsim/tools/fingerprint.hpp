// Fingerprints of what a run's result depends on, stored in checkpoints so
// that --resume refuses a checkpoint written for another config, other data
// or another seed (and says which changed).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "neuralsim/core/trajectory.hpp"

namespace neuralsim {

// What a run's result depends on, by name ("data.train", "seed", a config key): digests.
using Fingerprint = std::map<std::string, std::string>;

// 64-bit FNV-1a (Fowler–Noll–Vo), as 16 hex digits.
std::string fnv1a_hex(const std::string& bytes);

// The bytes of every number in the set (time, q, q̇, τ, link poses) and the
// trajectory names, hashed.
std::string trajectory_digest(const TrajectorySet& set);

// One digest per top-level key of the config JSON, except `ignored` keys
// (those that cannot change the result, e.g. "output", "description").
Fingerprint config_digests(const nlohmann::json& config,
                                                  const std::vector<std::string>& ignored);

// Names of the entries that differ between two fingerprints (missing
// entries count as different), comma-separated; "" when equal.
std::string fingerprint_difference(const std::map<std::string, std::string>& a,
                                   const std::map<std::string, std::string>& b);

}  // namespace neuralsim
