// libFuzzer entry point for the csv_import harness (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  neuralsim::fuzz::csv_import(data, size);
  return 0;
}
