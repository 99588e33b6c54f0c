#include "common/app.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>
#include <atomic>
#include <ctime>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <glog/logging.h>
#include <oneapi/tbb/global_control.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <typeinfo>
#include <utility>

#include "common/provenance.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim {

namespace {

// Lock-free atomics are async-signal-safe; nothing else is touched by the
// handler apart from write() and _exit().
std::atomic<int> g_signal_count{0};
static_assert(std::atomic<int>::is_always_lock_free);
char g_interrupt_message[256] = {};

std::atomic<long long> g_first_signal_ns{0};
static_assert(std::atomic<long long>::is_always_lock_free);
std::atomic<bool> g_cooperative{false};
std::atomic<bool> g_interrupted{false};  // the same as g_signal_count > 0, for library loops that poll a flag
static_assert(std::atomic<bool>::is_always_lock_free);
char g_setup_interrupt_message[256] = {};
// This process's MPI rank (0 without MPI). Rank 0 alone prints the
// interrupt notice and the errors found before the work starts (the config,
// the data: every rank finds the same); see print_error for later errors.
std::atomic<int> g_rank{0};
static_assert(std::atomic<int>::is_always_lock_free);

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX.1-2008)
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

extern "C" void on_interrupt_signal(int) {
  if (!g_cooperative.load()) {
    // Setup (parsing, loading): nothing to save yet, so stop at once.
    if (g_rank.load() == 0) {
      const ssize_t ignored = ::write(STDERR_FILENO, g_setup_interrupt_message, std::strlen(g_setup_interrupt_message));
      (void)ignored;
    }
    _exit(kExitInterrupted);
  }
  // `timeout` and CI runners signal both the child and its process group,
  // so one interrupt can arrive twice within microseconds: only a second
  // signal more than a second later means "quit at once".
  const long long now = monotonic_ns();
  if (g_signal_count.fetch_add(1) >= 1) {
    if (now - g_first_signal_ns.load() > 1000000000LL) _exit(kExitInterrupted);
    return;
  }
  g_first_signal_ns.store(now);
  g_interrupted.store(true);
  if (g_rank.load() == 0) {
    const ssize_t ignored = ::write(STDERR_FILENO, g_interrupt_message, std::strlen(g_interrupt_message));
    (void)ignored;
  }
}

// Installs the handler for the duration of run_app and restores the previous
// one, so tests (and embedding programs) keep their own signal behaviour.
class SignalGuard {
 public:
  explicit SignalGuard(const std::string& app) {
    std::snprintf(g_interrupt_message, sizeof(g_interrupt_message),
                  "%s: interrupt requested, saving the best result so far "
                  "(press Ctrl-C again to quit at once)\n",
                  app.c_str());
    std::snprintf(g_setup_interrupt_message, sizeof(g_setup_interrupt_message),
                  "%s: interrupted before any work started; nothing was written\n", app.c_str());
    g_signal_count = 0;
    g_interrupted = false;
    g_cooperative = false;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // file I/O in HDF5 etc. should not see EINTR
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string base_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

// CLI11 names an unnamed app after argv[0], possibly with a directory.
std::string app_name(const CLI::App& app, int argc, char** argv) {
  if (!app.get_name().empty()) return base_name(app.get_name());
  return argc > 0 ? base_name(argv[0]) : "neuralsim";
}

void replace_app_placeholder(std::string& s, const std::string& name) {
  const auto pos = s.find("<app>");
  if (pos != std::string::npos && !name.empty()) s.replace(pos, 5, name);
}

// The contract is one printable line per error, whatever the message
// contains (library errors already are; CLI11's may quote an argument).
std::string one_line(const std::string& msg) { return printable_line(msg); }

void print_error(const std::string& app, const std::string& msg) {
  const int rank = g_rank.load();
  std::string where;
  if (rank != 0) {
    // Most errors (the config, the data) every rank hits alike, and an MPI
    // launcher ends the whole job as soon as one rank exits: waiting a
    // while lets rank 0 print the one line and exit first (Open MPI's
    // mpirun signals the other ranks about a second after). An error of
    // this rank alone (a trajectory it simulates) is printed after the
    // wait, naming the rank.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    where = "rank " + std::to_string(rank) + ": ";
  }
  spdlog::default_logger_raw()->flush();  // keep log lines before the error
  std::fprintf(stderr, "%s: error: %s%s\n", app.c_str(), where.c_str(), one_line(msg).c_str());
  std::fflush(stderr);
}

// Every integer flag is read here: decimal digits with an optional '-' (no
// '+', blanks, hex, exponent or fraction), then the range; the message says
// which of the two failed ('abc' is not an integer, 5000 is out of range).
// "" when `text` is such an integer (stored in `value`), else why not.
std::string integer_flag_problem(const std::string& text, long long lo, long long hi, long long& value) {
  const std::string expected = "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                               text + "'";
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(begin, end, value);
  if (begin == end || r.ptr != end || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range))
    return expected + ", which is not an integer";
  if (r.ec == std::errc::result_out_of_range || value < lo || value > hi) return expected + ", which is out of range";
  return "";
}

long long parse_integer_flag(const std::string& flag, const std::string& text, long long lo, long long hi) {
  long long value = 0;
  const std::string problem = integer_flag_problem(text, lo, hi, value);
  if (!problem.empty()) throw CLI::ValidationError(flag, problem);
  return value;
}

// CLI11's own exit codes (106, 109, ...) would be indistinguishable from
// crashes in a sweep; the documented code for any usage error is 2.
int handle_parse_error(CLI::App& app, const CLI::ParseError& e, const std::string& name) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
  print_error(name, std::string(e.what()) + " (run with --help for usage)");
  return kExitUsage;
}

// Ceres logs through glog; uninitialized, glog prints "WARNING: Logging
// before InitGoogleLogging()" and raw lines on stderr. Once initialized its
// messages appear only at -v (and errors always), in glog's format.
void setup_glog(int verbosity) {
  static const bool initialized = [] {
    google::InitGoogleLogging("neuralsim");
    FLAGS_logtostderr = true;
    return true;
  }();
  (void)initialized;
  FLAGS_minloglevel = verbosity >= 1 ? google::GLOG_INFO : google::GLOG_ERROR;
}

void setup_logging(const std::string& app, int verbosity) {
  setup_glog(verbosity);
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(app, std::move(sink));
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (verbosity < 0) level = spdlog::level::warn;
  if (verbosity == 1) level = spdlog::level::debug;
  if (verbosity >= 2) level = spdlog::level::trace;
  logger->set_level(level);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

int run_body(const std::string& app, const AppOptions& opts,
             const std::function<int(const AppOptions&)>& body) {
  auto report = [&](const std::exception& e, int code, const std::string& prefix) {
    spdlog::debug("{} thrown", typeid(e).name());
    print_error(app, prefix + e.what());
    return code;
  };
  try {
    return body(opts);
  } catch (const std::exception& e) {
    const ExitCode code = exit_code_for(e);
    return report(e, code, code == kExitInternal ? "internal error: " : "");
  } catch (...) {
    print_error(app, "internal error: unknown exception");
    return 1;
  }
}

}  // namespace

void begin_cooperative_interrupts() { g_cooperative = true; }

void set_process_rank(int rank) { g_rank = rank; }

bool interrupt_requested() { return g_signal_count.load() > 0; }

void request_interrupt() {
  g_signal_count.fetch_add(1);
  g_interrupted.store(true);
}

const std::atomic<bool>* interrupt_flag() { return &g_interrupted; }

CommandLine::CommandLine(const std::string& description, AppOptions& opts, const std::string& name)
    : app_(std::make_unique<CLI::App>(description, name)), opts_(opts) {
  CLI::App& app = *app_;
  replace_app_placeholder(opts.out, base_name(app.get_name()));
  app.add_option("--config", opts.config, "YAML run configuration")
      ->required()
      ->check(CLI::ExistingFile.description(""))  // keep the usage line "--config FILE"
      ->type_name("FILE");
  app.add_option("--out", opts.out,
                 "output directory, created if missing; a directory holding another run's outputs is refused "
                 "unless --force (or --resume) is given. Output names in the config are plain file names "
                 "inside it")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_flag("--force", opts.force, "replace the outputs of an earlier run in --out");
  app.add_flag("--strict", opts.strict,
               "MJCF models: refuse every element with no counterpart here (sites, sensors, solref, ...) instead "
               "of listing them in one warning (model.strict: true; docs/models.md)");
  // allow_extra_args(false): one value per --set, so a stray word after it
  // is an error instead of a silently swallowed override.
  app.add_option("--set", opts.sets,
                 "override a config value; VALUE is YAML, e.g. sim.dt=0.002, "
                 "initial_states.q_low=[-1,-1], controls.amplitude=2 (repeatable). Paths in the config are "
                 "relative to the config file; paths given by --set to the working directory")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  app.add_option_function<std::string>(
         "--seed",
         [&opts](const std::string& text) {
           opts.seed = parse_integer_flag("--seed", text, 0, std::numeric_limits<long long>::max());
         },
         "random seed in [0, 2^63 - 1]; the same seed reproduces the run (default 0)")
      ->type_name("N");
  app.add_option_function<std::string>(
         "--threads",
         [&opts](const std::string& text) {
           opts.threads = static_cast<int>(parse_integer_flag("--threads", text, 0, 1024));
         },
         "worker threads, 0 to 1024 (0 = all cores)")
      ->type_name("N")
      ->default_str("0");
  CLI::Option* verbose =
      app.add_flag("-v,--verbose", opts.verbosity, "more log output: -v debug, -vv trace")
          ->check(CLI::Validator(  // --verbose=N is read like every integer flag
              [](std::string& text) {
                long long level = 0;
                return text == "true" ? std::string() : integer_flag_problem(text, 0, 9, level);  // "true": a bare -v
              },
              "", ""));
  app.add_flag_callback("-q,--quiet", [&opts] { opts.verbosity = -1; },
                        "only warnings and errors on stderr")
      ->excludes(verbose);
  app.set_version_flag("--version", "neuralsim " + version_string());
}

CommandLine::~CommandLine() = default;

void CommandLine::add_existing_file(const std::string& flag, std::string& value, const std::string& help) {
  app_->add_option(flag, value, help)->check(CLI::ExistingFile);
}

void CommandLine::add_flag(const std::string& flag, bool& value, const std::string& help) {
  app_->add_flag(flag, value, help);
}

void CommandLine::add_gradient_check(GradientCheckFlags& flags) {
  app_->add_flag("--check-gradients", flags.check,
                 "Fit nothing: compare the gradient the optimizer uses with central differences (Richardson-"
                 "extrapolated) at the initial values, write OUT/gradient_check.txt and .json, and exit 5 when a "
                 "derivative disagrees past --gradient-tolerance (docs/gradients.md)");
  app_->add_option("--gradient-tolerance", flags.tolerance,
                   "Relative error past which --check-gradients fails a derivative (default 1e-5)")
      ->check(CLI::PositiveNumber & CLI::Range(0.0, 1.0));
}

bool plots_wanted(const Config& config, const AppOptions& opts) {
  return config.has("output.plot") ? config.get<bool>("output.plot") : opts.verbosity >= 0;
}

int run_app(int argc, char** argv, CommandLine& command_line, std::function<int(const AppOptions&)> body) {
  CLI::App& app = *command_line.app_;
  AppOptions& opts = command_line.opts_;
  opts.argv.assign(argv, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return handle_parse_error(app, e, app_name(app, argc, argv));
  }
  const std::string name = app_name(app, argc, argv);
  replace_app_placeholder(opts.out, name);
  setup_logging(name, opts.verbosity);
  SignalGuard signals(name);
  // Scoped: the cap must not outlive the run (tests run many apps in-process).
  std::optional<tbb::global_control> thread_cap;
  if (opts.threads > 0)
    thread_cap.emplace(tbb::global_control::max_allowed_parallelism,
                       static_cast<std::size_t>(opts.threads));
  const int code = run_body(name, opts, body);
  spdlog::default_logger_raw()->flush();
  return code;
}

// ---------------------------------------------------------------------------
// Progress

namespace {

std::string format_duration(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%.1fs", s);
  } else if (s < 3600) {
    const long long t = static_cast<long long>(s);
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", t / 60, t % 60);
  } else {
    const long long t = static_cast<long long>(s);
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", t / 3600, t / 60 % 60);
  }
  return buf;
}

}  // namespace

std::string format_progress(const std::string& label, long long done, long long total,
                            double elapsed_s) {
  const long long pct = total > 0 ? std::clamp(done * 100 / total, 0LL, 100LL) : 0;
  std::string line = label + ": " + std::to_string(pct) + "% (" + std::to_string(done) + "/" +
                     std::to_string(total) + ") elapsed " + format_duration(elapsed_s);
  if (done > 0 && done < total) {
    const double eta = elapsed_s * static_cast<double>(total - done) / static_cast<double>(done);
    line += " ETA " + format_duration(eta);
  }
  return line;
}

Progress::Progress(std::string label, long long total, double min_interval_s)
    : label_(std::move(label)),
      total_(total),
      enabled_(total >= kMinTotal && spdlog::default_logger_raw()->should_log(spdlog::level::info)),
      tty_(::isatty(STDERR_FILENO) != 0),
      interval_s_(min_interval_s >= 0 ? min_interval_s : (tty_ ? 0.5 : 5.0)),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  // An exception is on its way: end the redrawn line so the error line that
  // follows starts at column 0, but do not claim the loop finished.
  if (enabled_ && tty_ && printed_ && !finished_) std::fputs("\n", stderr);
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(long long done) {
  if (!enabled_) return;
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  last_done_ = std::max(last_done_, done);
  if (elapsed() - last_print_s_ < interval_s_) return;
  print_locked(last_done_, false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  // Quick loops never printed anything and stay silent at the end too.
  if (!enabled_ || !printed_) return;
  if (last_printed_done_ != last_done_) print_locked(last_done_, true);
  else if (tty_) std::fputs("\n", stderr);  // the final state is already shown
}

void Progress::print_locked(long long done, bool final_line) {
  const double t = elapsed();
  const std::string line = format_progress(label_, done, total_, t);
  if (tty_)
    std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), final_line ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  printed_ = true;
  last_print_s_ = t;
  last_printed_done_ = done;
}

// ---------------------------------------------------------------------------
// RunSummary

RunSummary::RunSummary(std::string app, const AppOptions& opts, const Config& config, const OutputDirectory& out)
    : app_(std::move(app)),
      config_(config.to_json()),
      config_file_(config.file()),
      overrides_(opts.sets),
      seed_(opts.seed),
      threads_(opts.threads),
      // Taken now, inside run_app, so "threads" reflects the --threads cap.
      provenance_(provenance(opts.argv, opts.threads)),
      out_(out),
      start_(std::chrono::steady_clock::now()) {}

void RunSummary::set_status(std::string status) {
  static const char* const kAllowed[] = {"ok", "error", "interrupted", "diverged", "target_missed"};
  if (std::find(std::begin(kAllowed), std::end(kAllowed), status) == std::end(kAllowed))
    throw std::invalid_argument("RunSummary: unknown status '" + status + "'");
  status_ = std::move(status);
}

void RunSummary::add_output(const std::string& path) {
  if (std::find(outputs_.begin(), outputs_.end(), path) == outputs_.end()) outputs_.push_back(path);
}

void RunSummary::add_warning(const std::string& warning) { warnings_.push_back(warning); }

void RunSummary::set_processes(int count, std::uint64_t bytes_sent) {
  processes_ = count;
  bytes_sent_ = bytes_sent;
}

nlohmann::json RunSummary::to_json() const {
  nlohmann::json timings = timings_.is_null() ? nlohmann::json::object() : timings_;
  timings["total_wall_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  nlohmann::json j;
  j["app"] = app_;
  j["status"] = status_;
  j["metrics"] = metrics_;
  j["warnings"] = warnings_;
  j["timings"] = std::move(timings);
  j["config"] = config_;
  j["config_file"] = config_file_;
  j["overrides"] = overrides_;
  j["seed"] = seed_;
  j["threads"] = threads_;
  j["processes"] = {{"count", processes_}, {"bytes_sent_by_rank_0", bytes_sent_}};
  j["provenance"] = provenance_;
  j["finished_utc"] = utc_timestamp();
  j["outputs"] = outputs_;
  return j;
}

void RunSummary::write() const {
  const std::string path = out_.path("summary.json");
  // replace: a stray non-UTF-8 byte in a config string must not lose the summary.
  const std::string text =
      to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write_text_atomic(path, text);
  out_.finish();
}

}  // namespace neuralsim
