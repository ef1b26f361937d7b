#pragma once

// Reading a file named on the command line (a catalog, a certificate, a key,
// a CA bundle) within bounds: only a regular file, opened without blocking (a
// FIFO or a device in its place fails at once instead of hanging or being
// read forever, e.g. /dev/zero), at most `max_bytes` (also when the file grows
// while it is read).
//
//   COMPATD_ASSIGN_OR_RETURN(std::string pem, base::ReadBoundedFile(
//       path, {.max_bytes = 1 << 20, .what = "the certificate"}));

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::base {

struct BoundedFileOptions {
  size_t max_bytes = 0;
  // Names the file in errors: "<path>: cannot open <what>: ...".
  absl::string_view what = "the file";
  // Refuse, with UNAVAILABLE, a file that another process has open for
  // writing (before or after the read) or that changed while it was read:
  // what was read may be half of what is being written. Whether a file is
  // open for writing is asked of the kernel with a read lease (fcntl
  // F_SETLEASE, taken and given back at once), which it grants only when
  // nobody has the file open for writing; only a file's owner (or a process
  // with CAP_LEASE) may ask, and on other files, or filesystems without
  // leases, only the change check applies. Asking makes the process ignore
  // SIGIO (the lease-break signal, fatal by default) if it did not handle it.
  bool refuse_while_written = false;
};

// The file's bytes. Errors, each "<path>: <why>": NOT_FOUND (missing, or a
// path component is not a directory), PERMISSION_DENIED, FAILED_PRECONDITION
// (not a regular file, larger than max_bytes, an I/O error), UNAVAILABLE
// (refuse_while_written: being written; try again later).
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedFileOptions& options);

// Whether some process has the regular file at `path` open for writing now
// (the read lease above): true/false, or nullopt when the kernel cannot tell
// us (not the file's owner, no leases on that filesystem) or the file cannot
// be opened.
std::optional<bool> FileOpenForWriting(const std::string& path);

}  // namespace compatd::base
