// Stepper::step must not touch the heap once constructed (data.hpp promise).
//
// Counting operator new alone would miss Eigen: its dynamic matrices allocate
// through std::malloc directly (Eigen/src/Core/util/Memory.h, aligned_malloc).
// So this file interposes the C allocation entry points instead, forwarding
// to glibc's own implementation (__libc_*, so the allocator and free() are
// unchanged). libstdc++'s operator new (plain, nothrow, array and aligned)
// is built on malloc / aligned_alloc and is therefore counted too.
// Counting is per thread and only inside an AllocationCounter scope.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "neuralsim/step/stepper.hpp"
#include "support/test_models.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NEURALSIM_COUNT_ALLOCATIONS 0  // the sanitizers own malloc
#elif defined(__GLIBC__)
#define NEURALSIM_COUNT_ALLOCATIONS 1
#else
#define NEURALSIM_COUNT_ALLOCATIONS 0
#endif

namespace {
thread_local bool g_counting = false;
thread_local long g_allocations = 0;
inline void count() {
  if (g_counting) ++g_allocations;
}
}  // namespace

#if NEURALSIM_COUNT_ALLOCATIONS
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t size) noexcept {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) noexcept {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) noexcept {
  count();
  return __libc_realloc(p, size);
}
void* aligned_alloc(size_t alignment, size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  count();
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"
#endif

namespace neuralsim {
namespace {

// Counts heap allocations made by this thread during its lifetime.
class AllocationCounter {
 public:
  AllocationCounter() {
    g_allocations = 0;
    g_counting = true;
  }
  ~AllocationCounter() { g_counting = false; }
  long count() const { return g_allocations; }
};

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
    if (!NEURALSIM_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
  }
};

TEST(AllocationCounter, DetectsNewAndEigenAllocations) {
  if (!NEURALSIM_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting needs glibc, no sanitizer";
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
