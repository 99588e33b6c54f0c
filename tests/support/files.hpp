// File helpers shared by the tests: reading and writing text and JSON, and
// a scratch directory per test (so parallel ctest runs never collide).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/python.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim::testing {

inline std::string source_path(const std::string& rel) { return std::string(NEURALSIM_SOURCE_DIR) + "/" + rel; }
// The robot models and real recordings live beside the checkout (../shared,
// read-only). A test that reads one starts with
// NEURALSIM_SKIP_WITHOUT_SHARED("models/..." or "real-data/..."): where the
// path is missing it skips, except under the test command
// (NEURALSIM_REQUIRE_ORACLES=1, scripts/test.sh, which needs ../shared):
// there it fails, so a missing ../shared cannot pass unnoticed as skips.
// Like FAIL() and GTEST_SKIP(), it returns from the enclosing function only:
// used in SetUp() it stops the test (gtest runs no body after a fatal failure
// or a skip there); in a helper, the caller must stop too.
inline std::string shared_path(const std::string& rel) { return std::string(NEURALSIM_SHARED_DIR) + "/" + rel; }

// A character device the bad-input tests hand the tools as a file (never a
// regular file): NEURALSIM_TEST_CHARACTER_DEVICE, or /dev/null.
inline std::string character_device() {
  const char* d = std::getenv("NEURALSIM_TEST_CHARACTER_DEVICE");
  return d && *d ? d : "/dev/null";
}
#define NEURALSIM_SKIP_WITHOUT_SHARED(rel)                                                             \
  do {                                                                                                 \
    const std::string neuralsim_shared_path_ = ::neuralsim::testing::shared_path(rel);                 \
    if (!std::filesystem::exists(neuralsim_shared_path_)) {                                            \
      if (::neuralsim::testing::oracles_required()) {                                                  \
        FAIL() << neuralsim_shared_path_                                                               \
               << " not present (NEURALSIM_REQUIRE_ORACLES=1: the test command requires ../shared)";   \
      } else {                                                                                         \
        GTEST_SKIP() << neuralsim_shared_path_ << " not present";                                      \
      }                                                                                                \
    }                                                                                                  \
  } while (0)

// Every one of `parts` occurs in `message` (error-message checks).
inline void expect_contains(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

// The message of the exception f throws ("" when it throws none).
inline std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// The message of the ConfigError (`config`) or DataError (otherwise) that
// f throws; a test failure when it throws the other kind or nothing.
inline std::string config_or_data_error(const std::function<void()>& f, bool config) {
  try {
    f();
  } catch (const ConfigError& e) {
    EXPECT_TRUE(config) << e.what();
    return e.what();
  } catch (const DataError& e) {
    EXPECT_FALSE(config) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

// Tests checked against an independent tool (Ipopt, h5py) skip where it is
// missing, but fail under the test command, which installs every such tool
// and sets NEURALSIM_REQUIRE_ORACLES=1 (scripts/test.sh): there a check
// must not turn into a skip unnoticed.
inline bool oracles_required() {
  const char* v = std::getenv("NEURALSIM_REQUIRE_ORACLES");
  return v != nullptr && std::string(v) == "1";
}
#define NEURALSIM_SKIP_WITHOUT_ORACLE(available, what)                                     \
  do {                                                                                      \
    if (!(available)) {                                                                     \
      if (::neuralsim::testing::oracles_required()) {                                       \
        FAIL() << what << " (NEURALSIM_REQUIRE_ORACLES=1: the test command installs it)";   \
      } else {                                                                              \
        GTEST_SKIP() << what;                                                               \
      }                                                                                     \
    }                                                                                       \
  } while (0)

// Whether the interop interpreter can import h5py (the tests that read our
// files with plain h5py, and write files for our readers with it).
inline bool h5py_available() {
  const std::string cmd = "'" + python_interpreter() + "' -c 'import h5py' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// "%.3e", for messages.
inline std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

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
