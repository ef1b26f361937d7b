#pragma once

// Where a catalog's bytes come from. The reloader (runtime/catalog_reloader.h)
// reads a source and hands what parses to the pipeline; a source with a
// directory to watch is watched, a static one (the embedded catalog) is read
// once, as TF Serving's StaticStoragePathSource sits beside its file-system
// source.

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace compatd::runtime {

class CatalogSource {
 public:
  virtual ~CatalogSource() = default;
  // engine::Catalog::source and every error's prefix: the file's path (valid
  // UTF-8) or "embedded:kubernetes-1.36".
  virtual const std::string& name() const = 0;
  // The bytes now. Errors (runtime/catalog_file.h): NOT_FOUND,
  // PERMISSION_DENIED, FAILED_PRECONDITION, with "<name>: <why>".
  virtual absl::StatusOr<std::string> Read() const = 0;
  // The directory whose changes may change Read()'s answer (where the file's
  // entry lives: a ConfigMap's `..data` swap is a rename there). Empty: the
  // bytes never change, and nothing is watched.
  virtual std::string WatchDir() const = 0;
};

// The catalog compiled into the binary (catalog/embedded_catalog.h).
std::unique_ptr<CatalogSource> NewEmbeddedCatalogSource();

// A catalog file; a symlink is followed.
std::unique_ptr<CatalogSource> NewFileCatalogSource(std::string path);

}  // namespace compatd::runtime
