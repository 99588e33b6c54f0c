// CSV import of positions-only recordings (issue #41): time stamps from a
// sample rate, q̇ derived by the derivative filter, and the training /
// validation split at import. Checked against closed forms: a sinusoid's
// derivative and the linear-fit (Savitzky–Golay) response to it, exact
// stamps k / rate, and the sample counts a split must give.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/csv_import.hpp"
#include "support/files.hpp"

namespace neuralsim {
// Named: test files are compiled several per unit.
namespace csv_import_rate_test {

using testing::expect_contains;

constexpr double kPi = 3.141592653589793;
constexpr double kRate = 400.0;  // Hz, the video tracker's rate in #41
constexpr double kFrequency = 1.5;  // Hz

// x_k = sin(2π f k / rate), k = 0 .. n-1, printed so that it reads back
// exactly; no time column, no velocity column.
std::string sine_csv(int n) {
  std::string out = "x\n";
  char line[64];
  for (int k = 0; k < n; ++k) {
    std::snprintf(line, sizeof line, "%.17g\n", std::sin(2 * kPi * kFrequency * k / kRate));
    out += line;
  }
  return out;
}

// n samples x_k = k (a ramp) at 10 Hz: split boundaries are exact stamps.
std::string ramp_csv(int n) {
  std::string out = "x\n";
  for (int k = 0; k < n; ++k) out += std::to_string(k) + "\n";
  return out;
}

std::string rate_yaml(const std::string& qd, const std::string& extra, const std::string& rate = "sample_rate: 400") {
  return "csv_import:\n"
         "  files: [log.csv]\n"
         "  " + rate + "\n"
         "  model: pendulum\n"
         "  joint_names: [joint1]\n"
         "  q: [x]\n"
         "  qd: " + qd + "\n" + extra;
}


class CsvImportRateTest : public testing::TempDirTest {
 protected:
  TrajectorySet import_yaml(const std::string& yaml, std::vector<std::string>* notes = nullptr,
                       TrajectorySet* validation = nullptr) {
    return import_csv(write("import.yaml", yaml), notes, validation);
  }
};

// Savitzky–Golay of order 2 on a uniform window of 2m + 1 samples is the
// least-squares slope, Σ j x_{k+j} / (h Σ j²) (the quadratic term is even and
// drops out of an odd derivative). On sin(ωt) that is exactly
// ω cos(ωt_k) · G with G = Σ j sin(jωh) / (ωh Σ j²), and since
// 0 <= y − sin y <= y³/6 for y >= 0, |1 − G| <= (ωh)² Σ j⁴ / (6 Σ j²): the
// filter's error bound, from its order and window only.
TEST_F(CsvImportRateTest, SampleRateStampsAndSavitzkyGolayVelocityOfASine) {
  const int n = 800, window = 21, m = window / 2;
  write("log.csv", sine_csv(n));
  std::vector<std::string> notes;
  const TrajectorySet set =
      import_yaml(rate_yaml("{derive: savitzky_golay, window: 21, order: 2}", ""), &notes);
  ASSERT_EQ(set.trajectories.size(), 1u);
  const Trajectory& tr = set.trajectories[0];
  // The m samples at each end have no full window: dropped, as data.velocity does.
  ASSERT_EQ(tr.size(), n - 2 * m);
  ASSERT_EQ(tr.qd.cols(), 1);

  const double w = 2 * kPi * kFrequency, h = 1 / kRate;
  double s2 = 0, s4 = 0, response = 0;
  for (int j = -m; j <= m; ++j) {
    s2 += j * j;
    s4 += std::pow(j, 4);
    response += j * std::sin(j * w * h);
  }
  const double gain = response / (w * h * s2);
  const double bound = w * (w * h) * (w * h) * s4 / (6 * s2);
  double max_error = 0;
  for (Eigen::Index i = 0; i < tr.size(); ++i) {
    const double k = static_cast<double>(i + m);
    EXPECT_EQ(tr.time[i], k / kRate);  // exactly: computed from k, no accumulated steps
    EXPECT_EQ(tr.q(i, 0), std::sin(2 * kPi * kFrequency * k / kRate));  // the recorded position, kept
    const double exact = w * std::cos(w * tr.time[i]);
    EXPECT_NEAR(tr.qd(i, 0), exact * gain, 1e-9 * w);
    max_error = std::max(max_error, std::abs(tr.qd(i, 0) - exact));
  }
  EXPECT_LE(max_error, bound);
  EXPECT_GE(max_error, 0.9 * bound * (1 - (w * h * m) * (w * h * m) / 20));  // the bound is tight: a cosine peak is kept
  ASSERT_EQ(notes.size(), 1u);
  expect_contains(notes[0], {"import.yaml", "qd derived from q by savitzky_golay (window 21, order 2)",
                             "first and last 10 samples"});
}

// The central difference on a sine, exactly:
// (sin ω(t+h) − sin ω(t−h)) / 2h = ω cos(ωt) · sin(ωh)/(ωh).
TEST_F(CsvImportRateTest, CentralDifferenceOfASineIsTheClosedForm) {
  const int n = 400;
  write("log.csv", sine_csv(n));
  const TrajectorySet set = import_yaml(rate_yaml("{derive: central_difference}", "", "dt: 0.0025"));
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), n - 2);
  const double w = 2 * kPi * kFrequency, h = 0.0025;
  for (Eigen::Index i = 0; i < tr.size(); ++i) {
    EXPECT_EQ(tr.time[i], static_cast<double>(i + 1) * 0.0025);
    const double exact = w * std::cos(w * tr.time[i]);
    EXPECT_NEAR(tr.qd(i, 0), exact * std::sin(w * h) / (w * h), 1e-9 * w);
    EXPECT_LE(std::abs(tr.qd(i, 0) - exact), w * (w * h) * (w * h) / 6);
  }
}

// Exact for polynomials up to the order, on uneven stamps too (a time column).
TEST_F(CsvImportRateTest, DerivedVelocityIsExactOnACubicWithUnevenStamps) {
  std::string csv = "t,x\n";
  std::vector<double> t;
  for (int k = 0; k < 40; ++k) t.push_back(0.01 * k + 0.003 * (k % 3));
  for (double tk : t) {
    char line[96];
    std::snprintf(line, sizeof line, "%.17g,%.17g\n", tk, 2 * tk * tk * tk - tk * tk + 0.5 * tk + 1);
    csv += line;
  }
  write("log.csv", csv);
  const TrajectorySet set = import_yaml(
      "csv_import:\n  files: [log.csv]\n  time: t\n  model: m\n  joint_names: [a]\n  q: [x]\n"
      "  qd: {derive: savitzky_golay, window: 7, order: 3}\n");
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 40 - 6);
  for (Eigen::Index i = 0; i < tr.size(); ++i) {
    const double tk = t[static_cast<size_t>(i + 3)];
    EXPECT_EQ(tr.time[i], tk);
    EXPECT_NEAR(tr.qd(i, 0), 6 * tk * tk - 2 * tk + 0.5, 1e-9);
  }
}

TEST_F(CsvImportRateTest, StartTimeAndRecordedVelocities) {
  write("log.csv", "x,v\n1,10\n2,20\n3,30\n");
  const TrajectorySet set = import_yaml(
      "csv_import:\n  files: [log.csv]\n  sample_rate: 8\n  t0: 2.5\n  model: m\n  joint_names: [a]\n"
      "  q: [x]\n  qd: [v]\n");
  const Trajectory& tr = set.trajectories.at(0);
  ASSERT_EQ(tr.size(), 3);
  EXPECT_EQ(tr.time[0], 2.5);
  EXPECT_EQ(tr.time[2], 2.75);
  EXPECT_EQ(tr.qd(1, 0), 20.0);
}

TEST_F(CsvImportRateTest, SplitByFraction) {
  write("log.csv", ramp_csv(100));
  TrajectorySet validation;
  const TrajectorySet train =
      import_yaml(rate_yaml("[x]", "  split: {validation_fraction: 0.25}\n", "sample_rate: 10"), nullptr, &validation);
  ASSERT_EQ(train.trajectories.size(), 1u);
  ASSERT_EQ(validation.trajectories.size(), 1u);
  const Trajectory& t = train.trajectories[0];
  const Trajectory& v = validation.trajectories[0];
  ASSERT_EQ(t.size(), 75);
  ASSERT_EQ(v.size(), 25);
  EXPECT_EQ(t.time[74], 7.4);
  EXPECT_EQ(v.time[0], 7.5);
  EXPECT_EQ(v.time[24], 9.9);
  EXPECT_EQ(v.q(0, 0), 75.0);
  EXPECT_EQ(t.name, "log");
  EXPECT_EQ(v.name, "log");
  EXPECT_EQ(validation.meta.model, "pendulum");
}

TEST_F(CsvImportRateTest, SplitByTimeRangeTrainsOnBothSidesAsTwoTrajectories) {
  write("log.csv", ramp_csv(100));
  TrajectorySet validation;
  const TrajectorySet train =
      import_yaml(rate_yaml("[x]", "  split: {validation: [2.0, 3.0]}\n", "sample_rate: 10"), nullptr, &validation);
  ASSERT_EQ(validation.trajectories.size(), 1u);
  const Trajectory& v = validation.trajectories[0];
  ASSERT_EQ(v.size(), 11);  // 2.0, 2.1, ..., 3.0: both ends inclusive
  EXPECT_EQ(v.time[0], 2.0);
  EXPECT_EQ(v.time[10], 3.0);
  ASSERT_EQ(train.trajectories.size(), 2u);
  EXPECT_EQ(train.trajectories[0].name, "log_before");
  EXPECT_EQ(train.trajectories[0].size(), 20);
  EXPECT_EQ(train.trajectories[0].time[19], 1.9);
  EXPECT_EQ(train.trajectories[1].name, "log_after");
  EXPECT_EQ(train.trajectories[1].size(), 69);
  EXPECT_EQ(train.trajectories[1].time[0], 3.1);

  // A range at the end leaves one training trajectory, named as the file.
  const TrajectorySet tail =
      import_yaml(rate_yaml("[x]", "  split: {validation: [8, 100]}\n", "sample_rate: 10"), nullptr, &validation);
  ASSERT_EQ(tail.trajectories.size(), 1u);
  EXPECT_EQ(tail.trajectories[0].name, "log");
  EXPECT_EQ(tail.trajectories[0].size(), 80);
  EXPECT_EQ(validation.trajectories.at(0).size(), 20);
}

TEST_F(CsvImportRateTest, BadTimeAndVelocityKeysNameTheKey) {
  write("log.csv", ramp_csv(30));
  const auto error = [&](const std::string& yaml) { return testing::config_or_data_error([&] { import_yaml(yaml); }, true); };
  expect_contains(error("csv_import:\n  files: [log.csv]\n  time: x\n  sample_rate: 10\n  model: m\n"
                        "  joint_names: [a]\n  q: [x]\n  qd: [x]\n"),
                  {"import.yaml:4:", "key 'csv_import.sample_rate'", "either a time column or sample_rate, got both"});
  expect_contains(error(rate_yaml("[x]", "  dt: 0.1\n", "sample_rate: 10")),
                  {"import.yaml:", "key 'csv_import.dt'", "either sample_rate or dt, got both"});
  expect_contains(error(rate_yaml("[x]", "", "sample_rate: 0")),
                  {"import.yaml:3:", "key 'csv_import.sample_rate'", "expected a number > 0 (Hz), got 0"});
  expect_contains(error(rate_yaml("[x]", "", "dt: -0.5")),
                  {"import.yaml:3:", "key 'csv_import.dt'", "expected a number > 0 (s), got -0.5"});
  expect_contains(error(rate_yaml("[x]", "", "sample_rate: .inf")),
                  {"import.yaml:3:", "key 'csv_import.sample_rate'", "finite"});
  expect_contains(error(rate_yaml("[x]", "", "sample_rate: .nan")), {"key 'csv_import.sample_rate'", "finite"});
  expect_contains(error(rate_yaml("[x]", "  time_scale: 0.001\n")),
                  {"key 'csv_import.time_scale'", "only with a time column, got sample_rate"});
  expect_contains(error("csv_import:\n  files: [log.csv]\n  time: x\n  t0: 1\n  model: m\n  joint_names: [a]\n"
                        "  q: [x]\n  qd: [x]\n"),
                  {"key 'csv_import.t0'", "only with sample_rate or dt"});

  expect_contains(error(rate_yaml("{derive: savitzky_golay, window: 10, order: 2}", "")),
                  {"import.yaml:", "key 'csv_import.qd.window'", "odd", "got 10"});
  expect_contains(error(rate_yaml("{derive: savitzky_golay, window: 5, order: 5}", "")),
                  {"key 'csv_import.qd.window'", "5 samples are fewer than the 6 coefficients of a polynomial of order 5"});
  expect_contains(error(rate_yaml("{derive: savitzky_golay, window: 31, order: 3}", "")),
                  {"import.yaml:", "key 'csv_import.qd.window'", "shorter than the 30 samples of", "log.csv",
                   "got 31"});
  expect_contains(error(rate_yaml("{derive: spline}", "")), {"key 'csv_import.qd.derive'", "savitzky_golay"});
  expect_contains(error(rate_yaml("{derive: central_difference, window: 5}", "")),
                  {"key 'csv_import.qd.window'", "no window or order with central_difference"});
  expect_contains(error(rate_yaml("{derive: savitzky_golay, windw: 5}", "")), {"unknown key 'csv_import.qd.windw'", "did you mean 'window'"});
}

TEST_F(CsvImportRateTest, BadSplitsNameTheKey) {
  write("log.csv", ramp_csv(30));
  TrajectorySet validation;
  const auto error = [&](const std::string& split) {
    return testing::config_or_data_error([&] { import_yaml(rate_yaml("[x]", "  split: " + split + "\n", "sample_rate: 10"), nullptr, &validation); },
                    true);
  };
  expect_contains(error("{validation_fraction: 0}"),
                  {"import.yaml:", "key 'csv_import.split.validation_fraction'", "in (0, 1), got 0"});
  expect_contains(error("{validation_fraction: 1}"), {"split.validation_fraction", "in (0, 1), got 1"});
  expect_contains(error("{validation_fraction: 0.01}"),
                  {"split.validation_fraction", "at least 2 training and 2 validation samples", "got 30 and 0"});
  expect_contains(error("{validation_fraction: 0.2, validation: [0, 1]}"), {"split.validation", "got both"});
  expect_contains(error("{validation: [2, 1]}"), {"split.validation", "empty range [2, 1]"});
  expect_contains(error("{validation: [1, 1]}"), {"split.validation", "empty range [1, 1]"});
  expect_contains(error("{validation: [5, 6]}"),
                  {"split.validation", "at least 2 samples of", "log.csv", "in [5, 6] s", "span [0, 2.9] s", "got 0"});
  expect_contains(error("{validation: [-1, 10]}"), {"split.validation", "training samples", "0 before and 0 after"});
  expect_contains(error("{validation: [0, 1, 2]}"), {"split.validation", "[t_start, t_end]", "got 3 numbers"});
  expect_contains(error("{test: [0, 1]}"), {"unknown key 'csv_import.split.test'", "validation_fraction, validation"});
  expect_contains(error("0.2"), {"key 'csv_import.split'", "validation_fraction"});
  // A caller that cannot keep the validation part (a tool reading the
  // description as one data file) is refused rather than losing it.
  expect_contains(testing::config_or_data_error([&] { import_yaml(rate_yaml("[x]", "  split: {validation_fraction: 0.5}\n", "sample_rate: 10")); },
                           true),
                  {"import.yaml:", "key 'csv_import.split'", "import-csv"});
}

// A fraction of the files (by: files): the last floor(f N) files in list
// order validate whole, the others train whole; N = 5, f = 0.4: 2 files.
TEST_F(CsvImportRateTest, SplitByFractionOfTheFilesKeepsWholeFiles) {
  for (int k = 0; k < 5; ++k) write("log" + std::to_string(k) + ".csv", ramp_csv(10 + k));
  const std::string yaml =
      "csv_import:\n  files: [log*.csv]\n  sample_rate: 10\n  model: pendulum\n"
      "  joint_names: [joint1]\n  q: [x]\n  qd: [x]\n"
      "  split: {validation_fraction: 0.4, by: files}\n";
  TrajectorySet validation;
  const TrajectorySet train = import_yaml(yaml, nullptr, &validation);
  ASSERT_EQ(train.trajectories.size(), 3u);
  ASSERT_EQ(validation.trajectories.size(), 2u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(train.trajectories[static_cast<size_t>(k)].name, "log" + std::to_string(k));
    EXPECT_EQ(train.trajectories[static_cast<size_t>(k)].size(), 10 + k);  // every sample of the file
  }
  EXPECT_EQ(validation.trajectories[0].name, "log3");
  EXPECT_EQ(validation.trajectories[0].size(), 13);
  EXPECT_EQ(validation.trajectories[1].name, "log4");
  EXPECT_EQ(validation.trajectories[1].size(), 14);
  EXPECT_EQ(validation.trajectories[1].time[13], 1.3);
}

// An explicit training range beside the validation range: exactly the
// samples of each (both ends inclusive), the rest of the file left out.
TEST_F(CsvImportRateTest, SplitByTrainingAndValidationRanges) {
  write("log.csv", ramp_csv(100));
  TrajectorySet validation;
  const TrajectorySet train =
      import_yaml(rate_yaml("[x]", "  split: {train: [0.5, 6.0], validation: [7.0, 9.0]}\n", "sample_rate: 10"),
                  nullptr, &validation);
  ASSERT_EQ(train.trajectories.size(), 1u);
  ASSERT_EQ(validation.trajectories.size(), 1u);
  const Trajectory& t = train.trajectories[0];
  const Trajectory& v = validation.trajectories[0];
  ASSERT_EQ(t.size(), 56);  // 0.5, 0.6, ..., 6.0
  EXPECT_EQ(t.time[0], 0.5);
  EXPECT_EQ(t.time[55], 6.0);
  EXPECT_EQ(t.q(0, 0), 5.0);
  ASSERT_EQ(v.size(), 21);  // 7.0 ... 9.0
  EXPECT_EQ(v.time[0], 7.0);
  EXPECT_EQ(v.time[20], 9.0);
  EXPECT_EQ(t.name, "log");
  EXPECT_EQ(v.name, "log");
}

TEST_F(CsvImportRateTest, BadFileFractionsAndTrainingRangesNameTheKey) {
  write("log.csv", ramp_csv(30));
  TrajectorySet validation;
  const auto error = [&](const std::string& split) {
    return testing::config_or_data_error(
        [&] { import_yaml(rate_yaml("[x]", "  split: " + split + "\n", "sample_rate: 10"), nullptr, &validation); },
        true);
  };
  // One file: no fraction of it is a whole file on each side.
  expect_contains(error("{validation_fraction: 0.5, by: files}"),
                  {"import.yaml:", "key 'csv_import.split.validation_fraction'",
                   "at least 1 training and 1 validation file of the 1 file(s)", "got 1 and 0"});
  expect_contains(error("{validation_fraction: 0.5, by: rows}"),
                  {"key 'csv_import.split.by'", "'samples'", "'files'", "got 'rows'"});
  expect_contains(error("{validation: [1, 2], by: files}"),
                  {"key 'csv_import.split.by'", "only with validation_fraction"});
  expect_contains(error("{validation_fraction: 0.5, train: [0, 1]}"),
                  {"key 'csv_import.split.train'", "only with a validation range"});
  // Overlapping, touching (the shared end sample), empty and out-of-range.
  expect_contains(error("{validation: [1, 2], train: [0, 1.5]}"),
                  {"import.yaml:", "key 'csv_import.split.train'", "shares no time with the validation range [1, 2] s",
                   "got [0, 1.5] s, which overlaps it"});
  expect_contains(error("{validation: [1, 2], train: [2, 2.5]}"), {"split.train", "got [2, 2.5] s, which overlaps"});
  expect_contains(error("{validation: [1, 2], train: [0.5, 0.5]}"), {"split.train", "empty range [0.5, 0.5]"});
  expect_contains(error("{validation: [1, 2], train: [5, 6]}"),
                  {"split.train", "at least 2 samples of", "log.csv", "in [5, 6] s", "span [0, 2.9] s", "got 0"});
}

}  // namespace csv_import_rate_test
}  // namespace neuralsim
