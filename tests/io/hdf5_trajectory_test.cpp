#include "neuralsim/io/hdf5_trajectory.hpp"

#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/hdf5_attributes.hpp"
#include "common/python.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

constexpr Eigen::Index kT = 20;

// A per-test scratch directory, removed afterwards.
class Hdf5TrajectoryTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    H5::Exception::dontPrint();
  }

  std::string file(const std::string& name = "data.h5") const { return (dir_ / name).string(); }

};

RowMatrixXd random_matrix(std::mt19937& rng, Eigen::Index rows, Eigen::Index cols) {
  std::normal_distribution<double> dist(0.0, 3.0);
  RowMatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
  return m;
}

// Non-uniform, strictly increasing time stamps.
Eigen::VectorXd random_time(std::mt19937& rng, Eigen::Index n) {
  std::uniform_real_distribution<double> dt(1e-4, 1e-2);
  Eigen::VectorXd t(n);
  t[0] = 0.123456789;
  for (Eigen::Index i = 1; i < n; ++i) t[i] = t[i - 1] + dt(rng);
  return t;
}

Trajectory make_trajectory(std::mt19937& rng, Eigen::Index T, Eigen::Index nq, Eigen::Index nv,
                           bool tau, bool poses) {
  Trajectory tr;
  tr.time = random_time(rng, T);
  tr.q = random_matrix(rng, T, nq);
  tr.qd = random_matrix(rng, T, nv);
  if (tau) tr.tau = random_matrix(rng, T, nv);
  if (poses) {
    tr.link_poses["ee"] = random_matrix(rng, T, 7);
    tr.link_poses["base link"] = random_matrix(rng, T, 7);
  }
  return tr;
}

TrajectorySet make_set(size_t n, Eigen::Index T = kT, bool tau = true, bool poses = true) {
  std::mt19937 rng(42);
  TrajectorySet set;
  set.meta.model = "double_pendulum";
  set.meta.joint_names = {"joint1", "joint2"};
  set.meta.q_names = {"joint1", "joint2"};
  set.meta.generator = "hdf5_trajectory_test";
  set.meta.parameters_json = R"({"mass": [1.5, 2.0], "note": "µ-test"})";
  set.meta.seed = 1234567890123LL;
  for (size_t i = 0; i < n; ++i)
    set.trajectories.push_back(make_trajectory(rng, T, 2, 2, tau, poses));
  return set;
}

bool same_bits(const double* a, const double* b, Eigen::Index n) {
  return n == 0 || std::memcmp(a, b, static_cast<size_t>(n) * sizeof(double)) == 0;
}

void expect_identical(const RowMatrixXd& a, const RowMatrixXd& b, const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  EXPECT_TRUE(same_bits(a.data(), b.data(), a.size())) << what;
}

void expect_identical(const Trajectory& a, const Trajectory& b) {
  ASSERT_EQ(a.time.size(), b.time.size()) << a.name;
  EXPECT_TRUE(same_bits(a.time.data(), b.time.data(), a.time.size())) << a.name;
  expect_identical(a.q, b.q, a.name + "/q");
  expect_identical(a.qd, b.qd, a.name + "/qd");
  expect_identical(a.tau, b.tau, a.name + "/tau");
  ASSERT_EQ(a.link_poses.size(), b.link_poses.size()) << a.name;
  for (const auto& [link, pose] : a.link_poses) {
    ASSERT_EQ(b.link_poses.count(link), 1u) << link;
    expect_identical(pose, b.link_poses.at(link), a.name + "/" + link);
  }
}

std::string data_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a DataError";
  return "";
}

// An output that cannot be written is reported like a bad --out (exit 2).
std::string output_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

using testing::expect_contains;

// ---- raw HDF5 edits for the bad-file cases

void replace_dataset(const std::string& path, const std::string& name, const RowMatrixXd& m,
                     int rank = 2) {
  H5::H5File f(path, H5F_ACC_RDWR);
  if (f.nameExists(name)) f.unlink(name);
  const hsize_t dims[2] = {static_cast<hsize_t>(m.rows()), static_cast<hsize_t>(m.cols())};
  H5::DataSet ds = f.createDataSet(name, H5::PredType::IEEE_F64LE, H5::DataSpace(rank, dims));
  if (m.size() > 0) ds.write(m.data(), H5::PredType::NATIVE_DOUBLE);
}

void remove_object(const std::string& path, const std::string& name) {
  H5::H5File f(path, H5F_ACC_RDWR);
  f.unlink(name);
}

RowMatrixXd read_raw(const std::string& path, const std::string& name) {
  H5::H5File f(path, H5F_ACC_RDONLY);
  H5::DataSet ds = f.openDataSet(name);
  hsize_t dims[2] = {1, 1};
  ds.getSpace().getSimpleExtentDims(dims);
  const int rank = ds.getSpace().getSimpleExtentNdims();
  RowMatrixXd m(static_cast<Eigen::Index>(dims[0]),
                rank == 2 ? static_cast<Eigen::Index>(dims[1]) : 1);
  ds.read(m.data(), H5::PredType::NATIVE_DOUBLE);
  return m;
}

// ---------------------------------------------------------------- round trip

TEST_F(Hdf5TrajectoryTest, RoundTripPreservesEveryFieldBitForBit) {
  TrajectorySet set = make_set(12);
  // Names whose lexicographic order differs from the stored order.
  for (size_t i = 0; i < set.trajectories.size(); ++i) {
    set.trajectories[i].name = "run_" + std::to_string(i);
  }
  // A long trajectory takes the chunked + gzip path; odd values test exactness.
  std::mt19937 rng(7);
  set.trajectories[3] = make_trajectory(rng, 3000, 2, 2, true, true);
  set.trajectories[3].name = "run_3";
  set.trajectories[3].q(0, 0) = -0.0;
  set.trajectories[3].q(1, 0) = std::numeric_limits<double>::denorm_min();
  set.trajectories[3].q(2, 1) = std::numeric_limits<double>::max();
  set.trajectories[5].tau.resize(0, 0);  // tau is optional per trajectory
  set.trajectories[6].link_poses.clear();

  write_trajectories(file(), set);
  const TrajectorySet back = read_trajectories(file());

  EXPECT_EQ(back.meta.model, set.meta.model);
  EXPECT_EQ(back.meta.joint_names, set.meta.joint_names);
  EXPECT_EQ(back.meta.q_names, set.meta.q_names);
  EXPECT_EQ(back.meta.units, set.meta.units);
  EXPECT_EQ(back.meta.generator, set.meta.generator);
  EXPECT_EQ(back.meta.parameters_json, set.meta.parameters_json);
  EXPECT_EQ(back.meta.seed, set.meta.seed);
  ASSERT_EQ(back.trajectories.size(), set.trajectories.size());
  for (size_t i = 0; i < set.trajectories.size(); ++i) {
    EXPECT_EQ(back.trajectories[i].name, set.trajectories[i].name);
    expect_identical(set.trajectories[i], back.trajectories[i]);
  }
  EXPECT_TRUE(std::signbit(back.trajectories[3].q(0, 0)));
}

TEST_F(Hdf5TrajectoryTest, UnnamedTrajectoriesGetZeroPaddedNamesInOrder) {
  TrajectorySet set = make_set(11, 5, false, false);
  set.meta.joint_names.clear();
  set.meta.q_names.clear();
  set.meta.seed = -1;
  write_trajectories(file(), set);
  const TrajectorySet back = read_trajectories(file());
  ASSERT_EQ(back.trajectories.size(), 11u);
  EXPECT_EQ(back.trajectories[0].name, "000");
  EXPECT_EQ(back.trajectories[10].name, "010");
  EXPECT_TRUE(back.meta.joint_names.empty());
  EXPECT_EQ(back.meta.seed, -1);
  for (size_t i = 0; i < 11; ++i) {
    EXPECT_FALSE(back.trajectories[i].has_tau());
    expect_identical(set.trajectories[i], back.trajectories[i]);
  }
}

// ---------------------------------------------------------------- atomic write

TEST_F(Hdf5TrajectoryTest, AtomicWriteLeavesOnlyTheTargetFile) {
  write_trajectories(file(), make_set(2));
  write_trajectories(file(), make_set(3));  // overwrite in place
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir_))
    entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{"data.h5"});
  EXPECT_EQ(read_trajectories(file()).trajectories.size(), 3u);
}

TEST_F(Hdf5TrajectoryTest, WritingIntoMissingDirectoryThrowsAndCreatesNothing) {
  const fs::path missing = dir_ / "no" / "such" / "dir";
  const std::string msg =
      output_error([&] { write_trajectories((missing / "out.h5").string(), make_set(1)); });
  expect_contains(msg, {"out.h5", "does not exist"});
  EXPECT_FALSE(fs::exists(dir_ / "no"));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Hdf5TrajectoryTest, FailedWriteKeepsTheOldFileIntact) {
  const TrajectorySet good = make_set(2);
  write_trajectories(file(), good);
  TrajectorySet bad = make_set(2);
  bad.trajectories[1].q(4, 0) = std::nan("");
  const std::string msg = data_error([&] { write_trajectories(file(), bad); });
  expect_contains(msg, {"data.h5:/trajectories/001/q", "row 4, column 0"});
  const TrajectorySet back = read_trajectories(file());
  ASSERT_EQ(back.trajectories.size(), 2u);
  expect_identical(good.trajectories[1], back.trajectories[1]);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(Hdf5TrajectoryTest, FailedRenameRemovesTheTemporaryFile) {
  // A non-empty directory at the target path makes rename() fail after the
  // temporary file was fully written.
  fs::create_directories(dir_ / "data.h5" / "keep");
  const std::string msg = output_error([&] { write_trajectories(file(), make_set(1)); });
  expect_contains(msg, {"data.h5: cannot write: ", "Is a directory"});
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir_))
    entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{"data.h5"});
}

TEST_F(Hdf5TrajectoryTest, DuplicateTrajectoryNamesAreRejected) {
  TrajectorySet set = make_set(2);
  set.trajectories[0].name = set.trajectories[1].name = "same";
  expect_contains(data_error([&] { write_trajectories(file(), set); }),
                  {"/trajectories/same", "duplicate"});
  EXPECT_TRUE(fs::is_empty(dir_));
}

// ---------------------------------------------------------------- bad files

TEST_F(Hdf5TrajectoryTest, MissingFile) {
  expect_contains(data_error([&] { read_trajectories(file("absent.h5")); }),
                  {"absent.h5", "does not exist"});
}

TEST_F(Hdf5TrajectoryTest, NotAnHdf5File) {
  std::ofstream(file("text.h5")) << "time,q\n0,1\n";
  expect_contains(data_error([&] { read_trajectories(file("text.h5")); }),
                  {"text.h5", "not an HDF5 file"});
}

TEST_F(Hdf5TrajectoryTest, WrongFormatAttribute) {
  { H5::H5File f(file(), H5F_ACC_TRUNC); }
  expect_contains(data_error([&] { read_trajectories(file()); }), {"data.h5:/format", "missing"});
}

TEST_F(Hdf5TrajectoryTest, MissingTrajectoriesGroup) {
  write_trajectories(file(), make_set(1));
  remove_object(file(), "/trajectories");
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories", "group missing"});
}

TEST_F(Hdf5TrajectoryTest, EmptyTrajectoriesGroup) {
  write_trajectories(file(), make_set(1));
  remove_object(file(), "/trajectories/000");
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories", "no trajectories", "got 0"});
}

TEST_F(Hdf5TrajectoryTest, TrajectoryWithZeroSamples) {
  write_trajectories(file(), make_set(2, kT, false, false));
  replace_dataset(file(), "/trajectories/001/time", RowMatrixXd(0, 1), 1);
  replace_dataset(file(), "/trajectories/001/q", RowMatrixXd(0, 2));
  replace_dataset(file(), "/trajectories/001/qd", RowMatrixXd(0, 2));
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/001/time", "zero samples", "got (0)"});
}

TEST_F(Hdf5TrajectoryTest, MissingRequiredDatasets) {
  for (const std::string name : {"time", "q", "qd"}) {
    write_trajectories(file(), make_set(2));
    remove_object(file(), "/trajectories/001/" + name);
    expect_contains(
        data_error([&] { read_trajectories(file()); }),
        {"data.h5:/trajectories/001/" + name + ": dataset missing", "expected shape (T"});
  }
}

TEST_F(Hdf5TrajectoryTest, RowCountMismatch) {
  write_trajectories(file(), make_set(2));
  replace_dataset(file(), "/trajectories/001/q", RowMatrixXd::Ones(kT - 1, 2));
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/001/q", "expected shape (T=20, nq=2), got (19, 2)"});
}

TEST_F(Hdf5TrajectoryTest, ColumnCountMismatch) {
  write_trajectories(file(), make_set(2));
  replace_dataset(file(), "/trajectories/001/qd", RowMatrixXd::Ones(kT, 3));
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/001/qd", "expected shape (T=20, nv=2), got (20, 3)"});
}

TEST_F(Hdf5TrajectoryTest, TauShapeMismatch) {
  write_trajectories(file(), make_set(1));
  replace_dataset(file(), "/trajectories/000/tau", RowMatrixXd::Ones(kT, 1));
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/000/tau", "expected shape (T=20, nv=2), got (20, 1)"});
}

TEST_F(Hdf5TrajectoryTest, WrongRank) {
  write_trajectories(file(), make_set(1));
  replace_dataset(file(), "/trajectories/000/time", RowMatrixXd::Ones(kT, 1), 2);
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/000/time", "expected shape (T), got (20, 1)"});
}

TEST_F(Hdf5TrajectoryTest, NonFiniteValueNamesRowAndColumn) {
  write_trajectories(file(), make_set(2));
  RowMatrixXd q = read_raw(file(), "/trajectories/001/q");
  q(7, 1) = std::numeric_limits<double>::infinity();
  replace_dataset(file(), "/trajectories/001/q", q);
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/001/q", "non-finite value inf at row 7, column 1"});
}

TEST_F(Hdf5TrajectoryTest, TimeNotStrictlyIncreasing) {
  write_trajectories(file(), make_set(1));
  RowMatrixXd t = read_raw(file(), "/trajectories/000/time");
  t(5, 0) = t(4, 0);
  replace_dataset(file(), "/trajectories/000/time", t, 1);
  expect_contains(data_error([&] { read_trajectories(file()); }),
                  {"data.h5:/trajectories/000/time", "not strictly increasing at index 5"});
}

TEST_F(Hdf5TrajectoryTest, LinkPoseMustHaveSevenColumns) {
  write_trajectories(file(), make_set(1));
  replace_dataset(file(), "/trajectories/000/link_poses/ee", RowMatrixXd::Zero(kT, 6));
  expect_contains(
      data_error([&] { read_trajectories(file()); }),
      {"data.h5:/trajectories/000/link_poses/ee", "expected shape (T=20, 7), got (20, 6)"});
}

// ---------------------------------------------------------------- expectations

TEST_F(Hdf5TrajectoryTest, ExpectationsJointNamesListBoth) {
  TrajectoryExpectations expect;
  expect.joint_names = {"shoulder", "elbow"};
  expect_contains(data_error([&] { validate_trajectories(make_set(1), expect, "data.h5"); }),
                  {"data.h5:/joint_names", "[shoulder, elbow]", "[joint1, joint2]"});
}

TEST_F(Hdf5TrajectoryTest, ExpectationsDimensions) {
  TrajectoryExpectations expect;
  expect.nq = 3;
  expect_contains(data_error([&] { validate_trajectories(make_set(1), expect, "data.h5"); }),
                  {"data.h5:/q_names", "expected shape (nq=3), got (2)"});
  TrajectorySet set = make_set(1);
  set.meta.q_names.clear();
  set.meta.joint_names.clear();
  expect.nq = -1;
  expect.nv = 1;
  expect_contains(data_error([&] { validate_trajectories(set, expect, "data.h5"); }),
                  {"data.h5:/trajectories/000/qd", "expected shape (T=20, nv=1), got (20, 2)"});
}

TEST_F(Hdf5TrajectoryTest, ExpectationsRequireTauAndLinkPoses) {
  TrajectoryExpectations expect;
  expect.require_tau = true;
  expect_contains(
      data_error([&] { validate_trajectories(make_set(1, kT, false), expect, "data.h5"); }),
      {"data.h5:/trajectories/000/tau", "required but absent", "(T=20, nv=2)"});
  expect.require_tau = false;
  expect.required_link_poses = {"ee", "wrist"};
  expect_contains(data_error([&] { validate_trajectories(make_set(1), expect, "data.h5"); }),
                  {"data.h5:/trajectories/000/link_poses/wrist", "missing", "(T=20, 7)"});
}

TEST_F(Hdf5TrajectoryTest, ExpectationsModel) {
  TrajectoryExpectations expect;
  expect.model = "configs/models/double_pendulum.yaml";
  EXPECT_NO_THROW(validate_trajectories(make_set(1), expect, "data.h5"));
  expect.model = "cartpole";
  expect_contains(data_error([&] { validate_trajectories(make_set(1), expect, "data.h5"); }),
                  {"data.h5:/model", "'cartpole'", "'double_pendulum'"});
}

TEST_F(Hdf5TrajectoryTest, EmptySetIsRejected) {
  expect_contains(data_error([&] { validate_trajectories(TrajectorySet{}, {}, "data.h5"); }),
                  {"data.h5:/trajectories", "no trajectories"});
}

// Found by the fuzzer: a 4 KiB file whose variable-length string attribute
// declares a length of gigabytes. HDF5 allocates and fills the declared
// length before reading it (12 GB here), so the read must fail instead.
TEST_F(Hdf5TrajectoryTest, CorruptStringLengthIsAnErrorNotAnAllocation) {
  const fs::path crash = fs::path(testing::source_path("fuzz")) / "crashes" / "hdf5_trajectories" /
                         "oom-251b33774fe074827207b7f734e08a59dea673a0";
  ASSERT_TRUE(fs::exists(crash));
  const std::string copy = file();
  fs::copy_file(crash, copy);
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  expect_contains(data_error([&] { (void)read_trajectories(copy); }), {copy + ":/"});
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 1L << 20) << "peak RSS grew by more than 1 GiB (KiB units)";
}

// A free-space object of size 0 in a global heap collection makes HDF5
// 1.10's decoder loop forever (fuzzer input). The reader refuses the file
// before HDF5 reads it. Run in a child with an alarm, so that a regression
// fails in seconds instead of hanging the suite.
TEST_F(Hdf5TrajectoryTest, ZeroSizeGlobalHeapObjectIsAnErrorNotAHang) {
  const fs::path hang = fs::path(testing::source_path("fuzz")) / "crashes" / "hdf5_trajectories" /
                        "timeout-924f3130e9338ee95a565a588135ebff6f8c746a";
  ASSERT_TRUE(fs::exists(hang));
  const std::string copy = file();
  fs::copy_file(hang, copy);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(20);
        try {
          (void)read_trajectories(copy);
        } catch (const neuralsim::DataError& e) {
          const std::string what = e.what();
          std::fprintf(stderr, "%s\n", what.c_str());
          _exit(what.find(copy + ":/: corrupt global heap collection at byte 2048") == 0 ? 0 : 1);
        }
        _exit(2);
      },
      ::testing::ExitedWithCode(0), "corrupt global heap");
}

// Found by the fuzzer: a variable-length string attribute whose heap ID names
// an object its global heap collection does not hold. HDF5 1.10's H5HG_read
// indexes its object table with it unchecked (SEGV). The reader must refuse
// the file with a DataError. Run in a child, so that a regression fails the
// test instead of killing the suite.
void expect_dangling_reference_refused(const std::string& path) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(20);
        try {
          (void)read_trajectories(path);
        } catch (const neuralsim::DataError& e) {
          const std::string what = e.what();
          std::fprintf(stderr, "%s\n", what.c_str());
          const bool named = what.rfind(path + ":/", 0) == 0;
          _exit(named && what.find(": corrupt file: string ") != std::string::npos ? 0 : 1);
        }
        _exit(2);
      },
      ::testing::ExitedWithCode(0), "of the global heap at address");
}

TEST_F(Hdf5TrajectoryTest, DanglingHeapReferenceIsAnErrorNotACrash) {
  const fs::path crash = fs::path(testing::source_path("fuzz")) / "crashes" / "hdf5_trajectories" /
                         "crash-9620b9cb34891f8a076fb02c407eef58aa63c8a0";
  ASSERT_TRUE(fs::exists(crash));
  const std::string copy = file();
  fs::copy_file(crash, copy);
  expect_dangling_reference_refused(copy);
}

// The same defect made by hand: in a file this library wrote, the heap IDs
// of the first collection (a short length, the collection's address, an
// index it holds) get an object index the collection lacks.
TEST_F(Hdf5TrajectoryTest, HandMadeDanglingHeapReferenceIsRefused) {
  write_trajectories(file(), make_set(3));
  std::string bytes;
  {
    std::ifstream in(file(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t gcol = bytes.find("GCOL");
  ASSERT_NE(gcol, std::string::npos) << "expected variable-length strings in a global heap";
  const unsigned long long size = [&] {
    unsigned long long v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[gcol + 8 + i]);
    return v;
  }();
  std::string address(8, '\0');
  for (int i = 0; i < 8; ++i) address[i] = static_cast<char>((gcol >> (8 * i)) & 0xff);
  int patched = 0;
  auto u32 = [&](size_t at) {
    unsigned long v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  for (size_t at = bytes.find(address); at != std::string::npos; at = bytes.find(address, at + 1)) {
    if ((at >= gcol && at < gcol + size) || at < 4 || at + 12 > bytes.size()) continue;
    const unsigned long length = u32(at - 4), index = u32(at + 8);
    if (length == 0 || length > 64 || index == 0 || index > 64) continue;  // not a heap ID of a name
    for (int i = 0; i < 4; ++i) bytes[at + 8 + i] = static_cast<char>(0x7f);
    ++patched;
  }
  ASSERT_GT(patched, 0);
  std::ofstream(file(), std::ios::binary | std::ios::trunc) << bytes;
  expect_dangling_reference_refused(file());
}

// ---------------------------------------------------------------- h5py

using testing::h5py_available;

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  ::pclose(pipe);
  return out;
}

TEST_F(Hdf5TrajectoryTest, H5pyReadsTheFileWithoutCustomCode) {
  NEURALSIM_SKIP_WITHOUT_ORACLE(h5py_available(), "python3 with h5py not available");
  const TrajectorySet set = make_set(2);
  write_trajectories(file(), set);
  const std::string script = dir_ / "read.py";
  std::ofstream(script) << R"(import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = f.attrs
    t = f["trajectories/001"]
    print(a["format"], int(a["format_version"]), a["model"], ",".join(a["joint_names"]),
          int(a["seed"]), sorted(f["trajectories"].keys()), int(t.attrs["index"]),
          t["time"].shape, t["q"].shape, t["qd"].shape, t["tau"].shape,
          t["link_poses/ee"].shape, "%.17g" % t["q"][3, 1])
)";
  const std::string out = run("'" + neuralsim::python_interpreter() + "' " + script + " " + file() + " 2>&1");
  const std::string expected_prefix =
      "neuralsim-trajectories 1 double_pendulum joint1,joint2 1234567890123 ['000', '001'] 1 "
      "(20,) (20, 2) (20, 2) (20, 2) (20, 7) ";
  ASSERT_EQ(out.substr(0, expected_prefix.size()), expected_prefix) << out;
  EXPECT_EQ(std::strtod(out.c_str() + expected_prefix.size(), nullptr),
            set.trajectories[1].q(3, 1));
}

// The "writing from Python" example of docs/data-format.md.
TEST_F(Hdf5TrajectoryTest, ReadsAFileWrittenWithH5py) {
  NEURALSIM_SKIP_WITHOUT_ORACLE(h5py_available(), "python3 with h5py not available");
  const std::string script = dir_ / "write.py";
  std::ofstream(script) << R"(import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["format"] = "neuralsim-trajectories"
    f.attrs["format_version"] = np.int64(1)
    f.attrs["model"] = "pendulum"
    f.attrs["joint_names"] = ["joint1"]
    g = f.create_group("trajectories/000")
    g.attrs["index"] = np.int64(0)
    g["time"] = np.linspace(0.0, 1.0, 101)
    g["q"] = np.zeros((101, 1))
    g["qd"] = np.zeros((101, 1))
)";
  ASSERT_EQ(run("'" + neuralsim::python_interpreter() + "' " + script + " " + file() + " 2>&1"), "");
  const TrajectorySet set = read_trajectories(file());
  EXPECT_EQ(set.meta.model, "pendulum");
  EXPECT_EQ(set.meta.joint_names, std::vector<std::string>{"joint1"});
  ASSERT_EQ(set.trajectories.size(), 1u);
  EXPECT_EQ(set.trajectories[0].size(), 101);
  EXPECT_EQ(set.trajectories[0].time[100], 1.0);
}

}  // namespace
}  // namespace neuralsim
