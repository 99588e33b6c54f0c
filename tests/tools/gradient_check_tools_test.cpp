// --check-gradients as library calls (tools/identify.hpp,
// tools/train_augment.hpp): the gradients simid and train-augment optimize
// with agree with central differences of their own costs on shipped
// configs, and a derivative made wrong on purpose (the test-only scale) is
// flagged on exactly that parameter.
#include <gtest/gtest.h>

#include <string>

#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/identify.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "neuralsim/tools/train_augment.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

std::string source(const std::string& path) { return std::string(NEURALSIM_SOURCE_DIR) + "/" + path; }

// Away from the lengths that made the data (3, 4): at them the cost is ~1e-17
// and its gradient rounding (the check then says "unresolved").
const char* kAwayFromTruth =
    "estimate.parameters=[{name: link.link1.length, initial: 2.5, bounds: [0.1, 10]}, {name: link.link2.length, "
    "initial: 4.5, bounds: [0.1, 10]}]";

Config lengths_config(std::vector<std::string> extra = {}) {
  std::vector<std::string> o{"data.max_samples=101", "estimate.residual.window=20", kAwayFromTruth};
  o.insert(o.end(), extra.begin(), extra.end());
  return Config::load(source("configs/simid_double_pendulum_lengths.yaml"), o);
}

TEST(IdentificationGradientCheck, ForwardModeAgreesWithCentralDifferences) {
  const IdentificationGradientCheck c = check_identification_gradient({lengths_config(), 1, ""});
  EXPECT_EQ(c.status, RunStatus::kOk) << c.check.report();
  EXPECT_TRUE(c.check.passed);
  ASSERT_EQ(c.check.rows.size(), 2u);
  EXPECT_EQ(c.check.rows[0].name, "link.link1.length");
  EXPECT_EQ(c.check.methods, std::vector<std::string>{"forward_mode"});
  EXPECT_EQ(c.formulation, "single_shooting");
  EXPECT_EQ(c.check.unresolved, 0) << c.check.report();
  EXPECT_LT(c.check.max_relative_error, 1e-7) << c.check.report();
  for (const GradientCheckRow& r : c.check.rows) EXPECT_NE(r.gradient[0], 0.0);  // the lengths do move the cost
}

TEST(IdentificationGradientCheck, OtherFormulationsAndTransformsAgree) {
  // Multiple shooting (states held at the data), and the log transform with
  // a scale: the gradient is with respect to the optimizer's variables.
  const Config ms = lengths_config({"estimate.residual.type=multiple_shooting",
                                    "estimate.parameters=[{name: link.link1.length, initial: 2.5, bounds: [0.1, 10], "
                                    "transform: log, scale: 2}, {name: link.link2.length, initial: 3.5}]"});
  const IdentificationGradientCheck c = check_identification_gradient({ms, 1, ""});
  EXPECT_TRUE(c.check.passed) << c.check.report();
  EXPECT_EQ(c.formulation, "multiple_shooting");
  EXPECT_EQ(c.transformations[0], "log");
  EXPECT_LT(c.check.max_relative_error, 1e-7) << c.check.report();
}

TEST(IdentificationGradientCheck, FlagsAWrongDerivativeOnExactlyThatParameter) {
  IdentificationGradientCheckOptions o;
  o.scale_derivative_of = "link.link2.length";
  o.derivative_scale = 1.001;
  const IdentificationGradientCheck c = check_identification_gradient({lengths_config(), 1, ""}, o);
  EXPECT_EQ(c.status, RunStatus::kGradientCheckFailed);
  EXPECT_FALSE(c.check.passed);
  ASSERT_EQ(c.check.rows.size(), 2u);
  EXPECT_EQ(c.check.rows[0].verdict, GradientCheckVerdict::kAgrees) << c.check.report();
  EXPECT_EQ(c.check.rows[1].verdict, GradientCheckVerdict::kDisagrees) << c.check.report();
  o.scale_derivative_of = "no.such.parameter";
  EXPECT_THROW(check_identification_gradient({lengths_config(), 1, ""}, o), InvalidArgument);
}

// The damped pendulum's recordings, made once by our own engine.
const std::string& pendulum_truth() {
  static const std::string file = [] {
    const RolloutResult r = rollout({Config::load(source("configs/train/pendulum_damping_truth.yaml"),
                                                  {"initial_states.count=3", "sim.duration=1.0"}),
                                     1, ""});
    const std::string path = testing::fresh_dir("gradient_check_truth") + "/truth.h5";
    write_trajectories(path, r.trajectories);
    return path;
  }();
  return file;
}

Config damping_config(std::vector<std::string> extra = {}) {
  std::vector<std::string> o{"data.train=" + pendulum_truth(), "train.epochs=1"};
  o.insert(o.end(), extra.begin(), extra.end());
  return Config::load(source("configs/train/pendulum_damping.yaml"), o);
}

TEST(TrainingGradientCheck, ReverseModeAgreesWithCentralDifferences) {
  // A hybrid with a physical parameter (the link's mass, log-transformed)
  // and a 16-unit network: the mass and 12 of its 49 weights are checked.
  // The output layer keeps its seeded weights: at zero (the default, #38)
  // every hidden-layer derivative is exactly 0, which checks nothing.
  TrainingGradientCheckOptions o;
  o.max_weights = 12;
  const TrainingGradientCheck c = check_training_gradient(
      {damping_config({"train.physical=[{name: link.link1.mass, initial: 1.2, bounds: [0.5, 2], transform: log}]",
                       "augment.0.output_scale=1.0", "augment.0.zero_init_outputs=false"}),
       1},
      o);
  EXPECT_TRUE(c.check.passed) << c.check.report();
  EXPECT_EQ(c.trained_model, "hybrid");
  EXPECT_EQ(c.mode, "unrolled");
  EXPECT_EQ(c.num_physical, 1);
  ASSERT_EQ(c.check.rows.size(), 13u);
  EXPECT_EQ(c.check.rows[0].name, "link.link1.mass");
  EXPECT_EQ(c.check.methods, std::vector<std::string>{"reverse_mode"});
  EXPECT_LT(c.check.max_relative_error, 1e-6) << c.check.report();
  // The same seed draws the same weights; another seed others.
  const TrainingGradientCheck again = check_training_gradient({damping_config(), 1}, o);
  const TrainingGradientCheck other = check_training_gradient({damping_config(), 2}, o);
  std::vector<int> a, b, d;
  for (const GradientCheckRow& r : again.check.rows) a.push_back(r.index);
  for (const GradientCheckRow& r : other.check.rows) b.push_back(r.index);
  const TrainingGradientCheck same = check_training_gradient({damping_config(), 1}, o);
  for (const GradientCheckRow& r : same.check.rows) d.push_back(r.index);
  EXPECT_EQ(a, d);
  EXPECT_NE(a, b);
}

TEST(TrainingGradientCheck, BaselinesAndAWrongDerivative) {
  for (const char* model : {"mlp", "lstm"}) {
    const TrainingGradientCheck c =
        check_training_gradient({damping_config({std::string("train.model=") + model}), 1});
    EXPECT_TRUE(c.check.passed) << model << "\n" << c.check.report();
    EXPECT_EQ(c.check.methods, std::vector<std::string>{"backpropagation"});
    EXPECT_EQ(c.check.rows.size(), 40u) << model;  // every network has more than 40 weights
  }
  TrainingGradientCheckOptions o;
  o.max_weights = 0;
  o.scale_derivative_of = "link.link1.mass";
  o.derivative_scale = 0.999;
  const TrainingGradientCheck c = check_training_gradient(
      {damping_config({"train.physical=[{name: link.link1.mass, initial: 1.2, bounds: [0.5, 2]}]"}), 1}, o);
  EXPECT_EQ(c.status, RunStatus::kGradientCheckFailed) << c.check.report();
  ASSERT_EQ(c.check.rows.size(), 1u);
  EXPECT_EQ(c.check.rows[0].verdict, GradientCheckVerdict::kDisagrees);
}

}  // namespace
}  // namespace neuralsim
