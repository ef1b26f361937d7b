#pragma once

// What compatd serves, built once and immutable: the catalogs of every
// kube-apiserver release line it has (engine::CatalogSet), each with its load
// time and every answer derived from it, under one generation.
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
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/effective_version.h"

namespace compatd::runtime {

// Answers a layer above derives from a catalog once per snapshot (the API
// layer's defaults for ListFeatures and ListAPIVersions, say), so that no
// call rebuilds them. The deriver that made them (CatalogPipeline::Options)
// is the only code that knows their type.
class DerivedAnswers {
 public:
  virtual ~DerivedAnswers() = default;

  // The line's cluster.upgradeTarget, resolved; null when it has none (or
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
  // The release line that target's binary version selects (an index into
  // ServingSnapshot::lines); meaningful only with a target.
  virtual size_t UpgradeTargetLine() const { return 0; }
};

// One release line of a snapshot: its catalog and what is derived from it.
// Every answer about a binary comes from exactly one ServingLine.
struct ServingLine {
  std::shared_ptr<const engine::Catalog> catalog;  // never null
  // The snapshot's generation (every line of a snapshot carries it).
  uint64_t generation = 0;
  // When this line's catalog was loaded (a reload of another line's file
  // leaves it as it was).
  absl::Time loaded_at = absl::UnixEpoch();
  // Null when the pipeline has no deriver (then callers compute on demand).
  std::shared_ptr<const DerivedAnswers> derived;
};

struct ServingSnapshot {
  // Every line's catalog, oldest line first; never null. The default line (a
  // request without versions.binaryVersion) is catalogs->default_index().
  std::shared_ptr<const engine::CatalogSet> catalogs;
  // Parallel to catalogs->lines().
  std::vector<ServingLine> lines;
  // 1 for the first snapshot a pipeline publishes, +1 for each after (a
  // reload of any line's file).
  uint64_t generation = 0;
  // When the latest line was loaded.
  absl::Time loaded_at = absl::UnixEpoch();

  // The line a request's binary version selects (engine::CatalogSet::
  // ResolveIndex): empty -> the default line. INVALID_ARGUMENT naming
  // `field`, the value and the lines there are. Allocates nothing on success.
  absl::StatusOr<const ServingLine*> Line(
      absl::string_view binary_version,
      absl::string_view field = "versions.binaryVersion") const {
    absl::StatusOr<size_t> index =
        catalogs->ResolveIndex(binary_version, field);
    if (!index.ok()) return index.status();
    return &lines[*index];
  }
  const ServingLine& default_line() const {
    return lines[catalogs->default_index()];
  }
  const engine::Catalog& default_catalog() const {
    return catalogs->default_catalog();
  }
};

// A snapshot of one catalog, without derived answers, for code that builds
// its own (tests, tools); servers publish through the catalog pipeline.
inline std::shared_ptr<ServingSnapshot> SingleLineSnapshot(
    std::shared_ptr<const engine::Catalog> catalog, uint64_t generation) {
  auto snapshot = std::make_shared<ServingSnapshot>();
  snapshot->generation = generation;
  snapshot->catalogs = engine::CatalogSet::Single(catalog);
  snapshot->lines.push_back(
      ServingLine{std::move(catalog), generation, absl::UnixEpoch(), nullptr});
  return snapshot;
}

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
