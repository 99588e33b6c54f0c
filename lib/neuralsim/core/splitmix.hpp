// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a fully specified bijective 64-bit mix. Seeded
// streams (epochs, trajectories, pushes, commands, bootstrap replicates)
// derive their generator states from (seed, index) with it, so each stream
// depends only on its indices: the same at any thread count and platform.
#pragma once

#include <cstdint>

namespace neuralsim {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace neuralsim
