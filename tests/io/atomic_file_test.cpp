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
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, UncommittedOutputPathLeavesNothingBehind) {
  const fs::path final_path = dir_ / "data.h5";
  std::ofstream(final_path) << "old";
  {
    AtomicOutputPath out(final_path.string());
    EXPECT_EQ(fs::path(out.temp_path()).parent_path(), dir_);  // same file system
    EXPECT_NE(out.temp_path(), final_path.string());
    std::ofstream(out.temp_path()) << "half-written";
    EXPECT_TRUE(fs::exists(out.temp_path()));
  }  // e.g. an exception while writing
  EXPECT_EQ(read(final_path), "old");
  EXPECT_EQ(entries(), (std::vector<std::string>{"data.h5"}));

  { AtomicOutputPath never_written((dir_ / "other.h5").string()); }
  EXPECT_EQ(entries(), (std::vector<std::string>{"data.h5"}));
}

TEST_F(AtomicFileTest, CommitMovesTheTempFileIntoPlace) {
  const fs::path final_path = dir_ / "data.h5";
  std::ofstream(final_path) << "old";
  AtomicOutputPath out(final_path.string());
  std::ofstream(out.temp_path()) << "new";
  out.commit();
  EXPECT_TRUE(out.committed());
  EXPECT_EQ(read(final_path), "new");
  EXPECT_FALSE(fs::exists(out.temp_path()));
  EXPECT_EQ(entries(), (std::vector<std::string>{"data.h5"}));
}

TEST_F(AtomicFileTest, CommitWithoutATempFileFails) {
  AtomicOutputPath out((dir_ / "data.h5").string());
  EXPECT_THROW(out.commit(), ConfigError);
  EXPECT_FALSE(out.committed());
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, TempPathsAreUnique) {
  AtomicOutputPath a((dir_ / "x.h5").string());
  AtomicOutputPath b((dir_ / "x.h5").string());
  EXPECT_NE(a.temp_path(), b.temp_path());
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
