#pragma once

// Reading a catalog file: bounded in size, with errors that name the path.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "catalog/catalog_loader.h"
#include "engine/catalog.h"

namespace compatd::runtime {

// The file's bytes, read without ever blocking (a FIFO in its place fails at
// once). NOT_FOUND / PERMISSION_DENIED / FAILED_PRECONDITION (not a regular
// file, or larger than catalog::kMaxCatalogBytes) with "<path>: <why>".
absl::StatusOr<std::string> ReadCatalogFile(const std::string& path);

// Reads and parses `path` (source = path). `errors` receives the parse errors,
// if any.
absl::StatusOr<std::unique_ptr<engine::Catalog>> LoadCatalogFile(
    const std::string& path, catalog::CatalogErrors* errors = nullptr);

}  // namespace compatd::runtime
