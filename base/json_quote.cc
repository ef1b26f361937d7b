#include "base/json_quote.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace compatd::base {

size_t Utf8SequenceAt(absl::string_view text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  const size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (length == 0 || c > 0xf4 || i + length > text.size()) return 0;
  uint32_t code = c & (0xff >> (length + 1));
  for (size_t k = 1; k < length; ++k) {
    const unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xc0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  if ((length == 3 && code < 0x800) ||
      (length == 4 && (code < 0x10000 || code > 0x10ffff)) ||
      (code >= 0xd800 && code <= 0xdfff)) {
    return 0;  // overlong, beyond U+10FFFF, or a surrogate
  }
  return length;
}

std::string JsonQuote(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < text.size(); ++i) {
    // Runs of ASCII characters that need no escaping are copied at once.
    size_t plain = i;
    while (plain < text.size() && text[plain] != '"' && text[plain] != '\\' &&
           static_cast<unsigned char>(text[plain]) >= 0x20 &&
           static_cast<unsigned char>(text[plain]) < 0x80) {
      ++plain;
    }
    if (plain > i) {
      out.append(text.data() + i, plain - i);
      i = plain;
      if (i == text.size()) break;
    }
    const char c = text[i];
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      // Echoed input (a request path, a query parameter) can be any bytes;
      // the document must stay UTF-8 (RFC 8259 8.1), so a byte that does
      // not start a well-formed sequence is U+FFFD, as Go's encoding/json
      // writes it.
      const size_t length = Utf8SequenceAt(text, i);
      if (length == 0) {
        out += "\\ufffd";
      } else {
        out.append(text.data() + i, length);
        i += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          absl::StrAppend(&out, "\\u00", absl::Hex(u, absl::kZeroPad2));
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

}  // namespace compatd::base
