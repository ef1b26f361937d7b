// Fuzzes client identification: the User-Agent parser and the metadata merge
// (engine/user_agent.h), which run on every call the server receives.
//
// Input: "<user-agent>" alone, or "<component>\0<version>\0<user-agent>" for
// IdentifyClient. Beyond "no crash, no sanitizer report":
//   - every view of the result points into the inputs or is "unknown";
//   - major and minor are both set or both empty, and equal to what
//     ParseMajorMinorNoAlloc reads from the version;
//   - components and versions are at most 256 bytes of printable ASCII.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "engine/user_agent.h"
#include "engine/version.h"
#include "fuzz/fuzz_check.h"

namespace {

using compatd::engine::ClientIdentity;
using compatd::engine::kMaxClientFieldBytes;
using compatd::engine::kUnknownClient;

bool Within(absl::string_view part, absl::string_view whole) {
  if (part.empty()) return true;
  return part.data() >= whole.data() &&
         part.data() + part.size() <= whole.data() + whole.size();
}

void CheckField(absl::string_view field, absl::string_view input) {
  FUZZ_CHECK(field == kUnknownClient || Within(field, input),
             "a field that is neither \"unknown\" nor part of the input");
  FUZZ_CHECK(field.size() <= kMaxClientFieldBytes, "an oversized field");
  for (char c : field) {
    FUZZ_CHECK(c > ' ' && c < 0x7f, "a non-printable byte in a field");
  }
}

void Check(const ClientIdentity& id, absl::string_view input) {
  CheckField(id.component, input);
  CheckField(id.version, input);
  FUZZ_CHECK(Within(id.commit, input), "commit outside the input");
  FUZZ_CHECK(Within(id.suffix, input), "suffix outside the input");
  FUZZ_CHECK(id.major.has_value() == id.minor.has_value(),
             "major without minor or minor without major");
  if (id.has_major_minor()) {
    FUZZ_CHECK(id.version != kUnknownClient, "a version number from nowhere");
    uint64_t major = 0;
    uint64_t minor = 0;
    FUZZ_CHECK(compatd::engine::Version::ParseMajorMinorNoAlloc(id.version,
                                                                &major, &minor),
               "major.minor set from a version Parse refuses");
    FUZZ_CHECK(major == *id.major && minor == *id.minor,
               "major.minor differ from the version's");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  Check(compatd::engine::ParseUserAgent(input), input);

  const size_t first = input.find('\0');
  if (first == absl::string_view::npos) return 0;
  const size_t second = input.find('\0', first + 1);
  if (second == absl::string_view::npos) return 0;
  const absl::string_view component = input.substr(0, first);
  const absl::string_view version = input.substr(first + 1, second - first - 1);
  const absl::string_view user_agent = input.substr(second + 1);
  Check(compatd::engine::IdentifyClient(component, version, user_agent), input);
  return 0;
}
