// discover's checkpoint: the reader's size bound follows from what the
// writer writes (the last checkpoint of the largest run a spec allows, every
// number at full length, is accepted, with every repetition complete or the
// last one in progress), and a checkpoint reads back to the bit.
#include "neuralsim/tools/discover_checkpoint.hpp"

#include <gtest/gtest.h>

#include "neuralsim/core/errors.hpp"
#include "support/files.hpp"
#include "support/longest_numbers.hpp"

namespace neuralsim {
namespace {

using DiscoverCheckpoint = testing::TempDirTest;

DiscoverRepetition repetition(const DiscoverCheckpointSpec& spec, int index, int points) {
  DiscoverRepetition r;
  r.kind = "bootstrap";
  r.index = index;
  r.lambda_max = testing::longest_json_number(index);
  for (int k = 0; k < points; ++k) {
    DiscoverPathPoint p;
    p.lambda = -testing::longest_json_number(k);
    p.train_loss = testing::longest_json_number(k + 1);
    p.validation_loss = testing::longest_json_number(k + 2);
    p.validation_se = testing::longest_json_number(k + 3);
    p.selected_groups = spec.num_groups;
    for (int g = 0; g < spec.num_groups; ++g) p.norms.push_back(-testing::longest_json_number(g));
    r.points.push_back(p);
  }
  r.chosen = points - 1;
  r.selected.assign(static_cast<size_t>(spec.num_groups), 0);
  r.explained = testing::longest_json_number(index + 4);
  return r;
}

Eigen::VectorXd parameters(const DiscoverCheckpointSpec& spec) {
  return Eigen::VectorXd::NullaryExpr(spec.num_parameters, [](Eigen::Index i) { return testing::longest_json_number(static_cast<int>(i)); });
}

TEST_F(DiscoverCheckpoint, TheLastCheckpointOfTheLargestRunIsAcceptedAndExact) {
  for (const auto& [groups, points, repetitions, n] :
       {std::tuple{40, 12, 10, 2000}, std::tuple{1, 3, 1, 5}, std::tuple{300, 30, 3, 20}}) {
    DiscoverCheckpointSpec spec;
    spec.fingerprint = {{"config.discover", "0123456789abcdef"}, {"seed", "18446744073709551615"}};
    spec.num_parameters = n;
    spec.num_groups = groups;
    spec.max_points = points;
    spec.repetitions = repetitions;
    SCOPED_TRACE(std::to_string(groups) + " groups, " + std::to_string(points) + " points, " +
                 std::to_string(repetitions) + " repetitions, " + std::to_string(n) + " parameters");
    // Every repetition complete; the last one in progress at its last point.
    for (const bool in_progress : {false, true}) {
      DiscoverProgress p;
      for (int r = 0; r < repetitions - (in_progress ? 1 : 0); ++r) p.completed.push_back(repetition(spec, r, points));
      p.chosen_x = parameters(spec);
      if (in_progress) {
        p.partial = repetition(spec, repetitions - 1, points);
        p.partial_x.assign(static_cast<size_t>(points), parameters(spec));
        p.partial_next_x = parameters(spec);
      }
      CheckpointFile store(path("checkpoint.json"));
      write_discover_checkpoint(store, p, spec);
      const DiscoverProgress back = read_discover_checkpoint(store, spec);
      ASSERT_EQ(back.completed.size(), p.completed.size());
      EXPECT_EQ(back.chosen_x, p.chosen_x);
      EXPECT_EQ(back.partial.has_value(), in_progress);
      if (!p.completed.empty()) {
        EXPECT_EQ(back.completed.back().points.back().norms, p.completed.back().points.back().norms);
      }
      if (in_progress) {
        EXPECT_EQ(back.partial_x.back(), p.partial_x.back());
      }
    }
  }
}

}  // namespace
}  // namespace neuralsim
