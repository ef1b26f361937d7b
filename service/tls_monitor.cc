#include "service/tls_monitor.h"

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

void TlsMonitor::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    wake_.wait_for(
        lock, std::chrono::milliseconds(absl::ToInt64Milliseconds(refresh_)),
        [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stop_; });
    if (stop_) break;
    lock.unlock();
    Check();
    lock.lock();
  }
}

}  // namespace compatd::service
