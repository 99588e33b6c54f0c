// Weight files of the networks placed inside the dynamics (nn/mlp.hpp).
//
// ---------------------------------------------------------------- HDF5 layout
// Format "neuralsim-networks", version 1. Readable with plain h5py
// (f["networks/drag/layer0/weight"][...] is the (out, in) matrix).
//
//   /                                attributes:
//       format          string  "neuralsim-networks"
//       format_version  int64   1
//       model           string  what the networks are (written since #38):
//                               "hybrid" (the networks of an augment:
//                               section, each named after its blueprint),
//                               "mlp-delta" or "mlp-direct" (train-augment's
//                               MLP baseline, one network "mlp"). Absent in
//                               older files: the reader reports "" and the
//                               caller decides (rollout refuses to guess).
//       use_controls    int64   0 | 1, baselines only: the input ends with u
//   /networks/                       group, one subgroup per network
//   /networks/<name>/                <name>: the augmentation site, a plain
//                                    HDF5 link name (non-empty, no '/')
//       attributes:
//         num_layers    int64   L ≥ 1 (the groups layer0 … layer{L-1})
//         index         int64   position in the written list (read order)
//         input_names   string[n_in]   names of the inputs (may be empty: [])
//         output_names  string[n_out]  names of the outputs (may be empty: [])
//         zero_init_outputs int64  optional, 0 | 1: the output layer started
//                                  at zero (a hybrid starts at its
//                                  analytical model); provenance only
//       input_mean      float64 (n_in,)    x̃ = (x − input_mean) / input_std
//       input_std       float64 (n_in,)    every entry finite and > 0
//       output_scale    float64 (n_out,)   y = output_scale ⊙ a_L + output_offset
//       output_offset   float64 (n_out,)
//       layer<l>/                    l = 0 … L−1, layer 0 is applied first
//         attribute activation  string: identity | tanh | relu | elu |
//                                       softplus | sigmoid | sin
//         weight        float64 (out_l, in_l), row-major (C order) as in h5py;
//                       in_0 = n_in, in_l = out_{l−1}, out_{L−1} = n_out
//         bias          float64 (out_l,)
//
// Strings are written as variable-length UTF-8; fixed-length strings (numpy
// "S" arrays) are read too. Datasets may be any HDF5 floating-point type
// (float32 files written by hand are converted exactly); every value must
// be finite.
//
// Reading validates before it allocates: every dataset's rank and declared
// shape is checked against its neighbours and against NetworkLimits (each
// dimension ≤ 65536, ≤ 10^7 parameters per network, the file ≤ 1 GiB)
// before any data is read. Every problem is a one-line DataError naming the
// file and the dataset or attribute with the expected against the actual
// value, e.g.
//   weights.h5:/networks/drag/layer1/weight: expected shape (16, 8), got (16, 9)
// HDF5's own error stack is never printed; HDF5 failures become DataErrors
// naming the file and the object being read.
//
// ---------------------------------------------------------------- JSON
// networks_to_json() gives the same content for humans:
//   {"format": "neuralsim-networks", "format_version": 1,
//    "networks": [{"name": …, "input_names": […], "output_names": […],
//                  "input_mean": […], "input_std": […], "output_scale": […],
//                  "output_offset": […],
//                  "layers": [{"activation": "tanh", "weight": [[row 0], …],
//                              "bias": […]}, …]}, …]}
// (nlohmann::json sorts object keys; networks and layers are arrays so
// their order is kept.) Numbers are printed so that they parse back to the
// same double.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/nn/mlp.hpp"

namespace neuralsim {

inline constexpr const char* kNetworkFormat = "neuralsim-networks";
inline constexpr int kNetworkFormatVersion = 1;

// What read_networks() accepts; anything larger is a DataError before any
// data is read.
struct NetworkLimits {
  static constexpr long long kMaxDim = 65536;               // any n_in, n_out, layer width
  static constexpr long long kMaxParameters = 10'000'000;   // per network
  static constexpr long long kMaxLayers = 1024;             // per network
  static constexpr long long kMaxNetworks = 1024;           // per file
  static constexpr long long kMaxFileBytes = 1LL << 30;     // 1 GiB
};

// One network of a weights file.
struct NamedNetwork {
  std::string name;  // HDF5 link name: non-empty, no '/', not "." or ".."
  nn::Mlp network;
  std::vector<std::string> input_names;   // empty, or network.input_dim() names
  std::vector<std::string> output_names;  // empty, or network.output_dim() names
  std::optional<bool> zero_init_outputs;  // recorded when known (hybrid networks)
};

// The file-level description of what the networks are (root attributes
// `model`, `use_controls`).
struct WeightsFileModel {
  std::string model;                // "hybrid" | "mlp-delta" | "mlp-direct"; "" = not recorded
  std::optional<bool> use_controls;  // baselines
};

// Writes `networks` (at least one; unique valid names; names lists empty or
// of matching length, else InvalidArgument) atomically (hdf5_output.hpp):
// `path` is replaced only by the complete file. A file that cannot be
// written is a ConfigError "PATH: cannot write: REASON" (atomic_file.hpp).
void write_networks(const std::string& path, const std::vector<NamedNetwork>& networks,
                    const WeightsFileModel& model = {});
// The root attributes `model` and `use_controls` (after the file-level checks).
WeightsFileModel read_weights_file_model(const std::string& path);

// What a weights file written by train-augment holds, from its content (the
// HDF5 signature and the root attribute `model`, or the LSTM file's
// `format`), never its name: "hybrid", "mlp-delta", "mlp-direct",
// "lstm-delta", or "" for a network file that predates the attribute.
// DataError for a file that is neither (naming the file).
std::string trained_model_kind(const std::string& path);

// Every network of the file, in written order, fully validated (see above).
std::vector<NamedNetwork> read_networks(const std::string& path);
// One network by name; DataError listing the available names if missing.
NamedNetwork read_network(const std::string& path, const std::string& name);
// The names of the networks in a file, in written order (no weights read).
std::vector<std::string> network_names(const std::string& path);

// What a model expects of a network at one augmentation site; -1 / empty =
// no expectation.
struct NetworkExpectations {
  nn::Index inputs = -1;
  nn::Index outputs = -1;
  std::vector<std::string> input_names;   // checked if both this and the file's are non-empty
  std::vector<std::string> output_names;
};

// DataError naming `source_path` and /networks/<name> if `net` does not
// match, e.g.
//   weights.h5:/networks/drag: expected 8 inputs, got 9 (network 9 -> 16 tanh -> 3 identity)
//   weights.h5:/networks/drag/input_names: expected [q0, qd0], got [qd0, q0]
void check_network(const NamedNetwork& net, const NetworkExpectations& expect,
                   const std::string& source_path);

// The JSON form above.
nlohmann::json networks_to_json(const std::vector<NamedNetwork>& networks);
// networks_to_json(networks).dump(2), written atomically (write_text_atomic).
void write_networks_json(const std::string& path, const std::vector<NamedNetwork>& networks);

}  // namespace neuralsim
