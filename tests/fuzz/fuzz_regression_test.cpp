// Replays every fuzz corpus file and every crash input the fuzzers ever
// found (fuzz/corpus/<target>/, fuzz/crashes/<target>/) through the same
// harnesses libFuzzer drives: each must end in a documented error or
// success, never a crash, an undocumented exception or a hang.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../fuzz/harnesses.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

class FuzzRegression : public ::testing::TestWithParam<fuzz::Target> {};

TEST_P(FuzzRegression, CorpusAndCrashInputsAreHandled) {
  int files = 0;
  for (const char* kind : {"corpus", "crashes"}) {
    const fs::path dir = fs::path(testing::source_path("fuzz")) / kind / GetParam().name;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      SCOPED_TRACE(entry.path().string());
      EXPECT_NO_THROW(GetParam().run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      ++files;
    }
  }
  EXPECT_GT(files, 0) << "no corpus for " << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegression, ::testing::ValuesIn(fuzz::targets()),
                         [](const ::testing::TestParamInfo<fuzz::Target>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace neuralsim
