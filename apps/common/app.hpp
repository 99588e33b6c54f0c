// Conventions shared by every command-line app (rollout, simid, ...).
//
//   APP --config FILE.yaml [--out DIR] [--set key.path=value ...]
//       [--seed N] [--threads N] [-v|-vv|-q]
//
// Apps are run from shell sweeps and CI, so: stable flags, no prompts, logs
// on stderr, results in files, and exit codes that say what went wrong:
//   0 ok, 1 internal error (a bug), 2 bad command line or config,
//   3 bad input data, 4 numerical failure, 5 a requested check failed,
//   130 interrupted (SIGINT/SIGTERM) — see exit_codes.hpp.
// Every error is reported as exactly one line "APP: error: <message>".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "common/output_dir.hpp"
#include "neuralsim/io/config.hpp"

// Only app.cpp sees CLI11: the command line is built through CommandLine
// (CLI11 costs about 5 s of compile time in every unit that includes it).
namespace CLI {
class App;
}  // namespace CLI

namespace neuralsim {

struct AppOptions {
  std::string config;
  std::string out = "out/<app>";  // "<app>" is replaced by the app's name
  std::vector<std::string> sets;  // --set overrides, in command-line order
  long long seed = 0;
  int threads = 0;    // 0 = all cores
  int verbosity = 0;  // -1 quiet, 0 info, 1 debug, 2+ trace
  bool force = false;  // replace an earlier run's outputs in --out
  bool strict = false;  // --strict: an MJCF element with no counterpart is an error, not a warning
  std::vector<std::string> argv;  // the full command line, for provenance
};

// Interrupts (SIGINT, SIGTERM). Until a job calls
// begin_cooperative_interrupts(), a signal ends the process at once with
// exit code 130: nothing has been computed yet, and parsing a hostile
// config or data file must not make Ctrl-C wait. After it, the first signal
// only sets a flag that the job's loops poll (interrupt_requested()): they
// stop, write their best result so far and return kExitInterrupted. A
// second signal (more than a second later) exits immediately with 130.
void begin_cooperative_interrupts();
bool interrupt_requested();
// Same effect as a first Ctrl-C in the cooperative phase; for tests and for
// code that wants to stop a run cooperatively.
void request_interrupt();
// The flag behind interrupt_requested(), for library loops that take a stop
// flag (Trainer::run_epoch).
const std::atomic<bool>* interrupt_flag();

// Whether a tool draws its plots (matplotlib, after its results are
// written): `output.plot` when the config gives it; otherwise yes, except
// under -q. Sweeps and CI jobs run with -q, and there drawing (about 1 s per
// run) would cost more than a small fit itself.
bool plots_wanted(const Config& config, const AppOptions& opts);

// This process's MPI rank: rank 0 prints the interrupt notice and the error
// line; another rank prints its error 3 s later, naming the rank (the
// launcher has ended the job by then if rank 0 failed too), so an error is
// reported once.
void set_process_rank(int rank);

// `--check-gradients`: run no fit or training; compare the tool's gradient
// with central differences at the initial values (docs/gradients.md).
struct GradientCheckFlags {
  bool check = false;
  double tolerance = 1e-5;  // relative error past which a derivative fails (exit 5)
};

// A tool's command line: the common options --config (required, must
// exist), --out, --force, --set, --seed, --threads, -v/--verbose,
// -q/--quiet and --version, stored in `opts`, plus the tool's own.
class CommandLine {
 public:
  // `name` is the tool's name in messages; empty = the name it was run by.
  CommandLine(const std::string& description, AppOptions& opts, const std::string& name = "");
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // --flag FILE, where FILE must exist.
  void add_existing_file(const std::string& flag, std::string& value, const std::string& help);
  void add_flag(const std::string& flag, bool& value, const std::string& help);
  // --check-gradients and --gradient-tolerance (simid, train-augment).
  void add_gradient_check(GradientCheckFlags& flags);

 private:
  friend int run_app(int, char**, CommandLine&, std::function<int(const AppOptions&)>);

  std::unique_ptr<CLI::App> app_;
  AppOptions& opts_;
};

// Parses the command line, configures logging, installs the interrupt
// handler, caps TBB parallelism to --threads while `body` runs, and maps
// whatever `body` returns or throws to the exit code (exit_code_for:
// ConfigError and ModelError -> 2, DataError -> 3, NumericalError -> 4, any
// other exception -> 1, "internal error: ..."). --help / --version return
// 0; command-line errors return 2.
int run_app(int argc, char** argv, CommandLine& command_line, std::function<int(const AppOptions&)> body);

// The tools' wall-clock timings (summary.json "timings").
using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// "label: 37% (370/1000) elapsed 1.2s ETA 2.0s"
std::string format_progress(const std::string& label, long long done, long long total,
                            double elapsed_s);

// Progress of a long loop on stderr, at most every 0.5 s (on a terminal the
// line is redrawn in place; in a log file every 5 s so CI logs stay short).
// Silent with -q and for loops with few steps. Safe to call update() from
// worker threads: a caller that finds another one printing just skips.
class Progress {
 public:
  // min_interval_s < 0 picks the default for the stream (0.5 s / 5 s).
  Progress(std::string label, long long total, double min_interval_s = -1);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(long long done);
  // Prints the final line if anything was printed before; idempotent.
  void finish();

  // Loops with fewer steps than this never print.
  static constexpr long long kMinTotal = 10;

 private:
  double elapsed() const;
  void print_locked(long long done, bool final_line);

  std::string label_;
  long long total_;
  bool enabled_;
  bool tty_;
  double interval_s_;
  std::chrono::steady_clock::time_point start_;
  double last_print_s_ = 0;
  long long last_done_ = 0;
  long long last_printed_done_ = -1;
  bool printed_ = false;
  bool finished_ = false;
  std::mutex mutex_;
};

// A metric for summary.json: JSON has no NaN or infinity, so a value that
// is not finite is written as null.
inline nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// Builds and writes OUT/summary.json, the machine-readable record of a run:
// app, status, metrics, warnings, timings (total wall time added
// automatically), the effective config, config file, overrides, seed,
// threads, processes, provenance and the list of output files. It is
// written last.
class RunSummary {
 public:
  RunSummary(std::string app, const AppOptions& opts, const Config& config, const OutputDirectory& out);

  nlohmann::json& metrics() { return metrics_; }
  nlohmann::json& timings() { return timings_; }
  // "ok" (the default), "error", "interrupted" or "diverged".
  void set_status(std::string status);
  const std::string& status() const { return status_; }
  void add_output(const std::string& path);
  void add_warning(const std::string& warning);
  // The MPI processes the run was spread over and the bytes rank 0 sent to
  // the others (docs/cluster.md); 1 and 0 without MPI.
  void set_processes(int count, std::uint64_t bytes_sent);

  nlohmann::json to_json() const;
  // Writes summary.json atomically, then ends the run's in-progress mark.
  void write() const;

 private:
  std::string app_;
  std::string status_ = "ok";
  nlohmann::json metrics_ = nlohmann::json::object();
  nlohmann::json timings_ = nlohmann::json::object();
  nlohmann::json config_;
  std::string config_file_;
  std::vector<std::string> overrides_;
  long long seed_;
  int threads_;
  int processes_ = 1;
  std::uint64_t bytes_sent_ = 0;
  nlohmann::json provenance_;
  std::vector<std::string> outputs_;
  std::vector<std::string> warnings_;
  const OutputDirectory& out_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace neuralsim
