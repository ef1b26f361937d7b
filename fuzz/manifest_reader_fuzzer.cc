// Fuzzes the manifest reader (manifest/manifest_reader.h), which reads every
// ScanObjects request's text and every file `compatd scan` is given. Beyond
// "no crash, no hang, no sanitizer report":
//   - every object has apiVersion and kind, and a line within the input;
//   - every problem has a line within the input (lines counted as YAML
//     counts them: a lone CR, NEL, LS and PS end lines too) and a message;
//   - objects come in input order (lines never decrease);
//   - every warning (a key twice, a kustomization skipped) has a line within
//     the input and a message;
//   - the CEL field reader of the same text (manifest/cel_fields.h, a scan's
//     second pass) returns only objects with fields, in input order, each
//     field on a line within the input, under spec or webhooks, with a path
//     within its bound; a read it stopped names a line within the input.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "manifest/cel_fields.h"
#include "manifest/manifest_reader.h"

namespace {

// Line breaks as libyaml counts them (YAML 1.1: LF, CR LF, a lone CR, NEL,
// LS and PS each end a line), so that the reader's lines are judged by the
// numbering it reports in.
int YamlLineBreaks(absl::string_view text) {
  int breaks = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++breaks;
    } else if (c == '\r') {
      if (i + 1 >= text.size() || text[i + 1] != '\n') ++breaks;
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x85) {
      ++breaks;
    } else if (c == 0xe2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xa8 ||
                static_cast<unsigned char>(text[i + 2]) == 0xa9)) {
      ++breaks;
    }
  }
  return breaks;
}

void CheckCelFields(absl::string_view text, int lines) {
  const compatd::manifest::CelFields read =
      compatd::manifest::ReadCelFields(text);
  int last = 0;
  for (const compatd::manifest::CelObject& object : read.objects) {
    FUZZ_CHECK(!object.fields.empty(), "a CEL object without fields");
    FUZZ_CHECK(object.line >= 1 && object.line <= lines,
               "a CEL object line outside the input");
    FUZZ_CHECK(object.line >= last, "CEL objects out of input order");
    last = object.line;
    for (const compatd::manifest::CelField& field : object.fields) {
      FUZZ_CHECK(field.line >= 1 && field.line <= lines + 1,
                 "a CEL field line outside the input");
      FUZZ_CHECK(absl::StartsWith(field.path, "spec.") ||
                     absl::StartsWith(field.path, "webhooks["),
                 "a CEL field outside spec and webhooks");
      FUZZ_CHECK(field.path.size() <= compatd::manifest::kMaxCelPathBytes,
                 "a CEL field path past its bound");
    }
  }
  FUZZ_CHECK(read.stopped.empty() ||
                 (read.stopped_line >= 1 && read.stopped_line <= lines),
             "a stopped CEL read without a line in the input");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const int lines = YamlLineBreaks(text) + 2;
  const compatd::manifest::ManifestContents contents =
      compatd::manifest::ReadManifests(text);
  int last = 0;
  for (const compatd::manifest::ManifestObject& object : contents.objects) {
    FUZZ_CHECK(!object.api_version.empty() && !object.kind.empty(),
               "an object without apiVersion or kind");
    FUZZ_CHECK(object.line >= 1 && object.line <= lines,
               "an object line outside the input");
    FUZZ_CHECK(object.line >= last, "objects out of input order");
    last = object.line;
  }
  for (const compatd::manifest::ManifestProblem& problem : contents.problems) {
    FUZZ_CHECK(problem.line >= 1 && problem.line <= lines,
               "a problem line outside the input");
    FUZZ_CHECK(!problem.message.empty(), "a problem without a message");
  }
  for (const compatd::manifest::ManifestProblem& warning : contents.warnings) {
    FUZZ_CHECK(warning.line >= 1 && warning.line <= lines,
               "a warning line outside the input");
    FUZZ_CHECK(!warning.message.empty(), "a warning without a message");
  }
  CheckCelFields(text, lines);
  return 0;
}
