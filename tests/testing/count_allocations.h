#pragma once

// Replaces the global operator new and delete (every form, so that no
// allocation of the sanitizers' own operators is freed by ours) with
// malloc/free that count, for the tests that hold a hot path to no heap
// allocation, or a reader's memory to a bound. Include it in exactly one file
// of a test binary.
//
//   const long before = compatd::testing::Allocations();
//   ... the call ...
//   EXPECT_EQ(compatd::testing::Allocations() - before, 0);
//
//   compatd::testing::ResetPeakBytes();
//   ... the call ...
//   EXPECT_LT(compatd::testing::PeakBytes(), 16 << 20);

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace compatd::testing {
inline std::atomic<long> g_allocations{0};
inline std::atomic<long> g_live_bytes{0};
inline std::atomic<long> g_peak_bytes{0};
// Heap allocations so far, on any thread.
inline long Allocations() {
  return g_allocations.load(std::memory_order_relaxed);
}
// The most bytes operator new held at once since ResetPeakBytes(), less
// what was held then: what the code in between took at its peak.
inline long g_peak_base = 0;
inline void ResetPeakBytes() {
  g_peak_base = g_live_bytes.load(std::memory_order_relaxed);
  g_peak_bytes.store(g_peak_base, std::memory_order_relaxed);
}
inline long PeakBytes() {
  return g_peak_bytes.load(std::memory_order_relaxed) - g_peak_base;
}
inline void* CountedMalloc(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) return nullptr;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const long live =
      g_live_bytes.fetch_add(static_cast<long>(malloc_usable_size(p)),
                             std::memory_order_relaxed) +
      static_cast<long>(malloc_usable_size(p));
  long peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(
                            peak, live, std::memory_order_relaxed)) {
  }
  return p;
}
inline void CountedFree(void* p) {
  if (p == nullptr) return;
  g_live_bytes.fetch_sub(static_cast<long>(malloc_usable_size(p)),
                         std::memory_order_relaxed);
  std::free(p);
}
}  // namespace compatd::testing

// GCC cannot see that the replaced operators form malloc/free pairs.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (void* p = compatd::testing::CountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return compatd::testing::CountedMalloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept { compatd::testing::CountedFree(p); }
void operator delete(void* p, std::size_t) noexcept {
  compatd::testing::CountedFree(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  compatd::testing::CountedFree(p);
}
void operator delete[](void* p) noexcept { compatd::testing::CountedFree(p); }
void operator delete[](void* p, std::size_t) noexcept {
  compatd::testing::CountedFree(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  compatd::testing::CountedFree(p);
}
#pragma GCC diagnostic pop
