// What a caller hands a tool's library call besides its request, and what
// every tool's result shares. The tools (identify, rollout, compare,
// train_augment, distill_mpc, import_csv) are library calls; the
// command-line apps, the Python module and the MPI drivers are callers. A
// caller decides how messages and progress are shown, when the run stops
// early and where checkpoints live; the library knows nothing of command
// lines, exit codes or summary files (as Ceres' Solver reports through
// IterationCallback and Solver::Summary).
//
//   RunObserver      messages, progress stages, and "inputs checked, work
//                    begins" (a command line takes its output directory
//                    then, so that a bad input leaves it untouched)
//   stop flag        polled at safe points; the call then returns its best
//                    result so far with status kInterrupted
//   CheckpointStore  where a resumable call saves its state, and whether it
//                    resumes from it
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "neuralsim/core/communicator.hpp"

namespace neuralsim {

// How a tool's run ended. Errors in the inputs (ConfigError, DataError,
// ModelError) are thrown before any work; numerical failures during the
// work end the run with kDiverged and its best result so far.
enum class RunStatus {
  kOk,
  kInterrupted,   // the stop flag was set: the result holds what was computed
  kDiverged,      // a simulation or training loss was not finite (message says where)
  kTargetMissed,  // the run worked, but a check it was asked to make failed (rollout targets)
  kGradientCheckFailed,  // --check-gradients: a derivative disagrees with central differences
};
const char* run_status_name(RunStatus s);  // "ok", "interrupted", "diverged", "target_missed", "gradient_check_failed"

enum class LogLevel { kDebug, kInfo, kWarning };

// Every method has a silent default. Progress stages do not nest; update()
// may be called from worker threads.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual bool logs(LogLevel) const { return false; }
  virtual void log(LogLevel, const std::string&) {}
  virtual void stage_begin(const std::string& /*label*/, long long /*total*/) {}
  virtual void stage_update(long long /*done*/) {}
  virtual void stage_end() {}
  // The inputs are checked and the work begins: nothing before this call
  // has been written anywhere.
  virtual void started() {}
};

// Where a resumable run keeps its state (one JSON document).
class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;
  // For messages, e.g. the file's path.
  virtual std::string name() const = 0;
  // Whether a document is stored; DataError naming the store when what is
  // there cannot be one (a FIFO or a directory in a checkpoint file's place).
  virtual bool exists() const = 0;
  // The stored document, or nullopt when there is none. DataError naming
  // the store when it holds more than `max_bytes` (`capacity` says what
  // that bound was computed for).
  virtual std::optional<std::string> load(double max_bytes, const std::string& capacity) const = 0;
  // Replaces the stored document atomically: a crash leaves the old one.
  virtual void save(const std::string& document) = 0;
  // Whether this run saved at least once.
  virtual bool saved() const = 0;
};

// A checkpoint in one file, replaced atomically (io/atomic_file.hpp).
class CheckpointFile final : public CheckpointStore {
 public:
  // `writes` false: save() does nothing (the processes other than rank 0
  // read the file but leave writing it to rank 0).
  explicit CheckpointFile(std::string path, bool writes = true) : path_(std::move(path)), writes_(writes) {}
  std::string name() const override { return path_; }
  bool exists() const override;
  std::optional<std::string> load(double max_bytes, const std::string& capacity) const override;
  void save(const std::string& document) override;
  bool saved() const override { return saved_; }

 private:
  std::string path_;
  bool writes_ = true;
  bool saved_ = false;
};

struct RunContext {
  RunObserver* observer = nullptr;            // null: silent
  const std::atomic<bool>* stop = nullptr;    // null: never stops early
  CheckpointStore* checkpoint = nullptr;      // null: no checkpoints
  bool resume = false;  // continue from `checkpoint` (required to hold one: DataError otherwise)
  // The processes the call's work is spread over (MPI ranks; null: this one).
  // Results are the same at any number; only rank 0's caller writes them.
  const Communicator* communicator = nullptr;

  bool stop_requested() const { return stop && stop->load(); }
  // Whether the stop flag is set on any process (collective: every process
  // calls it at the same point; with one process, stop_requested()).
  bool stop_agreed() const { return any_of(communicator, stop_requested()); }
  bool logs(LogLevel level) const { return observer && observer->logs(level); }
  void debug(const std::string& m) const { log(LogLevel::kDebug, m); }
  void info(const std::string& m) const { log(LogLevel::kInfo, m); }
  void warn(const std::string& m) const { log(LogLevel::kWarning, m); }
  void log(LogLevel level, const std::string& m) const {
    if (observer) observer->log(level, m);
  }
  void started() const {
    if (observer) observer->started();
  }
};

// A progress stage for the length of a scope.
class ProgressStage {
 public:
  ProgressStage(const RunContext& context, const std::string& label, long long total) : observer_(context.observer) {
    if (observer_) observer_->stage_begin(label, total);
  }
  ~ProgressStage() { finish(); }
  ProgressStage(const ProgressStage&) = delete;
  ProgressStage& operator=(const ProgressStage&) = delete;
  void update(long long done) const {
    if (observer_) observer_->stage_update(done);
  }
  void finish() {
    if (observer_) observer_->stage_end();
    observer_ = nullptr;
  }

 private:
  RunObserver* observer_;
};

// What every tool's result holds besides its own numbers.
struct RunReport {
  RunStatus status = RunStatus::kOk;
  std::string message;                    // why, when status is not kOk
  std::vector<std::string> warnings;      // also logged as they arose
  std::map<std::string, double> timings;  // wall seconds by stage ("fit_s", ...)
};

}  // namespace neuralsim
