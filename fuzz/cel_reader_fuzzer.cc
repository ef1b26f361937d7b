// Fuzzes the CEL reader (engine/cel_reader.h). Beyond "no crash, no sanitizer
// report, no stack overflow":
//   - an expression is either read or refused with INVALID_ARGUMENT and a
//   message;
//   - every use lies inside the expression: its offset is in bounds and its
//   line and column
//     agree with the text before it; uses come in text order;
//   - a use's name is what the text holds at its position (optional syntax: a
//   '?');
//   - wrapping a read expression in parentheses reads the same uses, shifted by
//   one column,
//     unless it was at the nesting bound.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/cel_reader.h"
#include "fuzz/fuzz_check.h"

namespace {

using compatd::engine::CelPosition;
using compatd::engine::CelReading;
using compatd::engine::CelUse;
using compatd::engine::CelUseKind;
using compatd::engine::ReadCel;

// Line and column of `offset`, counted as the reader documents.
CelPosition PositionOf(absl::string_view text, size_t offset) {
  CelPosition p{static_cast<uint32_t>(offset), 1, 1};
  for (size_t i = 0; i < offset; ++i) {
    const char c = text[i];
    if (c == '\n' ||
        (c == '\r' && !(i + 1 < text.size() && text[i + 1] == '\n'))) {
      ++p.line;
      p.column = 1;
    } else if (c != '\r' && (static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++p.column;
    }
  }
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<CelReading> r = ReadCel(input);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == absl::StatusCode::kInvalidArgument,
               "a refusal that is not INVALID_ARGUMENT");
    FUZZ_CHECK(!r.status().message().empty(), "a refusal without message");
    return 0;
  }
  uint32_t last = 0;
  for (const CelUse& u : r->uses) {
    FUZZ_CHECK(u.position.offset < input.size(), "a use past the end");
    FUZZ_CHECK(u.position.offset >= last, "uses out of text order");
    last = u.position.offset;
    const CelPosition expected = PositionOf(input, u.position.offset);
    FUZZ_CHECK(expected == u.position,
               "a use's line or column disagrees with its offset");
    switch (u.kind) {
      case CelUseKind::kFunction:
      case CelUseKind::kMemberFunction:
      case CelUseKind::kMacro:
        FUZZ_CHECK(input.substr(u.position.offset, u.name.size()) == u.name,
                   "a call's name is not at its position");
        FUZZ_CHECK(u.arg_count >= 0, "a negative argument count");
        break;
      default:
        FUZZ_CHECK(input[u.position.offset] == '?',
                   "optional syntax without '?'");
        break;
    }
  }
  const std::string wrapped = "(" + std::string(input) + "\n)";
  const absl::StatusOr<CelReading> again = ReadCel(wrapped);
  if (again.ok()) {
    FUZZ_CHECK(again->uses.size() == r->uses.size(),
               "parentheses changed the uses");
    for (size_t i = 0; i < r->uses.size(); ++i) {
      FUZZ_CHECK(again->uses[i].name == r->uses[i].name,
                 "parentheses changed a use's name");
      FUZZ_CHECK(
          again->uses[i].position.offset == r->uses[i].position.offset + 1,
          "parentheses moved a use by more than one byte");
    }
  } else {
    const absl::string_view m = again.status().message();
    FUZZ_CHECK(m.find("recursion limit") != absl::string_view::npos ||
                   m.find("code points") != absl::string_view::npos,
               "a read expression in parentheses is refused for another reason "
               "than a bound");
  }
  return 0;
}
