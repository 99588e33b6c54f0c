// Tests of the study scripts (scripts/check_regression.py,
// scripts/collect_summaries.py) on small hand-written JSON files: exit codes,
// the regression verdicts, and the CSV table's rows and columns. They run
// python3 from PATH (skipped without it) and never run simid.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::run_command;

// The interpreter behind `python3` on PATH, resolved once: calling it
// directly (with -S: the scripts need only the standard library) skips
// wrapper scripts such as pyenv shims, which keeps these tests fast.
std::string python() {
  static const std::string path = [] {
    std::string out;
    if (FILE* f = ::popen("python3 -c 'import sys; print(sys.executable)' 2> /dev/null", "r")) {
      char buf[4096];
      while (std::fgets(buf, sizeof(buf), f)) out += buf;
      ::pclose(f);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out.empty() ? out : "'" + out + "' -S";
  }();
  return path;
}

#define REQUIRE_PYTHON3() \
  if (python().empty()) GTEST_SKIP() << "python3 not found on PATH"

using testing::write_file;

std::string check(const std::string& summary, const std::string& baseline) {
  return python() + " scripts/check_regression.py '" + summary + "' '" + baseline + "'";
}

// A summary like simid's (only the fields the checks read).
std::string summary_json(const std::string& status, double max_rel, double val_rmse, double l1, int seed = 1) {
  std::ostringstream s;
  s.precision(17);
  s << R"({"app": "simid", "status": ")" << status << R"(", "seed": )" << seed
    << R"(, "config_file": "configs/x.yaml", "overrides": ["estimate.residual.window=20", "output.plot=false"],)"
    << R"( "metrics": {"cost": 1e-15, "train_rmse_q": 1e-9, "validation_rmse_q": )" << val_rmse
    << R"(, "max_relative_error": )" << max_rel << R"(, "parameters": {"link.link1.length": )" << l1
    << R"(, "link.link2.length": 4.0}, "basin_hopping": {"stop_reason": "threshold", "rounds": 2}},)"
    << R"( "timings": {"fit_s": 1.5, "total_s": 1.75}})";
  return s.str();
}

const char* const kBaseline = R"({
  "description": "test baseline",
  "checks": {
    "status": {"value": "ok"},
    "metrics.max_relative_error": {"max": 1e-6},
    "metrics.validation_rmse_q": {"max": 1e-5},
    "metrics.basin_hopping.rounds": {"min": 1, "max": 8},
    "metrics.parameters.link.link1.length": {"value": 3.0, "rel_tol": 1e-6}
  }
})";

TEST(CheckRegression, PassesOnAGoodSummary) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("check_good");
  write_file(dir + "/baseline.json", kBaseline);
  write_file(dir + "/run/summary.json", summary_json("ok", 1e-9, 1e-9, 3.0000000001));
  const auto r = run_command(check(dir + "/run/summary.json", dir + "/baseline.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The run directory works in place of its summary.json.
  EXPECT_EQ(run_command(check(dir + "/run", dir + "/baseline.json")).exit_code, 0);
}

TEST(CheckRegression, FailsWithExitOneWhenAMetricRegresses) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("check_bad");
  write_file(dir + "/baseline.json", kBaseline);
  struct Case {
    const char* what;
    std::string summary;
  } cases[] = {
      {"max_relative_error above max", summary_json("ok", 0.2, 1e-9, 3.0)},
      {"validation RMSE above max", summary_json("ok", 1e-9, 0.5, 3.0)},
      {"parameter outside rel_tol", summary_json("ok", 1e-9, 1e-9, 3.01)},
      {"status not ok", summary_json("error", 1e-9, 1e-9, 3.0)},
      {"metric missing", R"({"status": "ok", "metrics": {"validation_rmse_q": 1e-9}})"},
      {"non-finite metric (null)", R"({"status": "ok", "metrics": {"max_relative_error": null,
         "validation_rmse_q": 1e-9, "basin_hopping": {"rounds": 1}, "parameters": {"link.link1.length": 3.0}}})"},
  };
  for (const auto& c : cases) {
    write_file(dir + "/summary.json", c.summary);
    const auto r = run_command(check(dir + "/summary.json", dir + "/baseline.json"));
    EXPECT_EQ(r.exit_code, 1) << c.what << "\n" << r.err;
  }
}

TEST(CheckRegression, OptionalMetricIsSkippedWhenAbsent) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("check_optional");
  write_file(dir + "/baseline.json",
             R"({"checks": {"status": {"value": "ok"}, "timings.fit_s": {"max": 10, "required": false}}})");
  write_file(dir + "/summary.json", R"({"status": "ok"})");
  EXPECT_EQ(run_command(check(dir + "/summary.json", dir + "/baseline.json")).exit_code, 0);
}

TEST(CheckRegression, ExitsTwoOnMalformedInput) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("check_malformed");
  write_file(dir + "/summary.json", summary_json("ok", 1e-9, 1e-9, 3.0));
  const char* const bad_baselines[] = {
      R"({"checks": {"status": {"value": "ok"})",                   // truncated JSON
      R"({"status": {"value": "ok"}})",                             // no "checks"
      R"({"checks": {"metrics.cost": {"maximum": 1}}})",            // unknown criterion
      R"({"checks": {"metrics.cost": {"max": "small"}}})",          // non-numeric bound
      R"({"checks": {"metrics.cost": {"rel_tol": 0.1}}})",          // tolerance without value
      R"({"checks": {"metrics.cost": {}}})",                        // no criterion
  };
  int k = 0;
  for (const char* b : bad_baselines) {
    const std::string path = dir + "/baseline" + std::to_string(k++) + ".json";
    write_file(path, b);
    const auto r = run_command(check(dir + "/summary.json", path));
    EXPECT_EQ(r.exit_code, 2) << b << "\n" << r.err;
    EXPECT_NE(r.err.find("check_regression:"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_command(check(dir + "/summary.json", dir + "/missing.json")).exit_code, 2);
  write_file(dir + "/bad_summary.json", "not json");
  write_file(dir + "/baseline_ok.json", kBaseline);
  EXPECT_EQ(run_command(check(dir + "/bad_summary.json", dir + "/baseline_ok.json")).exit_code, 2);
}

// The shipped baselines are well formed: against an empty summary every
// check fails (exit 1), none is rejected as malformed (exit 2).
TEST(CheckRegression, ShippedBaselinesAreWellFormed) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("check_shipped");
  write_file(dir + "/summary.json", "{}");
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(NEURALSIM_SOURCE_DIR) + "/configs/regression")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    const auto r = run_command(check(dir + "/summary.json", e.path().string()));
    EXPECT_EQ(r.exit_code, 1) << e.path() << "\n" << r.err;
  }
  EXPECT_GE(n, 1);
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    std::string c;
    while (std::getline(s, c, ',')) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

int column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no column '" << name << "'";
  return 0;
}

TEST(CollectSummaries, OneRowPerRunWithTheDocumentedColumns) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("collect");
  write_file(dir + "/sweep/w20/seed_1/summary.json", summary_json("ok", 1e-9, 2e-9, 3.0, 1));
  write_file(dir + "/sweep/w20/seed_1/exit_code", "0\n");
  write_file(dir + "/sweep/w20/seed_2/summary.json", summary_json("ok", 0.25, 0.5, 2.25, 2));
  // A run with another parameter set: its own column, empty cells elsewhere.
  write_file(dir + "/sweep/other/seed_1/summary.json",
             R"({"status": "ok", "seed": 1, "config_file": "configs/y.yaml", "overrides": [],
                 "metrics": {"cost": 0.5, "parameters": {"joint.joint1.damping": 0.3}}, "timings": {"fit_s": 2}})");
  // A sweep run that failed before writing a summary.
  write_file(dir + "/sweep/w200/seed_1/exit_code", "2\n");
  write_file(dir + "/sweep/w200/seed_1/stderr.log", "error\n");
  write_file(dir + "/sweep/notes.txt", "not a run\n");
  const std::string csv = dir + "/table.csv";
  const auto r = run_command(python() + " scripts/collect_summaries.py '" + dir + "/sweep' -o '" + csv + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 5u);  // header + 4 runs
  const auto& h = rows[0];
  for (const char* c : {"run_dir", "config", "seed", "overrides", "status", "cost", "train_rmse_q",
                        "validation_rmse_q", "max_relative_error", "fit_s", "link.link1.length",
                        "link.link2.length", "joint.joint1.damping"})
    column(h, c);
  for (const auto& row : rows) EXPECT_EQ(row.size(), h.size());
  // Sorted by run directory.
  EXPECT_EQ(rows[1][column(h, "run_dir")], "other/seed_1");
  EXPECT_EQ(rows[2][column(h, "run_dir")], "w20/seed_1");
  EXPECT_EQ(rows[3][column(h, "run_dir")], "w20/seed_2");
  EXPECT_EQ(rows[4][column(h, "run_dir")], "w200/seed_1");
  const auto& w20_2 = rows[3];
  EXPECT_EQ(w20_2[column(h, "seed")], "2");
  EXPECT_EQ(w20_2[column(h, "status")], "ok");
  EXPECT_EQ(w20_2[column(h, "config")], "configs/x.yaml");
  EXPECT_EQ(w20_2[column(h, "overrides")], "estimate.residual.window=20 output.plot=false");
  EXPECT_DOUBLE_EQ(std::stod(w20_2[column(h, "max_relative_error")]), 0.25);
  EXPECT_DOUBLE_EQ(std::stod(w20_2[column(h, "validation_rmse_q")]), 0.5);
  EXPECT_DOUBLE_EQ(std::stod(w20_2[column(h, "link.link1.length")]), 2.25);
  EXPECT_DOUBLE_EQ(std::stod(w20_2[column(h, "fit_s")]), 1.5);
  EXPECT_EQ(w20_2[column(h, "joint.joint1.damping")], "");
  EXPECT_DOUBLE_EQ(std::stod(rows[1][column(h, "joint.joint1.damping")]), 0.3);
  EXPECT_EQ(rows[1][column(h, "link.link1.length")], "");
  EXPECT_EQ(rows[2][column(h, "exit_code")], "0");
  EXPECT_EQ(rows[4][column(h, "status")], "no-summary");
  EXPECT_EQ(rows[4][column(h, "exit_code")], "2");
}

TEST(CollectSummaries, ExitsTwoWithoutRuns) {
  REQUIRE_PYTHON3();
  const std::string dir = fresh_dir("collect_empty");
  EXPECT_EQ(run_command(python() + " scripts/collect_summaries.py '" + dir + "'").exit_code, 2);
  EXPECT_EQ(run_command(python() + " scripts/collect_summaries.py '" + dir + "/nope'").exit_code, 2);
}

}  // namespace
}  // namespace neuralsim
