// The distillation dataset (io/distill_dataset.hpp): a round trip keeps
// every bit; hand-made bad files (wrong shapes, a non-finite value, a
// missing dataset, a shape larger than the file, another format, not HDF5)
// each give one DataError naming the file and the dataset with expected
// against actual.
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace distill_dataset_test_detail {

DistillDataset dd_small_dataset(int n = 7) {
  DistillDataset d;
  d.system = "linear";
  d.generator = "test";
  d.feature_names = {"x", "v"};
  d.target_names = {"u"};
  d.features.resize(n, 2);
  d.targets.resize(n, 1);
  d.episode.resize(n);
  d.time.resize(n);
  for (int k = 0; k < n; ++k) {
    d.features(k, 0) = std::sin(0.3 * k) * 1e-7;
    d.features(k, 1) = 1.0 / (k + 3.0);
    d.targets(k, 0) = -std::exp(0.1 * k);
    d.episode[k] = k / 3;
    d.time[k] = 0.01 * k;
  }
  return d;
}

// A file with the given datasets (rank from dims), for bad-input tests.
void dd_write_raw(const std::string& path, const std::vector<std::pair<std::string, std::vector<hsize_t>>>& sets,
               double fill = 1.0, const char* format = kDistillDatasetFormat) {
  H5::H5File f(path, H5F_ACC_TRUNC);
  H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
  f.createAttribute("format", str, H5::DataSpace(H5S_SCALAR)).write(str, std::string(format));
  const long long v = 1;
  f.createAttribute("format_version", H5::PredType::NATIVE_LLONG, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_LLONG, &v);
  for (const auto& [name, dims] : sets) {
    hsize_t n = 1;
    for (hsize_t d : dims) n *= d;
    std::vector<double> values(n, fill);
    H5::DataSet ds = f.createDataSet(name, H5::PredType::IEEE_F64LE, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
    if (n) ds.write(values.data(), H5::PredType::NATIVE_DOUBLE);
  }
}

std::string dd_read_error(const std::string& path) {
  try {
    (void)read_distill_dataset(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace distill_dataset_test_detail

using distill_dataset_test_detail::dd_read_error;
using distill_dataset_test_detail::dd_small_dataset;
using distill_dataset_test_detail::dd_write_raw;

TEST(DistillDataset, RoundTripKeepsEveryBit) {
  const std::string dir = testing::fresh_dir("distill_dataset_roundtrip");
  const DistillDataset d = dd_small_dataset();
  write_distill_dataset(dir + "/d.h5", d);
  const DistillDataset r = read_distill_dataset(dir + "/d.h5");
  EXPECT_EQ(r.system, "linear");
  EXPECT_EQ(r.feature_names, d.feature_names);
  EXPECT_EQ(r.target_names, d.target_names);
  ASSERT_EQ(r.size(), d.size());
  EXPECT_TRUE((r.features.array() == d.features.array()).all());
  EXPECT_TRUE((r.targets.array() == d.targets.array()).all());
  EXPECT_TRUE((r.episode.array() == d.episode.array()).all());
  EXPECT_TRUE((r.time.array() == d.time.array()).all());
  EXPECT_EQ(r.episodes_failed, -1);  // not recorded
  // The generating run's failed episodes, for a run resumed from the file.
  DistillDataset generated = dd_small_dataset();
  generated.episodes_failed = 3;
  write_distill_dataset(dir + "/g.h5", generated);
  EXPECT_EQ(read_distill_dataset(dir + "/g.h5").episodes_failed, 3);
}

TEST(DistillDataset, BadFilesGiveOneLineNamingTheDataset) {
  const std::string dir = testing::fresh_dir("distill_dataset_bad");
  const std::string f = dir + "/bad.h5";
  dd_write_raw(f, {{"features", {10, 3}}, {"targets", {9, 2}}, {"episode", {10}}, {"time", {10}}});
  testing::expect_contains(dd_read_error(f), {f, ":/targets", "expected shape (10, n)", "got (9, 2)"});
  dd_write_raw(f, {{"features", {10, 3}}, {"targets", {10, 2}}, {"episode", {10}}});
  testing::expect_contains(dd_read_error(f), {":/time", "dataset missing"});
  dd_write_raw(f, {{"features", {10}}, {"targets", {10, 2}}, {"episode", {10}}, {"time", {10}}});
  testing::expect_contains(dd_read_error(f), {":/features", "expected shape (N, n_in)", "got (10)"});
  dd_write_raw(f, {{"features", {4, 3}}, {"targets", {4, 2}}, {"episode", {4}}, {"time", {4}}},
            std::numeric_limits<double>::quiet_NaN());
  testing::expect_contains(dd_read_error(f), {":/features", "finite", "row 0, column 0"});
  dd_write_raw(f, {{"features", {4, 3}}, {"targets", {4, 2}}, {"episode", {4}}, {"time", {4}}}, 0.5);
  testing::expect_contains(dd_read_error(f), {":/episode", "integers"});
  dd_write_raw(f, {{"features", {4, 3}}, {"targets", {4, 2}}, {"episode", {4}}, {"time", {4}}}, 1.0, "neuralsim-networks");
  testing::expect_contains(dd_read_error(f), {":/format", "expected 'neuralsim-distill-dataset'"});
  dd_write_raw(f, {{"features", {4, 3}}, {"targets", {4, 2}}, {"episode", {4}}, {"time", {4}}});
  {
    H5::H5File h(f, H5F_ACC_RDWR);
    const long long failed = -2;
    h.createAttribute("episodes_failed", H5::PredType::NATIVE_LLONG, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_LLONG, &failed);
  }
  testing::expect_contains(dd_read_error(f), {":/episodes_failed", "expected an integer in [0, 100000000], got -2"});
  testing::write_file(f, "not an HDF5 file\n");
  testing::expect_contains(dd_read_error(f), {f, "not an HDF5 file"});
  testing::expect_contains(dd_read_error(dir + "/missing.h5"), {"missing.h5", "does not exist"});
  // A shape the file cannot hold: an extendible, chunked-but-never-written
  // dataset declaring 10^7 x 65 doubles in a tiny file.
  {
    H5::H5File h(f, H5F_ACC_TRUNC);
    H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
    h.createAttribute("format", str, H5::DataSpace(H5S_SCALAR)).write(str, std::string(kDistillDatasetFormat));
    const long long v = 1;
    h.createAttribute("format_version", H5::PredType::NATIVE_LLONG, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_LLONG, &v);
    const hsize_t dims[2] = {10000000, 65};
    H5::DSetCreatPropList p;
    const hsize_t chunk[2] = {1024, 65};
    p.setChunk(2, chunk);
    h.createDataSet("features", H5::PredType::IEEE_F64LE, H5::DataSpace(2, dims), p);
  }
  testing::expect_contains(dd_read_error(f), {":/features", "declares shape (10000000, 65)", "file can hold"});
}

TEST(DistillDataset, WriterRefusesAnInconsistentDataset) {
  const std::string dir = testing::fresh_dir("distill_dataset_write_bad");
  DistillDataset d = dd_small_dataset();
  d.targets(2, 0) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(write_distill_dataset(dir + "/d.h5", d), DataError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/d.h5"));
  d = dd_small_dataset();
  d.time.resize(3);
  EXPECT_THROW(write_distill_dataset(dir + "/d.h5", d), DataError);
}

}  // namespace neuralsim
