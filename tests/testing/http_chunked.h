#pragma once

// Decoding an HTTP/1.1 chunked body (RFC 9112 7.1), for the tests' and the
// soak's HTTP clients. Header-only.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace compatd::testing {

// The body without its chunk framing; DATA_LOSS naming what is malformed.
inline absl::StatusOr<std::string> DecodeChunked(absl::string_view body) {
  std::string out;
  while (true) {
    const size_t line_end = body.find("\r\n");
    if (line_end == absl::string_view::npos) {
      return absl::DataLossError("chunked body: no chunk size line");
    }
    absl::string_view size_text = body.substr(0, line_end);
    size_text = size_text.substr(0, size_text.find(';'));
    uint64_t size = 0;
    if (!absl::SimpleHexAtoi(size_text, &size)) {
      return absl::DataLossError(
          absl::StrCat("chunked body: bad chunk size \"", size_text, "\""));
    }
    body.remove_prefix(line_end + 2);
    if (size == 0) return out;
    if (body.size() < size + 2) {
      return absl::DataLossError("chunked body: truncated chunk");
    }
    out.append(body.data(), size);
    body.remove_prefix(size + 2);
  }
}

}  // namespace compatd::testing
