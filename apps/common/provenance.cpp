#include "common/provenance.hpp"

#include "common/version.hpp"

#include <H5public.h>
#include <unistd.h>

#include <CLI/Version.hpp>
#include <Eigen/Core>
#include <ceres/version.h>
#include <ctime>
#include <filesystem>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/version.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/version.h>
#include <thread>

// Normally set by CMake on the neuralsim target; the fallbacks keep the file
// compilable by hand (and make such a build visibly "unknown").


namespace neuralsim {

namespace {

std::string dotted(long long major, long long minor, long long patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "unknown";
#endif
}

// CMAKE_BUILD_TYPE is not passed to the code, so report what it implies.
nlohmann::json build_info() {
  nlohmann::json b;
#ifdef NDEBUG
  b["assertions"] = false;
#else
  b["assertions"] = true;
#endif
#ifdef __OPTIMIZE__
  b["optimized"] = true;
#else
  b["optimized"] = false;
#endif
#if defined(__SANITIZE_ADDRESS__)
  b["sanitizers"] = "address";
#endif
  b["cxx_standard"] = static_cast<long long>(__cplusplus);
  return b;
}

std::string hdf5_version() {
  // The run-time library is what matters if it differs from the headers.
  unsigned major = 0, minor = 0, release = 0;
  if (H5get_libversion(&major, &minor, &release) >= 0) return dotted(major, minor, release);
  return dotted(H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
}

// yaml-cpp has no version macro, so it is deliberately not listed.
nlohmann::json library_versions() {
  nlohmann::json libs;
  libs["eigen"] = dotted(EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  libs["ceres"] = CERES_VERSION_STRING;
  libs["hdf5"] = hdf5_version();
  libs["nlohmann_json"] =
      dotted(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH);
  libs["tbb"] = TBB_runtime_version();
  libs["spdlog"] = dotted(SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH);
  libs["fmt"] = dotted(FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100);
  libs["cli11"] = CLI11_VERSION;
  return libs;
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string working_directory() {
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  return ec ? "unknown" : cwd.string();
}

}  // namespace

std::string version_string() {
  return std::string(version()) + " (rev " + git_revision() + ")";
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

nlohmann::json provenance(const std::vector<std::string>& argv, int threads_requested) {
  nlohmann::json p;
  p["version"] = version();
  p["git_revision"] = git_revision();
  p["compiler"] = compiler();
  p["build"] = build_info();
  p["libraries"] = library_versions();
  p["hostname"] = hostname();
  p["timestamp_utc"] = utc_timestamp();
  p["command_line"] = argv;
  p["working_directory"] = working_directory();
  p["pid"] = static_cast<long long>(::getpid());
  p["threads_requested"] = threads_requested;
  p["threads"] = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  p["hardware_threads"] = std::thread::hardware_concurrency();
  return p;
}

}  // namespace neuralsim
