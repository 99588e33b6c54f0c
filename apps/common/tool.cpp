#include "common/tool.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "common/html_report.hpp"
#include "common/python.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/io/atomic_file.hpp"

namespace neuralsim {

// Log lines through spdlog, progress stages on stderr, and the output
// directory taken when the work starts.
class ToolRun::Observer final : public RunObserver {
 public:
  explicit Observer(ToolRun& run) : run_(run) {}
  // The ranks other than 0 neither log nor show progress.
  bool logs(LogLevel level) const override { return run_.writes() && spdlog::should_log(spdlog_level(level)); }
  void log(LogLevel level, const std::string& message) override {
    if (run_.writes()) spdlog::log(spdlog_level(level), "{}", printable(message));  // may quote input files
  }
  void stage_begin(const std::string& label, long long total) override {
    if (run_.writes()) progress_ = std::make_unique<Progress>(label, total);
  }
  void stage_update(long long done) override {
    if (progress_) progress_->update(done);
  }
  void stage_end() override {
    if (progress_) progress_->finish();
  }
  void started() override {
    if (run_.writes()) run_.out();
    begin_cooperative_interrupts();
  }

 private:
  static spdlog::level::level_enum spdlog_level(LogLevel level) {
    switch (level) {
      case LogLevel::kDebug: return spdlog::level::debug;
      case LogLevel::kInfo: return spdlog::level::info;
      case LogLevel::kWarning: return spdlog::level::warn;
    }
    return spdlog::level::info;
  }
  ToolRun& run_;
  std::unique_ptr<Progress> progress_;
};

namespace {

// --out is checked by its name before anything else: a path the system
// cannot take must not surface after the work as a failed write.
const AppOptions& checked(const AppOptions& options) {
  OutputDirectory::check_path(options.out);
  return options;
}

// The config with the --set overrides, and --strict as model.strict: true
// (MJCF models only: other model files have no elements to be strict about).
Config load_config(const AppOptions& options) {
  std::vector<std::string> sets = options.sets;
  if (options.strict) sets.push_back("model.strict=true");
  Config config = Config::load(options.config, sets);
  if (options.strict && !config.has("model.mjcf"))
    throw ConfigError(options.config + ": --strict applies to MJCF models (model: {mjcf: FILE.xml}); this config's "
                      "model is not one");
  return config;
}

}  // namespace

ToolRun::ToolRun(const ToolInfo& info, const AppOptions& options, bool resume, const ProcessGroup& processes)
    : info_(info),
      options_(checked(options)),
      config_(load_config(options)),
      resume_(resume),
      writes_(processes.rank() == 0),
      observer_(std::make_unique<Observer>(*this)) {
  context_.observer = observer_.get();
  context_.stop = interrupt_flag();
  context_.communicator = processes.communicator();
  if (!info.resume_help.empty()) {
    checkpoint_ = std::make_unique<CheckpointFile>((std::filesystem::path(options.out) / "checkpoint.json").string(),
                                                   writes_);
    context_.checkpoint = checkpoint_.get();
    context_.resume = resume;
  }
}

ToolRun::~ToolRun() = default;

const OutputDirectory& ToolRun::out() {
  if (!out_) {
    const OutputDirectory::Reuse reuse = resume_         ? OutputDirectory::Reuse::kResume
                                         : options_.force ? OutputDirectory::Reuse::kForce
                                                          : OutputDirectory::Reuse::kRefuse;
    out_.emplace(options_.out, info_.name, reuse);
    summary_.emplace(info_.name, options_, config_, *out_);
  }
  return *out_;
}

RunSummary& ToolRun::summary() {
  out();
  return *summary_;
}

std::string ToolRun::write_text(const std::string& name, const std::string& text) {
  const std::string file = path(name);
  write_text_atomic(file, text);
  summary().add_output(file);
  return file;
}

void ToolRun::add_output(const std::string& file) {
  if (std::filesystem::exists(file)) summary().add_output(file);
}

void ToolRun::warn(const std::string& warning) {
  if (!writes_) return;
  spdlog::warn("{}", printable(warning));
  summary().add_warning(printable(warning));
}

bool ToolRun::plots_wanted() const { return neuralsim::plots_wanted(config_, options_); }

void ToolRun::plot(const std::string& script, const std::vector<std::string>& args, const std::string& png) {
  if (const std::optional<std::string> image = draw_plot(script, args)) write_text(png, *image);
}

void ToolRun::write_gradient_check(const GradientCheckSummary& check, const nlohmann::json& about) {
  using nlohmann::json;
  const std::string table = check.report();
  for (size_t begin = 0; begin < table.size();) {  // the table in the log, line by line
    const size_t end = table.find('\n', begin);
    spdlog::info("{}", table.substr(begin, end - begin));
    begin = end == std::string::npos ? table.size() : end + 1;
  }
  json rows = json::array();
  for (const GradientCheckRow& r : check.rows) {
    json g = json::object(), e = json::object();
    for (size_t m = 0; m < check.methods.size(); ++m) {
      g[check.methods[m]] = finite_or_null(r.gradient[m]);
      e[check.methods[m]] = finite_or_null(r.relative_error[m]);
    }
    rows.push_back({{"name", r.name}, {"index", r.index}, {"value", r.value}, {"step", r.step},
                    {"gradient", g}, {"central_difference", finite_or_null(r.central_difference)},
                    {"central_difference_error", finite_or_null(r.difference_error)}, {"relative_error", e},
                    {"verdict", gradient_check_verdict_name(r.verdict)}});
  }
  json verdict{{"passed", check.passed}, {"tolerance", check.tolerance},
               {"max_relative_error", check.max_relative_error}, {"checked", check.rows.size()},
               {"disagreeing", check.disagreeing}, {"unresolved", check.unresolved},
               {"cost", finite_or_null(check.cost)}, {"cost_evaluations", check.cost_evaluations},
               {"methods", check.methods}};
  verdict.update(about);
  json file = verdict;
  file["rows"] = rows;
  write_text("gradient_check.txt", table);
  write_text("gradient_check.json", file.dump(2) + "\n");
  summary().metrics()["gradient_check"] = verdict;
}

void ToolRun::write_report(HtmlReport& report) {
  using nlohmann::json;
  const json s = summary().to_json();
  const json& p = s["provenance"];
  const auto str = [](const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  std::string command_line, libraries, overrides;
  for (const json& a : p["command_line"]) command_line += (command_line.empty() ? "" : " ") + str(a);
  for (const auto& [name, v] : p["libraries"].items()) libraries += (libraries.empty() ? "" : ", ") + name + " " + str(v);
  for (const json& o : s["overrides"]) overrides += (overrides.empty() ? "" : " ") + ("--set " + str(o));
  report.section("Provenance");
  report.table({{"", ""},
                {{"tool", info_.name},
                 {"version", str(p["version"])},
                 {"git revision", str(p["git_revision"])},
                 {"command line", command_line},
                 {"working directory", str(p["working_directory"])},
                 {"config file", str(s["config_file"])},
                 {"overrides", overrides.empty() ? "none" : overrides},
                 {"seed", str(s["seed"])},
                 {"threads", str(p["threads"]) + " (requested " + str(p["threads_requested"]) + ")"},
                 {"processes", str(s["processes"]["count"])},
                 {"host", str(p["hostname"])},
                 {"started (UTC)", str(p["timestamp_utc"])},
                 {"compiler", str(p["compiler"])},
                 {"libraries", libraries}},
                {},
                false});
  report.subsection("Config, with the overrides applied");
  report.preformatted(s["config"].dump(2, ' ', false, json::error_handler_t::replace));
  write_text("report.html", report.document());
}

int ToolRun::finish(const RunReport& report) {
  if (!writes_) {
    switch (report.status) {
      case RunStatus::kOk: return kExitOk;
      case RunStatus::kInterrupted: return kExitInterrupted;
      case RunStatus::kTargetMissed:
      case RunStatus::kGradientCheckFailed: return kExitCheckFailed;
      case RunStatus::kDiverged: throw NumericalError(report.message);
    }
  }
  RunSummary& s = summary();
  for (const std::string& w : report.warnings) s.add_warning(printable(w));
  for (const auto& [name, seconds] : report.timings) s.timings()[name] = seconds;
  if (checkpoint_) add_output(checkpoint_->name());
  s.set_status(run_status_name(report.status));
  const Communicator* comm = context_.communicator;
  s.set_processes(size_of(comm), comm ? comm->bytes_sent() : 0);
  s.write();
  switch (report.status) {
    case RunStatus::kOk: return kExitOk;
    case RunStatus::kInterrupted: return kExitInterrupted;
    case RunStatus::kTargetMissed:
    case RunStatus::kGradientCheckFailed: return kExitCheckFailed;
    case RunStatus::kDiverged: throw NumericalError(report.message);
  }
  return kExitInternal;
}

Tool::Tool(ToolInfo info) : info_(std::move(info)) {
  options_.out = "out/" + info_.name;
  command_line_ = std::make_unique<CommandLine>(info_.description, options_);  // named as it was run (argv[0])
  if (!info_.resume_help.empty()) command_line_->add_flag("--resume", resume_, info_.resume_help);
}

Tool::~Tool() = default;

int Tool::run(int argc, char** argv, const std::function<RunReport(ToolRun&)>& body) {
  // The ranks other than 0 log nothing and print errors as set_process_rank
  // says (the rank is known from the launcher's environment, before MPI
  // starts).
  const bool first = ProcessGroup::launcher_rank() == 0;
  set_process_rank(ProcessGroup::launcher_rank());
  const int code = run_app(argc, argv, *command_line_, [&](const AppOptions& options) {
    ProcessGroup processes(&argc, &argv);
    if (!first) spdlog::set_level(spdlog::level::off);
    ToolRun run(info_, options, resume_, processes);
    return run.finish(body(run));
  });
  set_process_rank(0);
  return code;
}

}  // namespace neuralsim
