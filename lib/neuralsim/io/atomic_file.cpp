#include "neuralsim/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace fs = std::filesystem;

namespace {

// "dir/.name.<pid>.<n>.tmp": hidden so globs like out/*.h5 skip it, unique
// per process and call so parallel writers never share a temp file, and
// ending in .tmp so leftovers from a killed run are easy to recognise.
std::string make_temp_path(const std::string& final_path) {
  static std::atomic<unsigned long> counter{0};
  const fs::path p(final_path);
  const std::string name = "." + p.filename().string() + "." + std::to_string(::getpid()) + "." +
                           std::to_string(counter++) + ".tmp";
  return (p.parent_path() / name).string();
}

std::string parent_dir(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Makes the rename itself durable. Best effort: some file systems refuse
// fsync on directories, and the data is already safe at this point.
void fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// The reason of the failed call, or "" when it succeeded.
std::string write_all(int fd, const std::string& content) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;  // our SIGINT handler does not restart syscalls
    if (n < 0) return std::strerror(errno);
    // A full disk may first accept part of the buffer; the next call reports why.
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  return "";
}

// Writes, syncs and closes; the first failure's reason ("" if none). The
// descriptor is closed in any case (Linux releases it even when close()
// fails, so close is never retried). A delayed allocation error (a full
// disk, a quota, NFS) may surface only at fsync or close, so both count.
std::string write_sync_close(int fd, const std::string& content) {
  std::string reason = write_all(fd, content);
  if (reason.empty() && ::fsync(fd) != 0) reason = std::strerror(errno);
  if (::close(fd) != 0 && errno != EINTR && reason.empty()) reason = std::strerror(errno);
  return reason;
}

}  // namespace

std::string cannot_write(const std::string& path, const std::string& reason) {
  return path + ": cannot write: " + reason;
}

void ensure_directory(const std::string& dir) {
  if (dir.empty()) return;  // "" means the working directory
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (fs::exists(dir, ec))
    throw ConfigError("output directory '" + dir + "' exists but is not a directory");
  fs::create_directories(dir, ec);
  // create_directories reports an error when another process wins the race.
  if (ec && !fs::is_directory(dir))
    throw ConfigError("cannot create output directory '" + dir + "': " + ec.message());
}

void write_text_atomic(const std::string& path, const std::string& content) {
  const std::string temp = make_temp_path(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    std::error_code ec;
    if (err == ENOENT && !fs::is_directory(parent_dir(path), ec))
      throw ConfigError(cannot_write(path, "directory '" + parent_dir(path) + "' does not exist"));
    throw ConfigError(cannot_write(path, std::strerror(err)));
  }
  std::string reason = write_sync_close(fd, content);
  if (reason.empty() && std::rename(temp.c_str(), path.c_str()) != 0) reason = std::strerror(errno);
  if (!reason.empty()) {
    ::unlink(temp.c_str());
    throw ConfigError(cannot_write(path, reason));
  }
  fsync_directory(parent_dir(path));
}

}  // namespace neuralsim
