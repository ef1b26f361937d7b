#include "engine/api_history.h"

#include "absl/strings/str_cat.h"
#include "engine/api_names.h"
#include "engine/resource_config.h"

namespace compatd::engine {
namespace {

bool AtOrAfter(const Version& release, const std::optional<Version>& event) {
  return event.has_value() && release.CompareMajorMinor(*event) >= 0;
}

std::string UseInstead(const APIHistoryEntry& entry) {
  const std::string replacement = HistoryReplacement(entry);
  return replacement.empty() ? std::string()
                             : absl::StrCat("; use ", replacement, " instead");
}

}  // namespace

absl::string_view HistoryStateName(HistoryState state) {
  switch (state) {
    case HistoryState::kServed:
      return "served";
    case HistoryState::kDeprecated:
      return "deprecated";
    case HistoryState::kNotServedByDefault:
      return "not-served-by-default";
    case HistoryState::kRemoved:
      return "removed";
    case HistoryState::kNotYetIntroduced:
      return "not-yet-introduced";
  }
  return "unknown";
}

std::string HistoryReplacement(const APIHistoryEntry& entry) {
  if (entry.replacement.empty()) return std::string();
  return absl::StrCat(
      entry.replacement, " ",
      entry.replacement_kind.empty() ? entry.kind : entry.replacement_kind);
}

HistoryVerdict DecideFromHistory(const APIHistoryEntry& entry,
                                 const Version& release) {
  const std::string subject = absl::StrCat(
      GroupVersionString(entry.group, entry.version), " ", entry.kind);
  const std::string at = release.MajorMinorString();
  HistoryVerdict verdict;
  if (entry.introduced.has_value() &&
      release.CompareMajorMinor(*entry.introduced) < 0) {
    verdict.state = HistoryState::kNotYetIntroduced;
    verdict.release = entry.introduced->MajorMinorString();
    verdict.message =
        absl::StrCat(subject, " is introduced in Kubernetes ", verdict.release,
                     ": Kubernetes ", at, " does not have it");
    return verdict;
  }
  if (AtOrAfter(release, entry.removed)) {
    verdict.state = HistoryState::kRemoved;
    verdict.release = entry.removed->MajorMinorString();
    verdict.message = absl::StrCat(
        subject, " is removed in Kubernetes ", verdict.release,
        entry.deprecated.has_value()
            ? absl::StrCat(" (deprecated in ",
                           entry.deprecated->MajorMinorString(), ")")
            : std::string(),
        UseInstead(entry));
    return verdict;
  }
  if (AtOrAfter(release, entry.types_deleted)) {
    verdict.state = HistoryState::kRemoved;
    verdict.release = entry.types_deleted->MajorMinorString();
    verdict.message =
        absl::StrCat(subject, " is not served from Kubernetes ",
                     verdict.release, ": k8s.io/api ", verdict.release,
                     " no longer has its types", UseInstead(entry));
    return verdict;
  }
  const std::string gv = GroupVersionString(entry.group, entry.version);
  if (IsAlphaVersion(entry.version)) {
    verdict.state = HistoryState::kNotServedByDefault;
    verdict.message = absl::StrCat(
        subject, " is an alpha API, off by default in Kubernetes ", at,
        " (--runtime-config=", gv, "=true enables it)", UseInstead(entry));
    return verdict;
  }
  if (IsBetaVersion(entry.version) && release.major() == 1 &&
      release.minor() >= kBetaOffByDefaultMinor &&
      !entry.enabled_by_default.value_or(false)) {
    verdict.state = HistoryState::kNotServedByDefault;
    verdict.message = absl::StrCat(
        subject, " is a beta API, off by default in Kubernetes ", at,
        " (new beta APIs are off by default since 1.24; --runtime-config=", gv,
        "=true enables it)", UseInstead(entry));
    return verdict;
  }
  if (AtOrAfter(release, entry.deprecated)) {
    verdict.state = HistoryState::kDeprecated;
    verdict.release = entry.deprecated->MajorMinorString();
    verdict.message = absl::StrCat(
        subject, " is deprecated since Kubernetes ", verdict.release,
        entry.removed.has_value()
            ? absl::StrCat(" and removed in ",
                           entry.removed->MajorMinorString())
            : std::string(),
        UseInstead(entry));
    return verdict;
  }
  verdict.message = absl::StrCat(subject, " is served in Kubernetes ", at);
  return verdict;
}

}  // namespace compatd::engine
