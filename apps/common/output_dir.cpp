#include "common/output_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"

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
  std::ifstream in(summary);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception&) {
    return out;
  }
  if (!j.is_object() || !j.contains("outputs") || !j["outputs"].is_array()) return out;
  for (const auto& o : j["outputs"]) {
    if (!o.is_string()) continue;
    const fs::path p(o.get<std::string>());
    const std::string name = p.filename().string();
    if (is_plain_name(name) && (p.parent_path().empty() || fs::equivalent(p.parent_path(), dir))) out.push_back(name);
  }
  return out;
}

}  // namespace

OutputDirectory::OutputDirectory(std::string dir, const std::string& app, Reuse reuse) : dir_(std::move(dir)) {
  if (dir_.empty()) throw ConfigError("--out: the output directory must not be empty");
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
