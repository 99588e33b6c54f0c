#include "common/app.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <oneapi/tbb/global_control.h>
#include <regex>
#include <spdlog/spdlog.h>
#include <thread>

#include "neuralsim/core/errors.hpp"
#include "common/provenance.hpp"
#include "common/version.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;
using AppBody = std::function<int(const AppOptions&)>;

class AppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("neuralsim_app_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    config_ = (dir_ / "run.yaml").string();
    std::ofstream(config_) << "sim:\n  dt: 0.01\n  steps: 20\n";
  }
  void TearDown() override {
    fs::remove_all(dir_);
    spdlog::set_level(spdlog::level::info);  // run_app with -q/-v changes it
  }

  // Runs a "testapp" with the given arguments (argv[0] is added).
  int run(std::vector<std::string> args, const AppBody& body = [](const AppOptions&) { return 0; }) {
    args.insert(args.begin(), "/usr/bin/testapp");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    opts_ = AppOptions{};
    CommandLine command_line("test app", opts_, "testapp");
    return run_app(static_cast<int>(args.size()), argv.data(), command_line, body);
  }

  // Runs a body that throws `e` and returns {exit code, stderr}.
  template <class E>
  std::pair<int, std::string> run_throwing(const E& e) {
    ::testing::internal::CaptureStderr();
    const int code = run({"--config", config_}, [&](const AppOptions&) -> int { throw e; });
    return {code, ::testing::internal::GetCapturedStderr()};
  }

  fs::path dir_;
  std::string config_;
  AppOptions opts_;
};

TEST_F(AppTest, ParsesTheCommonOptions) {
  AppOptions seen;
  const int code = run({"--config", config_, "--out", "results/x", "--set", "sim.dt=0.02",
                        "--set=sim.steps=5", "--seed", "42", "--threads", "1", "-vv"},
                       [&](const AppOptions& o) {
                         seen = o;
                         return 0;
                       });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(seen.config, config_);
  EXPECT_EQ(seen.out, "results/x");
  EXPECT_EQ(seen.sets, (std::vector<std::string>{"sim.dt=0.02", "sim.steps=5"}));
  EXPECT_EQ(seen.seed, 42);
  EXPECT_EQ(seen.threads, 1);
  EXPECT_EQ(seen.verbosity, 2);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::trace);
  ASSERT_EQ(seen.argv.size(), 13u);
  EXPECT_EQ(seen.argv[0], "/usr/bin/testapp");
}

TEST_F(AppTest, DefaultsAndQuiet) {
  AppOptions seen;
  EXPECT_EQ(run({"--config", config_, "-q"},
                [&](const AppOptions& o) {
                  seen = o;
                  return 0;
                }),
            0);
  EXPECT_EQ(seen.out, "out/testapp");
  EXPECT_EQ(seen.seed, 0);
  EXPECT_EQ(seen.threads, 0);
  EXPECT_EQ(seen.verbosity, -1);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
}

TEST_F(AppTest, BodyReturnValueIsTheExitCode) {
  EXPECT_EQ(run({"--config", config_}, [](const AppOptions&) { return 7; }), 7);
}

TEST_F(AppTest, ExceptionsMapToDocumentedExitCodesWithOneLine) {
  auto [code, err] = run_throwing(ConfigError("c.yaml:3:5: key 'sim.dt': bad"));
  EXPECT_EQ(code, kExitUsage);
  EXPECT_EQ(err, "testapp: error: c.yaml:3:5: key 'sim.dt': bad\n");

  std::tie(code, err) = run_throwing(ModelError("arm.urdf: no root link"));
  EXPECT_EQ(code, kExitUsage);

  std::tie(code, err) = run_throwing(DataError("x.h5: /q has 3 columns, expected 4"));
  EXPECT_EQ(code, kExitData);
  EXPECT_EQ(err, "testapp: error: x.h5: /q has 3 columns, expected 4\n");

  std::tie(code, err) = run_throwing(NumericalError("NaN in qd at t=0.5\nsecond line"));
  EXPECT_EQ(code, kExitNumerical);
  EXPECT_EQ(err, "testapp: error: NaN in qd at t=0.5 second line\n");  // one line

  std::tie(code, err) = run_throwing(InvalidArgument("aba: q has size 3, the model needs 4"));
  EXPECT_EQ(code, 1);  // input reaching the engine unchecked is a bug
  EXPECT_EQ(err, "testapp: error: internal error: aba: q has size 3, the model needs 4\n");

  std::tie(code, err) = run_throwing(std::out_of_range("vector::at"));
  EXPECT_EQ(code, 1);
  EXPECT_EQ(err, "testapp: error: internal error: vector::at\n");

  std::tie(code, err) = run_throwing(42);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("internal error"), std::string::npos);
}

TEST_F(AppTest, HelpAndVersionExitZero) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run({"--help"}), 0);
  const std::string help = ::testing::internal::GetCapturedStdout();
  for (const char* flag : {"--config", "--out", "--set", "--seed", "--threads", "--verbose",
                           "--quiet"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run({"--version"}), 0);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find(std::string(neuralsim::version())), std::string::npos);
}

TEST_F(AppTest, UsageErrorsExitTwoWithOneLine) {
  bool ran = false;
  const AppBody body = [&](const AppOptions&) {
    ran = true;
    return 0;
  };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"--config", config_, "--bogus"}, body), kExitUsage);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("testapp: error: ", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({}, body), kExitUsage);  // --config is required
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("--config"), std::string::npos);

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"--config", (dir_ / "missing.yaml").string()}, body), kExitUsage);
  EXPECT_EQ(run({"--config", config_, "--threads", "-1"}, body), kExitUsage);
  EXPECT_EQ(run({"--config", config_, "--seed", "abc"}, body), kExitUsage);
  EXPECT_EQ(run({"--config", config_, "-v", "-q"}, body), kExitUsage);
  EXPECT_EQ(run({"--config", config_, "--set", "a=1", "stray"}, body), kExitUsage);
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ran);
}

// Every numeric flag of the scaffold: text that is not an integer is said to
// be one, a number outside the range is said to be out of range.
TEST_F(AppTest, NumericFlagsSayWhetherTheValueIsNotANumberOrOutOfRange) {
  struct FlagCase {
    std::string flag, value, verdict;
  };
  const std::vector<FlagCase> cases = {
      {"--threads", "abc", "not an integer"}, {"--threads", "1.5", "not an integer"},
      {"--threads", "", "not an integer"},    {"--threads", " 4", "not an integer"},
      {"--threads", "4 ", "not an integer"},  {"--threads", "0x10", "not an integer"},
      {"--threads", "+4", "not an integer"},  {"--threads", "1e2", "not an integer"},
      {"--threads", "-1", "out of range"},    {"--threads", "1025", "out of range"},
      {"--threads", "99999999999999999999", "out of range"},
      {"--seed", "abc", "not an integer"},    {"--seed", "1e3", "not an integer"},
      {"--seed", "12x", "not an integer"},    {"--seed", "-3", "out of range"},
      {"--seed", "9223372036854775808", "out of range"}};
  for (const FlagCase& c : cases) {
    SCOPED_TRACE(c.flag + " '" + c.value + "'");
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run({"--config", config_, c.flag, c.value}), kExitUsage);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(c.flag), std::string::npos) << err;
    EXPECT_NE(err.find("got '" + c.value + "', which is " + c.verdict), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  // --verbose counts (-vv) or takes a level.
  for (const auto& [arg, verdict] : {std::pair{"--verbose=abc", "not an integer"}, std::pair{"--verbose=10", "out of range"}}) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run({"--config", config_, arg}), kExitUsage);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(std::string("--verbose: expected an integer in [0, 9], got '") + (arg + 10) + "', which is " + verdict),
              std::string::npos) << err;
  }
  EXPECT_EQ(run({"--config", config_, "-vv"}), 0);
  EXPECT_EQ(opts_.verbosity, 2);
  EXPECT_EQ(run({"--config", config_, "--verbose=1"}), 0);
  EXPECT_EQ(opts_.verbosity, 1);
  EXPECT_EQ(run({"--config", config_, "--threads", "1024", "--seed", "9223372036854775807"}), 0);
  EXPECT_EQ(opts_.threads, 1024);
  EXPECT_EQ(opts_.seed, 9223372036854775807LL);
}

TEST_F(AppTest, ThreadsCapTbbOnlyDuringTheBody) {
  const auto parallelism = [] {
    return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  };
  const std::size_t before = parallelism();
  std::size_t inside = 0;
  EXPECT_EQ(run({"--config", config_, "--threads", "1"},
                [&](const AppOptions&) {
                  inside = parallelism();
                  return 0;
                }),
            0);
  EXPECT_EQ(inside, 1u);
  EXPECT_EQ(parallelism(), before);
}

TEST_F(AppTest, InterruptFlagIsSetBySigintAndReset) {
  bool seen_before = true, seen_after = false;
  ::testing::internal::CaptureStderr();
  const int code = run({"--config", config_}, [&](const AppOptions&) {
    seen_before = interrupt_requested();
    begin_cooperative_interrupts();
    std::raise(SIGINT);  // the first Ctrl-C only sets the flag
    seen_after = interrupt_requested();
    return interrupt_requested() ? kExitInterrupted : 0;
  });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kExitInterrupted);
  EXPECT_FALSE(seen_before);
  EXPECT_TRUE(seen_after);
  EXPECT_NE(err.find("testapp: interrupt requested"), std::string::npos) << err;

  // The next run starts clean.
  bool stale = true;
  EXPECT_EQ(run({"--config", config_},
                [&](const AppOptions&) {
                  stale = interrupt_requested();
                  return 0;
                }),
            0);
  EXPECT_FALSE(stale);
}

TEST_F(AppTest, ProvenanceHasVersionsAndRunInfo) {
  const nlohmann::json p = provenance({"rollout", "--config", "x.yaml"}, 3);
  EXPECT_EQ(p["version"], std::string(neuralsim::version()));
  EXPECT_TRUE(p["git_revision"].is_string());
  EXPECT_FALSE(p["git_revision"].get<std::string>().empty());
  for (const char* lib : {"eigen", "ceres", "hdf5", "nlohmann_json", "tbb", "spdlog", "cli11"}) {
    ASSERT_TRUE(p["libraries"].contains(lib)) << lib;
    const std::string version = p["libraries"][lib].get<std::string>();
    EXPECT_TRUE(std::regex_search(version, std::regex(R"(^\d+\.\d+)"))) << lib << ": " << version;
  }
  EXPECT_EQ(p["libraries"]["eigen"].get<std::string>().substr(0, 2), "3.");
  EXPECT_FALSE(p["hostname"].get<std::string>().empty());
  EXPECT_TRUE(std::regex_match(p["timestamp_utc"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_EQ(p["command_line"], (std::vector<std::string>{"rollout", "--config", "x.yaml"}));
  EXPECT_EQ(p["threads_requested"], 3);
  EXPECT_GE(p["threads"].get<long long>(), 1);
  EXPECT_FALSE(p["compiler"].get<std::string>().empty());
}

TEST_F(AppTest, RunSummaryWritesEverythingAtomically) {
  const fs::path out = dir_ / "out" / "nested";
  EXPECT_EQ(run({"--config", config_, "--set", "sim.dt=0.5", "--seed", "7", "--out", out.string()},
                [&](const AppOptions& o) {
                  const Config cfg = Config::load(o.config, o.sets);
                  const OutputDirectory dir(o.out, "testapp", OutputDirectory::Reuse::kRefuse);
                  RunSummary summary("testapp", o, cfg, dir);
                  summary.metrics()["rmse"] = 0.25;
                  summary.timings()["simulate_s"] = 0.1;
                  summary.set_status("diverged");
                  summary.add_output(o.out + "/traj.h5");
                  summary.add_output(o.out + "/traj.h5");
                  EXPECT_THROW(summary.set_status("fine"), std::invalid_argument);
                  summary.write();
                  return 0;
                }),
            0);
  std::ifstream in(out / "summary.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["app"], "testapp");
  EXPECT_EQ(j["status"], "diverged");
  EXPECT_EQ(j["metrics"]["rmse"], 0.25);
  EXPECT_EQ(j["timings"]["simulate_s"], 0.1);
  EXPECT_GE(j["timings"]["total_wall_s"].get<double>(), 0.0);
  EXPECT_EQ(j["config"]["sim"]["dt"], 0.5);
  EXPECT_EQ(j["config"]["sim"]["steps"], 20);
  EXPECT_EQ(j["config_file"], config_);
  EXPECT_EQ(j["overrides"], (std::vector<std::string>{"sim.dt=0.5"}));
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["threads"], 0);
  EXPECT_EQ(j["provenance"]["version"], std::string(neuralsim::version()));
  EXPECT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
}

TEST(ProgressTest, FormatsPercentElapsedAndEta) {
  EXPECT_EQ(format_progress("fit", 370, 1000, 1.2), "fit: 37% (370/1000) elapsed 1.2s ETA 2.0s");
  EXPECT_EQ(format_progress("fit", 0, 1000, 0.0), "fit: 0% (0/1000) elapsed 0.0s");
  EXPECT_EQ(format_progress("fit", 1000, 1000, 75.0), "fit: 100% (1000/1000) elapsed 1m15s");
  EXPECT_EQ(format_progress("fit", 1, 2, 4000.0), "fit: 50% (1/2) elapsed 1h06m ETA 1h06m");
}

TEST(ProgressTest, PrintsOnlyWhenEnabled) {
  spdlog::set_level(spdlog::level::info);
  ::testing::internal::CaptureStderr();
  {
    Progress p("rollouts", 100, 0.0);
    p.update(50);
    p.finish();
  }
  const std::string shown = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(shown.find("rollouts: 50% (50/100)"), std::string::npos) << shown;

  ::testing::internal::CaptureStderr();
  {
    Progress small("tiny", Progress::kMinTotal - 1, 0.0);
    small.update(3);
    small.finish();
    spdlog::set_level(spdlog::level::warn);  // -q
    Progress quiet("quiet", 100, 0.0);
    quiet.update(50);
    quiet.finish();
  }
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  ::testing::internal::CaptureStderr();
  {
    Progress throttled("slow", 100, 60.0);  // nothing is due within a minute
    throttled.update(10);
    throttled.update(20);
    throttled.finish();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace neuralsim
