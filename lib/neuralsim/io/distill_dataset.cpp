// HDF5 read/write of the MPC distillation dataset; layout in distill_dataset.hpp.
#include "neuralsim/io/distill_dataset.hpp"

#include <H5Cpp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/atomic_file.hpp"
#include "neuralsim/io/hdf5_attributes.hpp"
#include "neuralsim/io/hdf5_output.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {

// Named (not anonymous): the io layer is compiled as one unity translation unit.
namespace distill_dataset_detail {

namespace fs = std::filesystem;
using RowMatrixXd = DistillDataset::RowMatrixXd;

std::string dd_dims(const std::vector<hsize_t>& d) { return hdf5::shape_string(d); }

void dd_write(H5::H5File& f, const char* name, const double* data, hsize_t rows, hsize_t cols, int rank) {
  const hsize_t dims[2] = {rows, cols};
  H5::DataSet ds = f.createDataSet(name, H5::PredType::IEEE_F64LE, H5::DataSpace(rank, dims));
  if (rows * (rank == 2 ? cols : 1) > 0) ds.write(data, H5::PredType::NATIVE_DOUBLE);
}

// A float dataset of `rank`, its shape checked against `expect` (−1 = any)
// and its declared size against the file before anything is allocated.
RowMatrixXd dd_read(const H5::H5File& f, const char* name, int rank, long long expect_rows, long long expect_cols,
                    const std::string& file, const std::string& hint) {
  const std::string object = std::string("/") + name;
  if (!hdf5::with_context(file, object, [&] { return f.nameExists(name) && f.childObjType(name) == H5O_TYPE_DATASET; }))
    hdf5::fail(file, object, "dataset missing (expected shape " + hint + ")");
  return hdf5::with_context(file, object, [&] {
    H5::DataSet ds = f.openDataSet(name);
    const H5T_class_t c = ds.getTypeClass();
    if (c != H5T_FLOAT && c != H5T_INTEGER) hdf5::fail(file, object, "expected a float64 dataset, got a non-numeric type");
    const H5::DataSpace space = ds.getSpace();
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(space.getSimpleExtentNdims(), 0)));
    if (!dims.empty()) space.getSimpleExtentDims(dims.data());
    if (static_cast<int>(dims.size()) != rank) hdf5::fail(file, object, "expected shape " + hint + ", got " + dd_dims(dims));
    const long long rows = static_cast<long long>(dims[0]);
    const long long cols = rank == 2 ? static_cast<long long>(dims[1]) : 1;
    if (rows > DistillDatasetLimits::kMaxSamples)
      hdf5::fail(file, object, "declares " + std::to_string(rows) + " samples, more than the limit of " +
                                   std::to_string(DistillDatasetLimits::kMaxSamples));
    if (rank == 2 && cols > DistillDatasetLimits::kMaxWidth)
      hdf5::fail(file, object, "declares " + std::to_string(cols) + " columns, more than the limit of " +
                                   std::to_string(DistillDatasetLimits::kMaxWidth));
    if ((expect_rows >= 0 && rows != expect_rows) || (expect_cols >= 0 && cols != expect_cols)) {
      std::ostringstream want;
      want << "(" << (expect_rows >= 0 ? std::to_string(expect_rows) : "N");
      if (rank == 2) want << ", " << (expect_cols >= 0 ? std::to_string(expect_cols) : "n");
      want << (rank == 1 ? ",)" : ")");
      hdf5::fail(file, object, "expected shape " + want.str() + ", got " + dd_dims(dims));
    }
    std::error_code ec;
    const long double file_bytes = static_cast<long double>(fs::file_size(file, ec));
    const bool chunked = ds.getCreatePlist().getLayout() == H5D_CHUNKED;
    const long double bytes = static_cast<long double>(rows) * cols * sizeof(double);
    if (bytes > (chunked ? 1100.0L : 1.0L) * file_bytes + 4096.0L)
      hdf5::fail(file, object, "declares shape " + dd_dims(dims) + ", more than a " +
                                   std::to_string(static_cast<long long>(file_bytes)) + "-byte file can hold");
    RowMatrixXd m(rows, cols);
    if (m.size() > 0) ds.read(m.data(), H5::PredType::NATIVE_DOUBLE);
    return m;
  });
}

DistillDataset dd_read_file(const std::string& path) {
  H5::H5File f(path, H5F_ACC_RDONLY);
  DistillDataset d;
  if (!hdf5::has_attr(f, "format", path, "/format")) hdf5::fail(path, "/format", "missing (not a distill dataset)");
  const std::string format = hdf5::read_string_attr(f, "format", path, "/format");
  if (format != kDistillDatasetFormat)
    hdf5::fail(path, "/format", std::string("expected '") + kDistillDatasetFormat + "', got '" + format + "'");
  if (!hdf5::has_attr(f, "format_version", path, "/format_version"))
    hdf5::fail(path, "/format_version", "missing");
  const long long version = hdf5::read_int_attr(f, "format_version", path, "/format_version");
  if (version != kDistillDatasetFormatVersion)
    hdf5::fail(path, "/format_version", "expected " + std::to_string(kDistillDatasetFormatVersion) + ", got " +
                                            std::to_string(version));
  if (hdf5::has_attr(f, "system", path, "/system")) d.system = hdf5::read_string_attr(f, "system", path, "/system");
  if (hdf5::has_attr(f, "generator", path, "/generator"))
    d.generator = hdf5::read_string_attr(f, "generator", path, "/generator");
  if (hdf5::has_attr(f, "episodes_failed", path, "/episodes_failed")) {
    d.episodes_failed = hdf5::read_int_attr(f, "episodes_failed", path, "/episodes_failed");
    if (d.episodes_failed < 0 || d.episodes_failed > DistillDatasetLimits::kMaxSamples)
      hdf5::fail(path, "/episodes_failed", "expected an integer in [0, " +
                                               std::to_string(DistillDatasetLimits::kMaxSamples) + "], got " +
                                               std::to_string(d.episodes_failed));
  }
  d.features = dd_read(f, "features", 2, -1, -1, path, "(N, n_in)");
  d.targets = dd_read(f, "targets", 2, d.features.rows(), -1, path, "(N, n_out)");
  d.episode = dd_read(f, "episode", 1, d.features.rows(), -1, path, "(N,)");
  d.time = dd_read(f, "time", 1, d.features.rows(), -1, path, "(N,)");
  if (hdf5::has_attr(f, "feature_names", path, "/feature_names"))
    d.feature_names = hdf5::read_string_array_attr(f, "feature_names", DistillDatasetLimits::kMaxWidth, path, "/feature_names");
  if (hdf5::has_attr(f, "target_names", path, "/target_names"))
    d.target_names = hdf5::read_string_array_attr(f, "target_names", DistillDatasetLimits::kMaxWidth, path, "/target_names");
  return d;
}

// The first non-finite entry of a matrix, as "row r, column c = v"; "" if none.
std::string dd_first_non_finite(const RowMatrixXd& m) {
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      if (!std::isfinite(m(r, c))) {
        std::ostringstream s;
        s << "row " << r << ", column " << c << " is " << m(r, c);
        return s.str();
      }
  return "";
}

}  // namespace distill_dataset_detail

void DistillDataset::validate(const std::string& source) const {
  using namespace distill_dataset_detail;
  const Eigen::Index n = features.rows();
  auto shape = [](Eigen::Index r, Eigen::Index c) { return "(" + std::to_string(r) + ", " + std::to_string(c) + ")"; };
  if (n < 1) throw DataError(source + ":/features: expected at least 1 sample, got 0");
  if (features.cols() < 1) throw DataError(source + ":/features: expected at least 1 column, got 0");
  if (targets.rows() != n || targets.cols() < 1)
    throw DataError(source + ":/targets: expected shape (" + std::to_string(n) + ", n_out >= 1), got " +
                    shape(targets.rows(), targets.cols()));
  if (episode.size() != n)
    throw DataError(source + ":/episode: expected shape (" + std::to_string(n) + ",), got (" +
                    std::to_string(episode.size()) + ",)");
  if (time.size() != n)
    throw DataError(source + ":/time: expected shape (" + std::to_string(n) + ",), got (" + std::to_string(time.size()) +
                    ",)");
  if (!feature_names.empty() && static_cast<Eigen::Index>(feature_names.size()) != features.cols())
    throw DataError(source + ":/feature_names: expected " + std::to_string(features.cols()) + " names, got " +
                    std::to_string(feature_names.size()));
  if (!target_names.empty() && static_cast<Eigen::Index>(target_names.size()) != targets.cols())
    throw DataError(source + ":/target_names: expected " + std::to_string(targets.cols()) + " names, got " +
                    std::to_string(target_names.size()));
  std::string bad = dd_first_non_finite(features);
  if (!bad.empty()) throw DataError(source + ":/features: every value must be finite; " + bad);
  bad = dd_first_non_finite(targets);
  if (!bad.empty()) throw DataError(source + ":/targets: every value must be finite; " + bad);
  for (Eigen::Index k = 0; k < n; ++k) {
    if (!(episode[k] >= 0 && episode[k] <= 1e15 && episode[k] == std::floor(episode[k])))
      throw DataError(source + ":/episode: expected integers >= 0, got " + std::to_string(episode[k]) + " at row " +
                      std::to_string(k));
    if (!std::isfinite(time[k]))
      throw DataError(source + ":/time: every value must be finite; row " + std::to_string(k) + " is not");
  }
}

void write_distill_dataset(const std::string& path, const DistillDataset& d) {
  using namespace distill_dataset_detail;
  d.validate(path);
  try {
    hdf5::write_file_atomic(path, [&](H5::H5File& f) {
      hdf5::write_string_attr(f, "format", kDistillDatasetFormat);
      hdf5::write_int_attr(f, "format_version", kDistillDatasetFormatVersion);
      hdf5::write_string_attr(f, "system", d.system);
      hdf5::write_string_attr(f, "generator", d.generator);
      hdf5::write_string_array_attr(f, "feature_names", d.feature_names);
      hdf5::write_string_array_attr(f, "target_names", d.target_names);
      if (d.episodes_failed >= 0) hdf5::write_int_attr(f, "episodes_failed", d.episodes_failed);
      const hsize_t n = static_cast<hsize_t>(d.size());
      dd_write(f, "features", d.features.data(), n, static_cast<hsize_t>(d.features.cols()), 2);
      dd_write(f, "targets", d.targets.data(), n, static_cast<hsize_t>(d.targets.cols()), 2);
      dd_write(f, "episode", d.episode.data(), n, 1, 1);
      dd_write(f, "time", d.time.data(), n, 1, 1);
    });
  } catch (const H5::Exception& e) {
    throw ConfigError(cannot_write(path, hdf5::error_text(e)));
  }
}

DistillDataset read_distill_dataset(const std::string& path) {
  using namespace distill_dataset_detail;
  H5::Exception::dontPrint();
  check_input_file(path, "distillation dataset", InputError::kData);
  DistillDataset d;
  try {
    if (!H5::H5File::isHdf5(path)) throw DataError(path + ": not an HDF5 file");
    hdf5::check_global_heaps(path);
    hdf5::read_in_isolation_first(path, [&] { (void)dd_read_file(path); });
    d = dd_read_file(path);
  } catch (const H5::Exception& e) {
    throw DataError(path + ": cannot read (HDF5 error in " + e.getFuncName() + "): " + e.getDetailMsg());
  }
  d.validate(path);
  return d;
}

}  // namespace neuralsim
