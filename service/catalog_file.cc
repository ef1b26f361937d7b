#include "service/catalog_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace compatd::service {

absl::StatusOr<std::string> ReadCatalogFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int error = errno;
    const std::string why =
        absl::StrCat(path, ": cannot open the catalog: ", std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(why);
    if (error == EACCES) return absl::PermissionDeniedError(why);
    return absl::FailedPreconditionError(why);
  }
  std::string bytes;
  char buffer[64 * 1024];
  bool too_large = false;
  bool read_error = false;
  while (true) {
    const size_t n = std::fread(buffer, 1, sizeof(buffer), file);
    if (n > 0) {
      if (bytes.size() + n > engine::kMaxCatalogBytes) {
        too_large = true;
        break;
      }
      bytes.append(buffer, n);
    }
    if (n < sizeof(buffer)) {
      read_error = std::ferror(file) != 0;
      break;
    }
  }
  const int error = errno;
  std::fclose(file);
  if (too_large) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": the catalog is larger than the limit of ",
                     engine::kMaxCatalogBytes, " bytes"));
  }
  if (read_error) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": cannot read the catalog: ", std::strerror(error),
        error == EISDIR ? " (it is a directory; give the file inside it)"
                        : ""));
  }
  return bytes;
}

absl::StatusOr<std::unique_ptr<engine::Catalog>> LoadCatalogFile(
    const std::string& path, engine::CatalogErrors* errors) {
  absl::StatusOr<std::string> bytes = ReadCatalogFile(path);
  if (!bytes.ok()) return bytes.status();
  return engine::ParseCatalog(*bytes, path, errors);
}

}  // namespace compatd::service
