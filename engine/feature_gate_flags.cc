#include "engine/feature_gate_flags.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/go_strings.h"

namespace compatd::engine {

absl::StatusOr<bool> ParseGoBool(absl::string_view text) {
  if (const std::optional<bool> value = base::ParseGoBool(text)) return *value;
  return absl::InvalidArgumentError(absl::StrFormat(
      "strconv.ParseBool: parsing \"%s\": invalid syntax", text));
}

absl::StatusOr<std::vector<FeatureGateFlag>> ParseFeatureGates(
    absl::string_view value) {
  std::vector<FeatureGateFlag> flags;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    // strings.TrimSpace, as cliflag's MapStringBool.Set.
    const absl::string_view key = base::TrimGoSpace(item.substr(0, eq));
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("missing bool value for %s", key));
    }
    const absl::string_view text = base::TrimGoSpace(item.substr(eq + 1));
    absl::StatusOr<bool> parsed = ParseGoBool(text);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("invalid value of %s=%s, err: %s", key, text,
                          parsed.status().message()));
    }
    flags.push_back({key, *parsed});
  }
  // A map in Go: the later value of a key wins. Stable sort keeps the given
  // order within a key; keep the last of each run.
  std::stable_sort(flags.begin(), flags.end(),
                   [](const FeatureGateFlag& a, const FeatureGateFlag& b) {
                     return a.name < b.name;
                   });
  std::vector<FeatureGateFlag> unique;
  unique.reserve(flags.size());
  for (size_t i = 0; i < flags.size(); ++i) {
    if (i + 1 < flags.size() && flags[i + 1].name == flags[i].name) continue;
    unique.push_back(flags[i]);
  }
  return unique;
}

}  // namespace compatd::engine
