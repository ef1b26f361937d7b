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
// `refuse_while_written`: UNAVAILABLE for a file another process has open for
// writing or that changed while it was read (base/bounded_file.h), so that a
// catalog being written in place is never taken half-written.
absl::StatusOr<std::string> ReadCatalogFile(const std::string& path,
                                            bool refuse_while_written = false);

// Reads and parses `path` (source = path). `errors` receives the parse errors,
// if any.
absl::StatusOr<std::unique_ptr<engine::Catalog>> LoadCatalogFile(
    const std::string& path, catalog::CatalogErrors* errors = nullptr);

}  // namespace compatd::runtime
