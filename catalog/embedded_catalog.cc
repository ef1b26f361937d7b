#include "catalog/embedded_catalog.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace compatd::catalog {

const EmbeddedCatalog* FindEmbeddedCatalog(absl::string_view line) {
  const std::string name = absl::StrCat("embedded:kubernetes-", line);
  for (const EmbeddedCatalog& catalog : EmbeddedCatalogs()) {
    if (catalog.name == name) return &catalog;
  }
  return nullptr;
}

}  // namespace compatd::catalog
