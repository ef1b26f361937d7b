#include "runtime/catalog_pipeline.h"

#include <utility>

#include "absl/time/clock.h"

namespace compatd::runtime {

CatalogPipeline::CatalogPipeline(Options options)
    : options_(std::move(options)) {}

absl::Time CatalogPipeline::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

std::shared_ptr<const ServingSnapshot> CatalogPipeline::Publish(
    std::unique_ptr<engine::Catalog> catalog, bool initial) {
  std::shared_ptr<const ServingSnapshot> published;
  std::shared_ptr<const ServingSnapshot> replaced;
  {
    std::lock_guard<std::mutex> lock(publish_mu_);
    auto snapshot = std::make_shared<ServingSnapshot>();
    snapshot->generation = ++generation_;
    snapshot->loaded_at = Now();
    if (options_.derive) snapshot->derived = options_.derive(*catalog);
    snapshot->catalog = std::move(catalog);
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
      if (options_.events != nullptr) options_.events->Published(published);
      if (options_.on_reload) {
        options_.on_reload(ReloadResult::kLoaded, published.get(), "");
      }
    }
  }
  return replaced;
}

void CatalogPipeline::Unchanged() {
  if (options_.metrics != nullptr) {
    options_.metrics->RecordReload(ReloadResult::kUnchanged, Now());
  }
  if (options_.events != nullptr) options_.events->Unchanged();
  if (options_.on_reload)
    options_.on_reload(ReloadResult::kUnchanged, nullptr, "");
}

void CatalogPipeline::Rejected(absl::string_view error) {
  const absl::Time now = Now();
  if (options_.metrics != nullptr) {
    options_.metrics->RecordReload(ReloadResult::kRejected, now);
  }
  if (options_.events != nullptr) {
    options_.events->Rejected(std::string(error), now);
  }
  if (options_.on_reload) {
    options_.on_reload(ReloadResult::kRejected, nullptr, error);
  }
}

}  // namespace compatd::runtime
