// Resume that really resumes: a simid run with several basin-hopping rounds
// is stopped early by SIGINT (Ctrl-C, which may land inside a round) and
// late by SIGKILL, then continued with --resume. The final
// params.json must be bit-identical to an uninterrupted run's: a round cut
// short is never checkpointed, so --resume reruns it whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::read_json;
using testing::run_command;

// Six rounds of two local solves on one thread (about 1 s), so
// that the stops below land in different rounds and inside them.
const std::string kRun = testing::app_path("simid") +
                         " --config configs/simid_double_pendulum_lengths.yaml -q --threads 1 --seed 5"
                         " --set estimate.basin_hopping.rounds=6 --set estimate.basin_hopping.population=2"
                         " --set estimate.basin_hopping.cost_threshold=-1 --set estimate.solver.max_iterations=8"
                         " --set data.max_samples=101 --set output.plot=false";

nlohmann::json result(const std::string& out) {
  const nlohmann::json p = read_json(out + "/params.json");
  return {{"parameters", p["parameters"]}, {"cost", p["cost"]}};
}

TEST(SimidInterrupt, KilledOrInterruptedThenResumedGivesTheUninterruptedResult) {
  const std::string reference = fresh_dir("interrupt_reference");
  ASSERT_EQ(run_command(kRun + " --out " + reference).exit_code, 0);
  const nlohmann::json expected = result(reference);
  const double seconds = read_json(reference + "/summary.json")["timings"]["fit_s"].get<double>();
  ASSERT_GT(seconds, 0.5) << "the run is too short to interrupt reliably";

  // Two stop moments (fractions of its fit time): SIGINT early, inside a
  // round; SIGKILL late.
  int resumed_mid_round = 0;
  for (const auto& [fraction, signal] : {std::pair<double, const char*>{0.2, "INT"}, {0.6, "KILL"}}) {
    const std::string out = fresh_dir(std::string("interrupt_") + signal + "_" + std::to_string(fraction));
    const std::string delay = std::to_string(0.3 + fraction * seconds);
    const auto stopped = run_command("timeout --preserve-status -s " + std::string(signal) + " " + delay + " " +
                                     kRun + " --out " + out);
    SCOPED_TRACE(std::string(signal) + " after " + delay + " s (exit " + std::to_string(stopped.exit_code) + ")");
    if (stopped.exit_code == 0) continue;  // finished before the signal: nothing to resume
    if (std::string(signal) == "INT") {
      ASSERT_EQ(stopped.exit_code, 130) << stopped.err;
      // Ctrl-C keeps the best result so far.
      EXPECT_TRUE(std::filesystem::exists(out + "/params.json"));
      const nlohmann::json s = read_json(out + "/summary.json");
      EXPECT_EQ(s["status"], "interrupted");
      if (s["metrics"]["basin_hopping"]["rounds"].get<int>() < 6) ++resumed_mid_round;
    }
    // Killed before its first checkpoint, a run starts again (--force);
    // otherwise it resumes.
    const bool has_checkpoint = std::filesystem::exists(out + "/checkpoint.json");
    const auto resumed = run_command(kRun + (has_checkpoint ? " --resume" : " --force") + " --out " + out);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_EQ(result(out), expected) << "resumed " << (has_checkpoint ? "from a checkpoint" : "from scratch");
    EXPECT_EQ(read_json(out + "/summary.json")["metrics"]["basin_hopping"]["history"].size(), 6u);
  }
  EXPECT_GT(resumed_mid_round, 0) << "no SIGINT landed before the last round";
}

}  // namespace
}  // namespace neuralsim
