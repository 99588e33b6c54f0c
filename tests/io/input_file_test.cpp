// io/input_file: every kind of path that is not a readable regular file is
// refused with the error type of its kind of input and a message saying
// what it is, without opening it (a FIFO must not block); sizes are bounded.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/input_file.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;
using testing::TempDirTest;
using testing::thrown_message;

class InputFileTest : public TempDirTest {
 protected:
  // A path of each kind that is not a readable regular file, and what the message says of it.
  std::vector<std::pair<std::string, std::string>> bad_paths() {
    const std::string fifo = path("fifo"), loop_a = path("loop_a"), loop_b = path("loop_b");
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    fs::create_symlink(loop_b, loop_a);
    fs::create_symlink(loop_a, loop_b);
    fs::create_symlink(path("gone"), path("dangling"));
    write("file", "x");
    return {{path("missing"), "does not exist"},
            {path("file") + "/below", "does not exist (a part of its path is not a directory)"},
            {dir_.string(), "is a directory, expected a regular file"},
            {fifo, "is a FIFO (named pipe), expected a regular file"},
            {testing::character_device(), "is a character device, expected a regular file"},
            {loop_a, "is a loop of symbolic links"},
            {path("dangling"), "is a symbolic link to a file that does not exist"},
            {"", "has an empty path"}};
  }
};

TEST_F(InputFileTest, EveryKindOfPathThatIsNotARegularFileIsNamed) {
  for (const auto& [path, problem] : bad_paths()) {
    const std::string p = path;  // a lambda cannot capture a structured binding before C++20
    SCOPED_TRACE(p);
    EXPECT_EQ(input_file_problem(p), problem);
    // Each reader's own error type, one line "<path>: <what> <problem>".
    EXPECT_EQ(thrown_message([&] { check_input_file(p, "data file", InputError::kData); }),
              p + ": data file " + problem);
    EXPECT_THROW(check_input_file(p, "config file", InputError::kConfig), ConfigError);
    EXPECT_THROW(check_input_file(p, "URDF file", InputError::kModel), ModelError);
    EXPECT_THROW(read_input_file(p, "parameter file", InputError::kData, 100), DataError);
  }
}

TEST_F(InputFileTest, ASocketIsNamed) {
  // Unix socket paths are short (108 bytes): bind one in the working directory's temp.
  const std::string sock = (fs::temp_directory_path() / ("ns_sock_" + std::to_string(::getpid()))).string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  sock.copy(addr.sun_path, sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(input_file_problem(sock), "is a socket, expected a regular file");
  ::close(fd);
  fs::remove(sock);
}

TEST_F(InputFileTest, AnUnreadableFileIsNamed) {
  const std::string p = write("secret", "x");
  fs::permissions(p, fs::perms::none);
  if (::access(p.c_str(), R_OK) == 0) GTEST_SKIP() << "running as root: every file is readable";
  EXPECT_EQ(input_file_problem(p), "is not readable (Permission denied)");
}

TEST_F(InputFileTest, ReadsARegularFileWithinItsBound) {
  const std::string p = write("ok.txt", "hello");
  EXPECT_EQ(check_input_file(p, "text", InputError::kData), 5u);
  EXPECT_EQ(read_input_file(p, "text", InputError::kData, 5), "hello");
  EXPECT_EQ(thrown_message([&] { read_input_file(p, "config file", InputError::kConfig, 4); }),
            p + ": config file is 5 bytes, more than the 4 bytes limit of a config file");
  // A symbolic link to a regular file is that file.
  fs::create_symlink(p, path("link.txt"));
  EXPECT_EQ(read_input_file(path("link.txt"), "text", InputError::kData, 5), "hello");
  EXPECT_EQ(format_byte_limit(16u << 20), "16 MiB");
}

TEST_F(InputFileTest, TheMessageNamesWhoNamedThePathAndEscapesIt) {
  EXPECT_EQ(thrown_message([&] {
              check_input_file(path("no\x01pe"), "model file", InputError::kModel, kNoSizeLimit,
                               "named by a.yaml:3, key 'model.file'");
            }),
            path("no\\x01pe") + ": model file does not exist (named by a.yaml:3, key 'model.file')");
}

}  // namespace
}  // namespace neuralsim
