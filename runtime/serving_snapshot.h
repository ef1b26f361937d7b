#pragma once

// What one catalog serves, built once and immutable: the catalog, its
// generation and load time, and every answer derived from the catalog alone.
// Only the catalog pipeline (runtime/catalog_pipeline.h) makes snapshots and
// publishes them; a call takes one snapshot and answers everything from it
// (its reply, its client verdict, its metrics), however many reloads happen
// meanwhile.
//
// Lifetime rule: a snapshot keeps its catalog alive. Decisions and views that
// point into the catalog (engine/*.h say which) are valid while the caller
// holds the snapshot's shared_ptr; nothing holds one longer than a call, a
// WatchCatalog message or a scrape.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"

namespace compatd::runtime {

// Answers a layer above derives from a catalog once per snapshot (the API
// layer's defaults for ListFeatures and ListAPIVersions, say), so that no
// call rebuilds them. The deriver that made them (CatalogPipeline::Options)
// is the only code that knows their type.
class DerivedAnswers {
 public:
  virtual ~DerivedAnswers() = default;

  // The catalog's cluster.upgradeTarget, resolved; null when it has none (or
  // the deriver does not plan upgrades). Read by the client tracker for the
  // clients out of allowance at the target.
  virtual const engine::EffectiveVersions* UpgradeTargetVersions() const {
    return nullptr;
  }
  // What blocks the upgrade to that target, by kind ("flags", "apis"), from
  // the plan made once per snapshot; empty without a target.
  virtual std::vector<std::pair<std::string, int64_t>> UpgradeBlockers() const {
    return {};
  }
};

struct ServingSnapshot {
  std::shared_ptr<const engine::Catalog> catalog;  // never null
  // 1 for the first catalog a pipeline publishes, +1 for each after.
  uint64_t generation = 0;
  absl::Time loaded_at = absl::UnixEpoch();
  // Null when the pipeline has no deriver (then callers compute on demand).
  std::shared_ptr<const DerivedAnswers> derived;
};

// The snapshot now serving. Thread-safe. Readers take the shared_ptr once per
// call and keep the snapshot they started with; Publish() swaps in a whole
// new one.
class SnapshotStore final {
 public:
  SnapshotStore() = default;
  SnapshotStore(const SnapshotStore&) = delete;
  SnapshotStore& operator=(const SnapshotStore&) = delete;

  // Null until the first Publish().
  std::shared_ptr<const ServingSnapshot> Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }

  // Returns the snapshot it replaces (null for the first). A caller that
  // keeps it decides which thread frees it: dropping a whole catalog is
  // thousands of frees, which the reloader would rather not leave to the last
  // request still holding the old snapshot.
  std::shared_ptr<const ServingSnapshot> Publish(
      std::shared_ptr<const ServingSnapshot> next) {
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
  std::shared_ptr<const ServingSnapshot> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::runtime
