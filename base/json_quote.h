#pragma once

// JSON string literals for documents written by hand (the front door's
// errors, SARIF): quotes included, the control characters and the two that
// JSON reserves escaped, and bytes that are not well-formed UTF-8 (echoed
// paths, parameters and file names can hold any) written as U+FFFD, as Go's
// encoding/json writes them, so that the document stays UTF-8 (RFC 8259 8.1).

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace compatd::base {

// The length of the well-formed UTF-8 sequence (RFC 3629) at `text[i]`, or
// 0 when the bytes there are not one.
size_t Utf8SequenceAt(absl::string_view text, size_t i);

// `text` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view text);

}  // namespace compatd::base
