#include "common/output_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

bool is_plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// Our atomic writer's temporary files: ".<name>.<pid>.<counter>.tmp".
bool is_stale_temp(const std::string& name) {
  return name.size() > 5 && name[0] == '.' && name.compare(name.size() - 4, 4, ".tmp") == 0;
}

// The files an earlier run listed in its summary.json (plain names inside
// the directory only: a hostile summary must not make --force delete
// anything elsewhere).
std::vector<std::string> listed_outputs(const fs::path& summary, const fs::path& dir) {
  std::vector<std::string> out;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_input_file(summary.string(), "summary of an earlier run", InputError::kConfig,
                                              Config::kMaxConfigBytes));
  } catch (const nlohmann::json::exception&) {
    return out;
  }
  if (!j.is_object() || !j.contains("outputs") || !j["outputs"].is_array()) return out;
  for (const auto& o : j["outputs"]) {
    if (!o.is_string()) continue;
    const fs::path p(o.get<std::string>());
    const std::string name = p.filename().string();
    std::error_code ec;
    if (is_plain_name(name) && (p.parent_path().empty() || fs::equivalent(p.parent_path(), dir, ec)))
      out.push_back(name);
  }
  return out;
}

// A long name in a message: its start and its length.
std::string shortened(const std::string& s) {
  return s.size() <= 60 ? "'" + s + "'" : "'" + s.substr(0, 40) + "...' (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace

void OutputDirectory::check_path(const std::string& dir) {
  if (dir.empty()) throw ConfigError("--out: the output directory must not be empty");
  // Room for the longest name a run writes inside it (kMaxOutputName, its temporary twin).
  const std::size_t max_dir = PATH_MAX - 1 - NAME_MAX - 1;
  if (dir.size() > max_dir)
    throw ConfigError("--out " + shortened(dir) + ": expected a path of at most " + std::to_string(max_dir) +
                      " bytes (PATH_MAX " + std::to_string(PATH_MAX) + " with room for the file names in it), got " +
                      std::to_string(dir.size()));
  for (const fs::path& part : fs::path(dir))
    if (part.native().size() > NAME_MAX)
      throw ConfigError("--out " + shortened(dir) + ": expected directory names of at most " +
                        std::to_string(NAME_MAX) + " bytes (NAME_MAX), got one of " +
                        std::to_string(part.native().size()) + ": " + shortened(part.native()));
}

OutputDirectory::OutputDirectory(std::string dir, const std::string& app, Reuse reuse) : dir_(std::move(dir)) {
  check_path(dir_);
  try {
    take(app, reuse);
  } catch (const fs::filesystem_error& e) {
    // Whatever the file system refuses about --out is a usage error (exit 2), never a crash.
    throw ConfigError("--out " + shortened(dir_) + ": " + e.code().message());
  }
}

void OutputDirectory::take(const std::string& app, Reuse reuse) {
  std::error_code ec;
  created_ = !fs::exists(dir_, ec);
  ensure_directory(dir_);
  const fs::path d(dir_);
  for (const auto& entry : fs::directory_iterator(d, ec))
    if (entry.is_regular_file() && is_stale_temp(entry.path().filename().string())) fs::remove(entry.path(), ec);
  const bool finished = fs::exists(d / "summary.json"), unfinished = fs::exists(d / kMarker);
  if ((finished || unfinished) && reuse == Reuse::kRefuse)
    throw ConfigError("--out '" + dir_ + "' holds the outputs of " +
                      (finished ? std::string("an earlier run (summary.json)") : std::string("an unfinished run")) +
                      "; pass --force to replace them" + (app == "simid" ? " or --resume to continue" : "") +
                      ", or choose another --out");
  if (finished || unfinished) {
    if (reuse == Reuse::kForce)
      for (const std::string& name : listed_outputs(d / "summary.json", d)) fs::remove(d / name, ec);
    // A resumed or replaced run's old summary must never sit beside new outputs.
    fs::remove(d / "summary.json", ec);
  }
  const nlohmann::json marker = {{"app", app}, {"pid", static_cast<long long>(::getpid())}};
  try {
    write_text_atomic(path(kMarker), marker.dump() + "\n");
  } catch (const ConfigError&) {
    if (created_) fs::remove(d, ec);  // no trace of a run that could not even start (a full disk)
    throw;
  }
}

std::string OutputDirectory::path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

std::string OutputDirectory::configured_name(const Config& owner, const std::string& key, const std::string& fallback,
                                             const std::vector<std::string>& reserved) {
  const std::string name = owner.get_or<std::string>(key, fallback);
  if (!is_plain_name(name))
    owner.fail(key, "'" + name + "' must be a plain file name inside --out (no '/', not '.' or '..')");
  if (name.size() > kMaxOutputName)
    owner.fail(key, "expected a file name of at most " + std::to_string(kMaxOutputName) +
                        " bytes (its temporary twin must fit NAME_MAX), got " + shortened(name));
  if (name == "summary.json" || name == kMarker || is_stale_temp(name) ||
      std::find(reserved.begin(), reserved.end(), name) != reserved.end())
    owner.fail(key, "'" + name + "' is reserved for the tool's own outputs");
  return name;
}

void OutputDirectory::finish() const {
  std::error_code ec;
  fs::remove(fs::path(dir_) / kMarker, ec);
  finished_ = true;
}

OutputDirectory::~OutputDirectory() {
  if (finished_) return;
  std::error_code ec;
  const fs::path d(dir_);
  bool only_marker = true;
  for (const auto& entry : fs::directory_iterator(d, ec))
    if (entry.path().filename() != kMarker) only_marker = false;
  if (!only_marker) return;  // outputs of an unfinished run: the marker stays, the next run needs --force
  fs::remove(d / kMarker, ec);
  if (created_) fs::remove(d, ec);
}

}  // namespace neuralsim
