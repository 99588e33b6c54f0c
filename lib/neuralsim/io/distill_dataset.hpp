// The dataset of an MPC distillation (issue 14, the `distill-mpc` tool):
// what the controller saw at each MPC update and what the MPC answered.
//
// ---------------------------------------------------------------- HDF5 layout
// Format "neuralsim-distill-dataset", version 1 (readable with plain h5py).
//
//   /                      attributes:
//       format          string  "neuralsim-distill-dataset"
//       format_version  int64   1
//       system          string  "quadruped" | "linear" (what produced it)
//       generator       string  the tool and version that wrote it
//       feature_names   string[n_in]   one per feature column (may be [])
//       target_names    string[n_out]  one per target column (may be [])
//       episodes_failed int64   optional: how many of the generating
//                               episodes ended early under the MPC (a run
//                               resumed from this file reports it again)
//   /features   float64 (N, n_in)   row k: the controller's input at sample k
//                                   (QuadrupedController::features(), or the
//                                   linear system's state)
//   /targets    float64 (N, n_out)  row k: the MPC's solution (the 12
//                                   first-interval forces, or the first control)
//   /episode    float64 (N,)        the closed-loop episode sample k came from
//                                   (an integer ≥ 0); train/validation splits
//                                   are by episode
//   /time       float64 (N,)        the episode time of sample k [s]
//
// Every value must be finite. Reading validates before it allocates: ranks,
// shapes (all four datasets agree on N), N ≤ DistillDatasetLimits::kMaxSamples,
// widths ≤ kMaxWidth and each dataset's declared size against the file's
// size, then reads. Untrusted files are read once in a child process first
// (hdf5::read_in_isolation_first). Every problem is a one-line DataError
// naming the file and the dataset with the expected against the actual
// value, e.g.
//   data.h5:/targets: expected shape (10000, 12), got (10000, 11)
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

namespace neuralsim {

inline constexpr const char* kDistillDatasetFormat = "neuralsim-distill-dataset";
inline constexpr int kDistillDatasetFormatVersion = 1;

struct DistillDatasetLimits {
  static constexpr long long kMaxSamples = 100'000'000;
  static constexpr long long kMaxWidth = 65536;
};

struct DistillDataset {
  using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::string system;     // "quadruped" | "linear"
  std::string generator;  // free text
  std::vector<std::string> feature_names, target_names;
  RowMatrixXd features;   // N × n_in
  RowMatrixXd targets;    // N × n_out
  Eigen::VectorXd episode, time;  // N
  long long episodes_failed = -1;  // -1: not recorded

  Eigen::Index size() const { return features.rows(); }
  // DataError naming `source` when shapes disagree or a value is not finite.
  void validate(const std::string& source) const;
};

// Writes atomically (io/atomic_file.hpp). ConfigError naming the path when it
// cannot be written; DataError (via validate) for an inconsistent dataset.
void write_distill_dataset(const std::string& path, const DistillDataset& data);

// Reads and validates the whole file (see above).
DistillDataset read_distill_dataset(const std::string& path);

}  // namespace neuralsim
