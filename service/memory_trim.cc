#include "service/memory_trim.h"

#include <malloc.h>

namespace compatd::service {

MemoryTrimmer::MemoryTrimmer(size_t threshold, absl::Duration interval)
    : threshold_(threshold), interval_(interval) {
  thread_ = std::thread([this] { Run(); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void MemoryTrimmer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(
      lock, absl::ToChronoNanoseconds(interval_),
      [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; })) {
    // fordblks: free bytes inside the heaps (not mmapped blocks, which go
    // back when freed). mallinfo2 and malloc_trim lock each arena in turn;
    // both take well under a millisecond at rest.
    if (mallinfo2().fordblks > threshold_) malloc_trim(0);
  }
}

}  // namespace compatd::service
