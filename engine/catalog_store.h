#pragma once

// The catalog now serving. Thread-safe. Readers take the shared_ptr once per
// request and keep the snapshot they started with; Publish() swaps in a whole
// new catalog.

#include <memory>
#include <mutex>
#include <shared_mutex>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"  // kept: includers may rely on it
#include "engine/catalog.h"

namespace compatd::engine {

class CatalogStore final {
 public:
  CatalogStore() = default;
  CatalogStore(const CatalogStore&) = delete;
  CatalogStore& operator=(const CatalogStore&) = delete;

  // Null until the first Publish().
  std::shared_ptr<const Catalog> Current() const {
    std::shared_lock lock(mu_);
    return current_;
  }

  void Publish(std::shared_ptr<const Catalog> next) {
    {
      std::lock_guard lock(mu_);
      current_.swap(next);
    }  // the old catalog's last reference may be dropped here, outside the lock
  }

 private:
  // std::shared_mutex rather than absl::Mutex: Debian's abseil is not built
  // with ThreadSanitizer, so TSan cannot see absl::Mutex's synchronization
  // and reports every reader of current_ as racing with Publish().
  mutable std::shared_mutex mu_;
  std::shared_ptr<const Catalog> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::engine
