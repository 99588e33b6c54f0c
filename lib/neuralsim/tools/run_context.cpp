#include "neuralsim/tools/run_context.hpp"

#include <algorithm>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {

const char* run_status_name(RunStatus s) {
  switch (s) {
    case RunStatus::kOk: return "ok";
    case RunStatus::kInterrupted: return "interrupted";
    case RunStatus::kDiverged: return "diverged";
    case RunStatus::kTargetMissed: return "target_missed";
    case RunStatus::kGradientCheckFailed: return "gradient_check_failed";
  }
  return "ok";
}

bool CheckpointFile::exists() const {
  const std::string problem = input_file_problem(path_);
  if (problem.rfind("does not exist", 0) == 0) return false;
  if (!problem.empty()) check_input_file(path_, "checkpoint", InputError::kData);  // throws: says what is there
  return true;
}

std::optional<std::string> CheckpointFile::load(double max_bytes, const std::string& capacity) const {
  if (!exists()) return std::nullopt;
  const auto size = check_input_file(path_, "checkpoint", InputError::kData);
  if (static_cast<double>(size) > max_bytes)
    throw DataError(path_ + ": invalid checkpoint: is " + std::to_string(size) + " bytes, more than " + capacity +
                    " can hold");
  return read_input_file(path_, "checkpoint", InputError::kData, static_cast<std::uintmax_t>(std::min(max_bytes, 9e18)));
}

void CheckpointFile::save(const std::string& document) {
  if (!writes_) return;
  write_text_atomic(path_, document);
  saved_ = true;
}

}  // namespace neuralsim
