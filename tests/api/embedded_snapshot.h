#pragma once

// The snapshot the api/ tests answer from: the embedded default catalog
// (Kubernetes 1.36) through a pipeline that derives the answers, as the
// server publishes it.

#include <memory>
#include <utility>

#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"

namespace compatd::api {

inline std::shared_ptr<const runtime::ServingSnapshot> Embedded() {
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(), "embedded");
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  runtime::CatalogPipeline::Options options;
  options.derive = DeriveAnswers;
  runtime::CatalogPipeline pipeline(std::move(options));
  pipeline.Publish(*std::move(catalog), /*initial=*/true);
  return pipeline.Current();
}

}  // namespace compatd::api
