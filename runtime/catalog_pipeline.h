#pragma once

// The one way a catalog becomes what compatd serves. Every source (the
// embedded catalogs, watched files; runtime/catalog_source.h) ends here, as
// Envoy's runtime ends every layer in one loadNewSnapshot(): only the pipeline
// numbers generations, stamps load times, derives the answers that depend on
// the catalogs alone, publishes the whole ServingSnapshot with one swap, and
// tells the metrics and WatchCatalog (CatalogEvents) what happened.
//
// A pipeline serves `Options::sources` catalogs, one per kube-apiserver
// release line (one slot per source, each reloaded on its own). Nothing is
// published until every slot has a catalog; after that, a slot's new catalog
// is published only if the set it makes is valid (no two catalogs of one
// line, the default line and every upgrade target's line present): otherwise
// it is refused and the slot's previous catalog keeps serving.
//
//   CatalogPipeline pipeline({.derive = api::DeriveAnswers,
//                             .metrics = metrics, .events = &events});
//   pipeline.Publish(std::move(catalog), /*initial=*/true);
//   std::shared_ptr<const ServingSnapshot> s = pipeline.store().Current();

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/version.h"
#include "runtime/catalog_events.h"
#include "runtime/reload_result.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::runtime {

class CatalogPipeline final {
 public:
  struct Options {
    // Builds the answers derived from one line's catalog (and, for its
    // upgrade target, the set it is in), once per published catalog
    // (ServingLine::derived). Optional; must not fail or block.
    std::function<std::shared_ptr<const DerivedAnswers>(
        const engine::CatalogSet&, const engine::Catalog&)>
        derive;
    // How many catalogs (slots) make the set: one per source.
    size_t sources = 1;
    // The release line answered when a request names no binary version
    // (--binary-version); absent: the newest line served.
    std::optional<engine::Version> default_line;
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

  // Puts `catalog` in slot `source` and, once every slot has one, publishes
  // the set as the next generation. Returns the snapshot it replaced (null
  // for the first, or while slots are still empty), for the caller to free
  // on its own thread. `initial`: a start-up load, which is not a reload (no
  // reload counted, no WatchCatalog message: no stream can exist yet).
  // INVALID_ARGUMENT when the set it would make is not valid (two catalogs of
  // one line, the default line or an upgrade target's line missing): nothing
  // changes and nothing is recorded (the caller rejects the reload).
  // Thread-safe; publishes are serialized.
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> PublishLine(
      size_t source, std::unique_ptr<engine::Catalog> catalog, bool initial);

  // PublishLine(0, ...) for a one-source pipeline, which cannot fail but by
  // a catalog whose upgrade target's line it does not have (then nothing is
  // published and null is returned).
  std::shared_ptr<const ServingSnapshot> Publish(
      std::unique_ptr<engine::Catalog> catalog, bool initial = false);

  // The cluster profile's settings (cluster/cluster_settings.h): they take
  // the place of the cluster section of the line of `cluster->binary` (a copy
  // of that line's catalog is served with them), and that line is the default
  // (over Options::default_line). Null: every catalog's own section again.
  // Publishes the next generation once every slot has a catalog (before
  // that, it is kept and checked by the first publish). INVALID_ARGUMENT
  // naming `cluster->source` when the set it makes is not valid: no line for
  // the cluster's binary, flags that binary refuses at start-up, an upgrade
  // target the lines cannot plan to. Then nothing changes. Returns the
  // snapshot it replaced, as PublishLine does. Thread-safe.
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> SetCluster(
      std::shared_ptr<const engine::ClusterSettings> cluster, bool initial);
  // The settings SetCluster put in force (null if none).
  std::shared_ptr<const engine::ClusterSettings> cluster() const;

  // A reload of `source` (its name: `name`) found the catalog in force again.
  void Unchanged(absl::string_view name = "");
  // A reload was rejected; the snapshot in force keeps serving. `error` is
  // valid UTF-8 (GetCatalog returns it in a proto3 string).
  void Rejected(absl::string_view error, absl::string_view name = "");

  const SnapshotStore& store() const { return store_; }
  std::shared_ptr<const ServingSnapshot> Current() const {
    return store_.Current();
  }

 private:
  absl::Time Now() const;
  // Publishes `originals` (one per slot) with `cluster` applied; `source` is
  // the slot that changed (or kNoSource for a cluster change). Nothing is
  // published while a slot is empty.
  static constexpr size_t kNoSource = static_cast<size_t>(-1);
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> PublishLocked(
      std::vector<std::shared_ptr<const engine::Catalog>> originals,
      std::shared_ptr<const engine::ClusterSettings> cluster, size_t source,
      bool initial) ABSL_EXCLUSIVE_LOCKS_REQUIRED(publish_mu_);
  // The slot of `originals` whose line is the cluster's binary (kNoSource
  // without a cluster), or an error naming the lines served.
  static absl::StatusOr<size_t> ClusterSlot(
      const std::vector<std::shared_ptr<const engine::Catalog>>& originals,
      const std::shared_ptr<const engine::ClusterSettings>& cluster);
  // The listeners' part of a publish (metrics, events, on_reload).
  void Announce(const std::shared_ptr<const ServingSnapshot>& published,
                absl::string_view name, bool initial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(publish_mu_);

  const Options options_;
  SnapshotStore store_;
  mutable std::mutex publish_mu_;  // serializes publishes: generations are
                                   // ordered
  uint64_t generation_ ABSL_GUARDED_BY(publish_mu_) = 0;
  // The catalog of each source and what was derived from it (null catalog:
  // not loaded yet).
  // Each slot as served: the catalog with the cluster applied (a copy for the
  // cluster's line), and what was derived from it.
  std::vector<ServingLine> slots_ ABSL_GUARDED_BY(publish_mu_);
  // Each slot's catalog as loaded (null: not loaded yet).
  std::vector<std::shared_ptr<const engine::Catalog>> originals_
      ABSL_GUARDED_BY(publish_mu_);
  std::shared_ptr<const engine::ClusterSettings> cluster_
      ABSL_GUARDED_BY(publish_mu_);
  // The lines of the last published set ("1.33, 1.36"): when they change,
  // every line is derived again (an upgrade target's line may have moved).
  std::string line_names_ ABSL_GUARDED_BY(publish_mu_);
};

}  // namespace compatd::runtime
