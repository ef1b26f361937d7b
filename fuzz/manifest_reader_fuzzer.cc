// Fuzzes the manifest reader (manifest/manifest_reader.h), which reads every
// ScanObjects request's text and every file `compatd scan` is given. Beyond
// "no crash, no hang, no sanitizer report":
//   - every object has apiVersion and kind, and a line within the input;
//   - every problem has a line within the input and a message;
//   - objects come in input order (lines never decrease).

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "manifest/manifest_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const int lines =
      static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 2;
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
  return 0;
}
