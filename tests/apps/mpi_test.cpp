// The tools under MPI (docs/cluster.md), run through `mpirun --oversubscribe`
// with 1, 2 and 3 processes: simid (basin-hopping starts spread over the
// ranks, or each solve's residual blocks), train-augment (each minibatch's windows spread, gradients summed in
// window order) and distill-mpc (episodes and training spread) write the same
// results, to the bit, at every process count; rollout replays recorded
// trajectories spread over ranks. A rank killed mid-run ends the job within
// seconds with the launcher's error, the checkpoint stays valid, and
// --resume with another process count gives the uninterrupted result.
// SIGTERM to every rank (what Slurm sends) keeps the best result, exit 130,
// one notice. A config error is printed once, exit 2.
//
// Needs Open MPI (the test command installs it); without it these tests
// skip, and fail under the test command (NEURALSIM_REQUIRE_ORACLES=1).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "neuralsim/io/distill_dataset.hpp"
#include "neuralsim/io/network_file.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace mpi_test_detail {

using testing::fresh_dir;
using testing::read_json;
using testing::run_command;

#ifndef NEURALSIM_MPIEXEC
#define NEURALSIM_MPIEXEC ""
#endif

#define NEURALSIM_SKIP_WITHOUT_MPI()                                                                           \
  do {                                                                                                         \
    if (std::string(NEURALSIM_MPIEXEC).empty()) {                                                              \
      if (::neuralsim::testing::oracles_required()) FAIL() << "built without MPI (install libopenmpi-dev)";   \
      GTEST_SKIP() << "built without MPI";                                                                     \
    }                                                                                                          \
  } while (0)

// `mpirun -np N`: several ranks on 2 cores (--oversubscribe), as root in CI.
std::string mpirun(int processes) {
  std::string cmd = std::string(NEURALSIM_MPIEXEC) + " --oversubscribe -np " + std::to_string(processes);
  if (::geteuid() == 0) cmd += " --allow-run-as-root";
  return cmd + " ";
}

// A result file's content without what differs between two identical runs
// (wall-clock times, provenance, paths).
nlohmann::json stable_part(nlohmann::json j) {
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k == "provenance" || k == "timings" || k == "finished_utc" || k == "outputs" || k == "evaluation" ||
          k.find("seconds") != std::string::npos || k == "file" || k == "threads" || k == "processes")
        continue;
      out[k] = stable_part(it.value());
    }
    return out;
  }
  if (j.is_array())
    for (auto& v : j) v = stable_part(v);
  return j;
}

std::vector<double> weights_of(const std::string& file, const std::string& name) {
  const NamedNetwork net = read_network(file, name);
  return std::vector<double>(net.network.parameters(), net.network.parameters() + net.network.num_parameters());
}

// loss.csv without its timing columns (seconds_*).
std::string losses_of(const std::string& out) {
  std::ifstream in(out + "/loss.csv");
  std::string line, all;
  while (std::getline(in, line)) {
    std::string kept;
    int column = 0;
    for (std::size_t at = 0; at <= line.size(); ++column) {
      const std::size_t comma = std::min(line.find(',', at), line.size());
      if (column < 6) kept += line.substr(at, comma - at) + ",";
      at = comma + 1;
    }
    all += kept + "\n";
  }
  return all;
}

const std::string& pendulum_recordings() {
  static const std::string file = [] {
    const std::string out = fresh_dir("mpi_truth");
    const auto r = run_command(testing::app_path("rollout") +
                               " --config configs/train/pendulum_damping_truth.yaml -q --seed 1 --out " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out + "/trajectories.h5";
  }();
  return file;
}

std::string train_cmd(int epochs) {
  return testing::app_path("train-augment") + " --config configs/train/pendulum_damping.yaml -q --threads 1 --seed 6" +
         " --set data.train=" + pendulum_recordings() + " --set output.plot=false --set train.epochs=" +
         std::to_string(epochs);
}

}  // namespace mpi_test_detail

using namespace mpi_test_detail;

TEST(Mpi, SimidFindsTheSameFitAtOneAndThreeProcesses) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  // Four starts per round, two rounds: with 3 ranks the starts are split
  // 2/1/1, and the second round's starts depend on the first's winner (an
  // uneven split: what 2 ranks would show, 3 show too).
  const std::string cmd = testing::app_path("simid") +
                          " --config configs/simid_double_pendulum_lengths.yaml -q --seed 1 --threads 1"
                          " --set estimate.basin_hopping.cost_threshold=0 --set estimate.basin_hopping.rounds=2"
                          " --set data.max_samples=41 --set estimate.residual.window=40"
                          " --set estimate.solver.max_iterations=15";
  std::vector<std::string> outs;
  for (int n : {1, 3}) {
    outs.push_back(fresh_dir("mpi_simid_" + std::to_string(n)));
    const auto r = run_command(mpirun(n) + cmd + " --out " + outs.back());
    ASSERT_EQ(r.exit_code, 0) << n << " processes: " << r.err;
  }
  // Each solve shared by two processes (its residual blocks split): with 3
  // processes, groups {0, 1} and {2}.
  {
    outs.push_back(fresh_dir("mpi_simid_shared_3"));
    const auto r = run_command(mpirun(3) + cmd + " --set estimate.basin_hopping.processes_per_start=2 --out " +
                               outs.back());
    ASSERT_EQ(r.exit_code, 0) << "3 processes sharing solves: " << r.err;
  }
  const auto params = stable_part(read_json(outs[0] + "/params.json"));
  const auto summary = stable_part(read_json(outs[0] + "/summary.json"));
  EXPECT_EQ(summary["metrics"]["basin_hopping"]["rounds"], 2);
  for (std::size_t k = 1; k < outs.size(); ++k) {
    EXPECT_EQ(stable_part(read_json(outs[k] + "/params.json")), params) << outs[k];
    auto other = stable_part(read_json(outs[k] + "/summary.json"));
    other["config"]["estimate"]["basin_hopping"].erase("processes_per_start");
    other.erase("overrides");
    auto reference = summary;
    reference.erase("overrides");
    EXPECT_EQ(other, reference) << outs[k];
  }
}

TEST(Mpi, TrainAugmentGivesTheSameWeightsAtOneTwoAndThreeProcesses) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  std::vector<std::string> outs;
  for (int n : {1, 2, 3}) {
    outs.push_back(fresh_dir("mpi_train_" + std::to_string(n)));
    const auto r = run_command(mpirun(n) + train_cmd(8) + " --out " + outs.back());
    ASSERT_EQ(r.exit_code, 0) << n << " processes: " << r.err;
  }
  // And the same as without a launcher.
  outs.push_back(fresh_dir("mpi_train_plain"));
  ASSERT_EQ(run_command(train_cmd(8) + " --out " + outs.back()).exit_code, 0);
  const auto weights = weights_of(outs[0] + "/weights.h5", "damping");
  for (std::size_t k = 1; k < outs.size(); ++k) {
    EXPECT_EQ(weights_of(outs[k] + "/weights.h5", "damping"), weights) << outs[k];
    EXPECT_EQ(losses_of(outs[k]), losses_of(outs[0])) << outs[k];
    EXPECT_EQ(stable_part(read_json(outs[k] + "/summary.json")), stable_part(read_json(outs[0] + "/summary.json")));
  }
}

TEST(Mpi, DistillMpcGivesTheSameDatasetAndWeightsAtOneTwoAndThreeProcesses) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  const std::string cmd = testing::app_path("distill-mpc") +
                          " --config configs/distill_double_integrator.yaml -q --seed 1 --threads 1"
                          " --set distill.data.episodes=9 --set distill.train.epochs=30";
  std::vector<std::string> outs;
  for (int n : {1, 2, 3}) {
    outs.push_back(fresh_dir("mpi_distill_" + std::to_string(n)));
    const auto r = run_command(mpirun(n) + cmd + " --out " + outs.back());
    ASSERT_EQ(r.exit_code, 0) << n << " processes: " << r.err;
  }
  const DistillDataset data = read_distill_dataset(outs[0] + "/dataset.h5");
  const auto weights = weights_of(outs[0] + "/weights.h5", "mpc_control");
  for (std::size_t k = 1; k < outs.size(); ++k) {
    const DistillDataset d = read_distill_dataset(outs[k] + "/dataset.h5");
    EXPECT_EQ(d.features, data.features);
    EXPECT_EQ(d.targets, data.targets);
    EXPECT_EQ(weights_of(outs[k] + "/weights.h5", "mpc_control"), weights) << k + 1 << " processes";
    EXPECT_EQ(losses_of(outs[k]), losses_of(outs[0]));
    EXPECT_EQ(testing::read_text(outs[k] + "/closed_loop.csv"), testing::read_text(outs[0] + "/closed_loop.csv"));
  }
}

TEST(Mpi, DiscoverGivesTheSameDiscoveryAtTwoProcessesAsWithout) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  // Three repetitions (2 seeds, 1 bootstrap) of a short path and a retrain:
  // two rounds (one repetition per rank, then one), the retrain's windows
  // spread over both ranks.
  const std::string cmd = testing::app_path("discover") +
                          " --config configs/discover/double_pendulum_friction.yaml -q --seed 1 --threads 1"
                          " --set output.plot=false --set discover.stability.seeds=2 --set discover.stability.bootstrap=1"
                          " --set discover.penalty.points=3 --set discover.epochs.dense=6"
                          " --set discover.epochs.per_point=3 --set discover.epochs.refit=3 --set discover.retrain.epochs=2"
                          " --set train.train_samples=60";
  std::vector<std::string> outs;
  for (int n : {2}) {
    outs.push_back(fresh_dir("mpi_discover_" + std::to_string(n)));
    const auto r = run_command(mpirun(n) + cmd + " --out " + outs.back());
    ASSERT_EQ(r.exit_code, 0) << n << " processes: " << r.err;
  }
  outs.push_back(fresh_dir("mpi_discover_plain"));
  ASSERT_EQ(run_command(cmd + " --out " + outs.back()).exit_code, 0);
  const std::string discovery = testing::read_text(outs[0] + "/discovery.json");
  for (std::size_t k = 1; k < outs.size(); ++k) {
    EXPECT_EQ(testing::read_text(outs[k] + "/discovery.json"), discovery) << outs[k];
    EXPECT_EQ(weights_of(outs[k] + "/weights.h5", "joint_joint1_torque"),
              weights_of(outs[0] + "/weights.h5", "joint_joint1_torque"));
  }
}

TEST(Mpi, RolloutComparesEveryTrajectoryOnceAtThreeProcesses) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  const std::string cmd = testing::app_path("rollout") + " --config configs/rollout_double_pendulum.yaml -q --seed 1" +
                          " --compare datasets/double_pendulum.h5";
  const std::string one = fresh_dir("mpi_compare_1"), three = fresh_dir("mpi_compare_3");
  ASSERT_EQ(run_command(cmd + " --out " + one).exit_code, 0);
  const auto r = run_command(mpirun(3) + cmd + " --out " + three);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a = stable_part(read_json(one + "/summary.json")), b = stable_part(read_json(three + "/summary.json"));
  EXPECT_EQ(a["metrics"], b["metrics"]);
  EXPECT_EQ(std::filesystem::exists(three + "/compare.h5"), std::filesystem::exists(one + "/compare.h5"));
}

TEST(MpiFailures, AKilledRankEndsTheJobAndResumeOnAnotherProcessCountGivesTheUninterruptedResult) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  const std::string cmd = train_cmd(90);
  const std::string reference = fresh_dir("mpi_kill_reference");
  ASSERT_EQ(run_command(cmd + " --out " + reference).exit_code, 0);
  const double seconds = read_json(reference + "/summary.json")["timings"]["train_s"].get<double>();

  // Three ranks; SIGKILL the rank-1 process (its launcher environment
  // names it) partway through training.
  const std::string out = fresh_dir("mpi_kill");
  const std::string pid_file = out + ".rank1.pid";
  const std::string wrapped = "sh -c '[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && echo $$ > " + pid_file + "; exec " + cmd +
                              " --out " + out + "'";
  // Once training has begun (the first checkpoint), plus a third of the run.
  const std::string delay = std::to_string(seconds / 3);
  const std::string killer = "(for i in $(seq 600); do [ -f " + out + "/checkpoint.json ] && break; sleep 0.05; done; sleep " + delay +
                             "; date +%s.%N > " + out + ".killed; kill -9 $(cat " + pid_file + "))";
  const auto killed = run_command("{ " + killer + " & " + mpirun(3) + wrapped + "; rc=$?; date +%s.%N > " + out + ".ended; exit $rc; }");
  ASSERT_NE(killed.exit_code, 0) << "the job finished before the kill";
  const double waited = std::stod(testing::read_text(out + ".ended")) - std::stod(testing::read_text(out + ".killed"));
  EXPECT_LT(waited, 10.0) << "the job waited for the dead rank";
  testing::expect_contains(killed.err, {"rank 1"});
  ASSERT_TRUE(std::filesystem::exists(out + "/checkpoint.json")) << "no checkpoint before the kill";
  // The checkpoint left behind is valid: two processes resume from it.
  const auto resumed = run_command(mpirun(2) + cmd + " --resume --out " + out);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(weights_of(out + "/weights.h5", "damping"), weights_of(reference + "/weights.h5", "damping"));
  EXPECT_EQ(losses_of(out), losses_of(reference));
}

TEST(MpiFailures, SigtermToEveryRankKeepsTheBestResultWithOneNotice) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  const std::string out = fresh_dir("mpi_sigterm");
  // What a scheduler does at the time limit: SIGTERM to every process of
  // the job (here the three ranks, found by their --out).
  const std::string term = "(for i in $(seq 600); do [ -f " + out + "/checkpoint.json ] && break; sleep 0.05; done; sleep 0.5; "
                           "pkill -TERM -f '^" +
                           testing::app_path("train-augment") + ".*--out " + out + "')";
  const auto r = run_command("{ " + term + " & " + mpirun(3) + train_cmd(5000) + " --out " + out + "; }");
  ASSERT_EQ(r.exit_code, 130) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "interrupted");
  EXPECT_TRUE(std::filesystem::exists(out + "/weights.h5"));
  std::size_t notices = 0;
  for (std::size_t at = 0; (at = r.err.find("interrupt requested", at)) != std::string::npos; ++at) ++notices;
  EXPECT_EQ(notices, 1u) << r.err;
}

TEST(MpiFailures, AConfigErrorIsPrintedOnceWithExitCodeTwo) {
  NEURALSIM_SKIP_WITHOUT_MPI();
  const std::string out = fresh_dir("mpi_config_error");
  const auto r = run_command(mpirun(3) + testing::app_path("simid") +
                             " --config configs/simid_double_pendulum_lengths.yaml -q"
                             " --set estimate.basin_hopping.rounds=-1 --out " + out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = r.err.find("simid: error:", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << r.err;
  testing::expect_contains(r.err, {"estimate.basin_hopping.rounds", "-1"});
}

}  // namespace neuralsim
