// The LSTM baseline's weights file: written and read back exactly (so a
// trained LSTM replays as trained), and hostile files refused by name.
#include "neuralsim/io/lstm_file.hpp"

#include <gtest/gtest.h>

#include <random>

#include "neuralsim/core/errors.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

using LstmFileTest = testing::TempDirTest;

NamedLstm random_lstm() {
  NamedLstm l{nn::Lstm(3, 5, 2), {"q", "qd", "u"}, {"dq", "dqd"}};
  std::mt19937_64 rng(11);
  l.network.initialize(rng);
  l.network.set_input_normalization(Eigen::Vector3d(0.1, -2.0, 1.0 / 3.0), Eigen::Vector3d(1.5, 1e-3, 7.0));
  l.network.set_output_scaling(Eigen::Vector2d(0.25, 3.0), Eigen::Vector2d(-1.0 / 7.0, 2e-5));
  return l;
}

TEST_F(LstmFileTest, WhatIsWrittenIsReadBackExactly) {
  const NamedLstm a = random_lstm();
  write_lstm_file(path("lstm.json"), a);
  const NamedLstm b = read_lstm_file(path("lstm.json"));
  EXPECT_EQ(b.input_names, a.input_names);
  EXPECT_EQ(b.output_names, a.output_names);
  EXPECT_EQ(b.network.parameter_vector(), a.network.parameter_vector());
  EXPECT_EQ(b.network.input_mean(), a.network.input_mean());
  EXPECT_EQ(b.network.input_std(), a.network.input_std());
  EXPECT_EQ(b.network.output_scale(), a.network.output_scale());
  EXPECT_EQ(b.network.output_offset(), a.network.output_offset());
  // And it computes the same outputs, to the bit.
  nn::LstmWorkspace wa(a.network, 4), wb(b.network, 4);
  a.network.begin(nullptr, nullptr, wa);
  b.network.begin(nullptr, nullptr, wb);
  const double x[3] = {0.3, -0.7, 1.1};
  double ya[2], yb[2];
  for (int t = 0; t < 4; ++t) {
    a.network.forward_step(x, ya, wa);
    b.network.forward_step(x, yb, wb);
    EXPECT_EQ(ya[0], yb[0]);
    EXPECT_EQ(ya[1], yb[1]);
  }
}

TEST_F(LstmFileTest, HostileFilesAreRefusedByName) {
  write_lstm_file(path("good.json"), random_lstm());
  const std::string good = testing::read_text(path("good.json"));
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return write("bad.json", text);
  };
  testing::expect_contains(testing::thrown_message([&] { read_lstm_file(edited("\"format_version\": 2", "\"format_version\": 1")); }),
                           {"bad.json", "format_version", "retrain"});
  testing::expect_contains(testing::thrown_message([&] { read_lstm_file(edited("\"hidden_size\": 5", "\"hidden_size\": 6")); }),
                           {"bad.json", "'parameters'", "expected"});
  testing::expect_contains(testing::thrown_message([&] { read_lstm_file(edited("\"hidden_size\": 5", "\"hidden_size\": 60000")); }),
                           {"bad.json", "more than 10^7"});
  testing::expect_contains(testing::thrown_message([&] { read_lstm_file(edited("\"input_std\": [", "\"input_std\": [0.0,")); }),
                           {"bad.json", "'input_std'"});
  EXPECT_THROW(read_lstm_file(write("bad.json", "{")), DataError);
  EXPECT_THROW(read_lstm_file(path("missing.json")), DataError);
}

}  // namespace
}  // namespace neuralsim
