// The job scaffold (apps/common/tool.hpp): a toy tool is its name, a body
// and a serializer; the scaffold gives it the command line, the output
// directory, summary.json, exit codes, interrupts and --resume.
#include "common/tool.hpp"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "support/files.hpp"

namespace neuralsim {
namespace {

// ---- the toy tool: 36 lines. It sums 1..n, one term per step, with a
// checkpoint per step; `interrupt_at` stops it as Ctrl-C would, n = 13 diverges.
RunReport toy_sum(ToolRun& run) {
  const long long n = run.config().get_int_in_range("n", 10, 1, 1000);
  const long long interrupt_at = run.config().get_int_in_range("interrupt_at", 0, 0, 1000);
  CheckpointStore& store = *run.context().checkpoint;
  long long k = 0, sum = 0;
  if (run.resume()) {
    const nlohmann::json j = nlohmann::json::parse(store.load(1e6, "a toy checkpoint").value_or("{}"));
    k = j.at("k").get<long long>();
    sum = j.at("sum").get<long long>();
  }
  run.context().started();
  RunReport report;
  for (; k < n; ++k) {
    if (run.context().stop_requested()) {
      report.status = RunStatus::kInterrupted;
      break;
    }
    sum += k + 1;
    store.save(nlohmann::json{{"k", k + 1}, {"sum", sum}}.dump());
    if (k + 1 == interrupt_at) request_interrupt();
  }
  if (n == 13) report = {RunStatus::kDiverged, "unlucky thirteen", {}, {}};
  run.summary().metrics()["sum"] = sum;
  run.write_text("sum.txt", std::to_string(sum) + "\n");
  return report;
}

int toy_main(std::vector<std::string> args) {
  args.insert(args.begin(), "toy");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Tool tool({"toy", "Sums 1..n.", "Continue from OUT/checkpoint.json"});
  return tool.run(static_cast<int>(argv.size()), argv.data(), toy_sum);
}
// ---- end of the toy tool.

class ToolScaffold : public testing::TempDirTest {
 protected:
  void TearDown() override {
    spdlog::set_level(spdlog::level::info);
    TempDirTest::TearDown();
  }
  int run(const std::string& config, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--config", write("toy.yaml", config), "--out", path("out"), "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    return toy_main(args);
  }
  nlohmann::json summary() const { return testing::read_json(path("out/summary.json")); }
};

TEST_F(ToolScaffold, SummaryOutputsAndExitCodes) {
  ASSERT_EQ(run("n: 10\n", {"--seed", "7"}), kExitOk);
  const nlohmann::json s = summary();
  EXPECT_EQ(s["app"], "toy");
  EXPECT_EQ(s["status"], "ok");
  EXPECT_EQ(s["metrics"]["sum"], 55);
  EXPECT_EQ(s["seed"], 7);
  EXPECT_EQ(s["config"]["n"], 10);
  const std::vector<std::string> outputs = s["outputs"];
  EXPECT_EQ(outputs, (std::vector<std::string>{path("out/sum.txt"), path("out/checkpoint.json")}));
  EXPECT_TRUE(s["provenance"].contains("git_revision"));

  // A reused --out is refused without --force, and replaced with it.
  EXPECT_EQ(run("n: 3\n"), kExitUsage);
  EXPECT_EQ(summary()["metrics"]["sum"], 55);
  EXPECT_EQ(run("n: 3\n", {"--force"}), kExitOk);
  EXPECT_EQ(summary()["metrics"]["sum"], 6);
}

TEST_F(ToolScaffold, ConfigErrorWritesNothing) {
  EXPECT_EQ(run("n: -1\n"), kExitUsage);
  EXPECT_FALSE(std::filesystem::exists(path("out")));
}

TEST_F(ToolScaffold, DivergedRunKeepsItsResultAndExits4) {
  EXPECT_EQ(run("n: 13\n"), kExitNumerical);
  EXPECT_EQ(summary()["status"], "diverged");
  EXPECT_EQ(summary()["metrics"]["sum"], 91);
}

TEST_F(ToolScaffold, InterruptThenResumeGivesTheUninterruptedResult) {
  EXPECT_EQ(run("n: 10\ninterrupt_at: 4\n"), kExitInterrupted);
  EXPECT_EQ(summary()["status"], "interrupted");
  EXPECT_EQ(summary()["metrics"]["sum"], 10);
  EXPECT_EQ(run("n: 10\ninterrupt_at: 4\n"), kExitUsage);  // an unfinished run is not overwritten
  EXPECT_EQ(run("n: 10\n", {"--resume"}), kExitOk);
  EXPECT_EQ(summary()["status"], "ok");
  EXPECT_EQ(summary()["metrics"]["sum"], 55);
  EXPECT_EQ(testing::read_text(path("out/sum.txt")), "55\n");
}

}  // namespace
}  // namespace neuralsim
