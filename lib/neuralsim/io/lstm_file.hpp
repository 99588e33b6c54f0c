// The LSTM baseline's weights file (train-augment's lstm.json), JSON:
//
//   {"format": "neuralsim-lstm", "format_version": 2,
//    "input_dim": n_x, "hidden_size": H, "output_dim": n_y,
//    "input_names": [...], "output_names": [...],
//    "input_mean": [n_x], "input_std": [n_x],      x̃ = (x − mean) / std
//    "output_scale": [n_y], "output_offset": [n_y], y = scale ⊙ a + offset
//    "parameters": [4H(n_x + H + 1) + n_y(H + 1)]}  (nn/lstm.hpp's order)
//
// Numbers are written so that they parse back to the same double: what is
// written is read back exactly. Reading checks the size (64 MiB), the
// format, every shape against the dimensions (each ≤ 65536) and that every
// number is finite (std > 0), with a one-line DataError naming the file and
// the key. Version 1 files (written before the offset was recorded) are
// refused: they cannot be replayed exactly.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/nn/lstm.hpp"

namespace neuralsim {

struct NamedLstm {
  nn::Lstm network;
  std::vector<std::string> input_names, output_names;
};

void write_lstm_file(const std::string& path, const NamedLstm& lstm);
NamedLstm read_lstm_file(const std::string& path);

}  // namespace neuralsim
