#include "runtime/catalog_pipeline.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "engine/api_availability.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/upgrade_plan.h"

namespace compatd::runtime {

absl::Time CatalogPipeline::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

CatalogPipeline::CatalogPipeline(Options options)
    : options_(std::move(options)),
      slots_(std::max<size_t>(options_.sources, 1)),
      originals_(slots_.size()) {}

namespace {

// Every line's cluster.upgradeTarget must name a line the set has, and the
// plan to a later binary's target must be answerable across the lines (the
// loader checks a target on the catalog's own binary; engine/upgrade_plan.h).
absl::Status CheckUpgradeTargets(const engine::CatalogSet& set) {
  for (const auto& line : set.lines()) {
    const auto& target = line->cluster.upgrade_target;
    if (!target.has_value() || target->binary_version.empty()) continue;
    const std::string where =
        !line->cluster.source.empty()
            ? line->cluster.source
            : absl::StrCat(line->source, target->line > 0
                                             ? absl::StrCat(":", target->line)
                                             : std::string());
    absl::StatusOr<size_t> found = set.ResolveIndex(
        target->binary_version, "cluster.upgradeTarget.binaryVersion");
    if (!found.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", found.status().message(),
          "; serve a catalog of that line too (another --catalog) or aim "
          "the target at one of these"));
    }
    if (set.lines()[*found].get() == line.get()) continue;
    engine::UpgradePlanQuery query = engine::UpgradeTargetQuery(*line);
    const std::string from_binary =
        line->cluster.binary.has_value()
            ? line->cluster.binary->ToString()
            : std::string(line->binary_version.MajorMinorString());
    query.from.binary_version = from_binary;
    absl::StatusOr<engine::UpgradePlan> plan = engine::PlanUpgrade(set, query);
    if (!plan.ok()) {
      absl::string_view message = plan.status().message();
      absl::ConsumePrefix(&message, "to.");
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": cluster.upgradeTarget: ", message));
    }
  }
  return absl::OkStatus();
}

// The cluster's own flags on its line's catalog, as kube-apiserver checks
// them at start-up (versions in range, known gates, a --runtime-config it
// accepts): a profile whose cluster could not run is refused.
absl::Status CheckClusterFlags(const engine::Catalog& catalog) {
  const std::string& where = catalog.cluster.source;
  absl::StatusOr<engine::EffectiveVersions> versions =
      engine::ResolveEffectiveVersions(catalog, engine::VersionQuery{});
  if (!versions.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", versions.status().message()));
  }
  if (!catalog.cluster.feature_gates.empty()) {
    absl::StatusOr<std::vector<engine::FeatureDecision>> gates =
        engine::DecideFeatures(catalog, *versions, engine::VersionQuery{}, "");
    if (!gates.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": --feature-gates: ", gates.status().message()));
    }
  }
  if (!catalog.cluster.runtime_config.empty()) {
    absl::StatusOr<std::vector<engine::ServedGroupVersion>> apis =
        engine::ListServedAPIs(catalog, *versions, engine::VersionQuery{});
    if (!apis.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": --runtime-config: ", apis.status().message()));
    }
  }
  return absl::OkStatus();
}

// The slots `next` in the set's order (oldest line first), stamped with
// `generation`.
std::vector<ServingLine> InSetOrder(const engine::CatalogSet& set,
                                    const std::vector<ServingLine>& next,
                                    uint64_t generation) {
  std::vector<ServingLine> lines;
  for (const auto& line : set.lines()) {
    for (const ServingLine& slot : next) {
      if (slot.catalog.get() != line.get()) continue;
      lines.push_back(slot);
      lines.back().generation = generation;
      break;
    }
  }
  return lines;
}

}  // namespace

// The slot of `originals` whose line is the cluster's binary (kNoSource
// without a cluster), or an error naming the lines served.
absl::StatusOr<size_t> CatalogPipeline::ClusterSlot(
    const std::vector<std::shared_ptr<const engine::Catalog>>& originals,
    const std::shared_ptr<const engine::ClusterSettings>& cluster) {
  if (cluster == nullptr) return kNoSource;
  std::vector<std::string> lines;
  for (size_t i = 0; i < originals.size(); ++i) {
    if (originals[i]->binary_version.CompareMajorMinor(*cluster->binary) == 0) {
      return i;
    }
    lines.push_back(
        std::string(originals[i]->binary_version.MajorMinorString()));
  }
  std::sort(lines.begin(), lines.end(),
            [](const std::string& a, const std::string& b) {
              return engine::Version::Parse(a).value_or(engine::Version()) <
                     engine::Version::Parse(b).value_or(engine::Version());
            });
  return absl::InvalidArgumentError(absl::StrCat(
      cluster->binary_origin.empty() ? cluster->source : cluster->binary_origin,
      ": the cluster's kube-apiserver ", cluster->binary->ToString(),
      ": no catalog describes kube-apiserver ",
      cluster->binary->MajorMinorString(), "; the release lines served are ",
      absl::StrJoin(lines, ", "),
      "; serve a catalog of that line (--catalog) or describe a cluster of "
      "one of these"));
}

std::shared_ptr<const engine::ClusterSettings> CatalogPipeline::cluster()
    const {
  std::lock_guard<std::mutex> lock(publish_mu_);
  return cluster_;
}

absl::StatusOr<std::shared_ptr<const ServingSnapshot>>
CatalogPipeline::SetCluster(
    std::shared_ptr<const engine::ClusterSettings> cluster, bool initial) {
  if (cluster != nullptr && !cluster->binary.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(cluster->source, ": the cluster has no binary version"));
  }
  std::lock_guard<std::mutex> lock(publish_mu_);
  return PublishLocked(originals_, std::move(cluster), kNoSource, initial);
}

absl::StatusOr<std::shared_ptr<const ServingSnapshot>>
CatalogPipeline::PublishLine(size_t source,
                             std::unique_ptr<engine::Catalog> catalog,
                             bool initial) {
  if (catalog == nullptr) {
    return absl::InvalidArgumentError("no catalog to publish");
  }
  std::lock_guard<std::mutex> lock(publish_mu_);
  if (source >= slots_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("catalog source ", source, " of ", slots_.size()));
  }
  std::vector<std::shared_ptr<const engine::Catalog>> originals = originals_;
  originals[source] = std::move(catalog);
  return PublishLocked(std::move(originals), cluster_, source, initial);
}

absl::StatusOr<std::shared_ptr<const ServingSnapshot>>
CatalogPipeline::PublishLocked(
    std::vector<std::shared_ptr<const engine::Catalog>> originals,
    std::shared_ptr<const engine::ClusterSettings> cluster, size_t source,
    bool initial) {
  for (const auto& original : originals) {
    if (original == nullptr) {
      // Start-up: the other sources are still loading.
      originals_ = std::move(originals);
      cluster_ = std::move(cluster);
      return std::shared_ptr<const ServingSnapshot>();
    }
  }
  // The cluster's line.
  absl::StatusOr<size_t> cluster_slot_or = ClusterSlot(originals, cluster);
  if (!cluster_slot_or.ok()) return cluster_slot_or.status();
  const size_t cluster_slot = *cluster_slot_or;
  const bool cluster_changed = cluster != cluster_;
  std::vector<ServingLine> next = slots_;
  std::vector<bool> changed(next.size(), false);
  for (size_t i = 0; i < next.size(); ++i) {
    const bool reapply =
        i == source || next[i].catalog == nullptr ||
        (cluster_changed &&
         (i == cluster_slot || !next[i].catalog->cluster.source.empty()));
    if (!reapply) continue;
    changed[i] = true;
    std::shared_ptr<const engine::Catalog> served = originals[i];
    if (i == cluster_slot) {
      auto copy = std::make_shared<engine::Catalog>(*originals[i]);
      copy->cluster = *cluster;
      served = std::move(copy);
    }
    const absl::Time loaded_at =
        i == source || next[i].catalog == nullptr ? Now() : next[i].loaded_at;
    next[i] = ServingLine{std::move(served), 0, loaded_at, nullptr};
  }
  std::vector<std::shared_ptr<const engine::Catalog>> catalogs;
  catalogs.reserve(next.size());
  for (const ServingLine& slot : next) catalogs.push_back(slot.catalog);
  std::optional<engine::Version> default_line = options_.default_line;
  if (cluster != nullptr) default_line = cluster->binary->ToMajorMinor();
  absl::StatusOr<std::shared_ptr<const engine::CatalogSet>> set =
      engine::CatalogSet::Make(std::move(catalogs), default_line);
  if (!set.ok()) return set.status();
  if (cluster_slot != kNoSource) {
    if (absl::Status flags = CheckClusterFlags(*next[cluster_slot].catalog);
        !flags.ok()) {
      return flags;
    }
  }
  if (absl::Status targets = CheckUpgradeTargets(**set); !targets.ok()) {
    return targets;
  }
  const bool lines_changed = (*set)->line_names() != line_names_;
  if (options_.derive) {
    for (size_t i = 0; i < next.size(); ++i) {
      if (changed[i] || lines_changed || next[i].derived == nullptr ||
          next[i].catalog->cluster.upgrade_target.has_value()) {
        next[i].derived = options_.derive(**set, *next[i].catalog);
      }
    }
  }
  auto snapshot = std::make_shared<ServingSnapshot>();
  snapshot->generation = ++generation_;
  snapshot->loaded_at = source != kNoSource ? next[source].loaded_at : Now();
  snapshot->catalogs = *set;
  snapshot->lines = InSetOrder(**set, next, snapshot->generation);
  const std::string name = source != kNoSource ? originals[source]->source
                           : cluster != nullptr
                               ? cluster->source
                               : std::string("cluster profile");
  slots_ = std::move(next);
  originals_ = std::move(originals);
  cluster_ = std::move(cluster);
  line_names_ = (*set)->line_names();
  std::shared_ptr<const ServingSnapshot> published = std::move(snapshot);
  std::shared_ptr<const ServingSnapshot> replaced = store_.Publish(published);
  // Inside the lock, so that listeners hear publishes in generation order.
  Announce(published, name, initial);
  return replaced;
}

void CatalogPipeline::Announce(
    const std::shared_ptr<const ServingSnapshot>& published,
    absl::string_view name, bool initial) {
  if (options_.metrics != nullptr) {
    if (!initial) {
      options_.metrics->RecordReload(ReloadResult::kLoaded,
                                     published->loaded_at);
    }
    options_.metrics->RecordCatalogPublished(published->generation,
                                             published->loaded_at);
  }
  if (!initial) {
    if (options_.events != nullptr) options_.events->Published(published, name);
    if (options_.on_reload) {
      options_.on_reload(ReloadResult::kLoaded, published.get(), "");
    }
  }
}

std::shared_ptr<const ServingSnapshot> CatalogPipeline::Publish(
    std::unique_ptr<engine::Catalog> catalog, bool initial) {
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> replaced =
      PublishLine(0, std::move(catalog), initial);
  if (!replaced.ok()) return nullptr;
  return *std::move(replaced);
}

void CatalogPipeline::Unchanged(absl::string_view name) {
  if (options_.metrics != nullptr) {
    options_.metrics->RecordReload(ReloadResult::kUnchanged, Now());
  }
  if (options_.events != nullptr) options_.events->Unchanged(name);
  if (options_.on_reload)
    options_.on_reload(ReloadResult::kUnchanged, nullptr, "");
}

void CatalogPipeline::Rejected(absl::string_view error,
                               absl::string_view name) {
  const absl::Time now = Now();
  if (options_.metrics != nullptr) {
    options_.metrics->RecordReload(ReloadResult::kRejected, now);
  }
  if (options_.events != nullptr) {
    options_.events->Rejected(std::string(error), now, name);
  }
  if (options_.on_reload) {
    options_.on_reload(ReloadResult::kRejected, nullptr, error);
  }
}

}  // namespace compatd::runtime
