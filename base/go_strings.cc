#include "base/go_strings.h"

#include <cstddef>

#include "absl/strings/match.h"

namespace compatd::base {
namespace {

// The UTF-8 encodings of the non-ASCII runes unicode.IsSpace accepts.
constexpr absl::string_view kMultiByteSpaces[] = {
    "\xC2\x85",      // U+0085
    "\xC2\xA0",      // U+00A0
    "\xE1\x9A\x80",  // U+1680
    "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83",
    "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87",
    "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A",  // U+2000-U+200A
    "\xE2\x80\xA8", "\xE2\x80\xA9",                  // U+2028, U+2029
    "\xE2\x80\xAF",                                  // U+202F
    "\xE2\x81\x9F",                                  // U+205F
    "\xE3\x80\x80",                                  // U+3000
};

bool IsAsciiGoSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
         c == '\r';
}

// Length of the white-space rune at the start of `text`, or 0. A prefix that
// is a complete valid encoding is exactly the rune utf8.DecodeRuneInString
// returns, so prefix matching is exact.
size_t LeadingSpaceLength(absl::string_view text) {
  if (text.empty()) return 0;
  if (IsAsciiGoSpace(text.front())) return 1;
  for (absl::string_view space : kMultiByteSpaces) {
    if (absl::StartsWith(text, space)) return space.size();
  }
  return 0;
}

// Length of the white-space rune at the end of `text`, or 0. Go's
// DecodeLastRuneInString walks back over continuation bytes to the lead byte;
// every pattern is a lead byte plus continuation bytes, so a suffix match is
// exactly the last rune.
size_t TrailingSpaceLength(absl::string_view text) {
  if (text.empty()) return 0;
  if (IsAsciiGoSpace(text.back())) return 1;
  for (absl::string_view space : kMultiByteSpaces) {
    if (absl::EndsWith(text, space)) return space.size();
  }
  return 0;
}

}  // namespace

std::optional<bool> ParseGoBool(absl::string_view text) {
  if (text == "1" || text == "t" || text == "T" || text == "TRUE" ||
      text == "true" || text == "True") {
    return true;
  }
  if (text == "0" || text == "f" || text == "F" || text == "FALSE" ||
      text == "false" || text == "False") {
    return false;
  }
  return std::nullopt;
}

absl::string_view TrimGoSpace(absl::string_view text) {
  while (size_t n = LeadingSpaceLength(text)) text.remove_prefix(n);
  while (size_t n = TrailingSpaceLength(text)) text.remove_suffix(n);
  return text;
}

}  // namespace compatd::base
