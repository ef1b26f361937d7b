#include "catalog/embedded_catalog.h"

#include <string_view>

namespace compatd::catalog {

extern const std::string_view kEmbeddedCatalogYaml;

absl::string_view EmbeddedCatalogYaml() {
  return absl::string_view(kEmbeddedCatalogYaml.data(),
                           kEmbeddedCatalogYaml.size());
}

absl::string_view EmbeddedCatalogSource() { return "embedded:kubernetes-1.36"; }

std::vector<EmbeddedCatalog> EmbeddedCatalogs() {
  return {EmbeddedCatalog{EmbeddedCatalogSource(), EmbeddedCatalogYaml()}};
}

}  // namespace compatd::catalog
