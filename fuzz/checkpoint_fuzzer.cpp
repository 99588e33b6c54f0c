// libFuzzer entry point for the checkpoint harness (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  neuralsim::fuzz::checkpoint(data, size);
  return 0;
}
