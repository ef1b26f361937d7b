#include "base/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace compatd::base {

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedFileOptions& options) {
  // O_NONBLOCK: a FIFO put in the file's place fails instead of waiting for a
  // writer (and a device that would block is not waited for either).
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    const std::string why = absl::StrCat(path, ": cannot open ", options.what,
                                         ": ", std::strerror(error));
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
        path, ": cannot stat ", options.what, ": ", std::strerror(error)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": not a regular file",
        S_ISDIR(st.st_mode)    ? " (it is a directory; give the file inside it)"
        : S_ISFIFO(st.st_mode) ? " (it is a FIFO)"
        : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? " (it is a device)"
        : S_ISSOCK(st.st_mode)                       ? " (it is a socket)"
                                                     : ""));
  }
  const std::string too_large =
      absl::StrCat(path, ": ", options.what, " is larger than the limit of ",
                   options.max_bytes, " bytes");
  if (static_cast<uint64_t>(st.st_size) > options.max_bytes) {
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
          path, ": cannot read ", options.what, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    // The file may grow while we read it.
    if (bytes.size() + static_cast<size_t>(n) > options.max_bytes) {
      close(fd);
      return absl::FailedPreconditionError(too_large);
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

}  // namespace compatd::base
