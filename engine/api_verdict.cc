#include "engine/api_verdict.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/api_history.h"
#include "engine/api_names.h"

namespace compatd::engine {
namespace {

// The line's `apis` entry of group/version/kind (the last, as every surface
// read it), or null.
const APIResource* FindByKind(const Catalog& line, absl::string_view group,
                              absl::string_view version,
                              absl::string_view kind) {
  const APIResource* found = nullptr;
  for (const APIGroupVersion& gv : line.apis) {
    if (gv.group != group || gv.version != version) continue;
    for (const APIResource& r : gv.resources) {
      if (r.kind == kind) found = &r;
    }
  }
  return found;
}

std::string Release(const std::optional<Version>& v) {
  return v.has_value() ? v->MajorMinorString() : std::string();
}

// The first of `a`, `b` that is set.
const std::optional<Version>& Either(const std::optional<Version>& a,
                                     const std::optional<Version>& b) {
  return a.has_value() ? a : b;
}

bool AtOrBefore(const std::optional<Version>& event, const Version& at) {
  return event.has_value() && at.CompareMajorMinor(*event) >= 0;
}

// The lifecycle of the verdict: the start-up's values, each missing one from
// the history.
void FillLifecycle(const APIResource* resource, const APIHistoryEntry* entry,
                   absl::string_view kind, ApiVerdict* verdict) {
  static const std::optional<Version> kNone;
  const std::optional<Version>& r_introduced =
      resource != nullptr ? resource->introduced : kNone;
  const std::optional<Version>& r_deprecated =
      resource != nullptr ? resource->deprecated : kNone;
  const std::optional<Version>& r_removed =
      resource != nullptr ? resource->removed : kNone;
  const std::optional<Version>& h_introduced =
      entry != nullptr ? entry->introduced : kNone;
  const std::optional<Version>& h_deprecated =
      entry != nullptr ? entry->deprecated : kNone;
  const std::optional<Version>& h_removed =
      entry != nullptr ? Either(entry->removed, entry->types_deleted) : kNone;
  verdict->introduced = Release(Either(r_introduced, h_introduced));
  verdict->deprecated = Release(Either(r_deprecated, h_deprecated));
  verdict->removed = Release(Either(r_removed, h_removed));
  if (resource != nullptr && !resource->replacement.empty()) {
    verdict->replacement = resource->replacement;
    if (!resource->replacement_kind.empty()) {
      verdict->replacement_kind = resource->replacement_kind;
    } else if (entry != nullptr &&
               entry->replacement == resource->replacement &&
               !entry->replacement_kind.empty()) {
      verdict->replacement_kind = entry->replacement_kind;
    }
  } else if (entry != nullptr && !entry->replacement.empty()) {
    verdict->replacement = entry->replacement;
    verdict->replacement_kind = entry->replacement_kind;
  }
  if (!verdict->replacement.empty() && verdict->replacement_kind.empty()) {
    verdict->replacement_kind = std::string(kind);
  }
}

std::string Instead(const ApiVerdict& verdict) {
  return verdict.replacement.empty()
             ? std::string()
             : absl::StrCat("; use ", verdict.replacement, " ",
                            verdict.replacement_kind, " instead");
}

// Rule 1: kube-apiserver's start-up at `at` decided whether it is served.
void FromStartUp(const APIResource& resource, const APIHistoryEntry* entry,
                 const ApiStartUp& startup, const Version& at,
                 absl::string_view group, absl::string_view version,
                 ApiVerdict* verdict) {
  static const std::optional<Version> kNone;
  verdict->source = ApiSource::kStartUp;
  const std::string gv = GroupVersionString(group, version);
  const std::string subject = absl::StrCat(gv, " ", verdict->kind);
  const std::optional<Version>& removed = Either(
      resource.removed,
      entry != nullptr ? Either(entry->removed, entry->types_deleted) : kNone);
  const std::optional<Version>& introduced =
      Either(resource.introduced, entry != nullptr ? entry->introduced : kNone);
  const std::optional<Version>& deprecated =
      Either(resource.deprecated, entry != nullptr ? entry->deprecated : kNone);
  if (!startup.served->contains(
          ServedApiKey(group, version, resource.resource))) {
    if (AtOrBefore(removed, at)) {
      verdict->state = ApiState::kRemoved;
      verdict->message = absl::StrCat(subject, " is removed in Kubernetes ",
                                      removed->MajorMinorString(),
                                      " and not served at emulation version ",
                                      verdict->at, Instead(*verdict));
    } else if (introduced.has_value() &&
               at.CompareMajorMinor(*introduced) < 0) {
      // Not a matter of --runtime-config: the emulated release had no such
      // API yet.
      verdict->state = ApiState::kNotYetIntroduced;
      verdict->message = absl::StrCat(
          subject, " is not served at emulation version ", verdict->at,
          ": it is introduced in Kubernetes ", introduced->MajorMinorString());
    } else {
      verdict->state = ApiState::kNotServed;
      verdict->message = absl::StrCat(
          subject, " is not served at emulation version ", verdict->at,
          " (not enabled by default; --runtime-config=", gv,
          "=true enables it)", Instead(*verdict));
    }
    return;
  }
  if (AtOrBefore(deprecated, at)) {
    verdict->state = ApiState::kDeprecated;
    verdict->message = absl::StrCat(
        subject, " is deprecated since Kubernetes ",
        deprecated->MajorMinorString(),
        removed.has_value()
            ? absl::StrCat(" and removed in ", removed->MajorMinorString())
            : std::string(),
        Instead(*verdict));
    return;
  }
  verdict->state = ApiState::kServed;
  verdict->message =
      absl::StrCat(subject, " is served at emulation version ", verdict->at);
}

// Rule 2: the API history at `at`.
void FromHistory(const APIHistoryEntry& entry, const Version& at,
                 ApiVerdict* verdict) {
  verdict->source = ApiSource::kHistory;
  const HistoryVerdict decided = DecideFromHistory(entry, at);
  switch (decided.state) {
    case HistoryState::kServed:
      verdict->state = ApiState::kServed;
      break;
    case HistoryState::kDeprecated:
      verdict->state = ApiState::kDeprecated;
      break;
    case HistoryState::kNotServedByDefault:
      verdict->state = ApiState::kNotServed;
      break;
    case HistoryState::kRemoved:
      verdict->state = ApiState::kRemoved;
      break;
    case HistoryState::kNotYetIntroduced:
      verdict->state = ApiState::kNotYetIntroduced;
      break;
  }
  verdict->message = decided.message;
}

}  // namespace

absl::string_view ApiStateName(ApiState state) {
  switch (state) {
    case ApiState::kServed:
      return "served";
    case ApiState::kDeprecated:
      return "deprecated";
    case ApiState::kNotServed:
      return "not-served";
    case ApiState::kRemoved:
      return "removed";
    case ApiState::kNotYetIntroduced:
      return "not-yet-introduced";
    case ApiState::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string ServedApiKey(absl::string_view group, absl::string_view version,
                         absl::string_view resource) {
  return absl::StrCat(group, "/", version, "/", resource);
}

ApiVerdict JudgeApi(const Catalog& line, const ApiStartUp* startup,
                    const Version& at, absl::string_view group,
                    absl::string_view version, absl::string_view kind) {
  ApiVerdict verdict;
  verdict.kind = std::string(kind);
  verdict.at = at.MajorMinorString();
  const APIResource* resource = FindByKind(line, group, version, kind);
  const APIHistoryEntry* entry = line.FindHistory(group, version, kind);
  if (resource == nullptr && entry == nullptr) {
    verdict.message =
        absl::StrCat(GroupVersionString(group, version), " ", kind,
                     " is not a built-in API of kube-apiserver ",
                     line.binary_version.MajorMinorString(),
                     " (a custom or aggregated resource?)");
    return verdict;
  }
  verdict.resource = resource != nullptr ? resource->resource : entry->resource;
  FillLifecycle(resource, entry, kind, &verdict);
  const bool startup_at =
      startup != nullptr && startup->served != nullptr &&
      startup->versions.emulation.CompareMajorMinor(at) == 0;
  if (resource != nullptr && startup_at) {
    FromStartUp(*resource, entry, *startup, at, group, version, &verdict);
  } else if (entry != nullptr) {
    FromHistory(*entry, at, &verdict);
  } else {
    // In the line's apis but not its history, and no start-up at `at`: the
    // apis' lifecycle alone (a catalog without apiHistory).
    APIHistoryEntry only;
    only.group = std::string(group);
    only.version = std::string(version);
    only.kind = std::string(kind);
    only.resource = resource->resource;
    only.introduced = resource->introduced;
    only.deprecated = resource->deprecated;
    only.removed = resource->removed;
    only.replacement = resource->replacement;
    only.replacement_kind = resource->replacement_kind;
    FromHistory(only, at, &verdict);
  }
  return verdict;
}

ApiVerdict JudgeApiResource(const Catalog& line, const ApiStartUp* startup,
                            const Version& at, absl::string_view group,
                            absl::string_view version,
                            absl::string_view resource) {
  for (const APIGroupVersion& gv : line.apis) {
    if (gv.group != group || gv.version != version) continue;
    for (const APIResource& r : gv.resources) {
      if (r.resource == resource) {
        return JudgeApi(line, startup, at, group, version, r.kind);
      }
    }
  }
  for (const APIHistoryEntry& entry : line.api_history) {
    if (entry.group == group && entry.version == version &&
        entry.resource == resource) {
      return JudgeApi(line, startup, at, group, version, entry.kind);
    }
  }
  ApiVerdict verdict;
  verdict.at = at.MajorMinorString();
  verdict.resource = std::string(resource);
  verdict.message =
      absl::StrCat(GroupVersionString(group, version), " ", resource,
                   " is not a built-in resource of kube-apiserver ",
                   line.binary_version.MajorMinorString(),
                   " (a custom or aggregated resource?)");
  return verdict;
}

}  // namespace compatd::engine
