#include "runtime/catalog_source.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/bounded_file.h"
#include "base/valid_utf8.h"
#include "catalog/embedded_catalog.h"
#include "runtime/catalog_file.h"

namespace compatd::runtime {
namespace {

class EmbeddedSource final : public CatalogSource {
 public:
  explicit EmbeddedSource(catalog::EmbeddedCatalog entry)
      : name_(std::string(entry.name)), yaml_(entry.bytes) {}
  const std::string& name() const override { return name_; }
  absl::StatusOr<std::string> Read() const override {
    return std::string(yaml_);
  }
  std::string WatchDir() const override { return ""; }

 private:
  const std::string name_;
  const absl::string_view yaml_;
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
  return std::make_unique<EmbeddedSource>(catalog::EmbeddedCatalog{
      catalog::EmbeddedCatalogSource(), catalog::EmbeddedCatalogYaml()});
}

std::vector<std::unique_ptr<CatalogSource>> NewEmbeddedCatalogSources() {
  std::vector<std::unique_ptr<CatalogSource>> sources;
  for (const catalog::EmbeddedCatalog& entry : catalog::EmbeddedCatalogs()) {
    sources.push_back(std::make_unique<EmbeddedSource>(entry));
  }
  return sources;
}

absl::StatusOr<std::vector<std::string>> ListCatalogFiles(
    const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(base::ValidUtf8(path), ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return std::vector<std::string>{path};
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(base::ValidUtf8(path),
                     ": cannot list the directory: ", std::strerror(errno)));
  }
  std::vector<std::string> files;
  while (const dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    if (!absl::EndsWith(name, ".yaml") && !absl::EndsWith(name, ".yml") &&
        !absl::EndsWith(name, ".json")) {
      continue;
    }
    std::string file =
        absl::StrCat(path, absl::EndsWith(path, "/") ? "" : "/", name);
    // A ConfigMap's keys are symlinks into ..data: follow them; skip
    // directories.
    struct stat fst;
    if (stat(file.c_str(), &fst) == 0 && S_ISDIR(fst.st_mode)) continue;
    files.push_back(std::move(file));
  }
  closedir(dir);
  if (files.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        base::ValidUtf8(path),
        ": the directory has no catalog (*.yaml, *.yml or *.json files, one "
        "per kube-apiserver release line)"));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::unique_ptr<CatalogSource> NewFileCatalogSource(std::string path) {
  return std::make_unique<FileSource>(std::move(path));
}

}  // namespace compatd::runtime
