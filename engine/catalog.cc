#include "engine/catalog.h"

#include "absl/strings/str_cat.h"

namespace compatd::engine {

absl::string_view PreReleaseName(PreRelease stage) {
  switch (stage) {
    case PreRelease::kPreAlpha:
      return "PRE-ALPHA";
    case PreRelease::kAlpha:
      return "ALPHA";
    case PreRelease::kBeta:
      return "BETA";
    case PreRelease::kGA:
      return "GA";
    case PreRelease::kDeprecated:
      return "DEPRECATED";
  }
  return "UNKNOWN";
}

absl::string_view ExactnessName(Exactness exactness) {
  return exactness == Exactness::kProvisional ? "PROVISIONAL" : "EXACT";
}

std::string HistoryKey(absl::string_view group, absl::string_view version,
                       absl::string_view kind) {
  return absl::StrCat(group, "/", version, "/", kind);
}

const APIHistoryEntry* Catalog::FindHistory(absl::string_view group,
                                            absl::string_view version,
                                            absl::string_view kind) const {
  auto it = history_index.find(HistoryKey(group, version, kind));
  return it == history_index.end() ? nullptr : &api_history[it->second];
}

}  // namespace compatd::engine
