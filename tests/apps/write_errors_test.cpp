// Outputs that cannot be written, through the real CLIs: a full disk, an
// I/O error, a quota, a read-only or forbidden --out, met by the first
// file, an HDF5 file, a checkpoint in the middle of a run or summary.json,
// and reported by write, fsync or close. The tools run under the
// write-failure shim (tests/support/fail_writes.cpp, LD_PRELOAD: CI may not
// allow mounting a small file system, and runs as root, whom chmod does
// not stop). Every case asserts exit 2 (no signal, no HDF5 error stack),
// one line naming the file and the operating system's reason, and no
// temporary file left in --out; a resumable tool's previous checkpoint
// still resumes, to the uninterrupted run's result and with every key of
// its summary.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "neuralsim/io/network_file.hpp"
#include "common/python.hpp"
#include "neuralsim/io/parameter_file.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace write_errors {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using testing::read_json;
using testing::read_text;
using testing::run_command;
using testing::write_file;

// What the shim makes fail (tests/support/fail_writes.cpp).
struct Failure {
  Failure(std::string error = "ENOSPC", std::string match = "", long long after = 0, std::string on = "write")
      : error(std::move(error)), match(std::move(match)), after(after), on(std::move(on)) {}
  std::string error;  // ENOSPC, EIO, EDQUOT, EROFS, EACCES
  std::string match;  // only files whose name contains this
  long long after;    // bytes that may still be written
  std::string on;     // write, fsync or close
};

// The environment that runs a command under the shim, for files below `dir`.
std::string under_shim(const std::string& dir, const Failure& f) {
  return "NEURALSIM_FAIL_WRITES_DIR='" + dir + "' NEURALSIM_FAIL_WRITES_ERRNO=" + f.error +
         " NEURALSIM_FAIL_WRITES_MATCH='" + f.match + "' NEURALSIM_FAIL_WRITES_AFTER=" + std::to_string(f.after) +
         " NEURALSIM_FAIL_WRITES_ON=" + f.on +
         // A sanitized tool must accept a library preloaded before its runtime.
         " ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" LD_PRELOAD='" NEURALSIM_FAIL_WRITES_LIB "' ";
}

// ---- small runs of every tool, their files in the case directory ----

void rollout_files(const std::string& dir) {
  write_file(dir + "/rollout.yaml",
             "model:\n  generator: double_pendulum\n  lengths: [1, 1]\n  masses: [1, 1]\n"
             "sim: {integrator: rk4, dt: 0.01, duration: 0.5}\n"
             "initial_states: {count: 2, q_low: [-0.5, -0.5], q_high: [0.5, 0.5]}\ncontrols: {type: zero}\n");
}
const char* kRollout = " --config {dir}/rollout.yaml";

void import_files(const std::string& dir) {
  write_file(dir + "/import.yaml",
             "csv_import:\n  files: [log.csv]\n  time: t\n  model: m\n  joint_names: [a]\n  q: [x]\n  qd: [y]\n");
  std::string csv = "t,x,y\n";
  for (int k = 0; k < 200; ++k) csv += std::to_string(0.01 * k) + "," + std::to_string(0.001 * k) + ",0.1\n";
  write_file(dir + "/log.csv", csv);
}
const char* kImport = " --config {dir}/import.yaml";

const char* kSimid =
    " --config configs/simid_double_pendulum_lengths.yaml --set output.plot=false --set estimate.basin_hopping.rounds=3"
    " --set estimate.basin_hopping.population=1 --set estimate.solver.max_iterations=2 --set data.max_samples=50";

// train-augment and discover name their model and data relative to the config.
void training_files(const std::string& dir) {
  fs::copy_file(testing::source_path("configs/models/pendulum.yaml"), dir + "/pendulum.yaml");
  fs::copy_file(testing::source_path("datasets/pendulum_pd.h5"), dir + "/pendulum_pd.h5");
  const std::string common = "model: {file: pendulum.yaml}\nsim: {integrator: semi_implicit_euler, dt: 0.002}\n"
                             "output: {plot: false}\n";
  write_file(dir + "/train.yaml",
             common +
                 "augment:\n  - {name: damping, site: joint.joint1.torque, inputs: [joint.joint1.qd], hidden: [4]}\n"
                 "data: {train: pendulum_pd.h5, validation_fraction: 0.25}\n"
                 "train: {mode: unrolled, window_steps: 5, epochs: 4, batch_size: 8, train_samples: 100}\n");
  write_file(dir + "/discover.yaml",
             common +
                 "data: {train: pendulum_pd.h5, validation: pendulum_pd.h5}\n"
                 "train: {mode: unrolled, window_steps: 5, batch_size: 8, train_samples: 100}\n"
                 "discover:\n  sites: [joint.*.torque]\n  inputs: [joint.joint1.q, joint.joint1.qd]\n"
                 "  penalty: {points: 3}\n  epochs: {dense: 4, per_point: 2, refit: 2}\n"
                 "  stability: {seeds: 1, bootstrap: 0}\n  retrain: {epochs: 0}\n");
}
const char* kTrain = " --config {dir}/train.yaml";
const char* kDiscover = " --config {dir}/discover.yaml";

const char* kDistill =
    " --config configs/distill_double_integrator.yaml --set output.plot=false --set distill.data.episodes=4"
    " --set distill.data.duration=2 --set distill.network.hidden=[8] --set distill.train.epochs=4"
    " --set distill.evaluate.episodes=1 --set distill.evaluate.duration=2";

std::string expand(std::string s, const std::string& dir) {
  for (size_t p = s.find("{dir}"); p != std::string::npos; p = s.find("{dir}")) s.replace(p, 5, dir);
  return s;
}

std::string tool(const std::string& app, const std::string& args, const std::string& dir, const std::string& out) {
  return testing::app_path(app) + expand(args, dir) + " -q --threads 1 --out " + out;
}

std::vector<std::string> temp_files(const std::string& out) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) found.push_back(name);
  }
  return found;
}

// The one error line of a failed write of `file`, and a clean --out.
void expect_write_error(const testing::CommandResult& r, const std::string& app, const std::string& file,
                        const std::string& reason, const std::string& out) {
  EXPECT_EQ(r.exit_code, 2) << r.err;  // a crash is 128 + the signal
  EXPECT_EQ(r.err, app + ": error: " + file + ": cannot write: " + reason + "\n");
  EXPECT_EQ(temp_files(out), std::vector<std::string>{});
}

struct Case {
  std::string name;
  std::string app;
  std::string args;  // {dir}: the case directory
  std::function<void(const std::string&)> files;
  Failure failure;
  std::string file;    // the file the error names, in --out
  std::string reason;  // strerror
  bool out_exists = false;  // --out made before the run (a read-only or forbidden directory)
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class WriteError : public ::testing::TestWithParam<Case> {};

TEST_P(WriteError, IsOneLineWithExitCodeTwoAndLeavesNoTempFile) {
  const Case& c = GetParam();
  const std::string dir = fresh_dir("write_error_" + c.name);
  if (c.files) c.files(dir);
  const std::string out = dir + "/out";
  if (c.out_exists) fs::create_directories(out);
  const auto r = run_command(under_shim(out, c.failure) + tool(c.app, c.args, dir, out));
  expect_write_error(r, c.app, out + "/" + c.file, c.reason, out);
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  if (c.file == ".neuralsim-run.json") {
    // Nothing could be written: nothing is left (the directory only if it was there before).
    EXPECT_EQ(fs::exists(out), c.out_exists);
  } else if (fs::exists(out)) {
    // Outputs of an unfinished run: the marker says so (the next run needs --force or --resume).
    EXPECT_TRUE(fs::exists(out + "/.neuralsim-run.json"));
  }  // else the run's first output failed: like any run that wrote nothing, no trace
}

const char* kFull = "No space left on device";

INSTANTIATE_TEST_SUITE_P(
    Tools, WriteError,
    ::testing::Values(
        // The first file (the run marker): the disk was full from the start.
        Case{"rollout_first_file", "rollout", kRollout, rollout_files, {}, ".neuralsim-run.json", kFull},
        Case{"import_first_file", "import-csv", kImport, import_files, {"EIO"}, ".neuralsim-run.json",
             "Input/output error"},
        // HDF5 files, cut short in the middle (the shim's partial write, then the error).
        Case{"rollout_trajectories", "rollout", kRollout, rollout_files, {"ENOSPC", "trajectories.h5", 3000},
             "trajectories.h5", kFull},
        Case{"import_trajectories", "import-csv", kImport, import_files, {"ENOSPC", "trajectories.h5", 1000},
             "trajectories.h5", kFull},
        Case{"simid_fit", "simid", kSimid, nullptr, {"EIO", "fit.h5", 2000}, "fit.h5", "Input/output error"},
        Case{"train_augment_weights", "train-augment", kTrain, training_files, {"ENOSPC", "weights.h5", 1500},
             "weights.h5", kFull},
        Case{"distill_dataset", "distill-mpc", kDistill, nullptr, {"ENOSPC", "dataset.h5", 2000}, "dataset.h5", kFull},
        Case{"discover_discovery", "discover", kDiscover, training_files, {"EDQUOT", "discovery.json", 100},
             "discovery.json", "Disk quota exceeded"},
        // The last file: summary.json.
        Case{"rollout_summary", "rollout", kRollout, rollout_files, {"ENOSPC", "summary.json"}, "summary.json", kFull},
        Case{"train_augment_summary", "train-augment", kTrain, training_files, {"ENOSPC", "summary.json", 500},
             "summary.json", kFull},
        Case{"distill_summary", "distill-mpc", kDistill, nullptr, {"EDQUOT", "summary.json"}, "summary.json",
             "Disk quota exceeded"},
        // Reported only when the data reaches the disk: at fsync, at close.
        Case{"rollout_fsync", "rollout", kRollout, rollout_files, {"EIO", "trajectories.h5", 3000, "fsync"},
             "trajectories.h5", "Input/output error"},
        Case{"import_close", "import-csv", kImport, import_files, {"ENOSPC", "summary.json", 10, "close"},
             "summary.json", kFull},
        // A read-only or forbidden --out.
        Case{"rollout_read_only_out", "rollout", kRollout, rollout_files, {"EROFS"}, ".neuralsim-run.json",
             "Read-only file system", true},
        Case{"train_augment_forbidden_out", "train-augment", kTrain, training_files, {"EACCES"}, ".neuralsim-run.json",
             "Permission denied", true}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(WriteError, ACreatedOutDirectoryThatCannotBeCreatedIsOneLine) {
  const std::string dir = fresh_dir("write_error_mkdir");
  rollout_files(dir);
  const std::string out = dir + "/no/such/out";
  const auto r = run_command(under_shim(dir + "/no", {"EROFS"}) + tool("rollout", kRollout, dir, out));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  testing::expect_contains(r.err, {"rollout: error: ", dir + "/no/such", "Read-only file system"});
  EXPECT_FALSE(fs::exists(dir + "/no/such"));
}

// A plot's PNG comes from the plot script's standard output and is written
// like every other output (python.hpp).
TEST(WriteError, APlotIsWrittenLikeEveryOutput) {
  const std::string python = python_interpreter();
  // matplotlib is optional (scripts/test.sh does not install it): no plot, no test.
  if (std::system(("'" + python + "' -c 'import matplotlib' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "matplotlib not installed for " << python;
  const std::string dir = fresh_dir("write_error_plot");
  training_files(dir);
  const std::string out = dir + "/out";
  const auto r = run_command(under_shim(out, {"ENOSPC", "loss.png", 1000}) + tool("train-augment", kTrain, dir, out) +
                             " --set output.plot=true");
  expect_write_error(r, "train-augment", out + "/loss.png", kFull, out);
  EXPECT_TRUE(fs::exists(out + "/weights.h5"));  // written before the plot
}

// ---- a full disk at a checkpoint in the middle of a run ----

// Key paths of a JSON document ("metrics.training.best_epoch"; list items as "[]").
void key_paths(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
      out.insert(key);
      key_paths(it.value(), key, out);
    }
  } else if (j.is_array()) {
    for (const auto& item : j) key_paths(item, prefix + "[]", out);
  }
}
std::set<std::string> summary_keys(const std::string& out) {
  std::set<std::string> keys;
  key_paths(read_json(out + "/summary.json"), "", keys);
  return keys;
}
// The keys of one summary that the other lacks ("-" missing in `a`, "+" only in `a`).
std::vector<std::string> key_difference(const std::string& a, const std::string& b) {
  const std::set<std::string> ka = summary_keys(a), kb = summary_keys(b);
  std::vector<std::string> diff;
  for (const std::string& k : kb)
    if (!ka.count(k)) diff.push_back("-" + k);
  for (const std::string& k : ka)
    if (!kb.count(k)) diff.push_back("+" + k);
  return diff;
}

std::vector<double> all_weights(const std::string& file) {
  std::vector<double> w;
  for (const NamedNetwork& net : read_networks(file))
    w.insert(w.end(), net.network.parameters(), net.network.parameters() + net.network.num_parameters());
  return w;
}

struct ResumeCase {
  std::string name;
  std::string app;
  std::string args;
  std::function<void(const std::string&)> files;
  // The run's result, to compare with the uninterrupted run's.
  std::function<std::string(const std::string& out)> result;
};
void PrintTo(const ResumeCase& c, std::ostream* os) { *os << c.name; }

class FullDiskAtACheckpoint : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(FullDiskAtACheckpoint, KeepsThePreviousOneWhichResumesToTheUninterruptedResult) {
  const ResumeCase& c = GetParam();
  const std::string dir = fresh_dir("full_disk_checkpoint_" + c.name);
  if (c.files) c.files(dir);
  const std::string reference = dir + "/reference", out = dir + "/out";
  const auto ref = run_command(tool(c.app, c.args, dir, reference));
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  // As many bytes as the last checkpoint: the first checkpoint fits, and
  // with the second the run has written more than that.
  const long long last = static_cast<long long>(fs::file_size(reference + "/checkpoint.json"));
  const auto full = run_command(under_shim(out, {"ENOSPC", "checkpoint.json", last}) + tool(c.app, c.args, dir, out));
  expect_write_error(full, c.app, out + "/checkpoint.json", kFull, out);
  ASSERT_TRUE(fs::exists(out + "/checkpoint.json"));
  EXPECT_NO_THROW(read_json(out + "/checkpoint.json"));
  EXPECT_LT(fs::file_size(out + "/checkpoint.json"), static_cast<uintmax_t>(last)) << "not stopped mid-run";

  const auto resumed = run_command(tool(c.app, c.args, dir, out) + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(c.result(out), c.result(reference));
  // A resumed run's summary holds every key of an uninterrupted one.
  EXPECT_EQ(key_difference(out, reference), std::vector<std::string>{});

  // A finished run whose summary is missing (killed just before it) resumes from its last checkpoint.
  fs::remove(reference + "/summary.json");
  const auto finished = run_command(tool(c.app, c.args, dir, reference) + " --resume");
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_EQ(c.result(reference), c.result(out));
  EXPECT_EQ(key_difference(reference, out), std::vector<std::string>{});
}

// Every bit of a double.
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a,", v);
  return buf;
}

std::string weights_text(const std::string& out) {
  std::string s;
  for (double w : all_weights(out + "/weights.h5")) s += exact(w);
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Tools, FullDiskAtACheckpoint,
    ::testing::Values(
        ResumeCase{"simid", "simid", kSimid, nullptr,
                   [](const std::string& out) {
                     std::string s;
                     for (const auto& [name, value] : read_parameter_file(out + "/params.json"))
                       s += name + "=" + exact(value);
                     return s;
                   }},
        ResumeCase{"train_augment", "train-augment", kTrain, training_files, weights_text},
        ResumeCase{"distill_mpc", "distill-mpc", kDistill, nullptr, weights_text},
        ResumeCase{"discover", "discover", kDiscover, training_files,
                   [](const std::string& out) { return read_text(out + "/discovery.json"); }}),
    [](const ::testing::TestParamInfo<ResumeCase>& info) { return info.param.name; });

}  // namespace
}  // namespace write_errors
}  // namespace neuralsim
