#pragma once

// A fixed set of threads taking work from a bounded queue: the heavy lane of
// both ports (api/lanes.h). TrySubmit() never blocks and never waits: when
// every thread is busy and the queue is full it refuses, and the caller
// answers RESOURCE_EXHAUSTED / 429 at once.
//
//   base::WorkPool pool({.name = "heavy", .threads = 1, .max_queued = 8});
//   if (!pool.TrySubmit([request] { ... })) { /* refuse: full */ }
//
// Thread-safe. Work must not throw.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace compatd::base {

class WorkPool final {
 public:
  struct Options {
    std::string name;    // for thread names and messages: "heavy"
    int threads = 1;     // at least 1
    int max_queued = 8;  // work waiting for a thread; 0: none waits
  };

  explicit WorkPool(Options options);
  // Stop(), then joins the threads.
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Runs `work` on a pool thread, now or once one is free; false (and
  // `work` is dropped unrun) when all threads are busy and `max_queued` wait
  // already, or after Stop().
  bool TrySubmit(std::function<void()> work);

  // Refuses new work, lets the running and queued work finish, joins the
  // threads. Idempotent.
  void Stop();

  const Options& options() const { return options_; }
  // Work running now, waiting now, and refused since start.
  int running() const { return running_.load(std::memory_order_relaxed); }
  int queued() const { return queued_.load(std::memory_order_relaxed); }
  int64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }

 private:
  void Run();

  const Options options_;
  std::atomic<int> running_{0};
  std::atomic<int> queued_{0};
  std::atomic<int64_t> rejected_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  // Work taken by a thread and not finished.
  int active_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
  std::once_flag joined_;
};

}  // namespace compatd::base
