#include "runtime/catalog_source.h"

#include <utility>

#include "base/bounded_file.h"
#include "base/valid_utf8.h"
#include "catalog/embedded_catalog.h"
#include "runtime/catalog_file.h"

namespace compatd::runtime {
namespace {

class EmbeddedSource final : public CatalogSource {
 public:
  EmbeddedSource() : name_(std::string(catalog::EmbeddedCatalogSource())) {}
  const std::string& name() const override { return name_; }
  absl::StatusOr<std::string> Read() const override {
    return std::string(catalog::EmbeddedCatalogYaml());
  }
  std::string WatchDir() const override { return ""; }

 private:
  const std::string name_;
};

class FileSource final : public CatalogSource {
 public:
  explicit FileSource(std::string path)
      : path_(std::move(path)), name_(base::ValidUtf8(path_)) {}
  const std::string& name() const override { return name_; }
  absl::StatusOr<std::string> Read() const override {
    return ReadCatalogFile(path_, /*refuse_while_written=*/true);
  }
  std::optional<bool> OpenForWriting() const override {
    return base::FileOpenForWriting(path_);
  }
  std::string WatchEntry() const override {
    const size_t slash = path_.rfind('/');
    return slash == std::string::npos ? path_ : path_.substr(slash + 1);
  }
  // Where the entry `path` names lives (not where a symlink points: a
  // ConfigMap's `catalog.yaml -> ..data/catalog.yaml` changes by a rename in
  // the same directory).
  std::string WatchDir() const override {
    const size_t slash = path_.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path_.substr(0, slash);
  }

 private:
  const std::string path_;
  const std::string name_;
};

}  // namespace

std::unique_ptr<CatalogSource> NewEmbeddedCatalogSource() {
  return std::make_unique<EmbeddedSource>();
}

std::unique_ptr<CatalogSource> NewFileCatalogSource(std::string path) {
  return std::make_unique<FileSource>(std::move(path));
}

}  // namespace compatd::runtime
