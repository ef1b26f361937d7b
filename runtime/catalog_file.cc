#include "runtime/catalog_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/valid_utf8.h"

namespace compatd::runtime {

// Reads the catalog without ever blocking: O_NONBLOCK so that a FIFO put in
// the file's place fails instead of waiting for a writer, and only regular
// files are read.
absl::StatusOr<std::string> ReadCatalogFile(const std::string& path) {
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    const std::string why =
        absl::StrCat(path, ": cannot open the catalog: ", std::strerror(error));
    if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(why);
    if (error == EACCES || error == EPERM) {
      return absl::PermissionDeniedError(why);
    }
    return absl::FailedPreconditionError(why);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": cannot stat the catalog: ", std::strerror(error)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": not a regular file",
        S_ISDIR(st.st_mode) ? " (it is a directory; give the file inside it)"
                            : ""));
  }
  const std::string too_large =
      absl::StrCat(path, ": the catalog is larger than the limit of ",
                   catalog::kMaxCatalogBytes, " bytes");
  if (static_cast<uint64_t>(st.st_size) > catalog::kMaxCatalogBytes) {
    close(fd);
    return absl::FailedPreconditionError(too_large);
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return absl::FailedPreconditionError(absl::StrCat(
          path, ": cannot read the catalog: ", std::strerror(error)));
    }
    if (n == 0) break;
    // The file may grow while we read it.
    if (bytes.size() + static_cast<size_t>(n) > catalog::kMaxCatalogBytes) {
      close(fd);
      return absl::FailedPreconditionError(too_large);
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

absl::StatusOr<std::unique_ptr<engine::Catalog>> LoadCatalogFile(
    const std::string& path, catalog::CatalogErrors* errors) {
  absl::StatusOr<std::string> bytes = ReadCatalogFile(path);
  if (!bytes.ok()) return bytes.status();
  // The path names the catalog in GetCatalog's `source` and in every error,
  // proto3 strings: a file name need not be UTF-8, they must be.
  return catalog::ParseCatalog(*bytes, base::ValidUtf8(path), errors);
}

}  // namespace compatd::runtime
