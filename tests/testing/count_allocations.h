#pragma once

// Replaces the global operator new and delete (every form, so that no
// allocation of the sanitizers' own operators is freed by ours) with
// malloc/free that count, for the tests that hold a hot path to no heap
// allocation. Include it in exactly one file of a test binary.
//
//   const long before = compatd::testing::Allocations();
//   ... the call ...
//   EXPECT_EQ(compatd::testing::Allocations() - before, 0);

#include <atomic>
#include <cstdlib>
#include <new>

namespace compatd::testing {
inline std::atomic<long> g_allocations{0};
// Heap allocations so far, on any thread.
inline long Allocations() {
  return g_allocations.load(std::memory_order_relaxed);
}
}  // namespace compatd::testing

// GCC cannot see that the replaced operators form malloc/free pairs.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  compatd::testing::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  compatd::testing::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop
