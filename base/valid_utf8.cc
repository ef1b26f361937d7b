#include "base/valid_utf8.h"

#include <cstddef>
#include <cstdint>

namespace compatd::base {
namespace {

// The length of the valid UTF-8 sequence at the start of `text`, or 0 if
// there is none (RFC 3629, section 4: the byte ranges of each position).
size_t SequenceLength(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t first = byte(0);
  if (first < 0x80) return 1;
  size_t length;
  uint8_t second_min = 0x80;
  uint8_t second_max = 0xBF;
  if (first >= 0xC2 && first <= 0xDF) {
    length = 2;
  } else if (first >= 0xE0 && first <= 0xEF) {
    length = 3;
    if (first == 0xE0) second_min = 0xA0;  // overlong
    if (first == 0xED) second_max = 0x9F;  // surrogates
  } else if (first >= 0xF0 && first <= 0xF4) {
    length = 4;
    if (first == 0xF0) second_min = 0x90;  // overlong
    if (first == 0xF4) second_max = 0x8F;  // past U+10FFFF
  } else {
    return 0;  // a continuation byte, 0xC0, 0xC1 or 0xF5-0xFF
  }
  if (text.size() < length) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ValidUtf8(absl::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = SequenceLength(text);
    if (length > 0) {
      out.append(text.data(), length);
      text.remove_prefix(length);
      continue;
    }
    const uint8_t bad = static_cast<uint8_t>(text[0]);
    out.append({'\\', 'x', kHex[bad >> 4], kHex[bad & 15]});
    text.remove_prefix(1);
  }
  return out;
}

std::string PrintableText(absl::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  bool plain = true;
  for (const char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    if (byte < 0x20 || byte >= 0x7F) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(text);
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size() + 8);
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto byte = static_cast<uint8_t>(valid[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out.append({'\\', 'x', kHex[byte >> 4], kHex[byte & 15]});
    } else if (byte == 0xC2 && i + 1 < valid.size() &&
               static_cast<uint8_t>(valid[i + 1]) <= 0x9F) {
      // U+0080-U+009F: C2 80 .. C2 9F (ValidUtf8 kept only whole sequences).
      const auto low = static_cast<uint8_t>(valid[i + 1]);
      out.append({'\\', 'u', '0', '0', kHex[low >> 4], kHex[low & 15]});
      ++i;
    } else {
      out.push_back(valid[i]);
    }
  }
  return out;
}

}  // namespace compatd::base
