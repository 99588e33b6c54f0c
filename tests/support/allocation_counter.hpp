// Counts heap allocations, for the tests (and benchmarks) that check a hot
// path allocates nothing: Stepper::step, the MLP, the QP solver.
//
// Counting operator new alone would miss Eigen: its dynamic matrices allocate
// through std::malloc directly (Eigen/src/Core/util/Memory.h, aligned_malloc).
// allocation_counter.cpp therefore interposes the C allocation entry points,
// forwarding to glibc's own implementation (__libc_*, so the allocator and
// free() are unchanged); libstdc++'s operator new (plain, nothrow, array and
// aligned) is built on malloc / aligned_alloc and is counted too. It is
// linked once into each test program and the allocation benchmark.
#pragma once

namespace neuralsim::testing {

// Counts the allocations this thread makes while the counter lives.
class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  long count() const;

  // False under a sanitizer (it owns malloc) or without glibc: tests skip
  // instead of passing vacuously.
  static bool available();
};

}  // namespace neuralsim::testing
