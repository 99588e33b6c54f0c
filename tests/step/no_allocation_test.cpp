// Stepper::step must not touch the heap once constructed (data.hpp promise).
#include <gtest/gtest.h>

#include <memory>

#include "neuralsim/step/stepper.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

using testing::AllocationCounter;

// Runs `steps` steps under the counter and returns the number of allocations.
long allocations_in_steps(const Model<double>& model, Integrator integrator, int steps) {
  Stepper<double> stepper(model, StepOptions{integrator, 1e-3, 2});
  std::mt19937 rng(3);
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  const Eigen::VectorXd u = Eigen::VectorXd::Constant(model.nv, 0.1);
  stepper.step(q, qd, u, 0.0);  // warm-up outside the counted scope
  AllocationCounter counter;
  for (int k = 1; k <= steps; ++k) stepper.step(q, qd, u, k * 1e-3);
  return counter.count();
}

class NoAllocation : public ::testing::TestWithParam<Integrator> {
 protected:
  void SetUp() override {
    if (!AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  }
};

TEST(AllocationCounter, DetectsNewAndEigenAllocations) {
  if (!AllocationCounter::available()) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  // The counter must see both ways the engine could allocate. The empty asm
  // makes the pointers escape, so the compiler cannot elide the allocations.
  long n_new = 0, n_eigen = 0;
  {
    AllocationCounter counter;
    auto p = std::make_unique<double>(1.0);
    asm volatile("" : : "g"(p.get()) : "memory");
    n_new = counter.count();
  }
  {
    AllocationCounter counter;
    Eigen::VectorXd v = Eigen::VectorXd::Ones(64);
    asm volatile("" : : "g"(v.data()) : "memory");
    n_eigen = counter.count();
  }
  EXPECT_GE(n_new, 1);
  EXPECT_GE(n_eigen, 1);
}

TEST_P(NoAllocation, FreeFloatingMixedJointModel) {
  EXPECT_EQ(allocations_in_steps(testing::mixed_joint_model(), GetParam(), 20), 0);
}

TEST_P(NoAllocation, ThirtyLinkChain) {
  const Model<double> chain =
      parse_yaml_model(("generator: chain\nlinks: 30\nlength: 0.1\nmass: 0.5\n"), "inline");
  EXPECT_EQ(allocations_in_steps(chain, GetParam(), 20), 0);
}

INSTANTIATE_TEST_SUITE_P(Integrators, NoAllocation,
                         ::testing::Values(Integrator::kSemiImplicitEuler, Integrator::kRK4),
                         [](const ::testing::TestParamInfo<Integrator>& info) {
                           return info.param == Integrator::kRK4 ? std::string("RK4")
                                                                 : std::string("SemiImplicitEuler");
                         });

}  // namespace
}  // namespace neuralsim
