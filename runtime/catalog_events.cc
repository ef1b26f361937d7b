#include "runtime/catalog_events.h"

#include <algorithm>
#include <utility>

namespace compatd::runtime {

void CatalogEvents::Published(std::shared_ptr<const ServingSnapshot> snapshot,
                              absl::string_view source) {
  std::vector<std::shared_ptr<Subscriber>> subscribers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_errors_.erase(source);
    subscribers = subscribers_;
  }
  // Outside the lock: a subscriber may unsubscribe from within its callback.
  for (const auto& subscriber : subscribers) subscriber->OnPublished(snapshot);
}

void CatalogEvents::Unchanged(absl::string_view source) {
  std::lock_guard<std::mutex> lock(mu_);
  last_errors_.erase(source);
}

void CatalogEvents::Rejected(std::string message, absl::Time at,
                             absl::string_view source) {
  std::lock_guard<std::mutex> lock(mu_);
  last_errors_[source] = Error{std::move(message), at};
}

CatalogEvents::Error CatalogEvents::LastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  Error latest;
  for (const auto& [source, error] : last_errors_) {
    if (latest.message.empty() || error.at > latest.at) latest = error;
  }
  return latest;
}

CatalogEvents::Error CatalogEvents::LastError(absl::string_view source) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_errors_.find(source);
  return it == last_errors_.end() ? Error{} : it->second;
}

bool CatalogEvents::Subscribe(std::shared_ptr<Subscriber> subscriber) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  subscribers_.push_back(std::move(subscriber));
  return true;
}

void CatalogEvents::Unsubscribe(const Subscriber* subscriber) {
  std::lock_guard<std::mutex> lock(mu_);
  subscribers_.erase(
      std::remove_if(subscribers_.begin(), subscribers_.end(),
                     [&](const auto& s) { return s.get() == subscriber; }),
      subscribers_.end());
}

void CatalogEvents::Close() {
  std::vector<std::shared_ptr<Subscriber>> subscribers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    subscribers.swap(subscribers_);
  }
  for (const auto& subscriber : subscribers) subscriber->OnClose();
}

}  // namespace compatd::runtime
