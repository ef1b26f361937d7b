#pragma once

// Where a catalog's bytes come from. The reloader (runtime/catalog_reloader.h)
// reads a source and hands what parses to the pipeline; a source with a
// directory to watch is watched, a static one (the embedded catalog) is read
// once, as TF Serving's StaticStoragePathSource sits beside its file-system
// source.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace compatd::runtime {

class CatalogSource {
 public:
  virtual ~CatalogSource() = default;
  // engine::Catalog::source and every error's prefix: the file's path (valid
  // UTF-8) or "embedded:kubernetes-1.36".
  virtual const std::string& name() const = 0;
  // The bytes now. Errors (runtime/catalog_file.h): NOT_FOUND,
  // PERMISSION_DENIED, FAILED_PRECONDITION, with "<name>: <why>"; UNAVAILABLE
  // while the file is being written (open for writing, or changed while it
  // was read): not an error of the catalog, try again later.
  virtual absl::StatusOr<std::string> Read() const = 0;
  // The directory whose changes may change Read()'s answer (where the file's
  // entry lives: a ConfigMap's `..data` swap is a rename there). Empty: the
  // bytes never change, and nothing is watched.
  virtual std::string WatchDir() const = 0;
  // The source's own entry in WatchDir() (the file's name); empty if none.
  virtual std::string WatchEntry() const { return ""; }
  // Whether the file is open for writing now (base::FileOpenForWriting):
  // nullopt when that cannot be told. A static source is never written.
  virtual std::optional<bool> OpenForWriting() const { return false; }
};

// The catalog compiled into the binary (catalog/embedded_catalog.h) for
// Kubernetes 1.36.
std::unique_ptr<CatalogSource> NewEmbeddedCatalogSource();
// Every catalog compiled into the binary, one per release line.
std::vector<std::unique_ptr<CatalogSource>> NewEmbeddedCatalogSources();

// The catalog files `path` names: itself when it is a file (or a symlink to
// one), else every *.yaml, *.yml and *.json entry of the directory (not
// those whose name starts with "."), sorted. NOT_FOUND / FAILED_PRECONDITION
// naming the path when it is missing or a directory without catalogs.
absl::StatusOr<std::vector<std::string>> ListCatalogFiles(
    const std::string& path);

// A catalog file; a symlink is followed.
std::unique_ptr<CatalogSource> NewFileCatalogSource(std::string path);

}  // namespace compatd::runtime
