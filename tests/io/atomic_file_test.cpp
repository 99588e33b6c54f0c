#include "neuralsim/io/atomic_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public testing::TempDirTest {
 protected:

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

};

TEST_F(AtomicFileTest, WriteReplacesContentAndLeavesNoTempFile) {
  const std::string path = (dir_ / "summary.json").string();
  write_text_atomic(path, "first\n");
  EXPECT_EQ(read(path), "first\n");
  write_text_atomic(path, "second, longer content\n");
  EXPECT_EQ(read(path), "second, longer content\n");
  write_text_atomic(path, "");
  EXPECT_EQ(read(path), "");
  EXPECT_EQ(entries(), (std::vector<std::string>{"summary.json"}));
}

TEST_F(AtomicFileTest, MissingDirectoryIsAConfigErrorAndWritesNothing) {
  const std::string path = (dir_ / "no" / "such" / "dir" / "x.json").string();
  try {
    write_text_atomic(path, "x");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot write: directory '" + (dir_ / "no" / "such" / "dir").string() + "' does not exist");
  }
  EXPECT_TRUE(entries().empty());
}

// A write the operating system refuses (here: a directory in /proc) is one
// line naming the file and the reason; full disks, I/O errors and
// read-only directories: tests/apps/write_errors_test.cpp.
TEST_F(AtomicFileTest, ARefusedWriteNamesTheFileAndTheReason) {
  const std::string path = "/proc/self/neuralsim.json";
  const std::string message = testing::thrown_message([&] { write_text_atomic(path, "x"); });
  EXPECT_EQ(message.rfind(path + ": cannot write: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST_F(AtomicFileTest, BinaryContentIsWrittenAsIs) {
  const std::string path = (dir_ / "image.h5").string();
  const std::string bytes("\x89HDF\r\n\x1a\n\0\0\xff", 11);
  write_text_atomic(path, bytes);
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), bytes);
  EXPECT_EQ(entries(), (std::vector<std::string>{"image.h5"}));
}

TEST_F(AtomicFileTest, EnsureDirectoryCreatesParentsAndRejectsFiles) {
  const fs::path nested = dir_ / "a" / "b" / "c";
  ensure_directory(nested.string());
  EXPECT_TRUE(fs::is_directory(nested));
  ensure_directory(nested.string());  // idempotent
  const fs::path file = dir_ / "plain_file";
  std::ofstream(file) << "x";
  try {
    ensure_directory(file.string());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(ensure_directory((file / "sub").string()), ConfigError);
}

}  // namespace
}  // namespace neuralsim
