// A write-failure shim for the end-to-end tests (LD_PRELOAD): makes a tool
// meet a full disk, an I/O error, a quota or a read-only directory without
// mounting anything (CI runs in a container that may not allow mounts, and
// as root, whom chmod does not stop). Built as a shared library when the
// tests are on; tests/apps/write_errors_test.cpp runs the tools under it.
//
//   NEURALSIM_FAIL_WRITES_DIR    files under this directory are affected
//                                (nothing is without it)
//   NEURALSIM_FAIL_WRITES_ERRNO  ENOSPC (default), EIO or EDQUOT: writes
//                                fail once the budget is spent; EROFS or
//                                EACCES: opening a file for writing and
//                                creating a directory there fail at once
//   NEURALSIM_FAIL_WRITES_AFTER  the budget: bytes that may still be written
//                                (default 0); a write that crosses it is
//                                short, as on a real full disk, and the
//                                next one fails
//   NEURALSIM_FAIL_WRITES_MATCH  only files whose name contains this count
//                                and fail (default: every file)
//   NEURALSIM_FAIL_WRITES_ON     write (default): the write call fails;
//                                fsync or close: writes succeed, and the
//                                file's fsync (or close) fails instead, as
//                                a delayed allocation error would
//
// The budget is per process (a child process starts with the whole
// budget). write, pwrite, writev and pwritev (and their 64-bit names),
// fsync, fdatasync, close, open, openat, creat and mkdir are interposed;
// calls from inside the C library itself (stdio) are not.
#undef _FORTIFY_SOURCE  // open() must be a plain function to be interposed
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum class FailOn { kWrite, kFsync, kClose };

struct Settings {
  bool active = false;
  char dir[PATH_MAX] = {};
  size_t dir_len = 0;
  int error = ENOSPC;
  bool refuse_open = false;  // EROFS, EACCES
  const char* match = nullptr;
  FailOn on = FailOn::kWrite;
};

Settings g;
std::atomic<long long> g_budget{0};
// Descriptors whose bytes went past the budget (fsync and close modes).
constexpr int kMaxFd = 65536;
std::atomic<bool> g_lost[kMaxFd];

int error_named(const char* name) {
  if (!name || !*name || std::strcmp(name, "ENOSPC") == 0) return ENOSPC;
  if (std::strcmp(name, "EIO") == 0) return EIO;
  if (std::strcmp(name, "EDQUOT") == 0) return EDQUOT;
  if (std::strcmp(name, "EROFS") == 0) return EROFS;
  if (std::strcmp(name, "EACCES") == 0) return EACCES;
  return std::atoi(name);
}

__attribute__((constructor)) void read_settings() {
  const char* dir = std::getenv("NEURALSIM_FAIL_WRITES_DIR");
  if (!dir || !*dir) return;
  if (!realpath(dir, g.dir)) std::snprintf(g.dir, sizeof g.dir, "%s", dir);
  g.dir_len = std::strlen(g.dir);
  while (g.dir_len > 1 && g.dir[g.dir_len - 1] == '/') g.dir[--g.dir_len] = '\0';
  g.error = error_named(std::getenv("NEURALSIM_FAIL_WRITES_ERRNO"));
  g.refuse_open = g.error == EROFS || g.error == EACCES;
  const char* after = std::getenv("NEURALSIM_FAIL_WRITES_AFTER");
  g_budget = after ? std::atoll(after) : 0;
  const char* match = std::getenv("NEURALSIM_FAIL_WRITES_MATCH");
  g.match = match && *match ? match : nullptr;
  const char* on = std::getenv("NEURALSIM_FAIL_WRITES_ON");
  if (on && std::strcmp(on, "fsync") == 0) g.on = FailOn::kFsync;
  if (on && std::strcmp(on, "close") == 0) g.on = FailOn::kClose;
  g.active = true;
}

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

bool affected_path(const char* path) {
  if (!g.active || !path) return false;
  if (std::strncmp(path, g.dir, g.dir_len) != 0 || (path[g.dir_len] != '/' && path[g.dir_len] != '\0')) return false;
  if (!g.match) return true;
  const char* slash = std::strrchr(path, '/');
  return std::strstr(slash ? slash + 1 : path, g.match) != nullptr;
}

// `path` relative to `dirfd` (AT_FDCWD: the working directory), made absolute.
bool affected_at(int dirfd, const char* path) {
  if (!g.active || !path) return false;
  if (path[0] == '/') return affected_path(path);
  char base[PATH_MAX], full[2 * PATH_MAX + 2];
  if (dirfd == AT_FDCWD) {
    if (!getcwd(base, sizeof base)) return false;
  } else {
    char link[64];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    const ssize_t n = readlink(link, base, sizeof base - 1);
    if (n < 0) return false;
    base[n] = '\0';
  }
  std::snprintf(full, sizeof full, "%s/%s", base, path);
  return affected_path(full);
}

bool affected_fd(int fd) {
  if (!g.active || fd < 0) return false;
  char link[64], path[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return false;
  path[n] = '\0';
  return affected_path(path);
}

// How many of `count` bytes to `fd` may be written: all of them (not
// affected, or the failure comes later), part, or none (-1 with errno).
ssize_t allowance(int fd, size_t count) {
  if (g.refuse_open || !affected_fd(fd)) return static_cast<ssize_t>(count);
  long long left = g_budget.load();
  while (true) {
    const long long take = left < static_cast<long long>(count) ? (left > 0 ? left : 0) : static_cast<long long>(count);
    if (g_budget.compare_exchange_weak(left, left - static_cast<long long>(count))) {
      if (g.on != FailOn::kWrite) {
        if (take < static_cast<long long>(count) && fd < kMaxFd) g_lost[fd] = true;
        return static_cast<ssize_t>(count);
      }
      if (take == 0 && count > 0) {
        errno = g.error;
        return -1;
      }
      return static_cast<ssize_t>(take);
    }
  }
}

bool refuse_open(int flags) { return g.refuse_open && (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }

// A deferred error reported by fsync or close (once per descriptor).
bool take_lost(int fd, FailOn on) {
  if (g.on != on || fd < 0 || fd >= kMaxFd) return false;
  return g_lost[fd].exchange(false);
}

}  // namespace

// An open of a path the shim refuses (refuse: this call may create or write):
// errno set to the configured error.
static bool refused(int dirfd, const char* path, bool refuse) {
  if (!(refuse && affected_at(dirfd, path))) return false;
  errno = g.error;
  return true;
}

extern "C" {

ssize_t write(int fd, const void* buf, size_t count) {
  static const auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
  const ssize_t n = allowance(fd, count);
  return n < 0 ? -1 : next(fd, buf, static_cast<size_t>(n));
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static const auto next = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  const ssize_t n = allowance(fd, count);
  return n < 0 ? -1 : next(fd, buf, static_cast<size_t>(n), offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
  static const auto next = real<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  const ssize_t n = allowance(fd, count);
  return n < 0 ? -1 : next(fd, buf, static_cast<size_t>(n), offset);
}

}  // extern "C"

namespace {

// The first iovecs covering `n` bytes (the last one cut short), in `out`.
int truncate_iov(const struct iovec* iov, int iovcnt, size_t n, struct iovec* out) {
  int k = 0;
  for (; k < iovcnt && n > 0 && k < IOV_MAX; ++k) {
    out[k] = iov[k];
    if (out[k].iov_len > n) out[k].iov_len = n;
    n -= out[k].iov_len;
  }
  return k;
}

size_t iov_bytes(const struct iovec* iov, int iovcnt) {
  size_t total = 0;
  for (int k = 0; k < iovcnt; ++k) total += iov[k].iov_len;
  return total;
}

}  // namespace

extern "C" {

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  static const auto next = real<ssize_t (*)(int, const struct iovec*, int)>("writev");
  const size_t total = iov_bytes(iov, iovcnt);
  const ssize_t n = allowance(fd, total);
  if (n < 0) return -1;
  if (static_cast<size_t>(n) == total) return next(fd, iov, iovcnt);
  struct iovec cut[IOV_MAX];
  return next(fd, cut, truncate_iov(iov, iovcnt, static_cast<size_t>(n), cut));
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  static const auto next = real<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev");
  const size_t total = iov_bytes(iov, iovcnt);
  const ssize_t n = allowance(fd, total);
  if (n < 0) return -1;
  if (static_cast<size_t>(n) == total) return next(fd, iov, iovcnt, offset);
  struct iovec cut[IOV_MAX];
  return next(fd, cut, truncate_iov(iov, iovcnt, static_cast<size_t>(n), cut), offset);
}

int fsync(int fd) {
  static const auto next = real<int (*)(int)>("fsync");
  if (take_lost(fd, FailOn::kFsync)) {
    errno = g.error;
    return -1;
  }
  return next(fd);
}

int fdatasync(int fd) {
  static const auto next = real<int (*)(int)>("fdatasync");
  if (take_lost(fd, FailOn::kFsync)) {
    errno = g.error;
    return -1;
  }
  return next(fd);
}

int close(int fd) {
  static const auto next = real<int (*)(int)>("close");
  const bool fail = take_lost(fd, FailOn::kClose);
  if (fd >= 0 && fd < kMaxFd) g_lost[fd] = false;  // the number may be reused
  const int rc = next(fd);  // released in any case, as Linux does
  if (fail && rc == 0) {
    errno = g.error;
    return -1;
  }
  return rc;
}

// The mode argument, passed only with O_CREAT or O_TMPFILE (a macro: va_start
// must run in the variadic function itself).
#define NEURALSIM_OPEN_MODE(flags, mode)               \
  mode_t mode = 0;                                     \
  if ((flags) & (O_CREAT | O_TMPFILE)) {               \
    va_list ap;                                        \
    va_start(ap, flags);                               \
    mode = static_cast<mode_t>(va_arg(ap, int));       \
    va_end(ap);                                        \
  }

int open(const char* path, int flags, ...) {
  static const auto next = real<int (*)(const char*, int, ...)>("open");
  NEURALSIM_OPEN_MODE(flags, mode)
  return refused(AT_FDCWD, path, refuse_open(flags)) ? -1 : next(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  static const auto next = real<int (*)(const char*, int, ...)>("open64");
  NEURALSIM_OPEN_MODE(flags, mode)
  return refused(AT_FDCWD, path, refuse_open(flags)) ? -1 : next(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  static const auto next = real<int (*)(int, const char*, int, ...)>("openat");
  NEURALSIM_OPEN_MODE(flags, mode)
  return refused(dirfd, path, refuse_open(flags)) ? -1 : next(dirfd, path, flags, mode);
}

int creat(const char* path, mode_t mode) {
  static const auto next = real<int (*)(const char*, mode_t)>("creat");
  return refused(AT_FDCWD, path, g.refuse_open) ? -1 : next(path, mode);
}

int mkdir(const char* path, mode_t mode) {
  static const auto next = real<int (*)(const char*, mode_t)>("mkdir");
  return refused(AT_FDCWD, path, g.refuse_open) ? -1 : next(path, mode);
}

}  // extern "C"
