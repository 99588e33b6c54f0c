// libFuzzer entry point for the hdf5_trajectories harness (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  neuralsim::fuzz::hdf5_trajectories(data, size);
  return 0;
}
