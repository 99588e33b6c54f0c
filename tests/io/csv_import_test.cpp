#include "neuralsim/io/csv_import.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = NEURALSIM_SHARED_DIR;
const fs::path kImportConfigs = fs::path(NEURALSIM_SOURCE_DIR) / "configs" / "import";
constexpr double kPi = 3.141592653589793;

// Data rows of a CSV file with a header line.
Eigen::Index data_rows(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  Eigen::Index n = 0;
  while (std::getline(in, line)) n += line.empty() ? 0 : 1;
  return n - 1;
}

std::vector<fs::path> csv_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".csv") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every CSV file becomes one trajectory named after it, with all its rows.
void expect_one_trajectory_per_file(const TrajectorySet& set, const std::vector<fs::path>& files) {
  ASSERT_EQ(set.trajectories.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(set.trajectories[i].name, files[i].stem().string());
    EXPECT_EQ(set.trajectories[i].size(), data_rows(files[i])) << files[i];
  }
}

// ---------------------------------------------------------------- real data

TEST(CsvImportRealData, MultiarmDoubleIsRelativeAndHangsDownAtZero) {
  NEURALSIM_SKIP_WITHOUT_SHARED("real-data/multiarm-pendulum/double");
  const fs::path dir = kShared / "real-data/multiarm-pendulum/double";
  const TrajectorySet train = import_csv((kImportConfigs / "multiarm_double_train.yaml").string());
  expect_one_trajectory_per_file(train, csv_files(dir, "train_"));
  EXPECT_EQ(train.meta.model, "double_pendulum");
  EXPECT_EQ(train.meta.joint_names, (std::vector<std::string>{"joint1", "joint2"}));

  // train_00.csv, first row: 0,2.61577504,3.5414161,7.83444198,-1.41045558
  const Trajectory& first = train.trajectories.front();
  EXPECT_EQ(first.time[0], 0.0);
  EXPECT_NEAR(first.q(0, 0), 2.61577504 - kPi, 1e-12);
  EXPECT_NEAR(first.q(0, 1), 3.5414161 - 2.61577504, 1e-12);  // relative
  EXPECT_NEAR(first.qd(0, 0), 7.83444198, 1e-12);
  EXPECT_NEAR(first.qd(0, 1), -1.41045558 - 7.83444198, 1e-12);
  EXPECT_NEAR(first.time[first.size() - 1], 2.666, 1e-12);

  // At the end of the free swing (last validation file, amplitude ~0.3 rad)
  // the arms oscillate about hanging down, which must be q = 0.
  const TrajectorySet validation =
      import_csv((kImportConfigs / "multiarm_double_validation.yaml").string());
  expect_one_trajectory_per_file(validation, csv_files(dir, "validation_"));
  const Trajectory& last = validation.trajectories.back();
  const Eigen::RowVectorXd mean = last.q.colwise().mean();
  EXPECT_LT(std::abs(mean[0]), 0.05);
  EXPECT_LT(std::abs(mean[1]), 0.05);
  EXPECT_LT(last.q.cwiseAbs().maxCoeff(), 0.5);
}

TEST(CsvImportRealData, MultiarmSingle) {
  NEURALSIM_SKIP_WITHOUT_SHARED("real-data/multiarm-pendulum/single");
  const fs::path dir = kShared / "real-data/multiarm-pendulum/single";
  const TrajectorySet train = import_csv((kImportConfigs / "multiarm_single_train.yaml").string());
  expect_one_trajectory_per_file(train, csv_files(dir, "train_"));
  // train_00.csv, first row: 0,1.52316373,1.84825406
  EXPECT_NEAR(train.trajectories[0].q(0, 0), 1.52316373 - kPi, 1e-12);
  EXPECT_NEAR(train.trajectories[0].qd(0, 0), 1.84825406, 1e-12);
  EXPECT_FALSE(train.trajectories[0].has_tau());
  EXPECT_EQ(train.meta.model, "pendulum");

  const TrajectorySet validation =
      import_csv((kImportConfigs / "multiarm_single_validation.yaml").string());
  expect_one_trajectory_per_file(validation, csv_files(dir, "validation_"));
  EXPECT_LT(std::abs(validation.trajectories.back().q.mean()), 0.05);
}

TEST(CsvImportRealData, DfkiSysidKeepsNonUniformTime) {
  NEURALSIM_SKIP_WITHOUT_SHARED("real-data/dfki-simple-pendulum/sysid_pd_measured.csv");
  const fs::path csv = kShared / "real-data/dfki-simple-pendulum/sysid_pd_measured.csv";
  const TrajectorySet set = import_csv((kImportConfigs / "dfki_sysid.yaml").string());
  expect_one_trajectory_per_file(set, {csv});
  const Trajectory& tr = set.trajectories[0];
  ASSERT_TRUE(tr.has_tau());
  // Second row: 3.334283828735351562e-03,-1.457236591136279458e-03,
  //             -1.098901098901450268e-02,-1.318681318681313996e-02
  EXPECT_EQ(tr.time[1], 3.334283828735351562e-03);
  EXPECT_EQ(tr.q(1, 0), -1.457236591136279458e-03);
  EXPECT_EQ(tr.qd(1, 0), -1.098901098901450268e-02);
  EXPECT_EQ(tr.tau(1, 0), -1.318681318681313996e-02);
  const Eigen::VectorXd dt = tr.time.tail(tr.size() - 1) - tr.time.head(tr.size() - 1);
  EXPECT_GT(dt.maxCoeff() - dt.minCoeff(), 1e-5);  // not resampled
  EXPECT_NEAR(dt.mean(), 3.33e-3, 1e-4);
}

TEST(CsvImportRealData, DfkiValidationInListedOrderAndRoundTripsThroughHdf5) {
  NEURALSIM_SKIP_WITHOUT_SHARED("real-data/dfki-simple-pendulum");
  const fs::path dir = kShared / "real-data/dfki-simple-pendulum";
  const TrajectorySet set = import_csv((kImportConfigs / "dfki_validation.yaml").string());
  expect_one_trajectory_per_file(set,
                                 {dir / "energy_shaping_measured.csv", dir / "ilqr_measured.csv"});

  const fs::path out =
      fs::temp_directory_path() / ("neuralsim-csv-" + std::to_string(::getpid()) + ".h5");
  write_trajectories(out.string(), set);
  const TrajectorySet back = read_trajectories(out.string());
  fs::remove(out);
  ASSERT_EQ(back.trajectories.size(), 2u);
  EXPECT_EQ(back.trajectories[1].name, "ilqr_measured");
  EXPECT_EQ(back.trajectories[1].tau, set.trajectories[1].tau);
  EXPECT_EQ(back.meta.parameters_json, set.meta.parameters_json);
}

// ---------------------------------------------------------------- synthetic

// Indents YAML text under a top-level key.
std::string indent(const std::string& yaml) {
  std::string out = "  ";
  for (char c : yaml) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

class CsvImportTest : public testing::TempDirTest {
 protected:

};

constexpr const char* kSyntheticCsv =
    "t,x,y\n"
    "0.0,1.0,0.0\n"
    "0.1,1.2,0.01\n"
    "0.25,1.5,0.0625\n"
    "0.4,1.8,0.16\n"
    "1.0,3.0,1.0\n";

// x = 2t + 1 and y = t^2 at the stamps above.
std::string synthetic_yaml(const std::string& extra) {
  return "csv_import:\n"
         "  files: [log.csv]\n"
         "  time: t\n"
         "  model: pendulum\n"
         "  joint_names: [joint1]\n"
         "  q:\n"
         "    - {terms: {x: 1.0}}\n"
         "  qd:\n"
         "    - y\n" +
         extra;
}


using testing::expect_contains;

TEST_F(CsvImportTest, ResampleGivesUniformSpacingAndLinearInterpolation) {
  write("log.csv", kSyntheticCsv);
  const TrajectorySet set =
      import_csv(write("import.yaml", synthetic_yaml("  resample_dt: 0.1\n")));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 11);
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    EXPECT_NEAR(tr.time[k], 0.1 * k, 1e-12);
    EXPECT_NEAR(tr.q(k, 0), 2 * tr.time[k] + 1, 1e-12);  // linear data: exact
  }
  // y between (0.1, 0.01) and (0.25, 0.0625) at t = 0.2: 0.01 + 2/3 * 0.0525.
  EXPECT_NEAR(tr.qd(2, 0), 0.045, 1e-12);
  EXPECT_NEAR(tr.qd(10, 0), 1.0, 1e-12);
}

TEST_F(CsvImportTest, WithoutResampleTimeStampsAreKept) {
  write("log.csv", kSyntheticCsv);
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml("")));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 5);
  EXPECT_EQ(tr.time[2], 0.25);
  EXPECT_EQ(tr.q(4, 0), 3.0);
  EXPECT_EQ(tr.name, "log");
  EXPECT_EQ(set.meta.q_names, (std::vector<std::string>{"joint1"}));
}

TEST_F(CsvImportTest, TimeOffsetSegmentAndTimeScale) {
  write("log.csv", "t,x,y\n1000,1,0\n1100,2,0\n1200,3,0\n1300,4,0\n");
  const TrajectorySet set = import_csv(write(
      "import.yaml", synthetic_yaml("  time_scale: 0.001\n  segment: {start: 0.05, end: 0.25}\n")));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 2);
  EXPECT_NEAR(tr.time[0], 0.1, 1e-12);
  EXPECT_NEAR(tr.time[1], 0.2, 1e-12);
  EXPECT_EQ(tr.q(0, 0), 2.0);
}

TEST_F(CsvImportTest, DuplicateTimeStampsKeepTheFirstRowAndSaySo) {
  write("log.csv", "t,x,y\n0,1,0\n0.1,2,0\n0.1,99,0\n0.2,3,0\n0.2,4,0\n");
  std::vector<std::string> notes;
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml("")), &notes);
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 3);
  EXPECT_EQ(tr.q(1, 0), 2.0);
  EXPECT_EQ(tr.q(2, 0), 3.0);
  ASSERT_EQ(notes.size(), 1u);
  expect_contains(notes[0], {"log.csv", "dropped 2 row(s) with duplicate time stamps", "first on line 4"});
}

TEST_F(CsvImportTest, AByteOrderMarkIsNotPartOfTheFirstName) {
  write("log.csv", std::string("\xEF\xBB\xBF") + kSyntheticCsv);  // a spreadsheet's UTF-8 export
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml("")));
  EXPECT_EQ(set.trajectories.at(0).size(), 5);
  // Only at the start of the file: a mark inside a name is kept (and escaped in messages).
  write("log.csv", "t,\xEF\xBB\xBFx,y\n0,1,0\n");
  expect_contains(testing::config_or_data_error([&] { import_csv(path("import.yaml")); }, true),
                  {"unknown column 'x'", "available columns: t (0), \\ufeffx (1), y (2)"});
}

TEST_F(CsvImportTest, AnUnterminatedQuoteIsAnErrorNamingTheLine) {
  for (const std::string& csv : {std::string("t,x,y\n0,1,\"0\n"), std::string("t,x,y\n0,\"1,0\n0.1,2,0\n"),
                                 std::string("t,x,\"y\n0,1,0\n")}) {
    SCOPED_TRACE(csv);
    write("log.csv", csv);
    expect_contains(testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, false),
                    {"log.csv:", "unterminated quoted field"});
  }
  // Closed quotes are fields like any other.
  write("log.csv", "\"t\",\"x\",\"y\"\n0,\"1\",0\n");
  EXPECT_EQ(import_csv(path("import.yaml")).trajectories.at(0).size(), 1);
}

TEST_F(CsvImportTest, AReferencedColumnNamedTwiceIsAmbiguous) {
  for (const std::string header : {"t,x,y,x", "t,x,y,y", "t,t,x,y"}) {
    SCOPED_TRACE(header);
    write("log.csv", header + "\n0,1,0,5\n");
    expect_contains(testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, false),
                    {"log.csv:1:", "appears 2 times in the header", "ambiguous", "key 'csv_import."});
  }
  // A repeated name no coordinate uses is harmless.
  write("log.csv", "t,x,y,unused,unused\n0,1,0,5,6\n");
  EXPECT_EQ(import_csv(path("import.yaml")).trajectories.at(0).size(), 1);
}

TEST_F(CsvImportTest, ABinaryFileIsQuotedEscaped) {
  const char binary[] = "\x7f" "ELF\x02\x01\x01\x00\xff\xfe,x\x1b[2J,y\n0,0,0\n";
  write("log.csv", std::string(binary, sizeof binary - 1));
  const std::string msg = testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, true);
  expect_contains(msg, {"unknown column 't'", "\\x7fELF\\x02\\x01\\x01\\x00\\xff\\xfe (0)", "x\\x1b[2J (1)"});
  for (char c : msg) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << msg;
}

TEST_F(CsvImportTest, FilesThatAreNotRegularFilesAreNamed) {
  const std::string yaml = write("import.yaml", synthetic_yaml(""));
  fs::create_symlink(path("loop2.csv"), path("log.csv"));
  fs::create_symlink(path("log.csv"), path("loop2.csv"));
  expect_contains(testing::config_or_data_error([&] { import_csv(yaml); }, false), {"log.csv: CSV file is a loop of symbolic links"});
  std::string glob = synthetic_yaml("");
  glob.replace(glob.find("log.csv"), 7, "\"lo*.csv\"");  // through a glob, too
  expect_contains(testing::config_or_data_error([&] { import_csv(write("glob.yaml", glob)); }, false),
                  {"log.csv: CSV file is a loop of symbolic links"});
  fs::remove(path("log.csv"));
  fs::create_directory(path("log.csv"));
  expect_contains(testing::config_or_data_error([&] { import_csv(yaml); }, false), {"log.csv: CSV file is a directory"});
  fs::remove(path("log.csv"));
  ASSERT_EQ(::mkfifo(path("log.csv").c_str(), 0600), 0);  // no writer: opening it would block
  expect_contains(testing::config_or_data_error([&] { import_csv(yaml); }, false), {"log.csv: CSV file is a FIFO"});
}

TEST_F(CsvImportTest, AResampleTooFineIsRefusedBeforeAllocating) {
  write("log.csv", kSyntheticCsv);
  for (const char* dt : {"1e-300", "1e-9"}) {
    SCOPED_TRACE(dt);
    expect_contains(
        testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(std::string("  resample_dt: ") + dt + "\n"))); },
                      true),
        {"import.yaml:10:", "csv_import.resample_dt", "log.csv", "more than the limit of 100000000 per trajectory"});
  }
}

TEST_F(CsvImportTest, ColumnsByIndexWithoutHeaderAndGlobOrder) {
  write("run_b.csv", "# comment\n0;5\n1;6\n");
  write("run_a.csv", "0;1\n1;2\n2;3\n");
  const std::string yaml =
      "files: \"run_*.csv\"\n"
      "delimiter: \";\"\n"
      "header: false\n"
      "time: 0\n"
      "model: pendulum\n"
      "joint_names: [joint1]\n"
      "q: [{terms: {1: 2.0}, offset: 0.5}]\n"
      "qd: [1]\n";
  const TrajectorySet set = import_csv(write("inline.yaml", "csv_import:\n" + indent(yaml)));
  ASSERT_EQ(set.trajectories.size(), 2u);
  EXPECT_EQ(set.trajectories[0].name, "run_a");
  EXPECT_EQ(set.trajectories[0].size(), 3);
  EXPECT_EQ(set.trajectories[1].q(1, 0), 12.5);
}


TEST_F(CsvImportTest, UnknownColumnNamesYamlFileKeyLineAndColumns) {
  write("log.csv", kSyntheticCsv);
  // Line 7 of the YAML holds the bad key.
  const std::string yaml = write("bad_column.yaml",
                                 "csv_import:\n"
                                 "  files: [log.csv]\n"
                                 "  time: t\n"
                                 "  model: pendulum\n"
                                 "  joint_names: [joint1]\n"
                                 "  q:\n"
                                 "    - {terms: {x: 1.0, phi3: 2.0}}\n"
                                 "  qd: [y]\n");
  const std::string msg = testing::config_or_data_error([&] { import_csv(yaml); }, true);
  expect_contains(msg, {"bad_column.yaml:7:", "csv_import.q.0.terms.phi3", "unknown column 'phi3'",
                        "available columns: t (0), x (1), y (2)"});
}

TEST_F(CsvImportTest, UnknownKeyAndMissingKey) {
  write("log.csv", kSyntheticCsv);
  expect_contains(
      testing::config_or_data_error([&] { import_csv(write("a.yaml", synthetic_yaml("  resample-dt: 1\n"))); },
                    true),
      {"a.yaml:10:", "csv_import.resample-dt", "unknown key"});
  expect_contains(
      testing::config_or_data_error([&] { import_csv(write("b.yaml", "csv_import:\n  files: [log.csv]\n")); },
                    true),
      {"b.yaml", "csv_import.time", "required"});
}

TEST_F(CsvImportTest, MalformedNumberNamesFileLineAndColumn) {
  write("log.csv", "t,x,y\n0,1,0\n0.1,2,0\n0.2,1.2.3,0\n");
  const std::string msg =
      testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, false);
  expect_contains(msg, {"log.csv:4", "column 1 ('x')", "'1.2.3'"});
}

// A channel logged at a lower rate (or with dropped packets) leaves empty q
// and qd cells between its samples: each is a missing sample (NaN), kept
// through the HDF5 file for the readers that allow it (simid) and refused by
// the others; the recorded values around it are untouched. Time must stay
// complete, and filters that would smear a gap refuse it.
TEST_F(CsvImportTest, EmptyQAndQdCellsAreMissingSamplesThroughHdf5) {
  write("log.csv", "t,x,y\n0.0,1.0,0.0\n0.1,,0.01\n0.25,1.5,\n0.4, ,0.16\n1.0,3.0,1.0\n");
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml("")));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 5);
  for (const Eigen::Index k : {1, 3}) EXPECT_TRUE(std::isnan(tr.q(k, 0))) << k;
  EXPECT_TRUE(std::isnan(tr.qd(2, 0)));
  EXPECT_EQ(tr.q(2, 0), 1.5);
  EXPECT_EQ(tr.qd(3, 0), 0.16);
  EXPECT_EQ(tr.q.array().isNaN().count() + tr.qd.array().isNaN().count(), 3);
  write_trajectories(path("t.h5"), set, true);
  const TrajectorySet back = read_trajectories(path("t.h5"), true);
  EXPECT_TRUE(std::isnan(back.trajectories.at(0).q(1, 0)));
  EXPECT_EQ(back.trajectories.at(0).q(4, 0), 3.0);
  EXPECT_THROW(read_trajectories(path("t.h5")), DataError);  // a reader without allow_missing
  // An empty time cell stays malformed; resampling needs complete positions.
  write("log.csv", "t,x,y\n0.0,1.0,0.0\n,1.2,0.01\n");
  expect_contains(testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, false),
                  {"log.csv:3", "column 0 ('t')", "malformed number ''"});
  write("log.csv", "t,x,y\n0.0,1.0,0.0\n0.1,,0.01\n0.2,1.4,0.01\n");
  expect_contains(testing::config_or_data_error(
                      [&] { import_csv(write("import.yaml", synthetic_yaml("  resample_dt: 0.05\n"))); }, false),
                  {"log.csv:3", "an empty q cell", "resample_dt needs complete positions"});
}

// A joint-torque sensor and a motor current (simid's joint_torques and
// motor_currents channels) from their own columns, with a unit change and a
// sample the sensor missed: NaN in tau_measured, through the HDF5 file.
TEST_F(CsvImportTest, SensorColumnsBecomeTauMeasuredAndCurrent) {
  write("log.csv", "t,x,y,sensor_mNm,amps\n0.0,1.0,0.0,250,0.5\n0.1,1.1,0.01,,0.6\n0.2,1.2,0.02,-125,0.7\n");
  const std::string sensors = "  tau_measured:\n    - {terms: {sensor_mNm: 0.001}}\n  current: [amps]\n";
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml(sensors)));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.tau_measured.rows(), 3);
  EXPECT_EQ(tr.tau_measured(0, 0), 0.25);
  EXPECT_TRUE(std::isnan(tr.tau_measured(1, 0)));
  EXPECT_EQ(tr.tau_measured(2, 0), -0.125);
  EXPECT_EQ(tr.current(2, 0), 0.7);
  write_trajectories(path("s.h5"), set, true);
  const Trajectory back = read_trajectories(path("s.h5"), true).trajectories.at(0);
  EXPECT_TRUE(std::isnan(back.tau_measured(1, 0)));
  EXPECT_EQ(back.current(1, 0), 0.6);
  // Interpolation would smear the gap; a wrong coordinate count is refused.
  expect_contains(testing::config_or_data_error(
                      [&] { import_csv(write("import.yaml", synthetic_yaml(sensors + "  resample_dt: 0.05\n"))); },
                      false),
                  {"log.csv:3", "an empty tau_measured cell", "resample_dt needs complete readings"});
  expect_contains(testing::config_or_data_error(
                      [&] { import_csv(write("import.yaml", synthetic_yaml("  current: [amps, amps]\n"))); }, true),
                  {"csv_import.current", "expected nv = 1 coordinates, got 2"});
}

// An IMU's six columns (gyro in rad/s, accelerometer in g) as imu/<name>,
// with a gyro sample missed.
TEST_F(CsvImportTest, ImuColumnsBecomeAnImuReading) {
  write("log.csv", "t,x,y,gx,gy,gz,ax,ay,az\n0.0,1.0,0.0,0.1,0.2,0.3,0,0,1\n0.1,1.1,0.01,,0.2,0.3,0,0.5,1\n");
  const std::string imu = "  imus:\n    tip: [gx, gy, gz, {terms: {ax: 9.81}}, {terms: {ay: 9.81}}, {terms: {az: 9.81}}]\n";
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml(imu)));
  const RowMatrixXd& r = set.trajectories.at(0).imus.at("tip");
  ASSERT_EQ(r.rows(), 2);
  ASSERT_EQ(r.cols(), 6);
  EXPECT_EQ(r(0, 2), 0.3);
  EXPECT_EQ(r(0, 5), 9.81);
  EXPECT_EQ(r(1, 4), 0.5 * 9.81);
  EXPECT_TRUE(std::isnan(r(1, 0)));
  write_trajectories(path("i.h5"), set, true);
  const RowMatrixXd back = read_trajectories(path("i.h5"), true).trajectories.at(0).imus.at("tip");
  EXPECT_TRUE(std::isnan(back(1, 0)));
  EXPECT_EQ(back(1, 1), 0.2);
  expect_contains(testing::config_or_data_error(
                      [&] { import_csv(write("import.yaml", synthetic_yaml("  imus: {tip: [gx, gy, gz]}\n"))); }, true),
                  {"csv_import.imus.tip", "expected 6 coordinates", "got 3"});
  expect_contains(testing::config_or_data_error(
                      [&] {
                        import_csv(write("import.yaml", synthetic_yaml("  imus: {\"a/b\": [gx, gy, gz, ax, ay, az]}\n")));
                      },
                      true),
                  {"csv_import.imus", "a/b", "without '/'"});
}

// A video tracker's marker (x y z in mm, no orientation) as
// link_poses/<marker> with its quaternion columns NaN (missing), a frame the
// tracker lost NaN too; a full pose (7 coordinates) beside it. Through the
// HDF5 file for the readers that allow missing samples (simid); resampled,
// the missing orientation stays missing.
TEST_F(CsvImportTest, MarkerColumnsBecomeAPositionOnlyLinkPose) {
  write("log.csv", "t,x,y,mx,my,mz\n0.0,1.0,0.0,100,-20,-400\n0.1,1.1,0.01,,,\n0.2,1.2,0.02,120,-20,-380\n");
  const std::string mm = "[{terms: {mx: 0.001}}, {terms: {my: 0.001}}, {terms: {mz: 0.001}}]";
  const std::string markers = "  link_poses:\n    tip_marker: " + mm +
                              "\n    link1: [mx, my, mz, {value: 0}, {value: 0}, {value: 0}, {value: 1}]\n";
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml(markers)));
  const RowMatrixXd& m = set.trajectories.at(0).link_poses.at("tip_marker");
  ASSERT_EQ(m.rows(), 3);
  ASSERT_EQ(m.cols(), 7);
  EXPECT_NEAR(m(0, 0), 0.1, 1e-15);
  EXPECT_NEAR(m(2, 2), -0.38, 1e-15);
  EXPECT_TRUE(m.row(1).hasNaN());
  EXPECT_EQ(m.rightCols<4>().array().isNaN().count(), 12);
  EXPECT_EQ(set.trajectories.at(0).link_poses.at("link1")(0, 6), 1.0);
  write_trajectories(path("m.h5"), set, true);
  const RowMatrixXd back = read_trajectories(path("m.h5"), true).trajectories.at(0).link_poses.at("tip_marker");
  EXPECT_NEAR(back(2, 0), 0.12, 1e-15);
  EXPECT_TRUE(std::isnan(back(0, 3)));
  // Resampled at 0.05 s: the position interpolated, the orientation still missing.
  write("log.csv", "t,x,y,mx,my,mz\n0.0,1.0,0.0,100,-20,-400\n0.1,1.1,0.01,110,-20,-390\n");
  const TrajectorySet fine =
      import_csv(write("import.yaml", synthetic_yaml("  link_poses: {tip_marker: " + mm + "}\n  resample_dt: 0.05\n")));
  const RowMatrixXd& r = fine.trajectories.at(0).link_poses.at("tip_marker");
  ASSERT_EQ(r.rows(), 3);
  EXPECT_NEAR(r(1, 0), 0.105, 1e-15);
  EXPECT_TRUE(r.rightCols<4>().array().isNaN().all());
  expect_contains(
      testing::config_or_data_error(
          [&] { import_csv(write("import.yaml", synthetic_yaml("  link_poses: {tip: [mx, my]}\n"))); }, true),
      {"csv_import.link_poses.tip", "expected 3 coordinates", "or 7", "got 2"});
  expect_contains(
      testing::config_or_data_error(
          [&] { import_csv(write("import.yaml", synthetic_yaml("  link_poses: {\"a/b\": [mx, my, mz]}\n"))); }, true),
      {"csv_import.link_poses", "a/b", "without '/'"});
}

TEST_F(CsvImportTest, WrongFieldCountAndBackwardsTime) {
  write("log.csv", "t,x,y\n0,1,0\n0.1,2\n");
  expect_contains(
      testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, false),
      {"log.csv:3", "expected 3 fields, got 2"});
  write("log.csv", "t,x,y\n0,1,0\n0.2,2,0\n0.1,3,0\n");
  expect_contains(
      testing::config_or_data_error([&] { import_csv(write("import.yaml", synthetic_yaml(""))); }, false),
      {"log.csv:4", "earlier"});
}

TEST_F(CsvImportTest, FilesMatchingNothing) {
  const std::string yaml = write("import.yaml", synthetic_yaml(""));
  fs::remove(dir_ / "log.csv");
  expect_contains(testing::config_or_data_error([&] { import_csv(yaml); }, false),
                  {"import.yaml", "csv_import.files.0", "log.csv", "matches no file"});
  const std::string glob_yaml =
      "files: [\"nothing_*.csv\"]\ntime: t\nmodel: m\njoint_names: [a]\nq: [x]\nqd: [y]\n";
  expect_contains(
      testing::config_or_data_error([&] { import_csv(write("inline.yaml", "csv_import:\n" + indent(glob_yaml))); }, false),
      {"inline.yaml", "nothing_*.csv", "matches no file"});
}

TEST_F(CsvImportTest, JointNameCountMustMatchQd) {
  write("log.csv", kSyntheticCsv);
  const std::string yaml =
      "files: [log.csv]\ntime: t\nmodel: m\njoint_names: [a, b]\nq: [x]\nqd: [y]\n";
  expect_contains(testing::config_or_data_error([&] { import_csv(write("inline.yaml", "csv_import:\n" + indent(yaml))); }, true),
                  {"inline.yaml:5:", "csv_import.joint_names", "nv = 1"});
}

TEST_F(CsvImportTest, AConstantChannelHasItsValueAtEverySample) {
  // An unrecorded channel (here tau of a 1-joint model; e.g. the root
  // torques of a floating base) given as {value: v} instead of a column.
  write("log.csv", kSyntheticCsv);
  const TrajectorySet set = import_csv(write("import.yaml", synthetic_yaml("  tau:\n    - {value: -0.25}\n")));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_TRUE(tr.has_tau());
  ASSERT_EQ(tr.tau.rows(), 5);
  for (Eigen::Index k = 0; k < 5; ++k) EXPECT_EQ(tr.tau(k, 0), -0.25);
  EXPECT_EQ(tr.q(4, 0), 3.0) << "the recorded channels are unchanged";
  // Resampled, it stays the constant (interpolating a constant).
  const TrajectorySet resampled =
      import_csv(write("resampled.yaml", synthetic_yaml("  tau:\n    - {value: 0.0}\n  resample_dt: 0.1\n")));
  EXPECT_TRUE((resampled.trajectories.at(0).tau.array() == 0.0).all());
}

TEST_F(CsvImportTest, AConstantChannelMustBeOneFiniteNumber) {
  write("log.csv", kSyntheticCsv);
  for (const char* bad : {".nan", ".inf", "-.inf"}) {
    const std::string yaml = synthetic_yaml(std::string("  tau:\n    - {value: ") + bad + "}\n");
    expect_contains(testing::config_or_data_error([&] { import_csv(write("bad.yaml", yaml)); }, true),
                    {"bad.yaml:", "csv_import.tau.0.value"});
  }
  expect_contains(testing::config_or_data_error([&] { import_csv(write("mixed.yaml", synthetic_yaml("  tau:\n    - {value: 0, terms: {x: 1}}\n"))); },
                                true),
                  {"mixed.yaml:", "csv_import.tau.0.terms", "unknown key"});
  expect_contains(testing::config_or_data_error([&] { import_csv(write("text.yaml", synthetic_yaml("  tau:\n    - {value: x}\n"))); },
                                true),
                  {"text.yaml:", "csv_import.tau.0.value"});
}

}  // namespace
}  // namespace neuralsim
