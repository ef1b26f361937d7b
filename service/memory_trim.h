#pragma once

// Gives memory back to the system after a burst. glibc keeps the pages of
// freed blocks in its heaps (one per arena, and gRPC's threads use several):
// after 20,000 streams opened and reset at once, the heaps held 400 MB of
// which 2 MB were in use, for as long as the process lived. Once a second,
// when more than `threshold` bytes of the heaps are free, malloc_trim(0)
// returns their free pages (every arena, not only the top of the main heap).

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace compatd::service {

class MemoryTrimmer {
 public:
  explicit MemoryTrimmer(size_t threshold = 8 * 1024 * 1024,
                         absl::Duration interval = absl::Seconds(1));
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

 private:
  void Run();

  const size_t threshold_;
  const absl::Duration interval_;
  // std::mutex: TSan cannot see Debian's (uninstrumented) absl::Mutex.
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace compatd::service
