// The one job scaffold of every tool: a tool is its name, its own flags, a
// library call (lib/neuralsim/tools/) and a serializer of the call's typed
// result. The scaffold does the rest, the same way for every tool:
//
//   - the command line (common.hpp: --config, --out, --force, --set, --seed,
//     --threads, -v/-q, --version; --resume for resumable tools)
//   - the config, loaded with the --set overrides
//   - the RunContext handed to the library call: log lines through spdlog,
//     progress stages with an ETA on stderr, the Ctrl-C / SIGTERM flag, the
//     checkpoint OUT/checkpoint.json (resumable tools)
//   - the output directory, taken when the call starts its work (so a bad
//     input leaves --out untouched), refused when it holds another run's
//     outputs unless --force (or --resume)
//   - summary.json, written last: status, the serializer's metrics, the
//     result's warnings and timings, config, seed, provenance, outputs
//   - the status → exit-code mapping (exit_codes.hpp): ok 0, interrupted
//     130, diverged 4 (the message as the one error line), target missed 5;
//     exceptions map as in run_app.
//   - under an MPI launcher (process_group.hpp): every process runs the
//     same call with the communicator, rank 0 alone logs, writes the
//     outputs and the checkpoint and prints the error line; a serializer
//     returns right after the call where writes() is false.
//
//   int main(int argc, char** argv) {
//     neuralsim::Tool tool({"simid", "Identify model parameters ...", "Continue from OUT/checkpoint.json ..."});
//     return tool.run(argc, argv, [](neuralsim::ToolRun& run) {
//       const IdentificationResult r = identify({run.config(), run.options().seed}, run.context());
//       ... run.write_text("params.json", ...); run.summary().metrics()["cost"] = r.cost; ...
//       return RunReport(r);
//     });
//   }
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/app.hpp"
#include "common/process_group.hpp"
#include "neuralsim/grad/gradient_check.hpp"
#include "neuralsim/tools/run_context.hpp"

namespace neuralsim {

class HtmlReport;

struct ToolInfo {
  std::string name;         // "simid": messages, summary.json "app", the default --out (out/<name>)
  std::string description;  // --help
  std::string resume_help;  // non-empty: the tool is resumable (--resume from OUT/checkpoint.json)
};

// One run of a tool, as its serializer sees it.
class ToolRun {
 public:
  ToolRun(const ToolInfo& info, const AppOptions& options, bool resume, const ProcessGroup& processes);
  ~ToolRun();
  ToolRun(const ToolRun&) = delete;
  ToolRun& operator=(const ToolRun&) = delete;

  const AppOptions& options() const { return options_; }
  const Config& config() const { return config_; }
  bool resume() const { return resume_; }
  // False on MPI ranks other than 0: they compute, rank 0 writes.
  bool writes() const { return writes_; }
  // For the library call. Valid as long as this run.
  const RunContext& context() const { return context_; }

  // The output directory and the summary: taken when the library call
  // started its work, or now.
  const OutputDirectory& out();
  RunSummary& summary();
  // OUT/name (a plain file name).
  std::string path(const std::string& name) { return out().path(name); }
  // Writes OUT/name atomically and lists it; returns its path.
  std::string write_text(const std::string& name, const std::string& text);
  // Lists a file the serializer wrote itself (when it exists).
  void add_output(const std::string& path);
  // Logs and lists warnings (the library's are listed by finish()).
  void warn(const std::string& warning);
  // Whether plots are wanted (output.plot, else not under -q), and one plot
  // drawn by a helper script (python.hpp) and written like write_text to
  // OUT/png (nothing when it could not be drawn).
  bool plots_wanted() const;
  void plot(const std::string& script, const std::vector<std::string>& args, const std::string& png);
  // --check-gradients: the table to OUT/gradient_check.txt (and the log),
  // every row to OUT/gradient_check.json, the verdict into the summary's
  // metrics; `about` (what was differentiated) goes into both.
  void write_gradient_check(const GradientCheckSummary& check, const nlohmann::json& about);
  // OUT/report.html (html_report.hpp): the serializer's sections, then the
  // run's provenance (tool, version, git revision, command line, config
  // file, overrides, seed, libraries, the config echoed), written like
  // write_text.
  void write_report(HtmlReport& report);

  // The scaffold's end of the run: status, warnings and timings into the
  // summary, the summary written; returns the exit code (throws
  // NumericalError with the message for kDiverged).
  int finish(const RunReport& report);

 private:
  class Observer;
  const ToolInfo& info_;
  const AppOptions& options_;
  Config config_;
  bool resume_;
  bool writes_;
  std::unique_ptr<Observer> observer_;
  std::unique_ptr<CheckpointFile> checkpoint_;
  RunContext context_;
  std::optional<OutputDirectory> out_;
  std::optional<RunSummary> summary_;
};

class Tool {
 public:
  explicit Tool(ToolInfo info);
  ~Tool();
  // The tool's own flags go here before run().
  CommandLine& command_line() { return *command_line_; }
  // Parses, loads the config, runs `body` and finishes the run (the exit code).
  int run(int argc, char** argv, const std::function<RunReport(ToolRun&)>& body);

 private:
  ToolInfo info_;
  AppOptions options_;
  bool resume_ = false;
  std::unique_ptr<CommandLine> command_line_;
};

}  // namespace neuralsim
