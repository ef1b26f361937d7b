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
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::base {

struct BoundedFileOptions {
  size_t max_bytes = 0;
  // Names the file in errors: "<path>: cannot open <what>: ...".
  absl::string_view what = "the file";
};

// The file's bytes. Errors, each "<path>: <why>": NOT_FOUND (missing, or a
// path component is not a directory), PERMISSION_DENIED, FAILED_PRECONDITION
// (not a regular file, larger than max_bytes, an I/O error).
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedFileOptions& options);

}  // namespace compatd::base
