#include "runtime/catalog_pipeline.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "engine/upgrade_plan.h"

namespace compatd::runtime {

absl::Time CatalogPipeline::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

CatalogPipeline::CatalogPipeline(Options options)
    : options_(std::move(options)),
      slots_(std::max<size_t>(options_.sources, 1)) {}

namespace {

// Every line's cluster.upgradeTarget must name a line the set has, and the
// plan to a later binary's target must be answerable across the lines (the
// loader checks a target on the catalog's own binary; engine/upgrade_plan.h).
absl::Status CheckUpgradeTargets(const engine::CatalogSet& set) {
  for (const auto& line : set.lines()) {
    const auto& target = line->cluster.upgrade_target;
    if (!target.has_value() || target->binary_version.empty()) continue;
    const std::string where = absl::StrCat(
        line->source,
        target->line > 0 ? absl::StrCat(":", target->line) : std::string());
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
    const std::string from_binary = line->binary_version.MajorMinorString();
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

}  // namespace

absl::StatusOr<std::shared_ptr<const ServingSnapshot>>
CatalogPipeline::PublishLine(size_t source,
                             std::unique_ptr<engine::Catalog> catalog,
                             bool initial) {
  if (catalog == nullptr) {
    return absl::InvalidArgumentError("no catalog to publish");
  }
  std::shared_ptr<const ServingSnapshot> published;
  std::shared_ptr<const ServingSnapshot> replaced;
  {
    std::lock_guard<std::mutex> lock(publish_mu_);
    if (source >= slots_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalog source ", source, " of ", slots_.size()));
    }
    std::vector<ServingLine> next = slots_;
    next[source] = ServingLine{std::move(catalog), 0, Now(), nullptr};
    for (const ServingLine& slot : next) {
      if (slot.catalog == nullptr) {
        // Start-up: the other sources are still loading.
        slots_ = std::move(next);
        return std::shared_ptr<const ServingSnapshot>();
      }
    }
    std::vector<std::shared_ptr<const engine::Catalog>> catalogs;
    catalogs.reserve(next.size());
    for (const ServingLine& slot : next) catalogs.push_back(slot.catalog);
    absl::StatusOr<std::shared_ptr<const engine::CatalogSet>> set =
        engine::CatalogSet::Make(std::move(catalogs), options_.default_line);
    if (!set.ok()) return set.status();
    if (absl::Status targets = CheckUpgradeTargets(**set); !targets.ok()) {
      return targets;
    }
    const bool lines_changed = (*set)->line_names() != line_names_;
    if (options_.derive) {
      for (size_t i = 0; i < next.size(); ++i) {
        if (i == source || lines_changed || next[i].derived == nullptr ||
            next[i].catalog->cluster.upgrade_target.has_value()) {
          next[i].derived = options_.derive(**set, *next[i].catalog);
        }
      }
    }
    auto snapshot = std::make_shared<ServingSnapshot>();
    snapshot->generation = ++generation_;
    snapshot->loaded_at = next[source].loaded_at;
    snapshot->catalogs = *set;
    // The snapshot's lines in the set's order (oldest line first).
    for (const auto& line : (*set)->lines()) {
      for (const ServingLine& slot : next) {
        if (slot.catalog.get() != line.get()) continue;
        snapshot->lines.push_back(slot);
        snapshot->lines.back().generation = snapshot->generation;
        break;
      }
    }
    slots_ = std::move(next);
    line_names_ = (*set)->line_names();
    published = std::move(snapshot);
    replaced = store_.Publish(published);
    // Inside the lock, so that listeners hear publishes in generation order.
    if (options_.metrics != nullptr) {
      if (!initial) {
        options_.metrics->RecordReload(ReloadResult::kLoaded,
                                       published->loaded_at);
      }
      options_.metrics->RecordCatalogPublished(published->generation,
                                               published->loaded_at);
    }
    if (!initial) {
      if (options_.events != nullptr) {
        options_.events->Published(published, slots_[source].catalog->source);
      }
      if (options_.on_reload) {
        options_.on_reload(ReloadResult::kLoaded, published.get(), "");
      }
    }
  }
  return replaced;
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
