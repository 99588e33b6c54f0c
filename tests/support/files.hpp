// File helpers shared by the tests: reading and writing text and JSON, and
// a scratch directory per test (so parallel ctest runs never collide).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace neuralsim::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_text(path)); }

// Writes `text` to `path`, creating missing parent directories.
inline void write_file(const std::string& path, const std::string& text) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream(path) << text;
}

// A fresh, empty directory under the system temp dir, named after the test
// process and `name`.
inline std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("neuralsim_test_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A fixture with its own scratch directory dir_, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fresh_dir(std::string(info->test_suite_name()) + "_" + info->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Writes a file into the scratch directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    write_file(path(name), text);
    return path(name);
  }

  std::filesystem::path dir_;
};

}  // namespace neuralsim::testing
