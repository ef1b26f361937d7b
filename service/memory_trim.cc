#include "service/memory_trim.h"

#include <malloc.h>

namespace compatd::service {

MemoryTrimmer::MemoryTrimmer(size_t threshold, absl::Duration interval)
    : threshold_(threshold), interval_(interval) {
  thread_ = std::thread([this] { Run(); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void MemoryTrimmer::Run() {
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), interval_)) {
    // fordblks: free bytes inside the heaps (not mmapped blocks, which go
    // back when freed). mallinfo2 and malloc_trim lock each arena in turn;
    // both take well under a millisecond at rest.
    if (mallinfo2().fordblks > threshold_) malloc_trim(0);
  }
}

}  // namespace compatd::service
