#include "support/allocation_counter.hpp"

#include <cerrno>
#include <cstddef>

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

namespace neuralsim::testing {

AllocationCounter::AllocationCounter() {
  g_allocations = 0;
  g_counting = true;
}
AllocationCounter::~AllocationCounter() { g_counting = false; }
long AllocationCounter::count() const { return g_allocations; }
bool AllocationCounter::available() { return NEURALSIM_COUNT_ALLOCATIONS != 0; }

}  // namespace neuralsim::testing
