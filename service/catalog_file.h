#pragma once

// Reading a catalog file: bounded in size, with errors that name the path.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/catalog.h"
#include "engine/catalog_loader.h"

namespace compatd::service {

// The file's bytes, read without ever blocking (a FIFO in its place fails at
// once). NOT_FOUND / PERMISSION_DENIED / FAILED_PRECONDITION (not a regular
// file, or larger than engine::kMaxCatalogBytes) with "<path>: <why>".
absl::StatusOr<std::string> ReadCatalogFile(const std::string& path);

// Reads and parses `path` (source = path). `errors` receives the parse errors,
// if any.
absl::StatusOr<std::unique_ptr<engine::Catalog>> LoadCatalogFile(
    const std::string& path, engine::CatalogErrors* errors = nullptr);

}  // namespace compatd::service
