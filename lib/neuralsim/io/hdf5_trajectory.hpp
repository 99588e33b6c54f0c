// Reading, writing and validating trajectory files (HDF5).
//
// The layout is documented in docs/data-format.md; it is plain enough that
// h5py reads it with no custom code. Every problem with a file is reported as
// a DataError naming the file, the dataset path and, for shape problems, the
// expected and actual shapes.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"

namespace neuralsim {

inline constexpr const char* kTrajectoryFormat = "neuralsim-trajectories";
inline constexpr int kTrajectoryFormatVersion = 1;
// No dataset of a trajectory file is read if it declares more bytes (nor
// more than the file can hold: see read_trajectories).
inline constexpr long long kMaxTrajectoryDatasetBytes = 8LL << 30;

// Writes `set` to `path` atomically (hdf5_output.hpp), so readers never see
// a half-written file. A file that cannot be written is a ConfigError
// "PATH: cannot write: REASON" (atomic_file.hpp; an existing file at `path`
// is untouched). The set is validated first (structure only, see
// validate_trajectories).
// Trajectories with an empty name are stored as their zero-padded index
// ("000", "001", ...).
// `allow_missing`: NaN (a missing sample) allowed in q, qd, link_poses, imu, tau_measured
// and current.
void write_trajectories(const std::string& path, const TrajectorySet& set, bool allow_missing = false);

// Reads and validates a file written by write_trajectories (or by any tool
// following docs/data-format.md). Trajectory order is the stored `index`
// attribute; Trajectory::name is the group name. Declared dataset shapes are
// checked against the file's size and kMaxTrajectoryDatasetBytes before
// anything is read. Throws DataError naming the file and the dataset.
// `allow_missing`: NaN in q, qd, link_poses, imu, tau_measured and current is a missing sample (gaps, a
// channel sampled at a lower rate: docs/data-format.md) instead of an error;
// ±Inf, and NaN in time or tau, stay errors.
TrajectorySet read_trajectories(const std::string& path, bool allow_missing = false);

// What a consumer needs from a trajectory set. Unset fields (-1, empty) are
// not checked; nq and nv are then taken from the metadata names or the first
// trajectory, and every trajectory must agree with them.
struct TrajectoryExpectations {
  int nq = -1;
  int nv = -1;
  std::vector<std::string> joint_names;  // must equal meta.joint_names
  std::string model;                     // must equal meta.model (or have the same file stem)
  bool require_tau = false;
  std::vector<std::string> required_link_poses;
  bool allow_missing = false;  // NaN (missing) allowed in q, qd, link_poses, imu, tau_measured, current
};

// Checks shapes, finiteness, strictly increasing time and the expectations.
// `source_path` is used in messages only ("<source_path>:/trajectories/003/q").
// Throws DataError on the first problem.
void validate_trajectories(const TrajectorySet& set, const TrajectoryExpectations& expect,
                           const std::string& source_path);

}  // namespace neuralsim
