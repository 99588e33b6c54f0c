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
  NamedLstm l{nn::Lstm(3, 5, 2), {"q", "qd", "u"}, {"dq", "dqd"}, "lstm-delta", true};
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
  EXPECT_EQ(b.model, "lstm-delta");
  ASSERT_TRUE(b.use_controls);
  EXPECT_TRUE(*b.use_controls);
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
  testing::expect_contains(testing::thrown_message([&] { read_lstm_file(edited("\"model\": \"lstm-delta\"", "\"model\": \"gru\"")); }),
                           {"bad.json", "'model'", "gru"});
  testing::expect_contains(testing::thrown_message([&] { read_lstm_file(edited("\"use_controls\": true", "\"use_controls\": 1")); }),
                           {"bad.json", "'use_controls'"});
  // A file from before #38 recorded these fields (version 2 with the
  // offset) has the only LSTM baseline there is; its controls are unknown
  // (the reader of a model decides them from input_dim).
  std::string old = good;
  for (const std::string field : {",\n \"model\": \"lstm-delta\"", ",\n \"use_controls\": true"}) {
    const size_t at = old.find(field);
    ASSERT_NE(at, std::string::npos) << field << " in " << old.substr(0, 200);
    old.erase(at, field.size());
  }
  const NamedLstm o = read_lstm_file(write("old.json", old));
  EXPECT_EQ(o.model, "lstm-delta");
  EXPECT_FALSE(o.use_controls);
  EXPECT_THROW(read_lstm_file(write("bad.json", "{")), DataError);
  EXPECT_THROW(read_lstm_file(path("missing.json")), DataError);
}

}  // namespace
}  // namespace neuralsim
