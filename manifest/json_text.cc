#include "manifest/json_text.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace compatd::manifest {
namespace {

bool StartsAsJson(absl::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// encoding/json's getu4: the code unit of "\uXXXX" at text[pos], or -1.
int32_t ReadU4(absl::string_view text, size_t pos) {
  if (pos + 6 > text.size() || text[pos] != '\\' || text[pos + 1] != 'u') {
    return -1;
  }
  int32_t value = 0;
  for (size_t i = pos + 2; i < pos + 6; ++i) {
    const int digit = HexValue(text[i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

bool IsSurrogate(int32_t unit) { return unit >= 0xD800 && unit < 0xE000; }
bool IsHighSurrogate(int32_t unit) { return unit >= 0xD800 && unit < 0xDC00; }
bool IsLowSurrogate(int32_t unit) { return unit >= 0xDC00 && unit < 0xE000; }

// Rewrites the escapes of one string whose opening quote is at text[start];
// returns the position after its closing quote (or text.size()). `saved`
// counts the bytes the pairs gave back, written as blanks after the quote.
size_t RewriteString(absl::string_view text, size_t start, std::string& out,
                     bool& changed) {
  out.push_back('"');
  size_t pos = start + 1;
  size_t saved = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == '"') {
      out.push_back('"');
      out.append(saved, ' ');
      return pos + 1;
    }
    if (c != '\\' || pos + 1 >= text.size()) {
      out.push_back(c);
      ++pos;
      continue;
    }
    const int32_t unit = text[pos + 1] == 'u' ? ReadU4(text, pos) : -1;
    if (!IsSurrogate(unit)) {
      out.append(text.data() + pos, 2);  // any other escape, "\\" included
      pos += 2;
      continue;
    }
    changed = true;
    const int32_t next = ReadU4(text, pos + 6);
    if (IsHighSurrogate(unit) && IsLowSurrogate(next)) {
      const int32_t code = 0x10000 + ((unit - 0xD800) << 10) + (next - 0xDC00);
      absl::StrAppendFormat(&out, "\\U%08X", code);
      pos += 12;
      saved += 2;
    } else {
      out.append("\\uFFFD");
      pos += 6;
    }
  }
  return pos;
}

}  // namespace

bool JoinJsonSurrogates(absl::string_view text, std::string* out) {
  if (!StartsAsJson(text) || text.find("\\u") == absl::string_view::npos) {
    return false;
  }
  std::string rewritten;
  rewritten.reserve(text.size());
  bool changed = false;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '"') {
      pos = RewriteString(text, pos, rewritten, changed);
    } else {
      rewritten.push_back(text[pos++]);
    }
  }
  if (!changed) return false;
  *out = std::move(rewritten);
  return true;
}

}  // namespace compatd::manifest
