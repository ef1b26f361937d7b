#pragma once

// Text that must be valid UTF-8: proto3 `string` fields (a client cannot
// decode a response whose string is not, and gRPC C++ then reports
// UNIMPLEMENTED "No message returned for unary request") and log lines.

#include <string>

#include "absl/strings/string_view.h"

namespace compatd::base {

// `text` with every byte that does not belong to a valid UTF-8 sequence
// written as \xNN (lower-case hex), as absl::CHexEscape writes bytes. Valid
// sequences, multi-byte ones included, are kept; valid text comes back
// unchanged. Invalid: bytes 0x80-0xBF alone, 0xC0, 0xC1 and 0xF5-0xFF,
// truncated sequences, overlong forms, surrogates (U+D800-U+DFFF) and code
// points past U+10FFFF (RFC 3629), each rejected byte escaped on its own.
std::string ValidUtf8(absl::string_view text);

// ValidUtf8(text) on one printable line, for text from outside that is logged
// or quoted (a Prometheus answer, a client's field): line feed, carriage
// return and tab as \n, \r, \t; the other C0 controls, DEL and the C1
// controls (U+0080-U+009F, NEL among them) as \xNN or \u00NN. A forged
// line, an ESC sequence for the terminal or invalid UTF-8 cannot get
// through; printable text comes back unchanged.
std::string PrintableText(absl::string_view text);

}  // namespace compatd::base
