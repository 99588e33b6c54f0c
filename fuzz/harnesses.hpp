// The fuzz harnesses: each feeds arbitrary bytes to one reader of hostile
// input and accepts only the library's documented errors. libFuzzer drives
// them (fuzz/*_fuzzer.cpp, -DNEURALSIM_FUZZ=ON with clang); the test suite
// replays the corpus and every crash input found (tests/fuzz/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace neuralsim::fuzz {

// A YAML experiment config: parsed, echoed as JSON, and read as a model
// section and a contact section when it has them.
void config(const uint8_t* data, size_t size);
// A CSV log under a fixed import description (columns t, a, b).
void csv_import(const uint8_t* data, size_t size);
// An HDF5 trajectory file.
void hdf5_trajectories(const uint8_t* data, size_t size);
// A URDF document.
void urdf(const uint8_t* data, size_t size);
// A simid checkpoint for a two-parameter fit.
void checkpoint(const uint8_t* data, size_t size);

struct Target {
  const char* name;
  void (*run)(const uint8_t*, size_t);
};
const std::vector<Target>& targets();

}  // namespace neuralsim::fuzz
