#include "neuralsim/io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

std::string errno_problem(int err) {
  switch (err) {
    case ENOENT: return "does not exist";
    case ENOTDIR: return "does not exist (a part of its path is not a directory)";
    case ELOOP: return "is a loop of symbolic links";
    case ENAMETOOLONG: return "has a path or name longer than the system allows";
    case EACCES: return "cannot be reached (permission denied on a directory of its path)";
    default: return std::string("cannot be read (") + std::strerror(err) + ")";
  }
}

std::string type_problem(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  const char* what = S_ISDIR(st.st_mode)    ? "is a directory"
                     : S_ISFIFO(st.st_mode) ? "is a FIFO (named pipe)"
                     : S_ISCHR(st.st_mode)  ? "is a character device"
                     : S_ISBLK(st.st_mode)  ? "is a block device"
                     : S_ISSOCK(st.st_mode) ? "is a socket"
                                            : "is not a regular file";
  return std::string(what) + ", expected a regular file";
}

// The problem with `path` ("" if none) and, when there is none, its status.
std::string stat_problem(const std::string& path, struct stat& st) {
  if (path.empty()) return "has an empty path";
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (err == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      return "is a symbolic link to a file that does not exist";
    return errno_problem(err);
  }
  std::string problem = type_problem(st);
  if (problem.empty() && ::access(path.c_str(), R_OK) != 0)
    problem = std::string("is not readable (") + std::strerror(errno) + ")";
  return problem;
}

[[noreturn]] void raise(InputError error, const std::string& path, const std::string& what,
                        const std::string& problem, const std::string& origin) {
  const std::string message =
      printable(path) + ": " + what + " " + problem + (origin.empty() ? "" : " (" + origin + ")");
  switch (error) {
    case InputError::kConfig: throw ConfigError(message);
    case InputError::kModel: throw ModelError(message);
    case InputError::kData: break;
  }
  throw DataError(message);
}

void check_size(std::uintmax_t size, const std::string& path, const std::string& what, InputError error,
                std::uintmax_t max_bytes, const std::string& origin) {
  if (size > max_bytes)
    raise(error, path, what,
          "is " + std::to_string(size) + " bytes, more than the " + format_byte_limit(max_bytes) + " limit of a " +
              what,
          origin);
}

}  // namespace

std::string input_file_problem(const std::string& path) {
  struct stat st {};
  return stat_problem(path, st);
}

std::uintmax_t check_input_file(const std::string& path, const std::string& what, InputError error,
                                std::uintmax_t max_bytes, const std::string& origin) {
  struct stat st {};
  const std::string problem = stat_problem(path, st);
  if (!problem.empty()) raise(error, path, what, problem, origin);
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  check_size(size, path, what, error, max_bytes, origin);
  return size;
}

std::string read_input_file(const std::string& path, const std::string& what, InputError error,
                            std::uintmax_t max_bytes, const std::string& origin) {
  check_input_file(path, what, error, max_bytes, origin);
  // O_NONBLOCK: should a FIFO have replaced the file since the check, open()
  // returns at once and fstat() refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) raise(error, path, what, std::string("cannot be opened (") + std::strerror(errno) + ")", origin);
  std::string text;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) raise(error, path, what, errno_problem(errno), origin);
    const std::string problem = type_problem(st);
    if (!problem.empty()) raise(error, path, what, problem, origin);
    check_size(static_cast<std::uintmax_t>(st.st_size), path, what, error, max_bytes, origin);
    char buf[65536];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) raise(error, path, what, std::string("cannot be read (") + std::strerror(errno) + ")", origin);
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      check_size(text.size(), path, what, error, max_bytes, origin);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

std::string format_byte_limit(std::uintmax_t bytes) {
  constexpr std::uintmax_t kMiB = 1u << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace neuralsim
