#pragma once

// The catalog now serving. Thread-safe. Readers take the shared_ptr once per
// request and keep the snapshot they started with; Publish() swaps in a whole
// new catalog.

#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"  // kept: includers may rely on it
#include "engine/catalog.h"

namespace compatd::runtime {

class CatalogStore final {
 public:
  CatalogStore() = default;
  CatalogStore(const CatalogStore&) = delete;
  CatalogStore& operator=(const CatalogStore&) = delete;

  // Null until the first Publish().
  std::shared_ptr<const engine::Catalog> Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }

  // Returns the catalog it replaces (null for the first). A caller that keeps
  // it decides which thread frees it: dropping a whole catalog is thousands of
  // frees, which the reloader would rather not leave to the last request
  // still holding the old snapshot.
  std::shared_ptr<const engine::Catalog> Publish(
      std::shared_ptr<const engine::Catalog> next) {
    std::lock_guard lock(mu_);
    current_.swap(next);
    return next;
  }

 private:
  // std::mutex rather than absl::Mutex: Debian's abseil is not built with
  // ThreadSanitizer, so TSan cannot see absl::Mutex's synchronization and
  // reports every reader of current_ as racing with Publish(). Not
  // std::shared_mutex: glibc's rwlock prefers readers, so a steady stream of
  // requests could starve Publish(); the critical section is one shared_ptr
  // copy either way.
  mutable std::mutex mu_;
  std::shared_ptr<const engine::Catalog> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::runtime
