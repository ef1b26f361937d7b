#include "runtime/catalog_file.h"

#include <string>

#include "base/bounded_file.h"
#include "base/valid_utf8.h"

namespace compatd::runtime {

absl::StatusOr<std::string> ReadCatalogFile(const std::string& path,
                                            bool refuse_while_written) {
  return base::ReadBoundedFile(path,
                               {.max_bytes = catalog::kMaxCatalogBytes,
                                .what = "the catalog",
                                .refuse_while_written = refuse_while_written});
}

absl::StatusOr<std::unique_ptr<engine::Catalog>> LoadCatalogFile(
    const std::string& path, catalog::CatalogErrors* errors) {
  absl::StatusOr<std::string> bytes = ReadCatalogFile(path);
  if (!bytes.ok()) return bytes.status();
  // The path names the catalog in GetCatalog's `source` and in every error,
  // proto3 strings: a file name need not be UTF-8, they must be.
  return catalog::ParseCatalog(*bytes, base::ValidUtf8(path), errors);
}

}  // namespace compatd::runtime
