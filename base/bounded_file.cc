#include "base/bounded_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace compatd::base {
namespace {

// Whether a process has `fd`'s file open for writing: true/false, or nullopt
// when the kernel does not say (not the file's owner, no leases there).
std::optional<bool> OpenForWriting(int fd) {
  // A lease break (a writer opening the file while we hold the lease, for
  // the microseconds we do) is signalled with SIGIO, whose default action
  // ends the process.
  static std::once_flag sigio;
  std::call_once(sigio, [] {
    struct sigaction current;
    if (sigaction(SIGIO, nullptr, &current) == 0 &&
        current.sa_handler == SIG_DFL) {
      signal(SIGIO, SIG_IGN);
    }
  });
  if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
    fcntl(fd, F_SETLEASE, F_UNLCK);
    return false;
  }
  if (errno == EAGAIN) return true;
  return std::nullopt;  // EACCES (not ours), EINVAL (no leases here), ...
}

bool SameVersion(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
         a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// Opens `path` for reading, and stats it: a regular file, or a clear error
// (a missing file is NOT_FOUND, an unreadable one PERMISSION_DENIED).
absl::StatusOr<int> OpenRegularFile(const std::string& path,
                                    absl::string_view what, struct stat* st) {
  // O_NONBLOCK: a FIFO put in the file's place fails instead of waiting for a
  // writer (and a device that would block is not waited for either).
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    const std::string why =
        absl::StrCat(path, ": cannot open ", what, ": ", std::strerror(error));
    if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(why);
    if (error == EACCES || error == EPERM) {
      return absl::PermissionDeniedError(why);
    }
    return absl::FailedPreconditionError(why);
  }
  if (fstat(fd, st) != 0) {
    const int error = errno;
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot stat ", what, ": ", std::strerror(error)));
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": not a regular file",
        S_ISDIR(st->st_mode) ? " (it is a directory; give the file inside it)"
        : S_ISFIFO(st->st_mode)                        ? " (it is a FIFO)"
        : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? " (it is a device)"
        : S_ISSOCK(st->st_mode)                        ? " (it is a socket)"
                                                       : ""));
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedFileOptions& options) {
  struct stat st;
  absl::StatusOr<int> opened = OpenRegularFile(path, options.what, &st);
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  const std::string too_large =
      absl::StrCat(path, ": ", options.what, " is larger than the limit of ",
                   options.max_bytes, " bytes");
  if (static_cast<uint64_t>(st.st_size) > options.max_bytes) {
    close(fd);
    return absl::FailedPreconditionError(too_large);
  }
  const std::string being_written =
      absl::StrCat(path, ": ", options.what,
                   " is open for writing by another process; it is read once "
                   "the writer has closed it");
  if (options.refuse_while_written && OpenForWriting(fd) == true) {
    close(fd);
    return absl::UnavailableError(being_written);
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
  if (options.refuse_while_written) {
    struct stat after;
    const bool changed = fstat(fd, &after) != 0 || !SameVersion(st, after);
    const bool writing = OpenForWriting(fd) == true;
    if (changed || writing) {
      close(fd);
      return absl::UnavailableError(
          changed ? absl::StrCat(path, ": ", options.what,
                                 " changed while it was read; it is read "
                                 "again once it is quiet")
                  : being_written);
    }
  }
  close(fd);
  return bytes;
}

std::optional<bool> FileOpenForWriting(const std::string& path) {
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<bool> writing;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) writing = OpenForWriting(fd);
  close(fd);
  return writing;
}

}  // namespace compatd::base
