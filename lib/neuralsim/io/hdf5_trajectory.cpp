#include "neuralsim/core/names.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"

#include "neuralsim/io/atomic_file.hpp"

#include <H5Cpp.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/io/hdf5_attributes.hpp"
#include "neuralsim/io/hdf5_output.hpp"
#include "neuralsim/io/input_file.hpp"

namespace neuralsim {
namespace {

namespace fs = std::filesystem;
using hdf5::bracketed_list;
using hdf5::fail;
using hdf5::has_child;
using hdf5::read_format;
using hdf5::write_doubles;
using hdf5::has_attr;
using hdf5::read_int_attr;
using hdf5::read_string_attr;
using hdf5::shape_string;
using hdf5::with_context;
using hdf5::write_int_attr;
using hdf5::write_string_array_attr;
using hdf5::write_string_attr;

// One name per coordinate; far above any real robot.
constexpr hssize_t kMaxNames = 65536;

constexpr int kPoseColumns = 7;

// ---------------------------------------------------------------- messages

std::string trajectory_path(const std::string& name) { return "/trajectories/" + name; }

// ---------------------------------------------------------------- validation

struct Dims {
  Eigen::Index nq;
  Eigen::Index nv;
};

// Without explicit expectations, the metadata names and then the first
// trajectory define the dimensions every trajectory must share.
Dims expected_dims(const TrajectorySet& set, const TrajectoryExpectations& expect) {
  const Trajectory& first = set.trajectories.front();
  const TrajectoryMetadata& meta = set.meta;
  Dims d{};
  d.nq = expect.nq >= 0          ? expect.nq
         : !meta.q_names.empty() ? static_cast<Eigen::Index>(meta.q_names.size())
                                 : first.q.cols();
  d.nv = expect.nv >= 0              ? expect.nv
         : !meta.joint_names.empty() ? static_cast<Eigen::Index>(meta.joint_names.size())
                                     : first.qd.cols();
  return d;
}

bool same_model(const std::string& expected, const std::string& actual) {
  if (expected == actual) return true;
  // A model is sometimes recorded by file ("configs/models/pendulum.yaml").
  return !actual.empty() && fs::path(expected).stem() == fs::path(actual).stem();
}

void check_metadata(const TrajectorySet& set, const TrajectoryExpectations& expect,
                    const Dims& dims, const std::string& file) {
  const TrajectoryMetadata& meta = set.meta;
  if (!expect.model.empty() && !same_model(expect.model, meta.model)) {
    fail(file, "/model", "expected model '" + expect.model + "', got '" + meta.model + "'");
  }
  if (!expect.joint_names.empty() && meta.joint_names != expect.joint_names) {
    fail(file, "/joint_names",
         "joint names do not match the model: expected " + bracketed_list(expect.joint_names) + ", got " +
             bracketed_list(meta.joint_names));
  }
  if (!meta.joint_names.empty() && static_cast<Eigen::Index>(meta.joint_names.size()) != dims.nv) {
    fail(file, "/joint_names",
         "expected shape (nv=" + std::to_string(dims.nv) + "), got (" +
             std::to_string(meta.joint_names.size()) + "): " + bracketed_list(meta.joint_names));
  }
  if (!meta.q_names.empty() && static_cast<Eigen::Index>(meta.q_names.size()) != dims.nq) {
    fail(file, "/q_names",
         "expected shape (nq=" + std::to_string(dims.nq) + "), got (" +
             std::to_string(meta.q_names.size()) + "): " + bracketed_list(meta.q_names));
  }
}

// `column_label` is "nq", "nv" or empty for a fixed column count.
void check_shape(const RowMatrixXd& m, Eigen::Index rows, Eigen::Index cols,
                 const std::string& column_label, const std::string& file,
                 const std::string& dataset) {
  if (m.rows() == rows && m.cols() == cols) return;
  const std::string expected_cols =
      column_label.empty() ? std::to_string(cols) : column_label + "=" + std::to_string(cols);
  fail(file, dataset,
       "expected shape (T=" + std::to_string(rows) + ", " + expected_cols + "), got (" +
           std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")");
}

// `missing`: NaN marks a missing entry (an observed channel with gaps or
// sampled at a lower rate); ±Inf stays an error.
void check_finite(const RowMatrixXd& m, const std::string& file, const std::string& dataset, bool missing = false) {
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      if (!std::isfinite(m(r, c)) && !(missing && std::isnan(m(r, c)))) {
        fail(file, dataset,
             "non-finite value " + format_number(m(r, c)) + " at row " + std::to_string(r) +
                 ", column " + std::to_string(c));
      }
    }
  }
}

void check_time(const Eigen::VectorXd& t, const std::string& file, const std::string& dataset) {
  if (t.size() == 0) {
    fail(file, dataset, "trajectory has zero samples: expected shape (T>=1), got (0)");
  }
  for (Eigen::Index i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t[i])) {
      fail(file, dataset,
           "non-finite value " + format_number(t[i]) + " at index " + std::to_string(i));
    }
    if (i > 0 && !(t[i] > t[i - 1])) {
      fail(file, dataset,
           "time not strictly increasing at index " + std::to_string(i) + ": t[" +
               std::to_string(i - 1) + "]=" + format_number(t[i - 1]) + ", t[" + std::to_string(i) +
               "]=" + format_number(t[i]));
    }
  }
}

void check_link_poses(const Trajectory& tr, const TrajectoryExpectations& expect,
                      const std::string& file, const std::string& base) {
  const Eigen::Index T = tr.size();
  for (const auto& [link, pose] : tr.link_poses) {
    const std::string dataset = base + "/link_poses/" + link;
    check_shape(pose, T, kPoseColumns, "", file, dataset);
    check_finite(pose, file, dataset, expect.allow_missing);
  }
  for (const std::string& link : expect.required_link_poses) {
    if (tr.link_poses.count(link) == 0) {
      fail(file, base + "/link_poses/" + link,
           "required link pose missing: expected shape (T=" + std::to_string(T) + ", 7)");
    }
  }
  for (const auto& [sensor, reading] : tr.imus) {
    const std::string dataset = base + "/imu/" + sensor;
    check_shape(reading, T, 6, "", file, dataset);
    check_finite(reading, file, dataset, expect.allow_missing);
  }
}

void check_trajectory(const Trajectory& tr, const std::string& name, const Dims& dims,
                      const TrajectoryExpectations& expect, const std::string& file) {
  const std::string base = trajectory_path(name);
  check_time(tr.time, file, base + "/time");
  const Eigen::Index T = tr.size();
  check_shape(tr.q, T, dims.nq, "nq", file, base + "/q");
  check_finite(tr.q, file, base + "/q", expect.allow_missing);
  check_shape(tr.qd, T, dims.nv, "nv", file, base + "/qd");
  check_finite(tr.qd, file, base + "/qd", expect.allow_missing);
  if (tr.has_tau()) {
    check_shape(tr.tau, T, dims.nv, "nv", file, base + "/tau");
    check_finite(tr.tau, file, base + "/tau");
  } else if (expect.require_tau) {
    fail(file, base + "/tau",
         "tau required but absent: expected shape (T=" + std::to_string(T) +
             ", nv=" + std::to_string(dims.nv) + ")");
  }
  // The joint-force sensors (simid's joint_torques and motor_currents).
  for (const auto& [m, dataset] : {std::pair<const RowMatrixXd*, const char*>{&tr.tau_measured, "/tau_measured"},
                                   {&tr.current, "/current"}}) {
    if (m->size() == 0) continue;
    check_shape(*m, T, dims.nv, "nv", file, base + dataset);
    check_finite(*m, file, base + dataset, expect.allow_missing);
  }
  check_link_poses(tr, expect, file, base);
}

// The names the trajectories get on disk: their own, or the zero-padded index.
std::vector<std::string> storage_names(const std::vector<Trajectory>& trajectories) {
  const size_t n = trajectories.size();
  const size_t width = std::max<size_t>(3, std::to_string(n == 0 ? 0 : n - 1).size());
  std::vector<std::string> names;
  names.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string name = trajectories[i].name;
    if (name.empty()) {
      name = std::to_string(i);
      name.insert(0, width - std::min(width, name.size()), '0');
    }
    names.push_back(std::move(name));
  }
  return names;
}

// ---------------------------------------------------------------- writing

void write_matrix(H5::Group& group, const std::string& name, const RowMatrixXd& m) {
  write_doubles(group, name, m.data(), m.rows(), m.cols(), 2);
}

void write_metadata(H5::H5File& file, const TrajectoryMetadata& meta) {
  write_string_attr(file, "format", kTrajectoryFormat);
  write_int_attr(file, "format_version", kTrajectoryFormatVersion);
  write_string_attr(file, "model", meta.model);
  write_string_array_attr(file, "joint_names", meta.joint_names);
  write_string_array_attr(file, "q_names", meta.q_names);
  write_string_attr(file, "units", meta.units);
  write_string_attr(file, "generator", meta.generator);
  write_string_attr(file, "parameters", meta.parameters_json);
  write_int_attr(file, "seed", meta.seed);
}

void write_trajectory(H5::Group& parent, const std::string& name, size_t index,
                      const Trajectory& tr) {
  H5::Group group = parent.createGroup(name);
  write_int_attr(group, "index", static_cast<long long>(index));
  write_doubles(group, "time", tr.time.data(), tr.time.size(), 1, 1);
  write_matrix(group, "q", tr.q);
  write_matrix(group, "qd", tr.qd);
  if (tr.has_tau()) write_matrix(group, "tau", tr.tau);
  if (tr.tau_measured.size() > 0) write_matrix(group, "tau_measured", tr.tau_measured);
  if (tr.current.size() > 0) write_matrix(group, "current", tr.current);
  if (!tr.imus.empty()) {
    H5::Group imus = group.createGroup("imu");
    for (const auto& [sensor, reading] : tr.imus) write_matrix(imus, sensor, reading);
  }
  if (tr.link_poses.empty()) return;
  H5::Group poses = group.createGroup("link_poses");
  for (const auto& [link, pose] : tr.link_poses) write_matrix(poses, link, pose);
}

void write_file(H5::H5File& file, const TrajectorySet& set, const std::vector<std::string>& names) {
  write_metadata(file, set.meta);
  H5::Group group = file.createGroup("trajectories");
  for (size_t i = 0; i < set.trajectories.size(); ++i) {
    write_trajectory(group, names[i], i, set.trajectories[i]);
  }
}

// Group and dataset names must be plain HDF5 link names.
void check_link_name(const std::string& name, const std::string& file, const std::string& dataset) {
  if (!is_plain_name(name)) {
    fail(file, dataset, "invalid name '" + name + "' (must be non-empty, without '/')");
  }
}

void check_storage_names(const TrajectorySet& set, const std::vector<std::string>& names,
                         const std::string& file) {
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    check_link_name(names[i], file, trajectory_path(names[i]));
    if (!seen.insert(names[i]).second) {
      fail(file, trajectory_path(names[i]), "duplicate trajectory name");
    }
    for (const auto& entry : set.trajectories[i].link_poses) {
      check_link_name(entry.first, file, trajectory_path(names[i]) + "/link_poses/" + entry.first);
    }
    for (const auto& entry : set.trajectories[i].imus)
      check_link_name(entry.first, file, trajectory_path(names[i]) + "/imu/" + entry.first);
  }
}

// ---------------------------------------------------------------- reading

TrajectoryMetadata read_metadata(const H5::H5File& h5, const std::string& file) {
  read_format(h5, file, kTrajectoryFormat, kTrajectoryFormatVersion, "trajectory");
  TrajectoryMetadata meta;
  auto str = [&](const char* name, std::string& out) {
    if (has_attr(h5, name, file, std::string("/") + name)) out = read_string_attr(h5, name, file, std::string("/") + name);
  };
  auto list = [&](const char* name, std::vector<std::string>& out) {
    if (has_attr(h5, name, file, std::string("/") + name)) out = hdf5::read_string_array_attr(h5, name, kMaxNames, file, std::string("/") + name);
  };
  str("model", meta.model);
  list("joint_names", meta.joint_names);
  list("q_names", meta.q_names);
  str("units", meta.units);
  str("generator", meta.generator);
  str("parameters", meta.parameters_json);
  if (has_attr(h5, "seed", file, "/seed")) meta.seed = read_int_attr(h5, "seed", file, "/seed");
  return meta;
}

// A declared shape is believed only if the file can hold it: contiguous
// data cannot exceed the file, and chunked (possibly deflated) data at most
// ~1000 times it (deflate's limit is 1032:1); in any case at most
// kMaxTrajectoryDatasetBytes. Checked before anything is allocated, so a
// small hostile file cannot ask for gigabytes.
void check_declared_size(const H5::DataSet& ds, const std::vector<hsize_t>& dims, const std::string& file,
                         const std::string& dataset) {
  long double values = 1;
  for (hsize_t d : dims) values *= static_cast<long double>(d);
  const long double bytes = values * sizeof(double);
  std::error_code ec;
  const long double file_bytes = static_cast<long double>(fs::file_size(file, ec));
  const bool chunked = ds.getCreatePlist().getLayout() == H5D_CHUNKED;
  const long double limit =
      std::min<long double>(kMaxTrajectoryDatasetBytes, (chunked ? 1100.0L : 1.0L) * file_bytes + 4096.0L);
  if (bytes > limit) {
    std::ostringstream msg;
    msg << "declares shape " << shape_string(dims) << " (" << static_cast<double>(bytes) << " bytes), more than "
        << (bytes > kMaxTrajectoryDatasetBytes ? "the limit of " + std::to_string(kMaxTrajectoryDatasetBytes >> 20) + " MiB"
                                               : "a " + std::to_string(static_cast<long long>(file_bytes)) + "-byte file can hold");
    fail(file, dataset, msg.str());
  }
}

// `shape_hint` is the expected shape in words, e.g. "(T, nq)".
RowMatrixXd read_dataset(const H5::Group& group, const std::string& name, int rank,
                         const std::string& shape_hint, const std::string& file,
                         const std::string& dataset) {
  if (!with_context(file, dataset, [&] { return has_child(group, name, H5O_TYPE_DATASET); })) {
    fail(file, dataset, "dataset missing (expected shape " + shape_hint + ")");
  }
  return with_context(file, dataset, [&] {
    H5::DataSet ds = group.openDataSet(name);
    const H5T_class_t type_class = ds.getTypeClass();
    if (type_class != H5T_FLOAT && type_class != H5T_INTEGER) {
      fail(file, dataset, "expected a float64 dataset, got a non-numeric type");
    }
    const H5::DataSpace space = ds.getSpace();
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(space.getSimpleExtentNdims(), 0)));
    if (!dims.empty()) space.getSimpleExtentDims(dims.data());
    if (static_cast<int>(dims.size()) != rank) {
      fail(file, dataset, "expected shape " + shape_hint + ", got " + shape_string(dims));
    }
    check_declared_size(ds, dims, file, dataset);
    const Eigen::Index rows = static_cast<Eigen::Index>(dims[0]);
    const Eigen::Index cols = rank == 2 ? static_cast<Eigen::Index>(dims[1]) : 1;
    RowMatrixXd m(rows, cols);
    if (m.size() > 0) ds.read(m.data(), H5::PredType::NATIVE_DOUBLE);
    return m;
  });
}

Trajectory read_trajectory(const H5::Group& parent, const std::string& name,
                           const std::string& file) {
  const std::string base = trajectory_path(name);
  const H5::Group group = with_context(file, base, [&] { return parent.openGroup(name); });
  Trajectory tr;
  tr.name = name;
  const RowMatrixXd time = read_dataset(group, "time", 1, "(T)", file, base + "/time");
  tr.time = Eigen::Map<const Eigen::VectorXd>(time.data(), time.rows());
  tr.q = read_dataset(group, "q", 2, "(T, nq)", file, base + "/q");
  tr.qd = read_dataset(group, "qd", 2, "(T, nv)", file, base + "/qd");
  if (with_context(file, base + "/tau", [&] { return has_child(group, "tau", H5O_TYPE_DATASET); }))
    tr.tau = read_dataset(group, "tau", 2, "(T, nv)", file, base + "/tau");
  for (const auto& entry : {std::pair<RowMatrixXd*, const char*>{&tr.tau_measured, "tau_measured"},
                            {&tr.current, "current"}}) {
    const char* dataset = entry.second;
    if (with_context(file, base + "/" + dataset, [&] { return has_child(group, dataset, H5O_TYPE_DATASET); }))
      *entry.first = read_dataset(group, dataset, 2, "(T, nv)", file, base + "/" + dataset);
  }
  const std::string imu_path = base + "/imu";
  if (with_context(file, imu_path, [&] { return has_child(group, "imu", H5O_TYPE_GROUP); })) {
    const H5::Group imus = with_context(file, imu_path, [&] { return group.openGroup("imu"); });
    const hsize_t n = with_context(file, imu_path, [&] { return imus.getNumObjs(); });
    for (hsize_t i = 0; i < n; ++i) {
      const std::string sensor = with_context(file, imu_path, [&] { return imus.getObjnameByIdx(i); });
      tr.imus[sensor] = read_dataset(imus, sensor, 2, "(T, 6)", file, imu_path + "/" + sensor);
    }
  }
  const std::string poses_path = base + "/link_poses";
  if (!with_context(file, poses_path, [&] { return has_child(group, "link_poses", H5O_TYPE_GROUP); })) return tr;
  const H5::Group poses = with_context(file, poses_path, [&] { return group.openGroup("link_poses"); });
  const hsize_t n = with_context(file, poses_path, [&] { return poses.getNumObjs(); });
  for (hsize_t i = 0; i < n; ++i) {
    const std::string link = with_context(file, poses_path, [&] { return poses.getObjnameByIdx(i); });
    tr.link_poses[link] =
        read_dataset(poses, link, 2, "(T, 7)", file, base + "/link_poses/" + link);
  }
  return tr;
}

// Trajectory group names in stored order: by the `index` attribute, groups
// without one (written by other tools) after those, by name.
std::vector<std::string> ordered_trajectory_names(const H5::Group& group, const std::string& file) {
  std::vector<std::pair<long long, std::string>> entries;
  const hsize_t n = with_context(file, "/trajectories", [&] { return group.getNumObjs(); });
  for (hsize_t i = 0; i < n; ++i) {
    const std::string name = with_context(file, "/trajectories", [&] { return group.getObjnameByIdx(i); });
    const std::string path = trajectory_path(name);
    if (with_context(file, path, [&] { return group.childObjType(name); }) != H5O_TYPE_GROUP)
      fail(file, path, "expected a group");
    const H5::Group child = with_context(file, path, [&] { return group.openGroup(name); });
    const long long index = has_attr(child, "index", file, path + "/index")
                                ? read_int_attr(child, "index", file, path + "/index")
                                : std::numeric_limits<long long>::max();
    entries.emplace_back(index, name);
  }
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> names;
  for (auto& entry : entries) names.push_back(std::move(entry.second));
  return names;
}

TrajectorySet read_file(const std::string& path) {
  const H5::H5File h5(path, H5F_ACC_RDONLY);
  TrajectorySet set;
  set.meta = read_metadata(h5, path);
  if (!with_context(path, "/trajectories", [&] { return has_child(h5, "trajectories", H5O_TYPE_GROUP); }))
    fail(path, "/trajectories", "group missing");
  const H5::Group group = with_context(path, "/trajectories", [&] { return h5.openGroup("trajectories"); });
  for (const std::string& name : ordered_trajectory_names(group, path)) {
    set.trajectories.push_back(read_trajectory(group, name, path));
  }
  return set;
}

}  // namespace

void validate_trajectories(const TrajectorySet& set, const TrajectoryExpectations& expect,
                           const std::string& source_path) {
  if (set.trajectories.empty()) {
    fail(source_path, "/trajectories", "contains no trajectories (expected at least 1, got 0)");
  }
  const Dims dims = expected_dims(set, expect);
  check_metadata(set, expect, dims, source_path);
  const std::vector<std::string> names = storage_names(set.trajectories);
  for (size_t i = 0; i < set.trajectories.size(); ++i) {
    check_trajectory(set.trajectories[i], names[i], dims, expect, source_path);
  }
}

void write_trajectories(const std::string& path, const TrajectorySet& set, bool allow_missing) {
  H5::Exception::dontPrint();
  TrajectoryExpectations expect;
  expect.allow_missing = allow_missing;
  validate_trajectories(set, expect, path);
  const std::vector<std::string> names = storage_names(set.trajectories);
  check_storage_names(set, names, path);

  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    throw ConfigError(cannot_write(path, "directory '" + parent.string() + "' does not exist"));
  try {
    hdf5::write_file_atomic(path, [&](H5::H5File& file) { write_file(file, set, names); });
  } catch (const H5::Exception& e) {
    // An output that cannot be written is reported like every other (bad --out).
    throw ConfigError(cannot_write(path, hdf5::error_text(e)));
  }
}

TrajectorySet read_trajectories(const std::string& path, bool allow_missing) {
  H5::Exception::dontPrint();
  check_input_file(path, "trajectory file", InputError::kData);
  TrajectorySet set;
  try {
    if (!H5::H5File::isHdf5(path)) throw DataError(path + ": not an HDF5 file");
    hdf5::check_global_heaps(path);
    hdf5::read_in_isolation_first(path, [&] { (void)read_file(path); });
    set = read_file(path);
  } catch (const H5::Exception& e) {
    throw DataError(path + ": cannot read (HDF5 error in " + e.getFuncName() +
                    "): " + e.getDetailMsg());
  }
  TrajectoryExpectations expect;
  expect.allow_missing = allow_missing;
  validate_trajectories(set, expect, path);
  return set;
}

}  // namespace neuralsim
