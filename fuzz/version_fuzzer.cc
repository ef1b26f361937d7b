// Fuzzes version parsing (apimachinery's version.Parse, ParseSemantic,
// ParseGeneric, the allocation-free major.minor parser) and the two orders
// (Compare, CompareKubeAwareVersionStrings).
//
// Input: "<a>\n<b>"; the text before the first newline is parsed on its own,
// and a and b are compared both ways. Beyond "no crash, no sanitizer report":
//   - ParseMajorMinorNoAlloc accepts exactly what Parse accepts, with the same
//     major and minor;
//   - a parsed version survives ToString -> Parse* unchanged;
//   - both orders are reflexive and antisymmetric.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/kube_aware_version.h"
#include "engine/version.h"
#include "fuzz/fuzz_check.h"

namespace {

using compatd::engine::CompareKubeAwareVersionStrings;
using compatd::engine::Version;

void CheckOne(absl::string_view text) {
  const absl::StatusOr<Version> parsed = Version::Parse(text);
  uint64_t major = 0;
  uint64_t minor = 0;
  const bool no_alloc = Version::ParseMajorMinorNoAlloc(text, &major, &minor);
  FUZZ_CHECK(no_alloc == parsed.ok(),
             "ParseMajorMinorNoAlloc and Parse disagree on acceptance");
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.status().message().empty(), "an error without message");
    return;
  }
  const Version& v = *parsed;
  FUZZ_CHECK(major == v.major() && minor == v.minor(),
             "ParseMajorMinorNoAlloc and Parse disagree on major.minor");
  FUZZ_CHECK(v.components().size() >= 2, "fewer than two components");
  FUZZ_CHECK(v.Compare(v) == 0, "Compare is not reflexive");

  const std::string printed = v.ToString();
  const absl::StatusOr<Version> again = v.semver()
                                            ? Version::ParseSemantic(printed)
                                            : Version::ParseGeneric(printed);
  FUZZ_CHECK(again.ok(), "ToString() does not parse back");
  FUZZ_CHECK(again->Compare(v) == 0, "ToString() parses to another version");
  FUZZ_CHECK(again->ToString() == printed, "ToString() is not stable");

  // Minor arithmetic clamps instead of wrapping.
  const Version up = v.AddMinor(1);
  FUZZ_CHECK(up.major() == v.major(), "AddMinor changed the major version");
  const Version down = v.SubtractMinor(3);
  FUZZ_CHECK(down.minor() <= v.minor(), "SubtractMinor went up");
  FUZZ_CHECK(v.WithPatch(7).patch() == 7, "WithPatch did not set the patch");
  FUZZ_CHECK(!v.MajorMinorString().empty(), "empty MajorMinorString");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const absl::string_view a = input.substr(0, newline);
  const absl::string_view b = newline == absl::string_view::npos
                                  ? absl::string_view()
                                  : input.substr(newline + 1);
  CheckOne(a);
  CheckOne(b);

  const absl::StatusOr<Version> va = Version::Parse(a);
  const absl::StatusOr<Version> vb = Version::Parse(b);
  if (va.ok() && vb.ok()) {
    FUZZ_CHECK(va->Compare(*vb) == -vb->Compare(*va),
               "Compare is not antisymmetric");
    FUZZ_CHECK(va->CompareMajorMinor(*vb) == -vb->CompareMajorMinor(*va),
               "CompareMajorMinor is not antisymmetric");
  }
  const int ab = CompareKubeAwareVersionStrings(a, b);
  const int ba = CompareKubeAwareVersionStrings(b, a);
  FUZZ_CHECK((ab > 0) == (ba < 0) && (ab == 0) == (ba == 0),
             "CompareKubeAwareVersionStrings is not antisymmetric");
  FUZZ_CHECK(CompareKubeAwareVersionStrings(a, a) == 0,
             "CompareKubeAwareVersionStrings is not reflexive");
  return 0;
}
