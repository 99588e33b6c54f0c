// Conventions shared by every command-line app (rollout, simid, ...).
//
//   APP --config FILE.yaml [--out DIR] [--set key.path=value ...]
//       [--seed N] [--threads N] [-v|-vv|-q]
//
// Apps are run from shell sweeps and CI, so: stable flags, no prompts, logs
// on stderr, results in files, and exit codes that say what went wrong:
//   0 ok, 1 internal error (a bug), 2 bad command line or config,
//   3 bad input data, 4 numerical failure, 130 interrupted (SIGINT/SIGTERM).
// Every error is reported as exactly one line "APP: error: <message>".
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "neuralsim/io/config.hpp"

namespace neuralsim {

struct AppOptions {
  std::string config;
  std::string out = "out/<app>";  // "<app>" is replaced by the app's name
  std::vector<std::string> sets;  // --set overrides, in command-line order
  long long seed = 0;
  int threads = 0;    // 0 = all cores
  int verbosity = 0;  // -1 quiet, 0 info, 1 debug, 2+ trace
  std::vector<std::string> argv;  // the full command line, for provenance
};

// Thrown by long-running code that stops because of Ctrl-C after it has
// saved what it can; run_app turns it into exit code 130.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
  using std::runtime_error::runtime_error;
};

// Set (only) by the SIGINT/SIGTERM handler that run_app installs. Loops poll
// it, stop, write their best result so far and return kExitInterrupted (or
// throw Interrupted). A second signal exits immediately with 130.
bool interrupt_requested();
// Same effect as a first Ctrl-C; for tests and for code that wants to stop
// a run cooperatively.
void request_interrupt();
// Throws Interrupted if an interrupt was requested.
void throw_if_interrupted();

// Adds --config (required, must exist), --out, --set, --seed, --threads,
// -v/--verbose, -q/--quiet and --version, storing the values in `opts`.
void add_common_options(CLI::App& app, AppOptions& opts);

// Parses the command line, configures logging, installs the interrupt
// handler, caps TBB parallelism to --threads while `body` runs, and maps
// whatever `body` returns or throws to the exit code:
//   ConfigError (and ModelError) -> 2, DataError -> 3, NumericalError -> 4,
//   Interrupted -> 130, any other exception -> 1 ("internal error: ...").
// --help / --version return 0; command-line errors return 2.
int run_app(int argc, char** argv, CLI::App& app, AppOptions& opts,
            std::function<int(const AppOptions&)> body);

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

// Builds and writes OUT/summary.json, the machine-readable record of a run:
// app, status, metrics, timings (total wall time added automatically), the
// effective config, config file, overrides, seed, threads, provenance and
// the list of output files.
class RunSummary {
 public:
  RunSummary(std::string app, const AppOptions& opts, const Config& config);

  nlohmann::json& metrics() { return metrics_; }
  nlohmann::json& timings() { return timings_; }
  // "ok" (the default), "error", "interrupted" or "diverged".
  void set_status(std::string status);
  const std::string& status() const { return status_; }
  void add_output(const std::string& path);

  nlohmann::json to_json() const;
  // Creates out_dir if needed and writes summary.json atomically.
  void write(const std::string& out_dir) const;

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
  nlohmann::json provenance_;
  std::vector<std::string> outputs_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace neuralsim
