#include "service/tls_monitor.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/time/clock.h"

namespace compatd::service {

TlsMonitor::TlsMonitor(std::vector<Listener> listeners, absl::Duration refresh)
    : listeners_(std::move(listeners)), refresh_(refresh) {}

TlsMonitor::~TlsMonitor() { Stop(); }

void TlsMonitor::Start() {
  if (thread_.joinable() || listeners_.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void TlsMonitor::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void TlsMonitor::Check() {
  for (const Listener& listener : listeners_) {
    // Errors are logged by ReloadNow() (once each); the previous files keep
    // serving.
    (void)listener.context->ReloadNow();
    if (listener.on_check) listener.on_check();
  }
}

absl::Time TlsMonitor::NoteExpiry() {
  const absl::Time now = absl::Now();
  absl::Time next = absl::InfiniteFuture();
  for (const Listener& listener : listeners_) {
    next = std::min(next, listener.context->NoteExpiry(now));
  }
  return next;
}

void TlsMonitor::Run() {
  absl::Time next_check = absl::Now() + refresh_;
  absl::Time next_expiry = NoteExpiry();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    // A moment after the expiry, so that it is past when we look.
    const absl::Time wake =
        std::min(next_check, next_expiry + absl::Milliseconds(1));
    const absl::Duration wait =
        std::max(absl::ZeroDuration(), wake - absl::Now());
    // Capped: a condition variable waits on the steady clock, expiries are
    // wall-clock times.
    wake_.wait_for(lock,
                   std::chrono::milliseconds(
                       absl::ToInt64Milliseconds(std::min(wait, refresh_))),
                   [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stop_; });
    if (stop_) break;
    lock.unlock();
    if (absl::Now() >= next_check) {
      Check();
      next_check = absl::Now() + refresh_;
    }
    next_expiry = NoteExpiry();
    lock.lock();
  }
}

}  // namespace compatd::service
