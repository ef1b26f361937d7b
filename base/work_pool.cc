#include "base/work_pool.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace compatd::base {

WorkPool::WorkPool(Options options) : options_(std::move(options)) {
  const int threads = std::max(1, options_.threads);
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Run(); });
    // "heavy-0": 15 bytes at most, as Linux allows.
    const std::string name =
        (options_.name + "-" + std::to_string(i)).substr(0, 15);
    pthread_setname_np(threads_.back().native_handle(), name.c_str());
  }
}

WorkPool::~WorkPool() { Stop(); }

bool WorkPool::TrySubmit(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Room for one more: a thread free now (or about to be: one still
    // starting counts as free), or a place in the queue.
    const int held = static_cast<int>(queue_.size()) + active_;
    if (stop_ ||
        held >= static_cast<int>(threads_.size()) + options_.max_queued) {
      rejected_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    queue_.push_back(std::move(work));
    queued_.fetch_add(1, std::memory_order_relaxed);
  }
  cv_.notify_one();
  return true;
}

void WorkPool::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop_ || !queue_.empty();
    });
    if (queue_.empty()) return;  // stopping, nothing left
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    ++active_;
    queued_.fetch_sub(1, std::memory_order_relaxed);
    running_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    work();
    work = nullptr;  // its captures go before the next is taken
    running_.fetch_sub(1, std::memory_order_relaxed);
    lock.lock();
    --active_;
  }
}

void WorkPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  std::call_once(joined_, [this] {
    for (std::thread& thread : threads_) thread.join();
  });
}

}  // namespace compatd::base
