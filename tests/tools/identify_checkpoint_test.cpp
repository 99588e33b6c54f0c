// simid's checkpoint: the reader's size bound follows from what the writer
// writes (the last checkpoint of a run of the most rounds, every number at
// full length, is accepted), and a checkpoint reads back to the bit.
#include "neuralsim/tools/identify_checkpoint.hpp"

#include <gtest/gtest.h>

#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/files.hpp"
#include "support/longest_numbers.hpp"

namespace neuralsim {
namespace {

using IdentifyCheckpoint = testing::TempDirTest;

TEST_F(IdentifyCheckpoint, TheLastCheckpointOfTheLongestRunIsAcceptedAndExact) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.length, bounds: [0.1, 10]}, {name: link.link2.length, bounds: [0.1, 10]}]",
                    "identify_checkpoint_test.yaml"),
      "p", model);
  const Fingerprint fingerprint = {{"config.estimate", "0123456789abcdef"}, {"seed", "18446744073709551615"}};
  for (const int rounds : {1, 20000}) {
    BasinHoppingState s;
    s.next_round = rounds;
    s.has_best = true;
    s.best.x = {3.0000000000000004, 0.10000000000000001};
    s.best.cost = s.best.initial_cost = s.best.seconds = -testing::longest_json_number(0);
    s.best.iterations = 123456;
    const int max_iterations = 50;
    for (int k = 0; k <= max_iterations; ++k) s.best.cost_history.push_back(-testing::longest_json_number(k));
    s.best.usable = true;
    s.best.report = "Ceres Solver Report: Iterations: 123456, Initial cost: 1.234568e+300, Final cost: "
                    "1.234568e-300, Termination: NO_CONVERGENCE";
    for (int k = 0; k < rounds; ++k)
      s.history.push_back({k, testing::longest_json_number(k), testing::longest_json_number(k + 1), -testing::longest_json_number(k + 2), 1 << 30, 0, -testing::longest_json_number(k + 3)});
    CheckpointFile store(path("checkpoint.json"));
    write_identify_checkpoint(store, s, params, fingerprint);
    const BasinHoppingState back = read_identify_checkpoint(store, params, fingerprint, rounds, max_iterations);
    EXPECT_EQ(back.next_round, rounds);
    EXPECT_EQ(back.best.x, s.best.x);
    EXPECT_EQ(back.best.report, s.best.report);
    EXPECT_EQ(back.best.cost_history, s.best.cost_history);
    ASSERT_EQ(back.history.size(), s.history.size());
    EXPECT_EQ(back.history.back().round_best_cost, s.history.back().round_best_cost);
    // The bound is the writer's, not a fixed size: a checkpoint of more
    // rounds than this run has is refused before it is parsed.
    if (rounds > 1)
      testing::expect_contains(testing::thrown_message([&] { read_identify_checkpoint(store, params, fingerprint, 1, max_iterations); }),
                               {"checkpoint.json", "bytes, more than a simid checkpoint of 2 parameters and 1 rounds"});
  }
}

// The best solve's nuisance states (fitted starts, segments) read back to
// the bit, within the writer's size bound; a checkpoint with another number
// of them is refused, naming the count.
TEST_F(IdentifyCheckpoint, BestStatesReadBackExactlyAndTheirCountIsChecked) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  const ParameterSet params = read_parameter_set(
      Config::parse("p: [{name: link.link1.length, bounds: [0.1, 10]}]", "identify_checkpoint_test.yaml"), "p", model);
  const Fingerprint fingerprint = {{"seed", "1"}};
  BasinHoppingState s;
  s.next_round = 1;
  s.has_best = true;
  s.best.x = {3.0000000000000004};
  s.best.cost = s.best.initial_cost = s.best.seconds = 1;
  s.best.usable = true;
  for (int k = 0; k < 12; ++k) s.best.states.push_back(-testing::longest_json_number(k));
  s.best.continuity.rounds = 3;  // multiple shooting's penalty rounds: the joints weighed ×10³
  s.history.push_back({0, 1, 1, 0.5, 1, 1, 0.25});
  CheckpointFile store(path("checkpoint.json"));
  write_identify_checkpoint(store, s, params, fingerprint);
  const BasinHoppingState back = read_identify_checkpoint(store, params, fingerprint, 1, 100, 12);
  EXPECT_EQ(back.best.states, s.best.states);
  EXPECT_EQ(back.best.continuity.rounds, 3);
  EXPECT_EQ(back.best.continuity.factor, 1000.0);
  testing::expect_contains(
      testing::thrown_message([&] { read_identify_checkpoint(store, params, fingerprint, 1, 100, 8); }),
      {"checkpoint.json", "best.states must hold 8 numbers"});
}

}  // namespace
}  // namespace neuralsim
