// The LSTM baseline's weights file (train-augment's lstm.json), JSON:
//
//   {"format": "neuralsim-lstm", "format_version": 2,
//    "input_dim": n_x, "hidden_size": H, "output_dim": n_y,
//    "input_names": [...], "output_names": [...],
//    "input_mean": [n_x], "input_std": [n_x],      x̃ = (x − mean) / std
//    "output_scale": [n_y], "output_offset": [n_y], y = scale ⊙ a + offset
//    "parameters": [4H(n_x + H + 1) + n_y(H + 1)],  (nn/lstm.hpp's order)
//    "model": "lstm-delta", "use_controls": true}
//
// `model` says what the network steps (x̂_{k+1} = x̂_k + y_k, the only LSTM
// baseline: train/baseline_models.hpp) and `use_controls` whether its input
// ends with the controls u; both were added in #38 within version 2. A file
// without them reads as "lstm-delta" (the only kind there has ever been)
// with use_controls unknown (nullopt): the reader of a model decides it from
// input_dim, which is nq + nv or nq + 2 nv, never both.
//
// Numbers are written so that they parse back to the same double: what is
// written is read back exactly. Reading checks the size (64 MiB), the
// format, every shape against the dimensions (each ≤ 65536) and that every
// number is finite (std > 0), with a one-line DataError naming the file and
// the key. Version 1 files (written before the offset was recorded) are
// refused: they cannot be replayed exactly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "neuralsim/nn/lstm.hpp"

namespace neuralsim {

struct NamedLstm {
  nn::Lstm network;
  std::vector<std::string> input_names, output_names;
  std::string model = "lstm-delta";
  std::optional<bool> use_controls;
};

void write_lstm_file(const std::string& path, const NamedLstm& lstm);
NamedLstm read_lstm_file(const std::string& path);

}  // namespace neuralsim
