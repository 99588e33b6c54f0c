#include "neuralsim/tools/run_context.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim {

const char* run_status_name(RunStatus s) {
  switch (s) {
    case RunStatus::kOk: return "ok";
    case RunStatus::kInterrupted: return "interrupted";
    case RunStatus::kDiverged: return "diverged";
    case RunStatus::kTargetMissed: return "target_missed";
  }
  return "ok";
}

bool CheckpointFile::exists() const {
  std::error_code ec;
  return std::filesystem::exists(path_, ec);
}

std::optional<std::string> CheckpointFile::load(double max_bytes, const std::string& capacity) const {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return std::nullopt;
  if (!std::filesystem::is_regular_file(path_, ec))
    throw DataError(path_ + ": invalid checkpoint: not a regular file");
  const auto size = std::filesystem::file_size(path_, ec);
  if (ec || static_cast<double>(size) > max_bytes)
    throw DataError(path_ + ": invalid checkpoint: is " + std::to_string(size) + " bytes, more than " + capacity +
                    " can hold");
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw DataError(path_ + ": invalid checkpoint: cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void CheckpointFile::save(const std::string& document) {
  if (!writes_) return;
  write_text_atomic(path_, document);
  saved_ = true;
}

}  // namespace neuralsim
