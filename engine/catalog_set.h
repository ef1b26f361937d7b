#pragma once

// The catalogs one server answers from: one per kube-apiserver release line
// (the binary's major.minor), each describing one patch release of that line.
// A call picks its line once, from versions.binaryVersion (empty: the default
// line), and answers everything from that line's catalog: a binary version
// with no catalog is INVALID_ARGUMENT naming the lines there are, never an
// answer from another binary's facts.
//
// Immutable once made; shared through std::shared_ptr<const CatalogSet>. The
// catalogs it returns live as long as the set (engine/catalog.h, "Lifetimes").

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/version.h"

namespace compatd::engine {

class CatalogSet final {
 public:
  // `lines`: at least one catalog, no two with the same binary major.minor
  // (INVALID_ARGUMENT naming both sources otherwise). `default_line`: the
  // major.minor answered when a request names no binary version; absent means
  // the newest EXACT line (the newest line when all are provisional).
  // INVALID_ARGUMENT when no catalog has that line.
  static absl::StatusOr<std::shared_ptr<const CatalogSet>> Make(
      std::vector<std::shared_ptr<const Catalog>> lines,
      std::optional<Version> default_line = std::nullopt);

  // A set of one catalog (a user's single --catalog file): its line is the
  // default. Never fails.
  static std::shared_ptr<const CatalogSet> Single(
      std::shared_ptr<const Catalog> catalog);

  // The catalog for a request's binary version: empty -> the default line;
  // otherwise the catalog of its major.minor (any patch or pre-release of the
  // line: the answer's catalog names the patch it describes).
  // INVALID_ARGUMENT naming `field`, the value and the lines there are when the
  // value is malformed or no catalog has its line.
  absl::StatusOr<const Catalog*> Resolve(
      absl::string_view binary_version,
      absl::string_view field = "versions.binaryVersion") const;
  // The same, as an index into lines(). Allocates nothing when it succeeds
  // (the hot path of every call): the line is found from the major.minor
  // numbers alone (Version::ParseMajorMinorNoAlloc).
  absl::StatusOr<size_t> ResolveIndex(
      absl::string_view binary_version,
      absl::string_view field = "versions.binaryVersion") const;

  // The catalog of `binary`'s major.minor, or null.
  const Catalog* Find(const Version& binary) const;

  const Catalog& default_catalog() const { return *lines_[default_index_]; }
  size_t default_index() const { return default_index_; }
  const std::shared_ptr<const Catalog>& default_shared() const {
    return lines_[default_index_];
  }
  // Oldest line first; never empty.
  const std::vector<std::shared_ptr<const Catalog>>& lines() const {
    return lines_;
  }
  // "1.31, 1.32, 1.33" (major.minor of every line, oldest first).
  const std::string& line_names() const { return line_names_; }

 private:
  CatalogSet() = default;

  std::vector<std::shared_ptr<const Catalog>> lines_;
  size_t default_index_ = 0;
  std::string line_names_;
};

}  // namespace compatd::engine
