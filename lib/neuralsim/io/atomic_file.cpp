#include "neuralsim/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "neuralsim/core/errors.hpp"

namespace neuralsim {

namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

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

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw ConfigError("cannot open '" + path + "' to sync it: " + errno_text());
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) throw ConfigError("cannot sync '" + path + "' to disk: " + errno_text());
}

// Makes the rename itself durable. Best effort: some file systems refuse
// fsync on directories, and the data is already safe at this point.
void fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void rename_into_place(const std::string& temp, const std::string& final_path) {
  if (std::rename(temp.c_str(), final_path.c_str()) != 0)
    throw ConfigError("cannot rename '" + temp + "' to '" + final_path + "': " + errno_text());
  fsync_directory(parent_dir(final_path));
}

void write_all(int fd, const std::string& content, const std::string& path) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;  // our SIGINT handler does not restart syscalls
    if (n < 0) throw ConfigError("cannot write '" + path + "': " + errno_text());
    data += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

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
  if (fd < 0)
    throw ConfigError("cannot create '" + path + "' (in directory '" + parent_dir(path) +
                      "'): " + errno_text());
  try {
    write_all(fd, content, path);
    if (::fsync(fd) != 0) throw ConfigError("cannot sync '" + path + "' to disk: " + errno_text());
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  // Linux releases the descriptor even when close() fails, so never retry it.
  if (::close(fd) != 0) {
    const std::string reason = errno_text();
    ::unlink(temp.c_str());
    throw ConfigError("cannot write '" + path + "': " + reason);
  }
  try {
    rename_into_place(temp, path);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
}

AtomicOutputPath::AtomicOutputPath(std::string final_path)
    : final_path_(std::move(final_path)), temp_path_(make_temp_path(final_path_)) {}

AtomicOutputPath::~AtomicOutputPath() {
  if (!committed_) ::unlink(temp_path_.c_str());  // may not exist; ENOENT is fine
}

void AtomicOutputPath::commit() {
  if (committed_) return;
  std::error_code ec;
  if (!fs::exists(temp_path_, ec))
    throw ConfigError("cannot commit '" + final_path_ + "': the temporary file '" + temp_path_ +
                      "' was never written");
  fsync_path(temp_path_, O_RDONLY);
  rename_into_place(temp_path_, final_path_);
  committed_ = true;
}

}  // namespace neuralsim
