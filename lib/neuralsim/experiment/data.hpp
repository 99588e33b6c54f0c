// Trajectory data for a tool: files (HDF5, or a CSV-import description),
// lists of files, train/validation splits, reach targets, and the checks
// that the data fit the model. Shared by every tool that reads recordings.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// An HDF5 trajectory file, or a CSV-import description (.yaml/.yml) whose
// CSV files are imported. Remarks (dropped duplicate time stamps) go to
// `notes` when not null; every tool reports them as warnings.
// `allow_missing`: NaN in q, qd and link_poses of an HDF5 file is a missing
// sample (io/hdf5_trajectory.hpp), for simid's observed channels.
TrajectorySet load_trajectory_file(const std::string& path, std::vector<std::string>* notes = nullptr,
                                   bool allow_missing = false);

// The file, or list of files, at `key` of `owner` (paths relative to the
// config, or to the working directory when given by --set). With several
// files, trajectory names are prefixed by the file stem. `source` receives
// the paths, for messages.
TrajectorySet load_trajectory_files(const Config& owner, const std::string& key, std::string& source,
                                    std::vector<std::string>* notes = nullptr, bool allow_missing = false);

struct DataSplit {
  // train: fitted; validation: early stopping and model selection; test:
  // evaluated once, with the selected model, and reported (never seen by
  // training or selection).
  TrajectorySet train, validation, test;
  std::string train_source, validation_source, test_source;
  bool targets = false;  // the training "data" are reach targets (data.targets)
};

// The `data:` section: {train: file | [files], validation: file | [files]
// | validation_fraction: f, test: file | [files] | test_fraction: f,
// max_samples: n, targets: [...]}. The data are checked against the model
// (joint names, shapes, finiteness).
// Fractions split the training files' trajectories in their order,
// [train | validation | test]: the test fraction takes the last
// floor(f_test·n) trajectories, the validation fraction the floor(f_val·n)
// before them (each of the same n). A ConfigError naming the key refuses a
// fraction outside [0, 1) or not finite, fractions that leave no training
// trajectory, and a test set that overlaps training or validation (a file
// named by both, after resolving paths): held-out data must be held out.
// max_samples cuts every trajectory (train, validation, test) to its first n
// samples; 0 (the default) keeps them whole. `velocity: {method:
// savitzky_golay, window: W, order: P}` replaces the recorded q̇ by the
// derivative of the positions (core/derivative_filter.hpp), for
// recordings whose velocity channel lags or is quantized, and drops the
// W/2 samples at each end; `velocity: recorded` (default) keeps q̇.
// `allow_missing` (simid): NaN in q, qd and link_poses is a missing sample;
// the caller decides where it can be skipped (estimate/missing_data.hpp).
DataSplit load_data(const Config& data, const Model<double>& model, std::vector<std::string>* notes = nullptr,
                    bool allow_missing = false);


// Throws DataError naming the file and dataset when `set` does not fit
// `model` (nq, nv, joint names; τ when `require_tau`).
void validate_against_model(const TrajectorySet& set, const Model<double>& model, const std::string& source,
                            bool require_tau = false, bool allow_missing = false);

// Warnings about data that are valid but implausible for `model`: positions
// far outside a joint's limits, magnitudes no robot reaches (|q| > 1e3 per
// coordinate, |q̇| > 1e4), time steps over 10 s. Tools log them and list
// them in summary.json; at most one line per trajectory and kind.
std::vector<std::string> plausibility_warnings(const TrajectorySet& set, const Model<double>& model,
                                               const std::string& source);

// Metadata for trajectories a tool writes: the model, its coordinate names,
// `generator` ("rollout 0.1.0 (rev …)"), the parameters JSON and the seed.
TrajectoryMetadata trajectory_metadata(const Model<double>& model, const std::string& generator,
                                       const std::string& parameters_json, long long seed);

}  // namespace neuralsim
