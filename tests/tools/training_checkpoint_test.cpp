// The training loop's checkpoint: the reader's size bound follows from what
// the writer writes (the last checkpoint of a long run with every number at
// full length is accepted), and a checkpoint reads back to the bit.
#include "neuralsim/tools/training_checkpoint.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "neuralsim/core/errors.hpp"
#include "support/files.hpp"
#include "support/longest_numbers.hpp"

namespace neuralsim {
namespace {

using TrainingCheckpoint = testing::TempDirTest;

TrainingState long_run(int parameters, int epochs) {
  TrainingState s;
  s.epoch = epochs;
  s.x = s.best_x = s.adam_m = s.adam_v = Eigen::VectorXd::NullaryExpr(parameters, [](Eigen::Index i) { return testing::longest_json_number(static_cast<int>(i)); });
  s.adam_v = s.adam_v.cwiseAbs();
  s.best_validation = testing::longest_json_number(1);
  s.best_epoch = epochs - 1;
  s.adam_t = 123456789;
  for (int e = 0; e < epochs; ++e)
    s.history.push_back({e, 1 << 20, testing::longest_json_number(e), testing::longest_json_number(e + 1), testing::longest_json_number(e + 2), testing::longest_json_number(e + 3), 1234567.123456789,
                         1234567.123456789, 1234567.123456789});
  return s;
}

TrainingCheckpointSpec spec_of(int parameters, int epochs) {
  TrainingCheckpointSpec spec;
  spec.num_parameters = parameters;
  for (int i = 0; i < parameters; ++i) spec.parameter_names.push_back("mlp.layer0.weight(" + std::to_string(i) + ", 0)");
  spec.fingerprint = {{"config.train", "0123456789abcdef"}, {"seed", "18446744073709551615"}};
  spec.max_epochs = epochs;
  return spec;
}

TEST_F(TrainingCheckpoint, TheLastCheckpointOfALongRunIsAcceptedAndExact) {
  for (const auto& [parameters, epochs] : {std::pair{49, 150}, std::pair{1, 2000}, std::pair{965, 10}}) {
    const TrainingState s = long_run(parameters, epochs);
    const TrainingCheckpointSpec spec = spec_of(parameters, epochs);
    CheckpointFile store(path("checkpoint.json"));
    write_training_checkpoint(store, s, spec);
    const double size = static_cast<double>(std::filesystem::file_size(path("checkpoint.json")));
    EXPECT_LE(size, training_checkpoint_capacity(spec)) << parameters << " parameters, " << epochs << " epochs";
    const TrainingState r = read_training_checkpoint(store, spec);
    EXPECT_EQ(r.x, s.x);
    EXPECT_EQ(r.adam_v, s.adam_v);
    EXPECT_EQ(r.epoch, s.epoch);
    ASSERT_EQ(r.history.size(), s.history.size());
    EXPECT_EQ(r.history.back().validation_loss, s.history.back().validation_loss);
  }
}

TEST_F(TrainingCheckpoint, OtherParametersAndMissingCheckpointsAreRefused) {
  CheckpointFile store(path("checkpoint.json"));
  testing::expect_contains(testing::thrown_message([&] { read_training_checkpoint(store, spec_of(3, 5)); }),
                           {"checkpoint.json", "no checkpoint to resume from"});
  write_training_checkpoint(store, long_run(3, 5), spec_of(3, 5));
  EXPECT_THROW(read_training_checkpoint(store, spec_of(4, 5)), ConfigError);
  TrainingCheckpointSpec other = spec_of(3, 5);
  other.fingerprint["seed"] = "1";
  testing::expect_contains(testing::thrown_message([&] { read_training_checkpoint(store, other); }),
                           {"different run", "seed"});
}

}  // namespace
}  // namespace neuralsim
