#pragma once

// The one way a catalog becomes what compatd serves. Every source (the
// embedded catalog, a watched file; runtime/catalog_source.h) ends here, as
// Envoy's runtime ends every layer in one loadNewSnapshot(): only the pipeline
// numbers generations, stamps load times, derives the answers that depend on
// the catalog alone, publishes the whole ServingSnapshot with one swap, and
// tells the metrics and WatchCatalog (CatalogEvents) what happened.
//
//   CatalogPipeline pipeline({.derive = api::DeriveAnswers,
//                             .metrics = metrics, .events = &events});
//   pipeline.Publish(std::move(catalog), /*initial=*/true);
//   std::shared_ptr<const ServingSnapshot> s = pipeline.store().Current();

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/catalog.h"
#include "runtime/catalog_events.h"
#include "runtime/reload_result.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::runtime {

class CatalogPipeline final {
 public:
  struct Options {
    // Builds the answers derived from a catalog alone, once per snapshot
    // (ServingSnapshot::derived). Optional; must not fail or block.
    std::function<std::shared_ptr<const DerivedAnswers>(const engine::Catalog&)>
        derive;
    // Told of every publish and reload result; either may be null. Both must
    // outlive the pipeline.
    const ServiceMetrics* metrics = nullptr;
    CatalogEvents* events = nullptr;
    // Told of every reload's result after the metrics and events (not of the
    // start-up publish): `published` for kLoaded, else null; `error` for
    // kRejected, else empty. In order, never concurrently with itself for
    // one reloader. For logs and tests; optional.
    std::function<void(ReloadResult result, const ServingSnapshot* published,
                       absl::string_view error)>
        on_reload;
    // Time source, for tests.
    std::function<absl::Time()> clock;
  };

  explicit CatalogPipeline(Options options);
  CatalogPipeline(const CatalogPipeline&) = delete;
  CatalogPipeline& operator=(const CatalogPipeline&) = delete;

  // Publishes `catalog` as the next generation and returns the snapshot it
  // replaced (null for the first), for the caller to free on its own thread.
  // `initial`: the start-up load, which is not a reload (no reload counted,
  // no WatchCatalog message: no stream can exist yet). Thread-safe;
  // publishes are serialized.
  std::shared_ptr<const ServingSnapshot> Publish(
      std::unique_ptr<engine::Catalog> catalog, bool initial = false);

  // A reload found the catalog in force again.
  void Unchanged();
  // A reload was rejected; the snapshot in force keeps serving. `error` is
  // valid UTF-8 (GetCatalog returns it in a proto3 string).
  void Rejected(absl::string_view error);

  const SnapshotStore& store() const { return store_; }
  std::shared_ptr<const ServingSnapshot> Current() const {
    return store_.Current();
  }

 private:
  absl::Time Now() const;

  const Options options_;
  SnapshotStore store_;
  std::mutex publish_mu_;  // serializes Publish(): generations are ordered
  uint64_t generation_ ABSL_GUARDED_BY(publish_mu_) = 0;
};

}  // namespace compatd::runtime
