#pragma once

// Parses and validates a catalog (YAML; JSON is YAML too) against the schema in
// proto/compatd/v1/catalog.proto, then builds the indexed engine::Catalog. All
// or nothing.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"

namespace compatd::catalog {

// Largest catalog accepted, in bytes.
inline constexpr size_t kMaxCatalogBytes = 16 << 20;

struct CatalogError {
  int line = 0;  // 1-based; 0 when the error is about the whole file
  std::string message;
};

// Errors a rejected catalog reports: the first kMaxReportedErrors by line, and
// a count of the rest (Format ends with one "and N more errors" line), so that
// a rejection's message (kept for GetCatalog, the status page and the log)
// stays small whatever the file holds (a 7 MB file of unknown keys has 400,000
// errors).
inline constexpr size_t kMaxReportedErrors = 100;

// The errors found (not just the first: up to kMaxReportedErrors, then a
// count), each formatted "<source>:<line>: <message>".
struct CatalogErrors {
  std::vector<CatalogError>
      errors;          // sorted by line (0, the whole file, first)
  size_t omitted = 0;  // errors found past the listed ones
  size_t Total() const { return errors.size() + omitted; }
  std::string Format(absl::string_view source) const;
};

// Parses `bytes`; on success the catalog has digest and source set (generation
// and loaded_at are the caller's). On failure returns INVALID_ARGUMENT whose
// message is every error, one per line, "<source>:<line>: <message>"; `errors`,
// if given, receives them.
absl::StatusOr<std::unique_ptr<engine::Catalog>> ParseCatalog(
    absl::string_view bytes, absl::string_view source,
    CatalogErrors* errors = nullptr);

}  // namespace compatd::catalog
