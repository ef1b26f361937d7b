#include "engine/storage_version.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/api_names.h"
#include "engine/sha256.h"

namespace compatd::engine {
namespace {

// Which release line's emulatedStorageVersion applies (apiserver
// pkg/server/storage/resource_encoding_config.go at the matching tag).
enum class StorageRule {
  // Before 1.31 there was no compatibility version: StorageEncodingFor, the
  // group's preferred version.
  kPreCompatibility,
  // 1.31, and again 1.35-1.36: the first version in priority order with no
  // introduced version or introduced <= min-compatibility.
  kSinglePass,
  // 1.32-1.34: the same, but a version that declares a replacement is skipped
  // (kubernetes#128454, reverted by kubernetes#135197 for 1.35).
  kSinglePassSkipReplaced,
  // 1.37+: non-alpha introduced <= min-compatibility, else any version
  // introduced <= emulation (kubernetes#137375), else still the group's
  // preferred version.
  kTwoPass,
};

StorageRule RuleFor(const Version& binary) {
  const Version mm = binary.ToMajorMinor();
  if (mm < Version::MajorMinor(1, 31)) return StorageRule::kPreCompatibility;
  if (mm < Version::MajorMinor(1, 32)) return StorageRule::kSinglePass;
  if (mm < Version::MajorMinor(1, 35)) {
    return StorageRule::kSinglePassSkipReplaced;
  }
  if (mm < Version::MajorMinor(1, 37)) return StorageRule::kSinglePass;
  return StorageRule::kTwoPass;
}

struct Candidate {
  const APIGroupVersion* gv;
  const APIResource* resource;
};

// The introduced version the lifecycle check sees: none when the catalog has
// none, or when min-compatibility is 0.0 ("skip the introduced check").
std::optional<Version> CheckedIntroduced(const Candidate& c,
                                         bool check_lifecycle) {
  if (!check_lifecycle || !c.resource->introduced.has_value()) {
    return std::nullopt;
  }
  return c.resource->introduced->ToMajorMinor();
}

std::string IntroducedList(const std::vector<Candidate>& candidates) {
  std::vector<std::string> parts;
  for (const Candidate& c : candidates) {
    parts.push_back(
        c.resource->introduced.has_value()
            ? absl::StrCat(c.gv->version, " at ",
                           c.resource->introduced->MajorMinorString())
            : absl::StrCat(c.gv->version, " (no introduced version)"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::string StorageVersionHash(absl::string_view group,
                               absl::string_view version,
                               absl::string_view kind) {
  Sha256Hasher hasher;
  hasher.Update(group);
  hasher.Update("/");
  hasher.Update(version);
  hasher.Update("/");
  hasher.Update(kind);
  const std::array<uint8_t, 32> digest = hasher.Finish();
  // base64.StdEncoding of the first 8 bytes: 12 characters, "=" padded.
  return absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), 8));
}

absl::StatusOr<StorageVersionDecision> DecideStorageVersion(
    const Catalog& catalog, const EffectiveVersions& versions,
    absl::string_view group, absl::string_view resource) {
  // The group's versions in priority order, and those that have the resource
  // (scheme.VersionsForGroupKind).
  const APIGroupVersion* group_preferred = nullptr;
  std::vector<Candidate> candidates;
  std::vector<absl::string_view> group_resources;
  for (const APIGroupVersion& gv : catalog.apis) {
    if (gv.group != group) continue;
    if (group_preferred == nullptr) group_preferred = &gv;
    for (const APIResource& r : gv.resources) {
      if (r.resource == resource) candidates.push_back(Candidate{&gv, &r});
      if (std::find(group_resources.begin(), group_resources.end(),
                    r.resource) == group_resources.end()) {
        group_resources.push_back(r.resource);
      }
    }
  }
  if (group_preferred == nullptr) {
    std::vector<std::string> groups;
    for (const APIGroupVersion& gv : catalog.apis) {
      std::string name = gv.group.empty() ? "\"\" (core)" : gv.group;
      if (std::find(groups.begin(), groups.end(), name) == groups.end()) {
        groups.push_back(std::move(name));
      }
    }
    return absl::NotFoundError(absl::StrFormat(
        "API group \"%s\" (resource \"%s\") is not in the catalog; the core "
        "group is \"\"%s; known groups: %s",
        group, resource,
        group == "core" || group == "v1" ? ", not \"core\"" : "",
        absl::StrJoin(groups, ", ")));
  }
  if (candidates.empty()) {
    const bool looks_like_kind = absl::AsciiStrToLower(resource) != resource;
    return absl::NotFoundError(absl::StrFormat(
        "resource \"%s\" is not in API group \"%s\"%s%s; resources of the "
        "group: %s",
        resource, group, group.empty() ? " (the core group)" : "",
        looks_like_kind ? " (resources are lowercase plurals, not kinds)" : "",
        absl::StrJoin(group_resources, ", ")));
  }
  const std::string gr = GroupResourceString(group, resource);
  bool persisted = false;
  for (const Candidate& c : candidates) persisted |= c.resource->persisted;
  if (!persisted) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s (kind %s) is not persisted: kube-apiserver keeps no etcd storage "
        "for it, so it has no storage version",
        gr, candidates.front().resource->kind));
  }

  StorageVersionDecision decision;
  decision.group = std::string(group);
  decision.resource = std::string(resource);
  for (const Candidate& c : candidates) {
    decision.decodable_versions.push_back(c.gv->version);
  }

  const std::string min_compat = versions.min_compatibility.MajorMinorString();
  const std::string emulation = versions.emulation.MajorMinorString();
  const Candidate* chosen = nullptr;

  // Overrides (ResourceEncodingOverrides) always win.
  for (const StorageOverride& o : catalog.storage_overrides) {
    if (o.group != group || o.resource != resource) continue;
    decision.version = o.version;
    decision.overridden = true;
    decision.reason = absl::StrFormat(
        "storage override: kube-apiserver always stores %s in %s, whatever "
        "the emulation and min-compatibility versions",
        gr, o.version);
    break;
  }

  const StorageRule rule = RuleFor(versions.binary);
  const std::string binary = versions.binary.MajorMinorString();
  // "skip the introduced check ... when current compatibility version is 0.0"
  const bool check_lifecycle = versions.min_compatibility.CompareMajorMinor(
                                   Version::MajorMinor(0, 0)) != 0;
  const std::string skipped =
      check_lifecycle ? ""
                      : " (min-compatibility 0.0 skips the lifecycle checks)";

  if (!decision.overridden && rule == StorageRule::kPreCompatibility) {
    decision.version = group_preferred->version;
    decision.reason = absl::StrFormat(
        "kube-apiserver %s predates compatibility versions and stores %s in "
        "the group's preferred version %s",
        binary, gr, group_preferred->version);
  } else if (!decision.overridden && rule != StorageRule::kTwoPass) {
    for (const Candidate& c : candidates) {
      const std::optional<Version> introduced =
          CheckedIntroduced(c, check_lifecycle);
      if (introduced.has_value()) {
        if (rule == StorageRule::kSinglePassSkipReplaced &&
            !c.resource->replacement.empty()) {
          continue;  // kube-apiserver 1.32-1.34 never stores a replaced version
        }
        if (introduced->CompareMajorMinor(versions.min_compatibility) > 0) {
          continue;
        }
      }
      chosen = &c;
      decision.reason =
          introduced.has_value()
              ? absl::StrFormat(
                    "%s is the highest-priority version of %s introduced by "
                    "min-compatibility %s (at %s), so servers back to %s can "
                    "read it (kube-apiserver %s rule)",
                    c.gv->version, gr, min_compat,
                    introduced->MajorMinorString(), min_compat, binary)
              : absl::StrFormat(
                    "%s is the highest-priority version of %s and has no "
                    "introduced version to check%s (kube-apiserver %s rule)",
                    c.gv->version, gr, skipped, binary);
      break;
    }
    if (chosen == nullptr) {
      decision.version = group_preferred->version;
      decision.fallback = true;
      decision.reason = absl::StrFormat(
          "no version of %s qualifies at min-compatibility %s (%s%s), so "
          "kube-apiserver %s falls back to the group's preferred version %s: "
          "rolling back to %s is not safe",
          gr, min_compat, IntroducedList(candidates),
          rule == StorageRule::kSinglePassSkipReplaced
              ? "; versions declaring a replacement are skipped"
              : "",
          binary, group_preferred->version, min_compat);
    }
  } else if (!decision.overridden) {
    // Pass 1: non-alpha versions (strings.Contains(version, "alpha")) that
    // are rollback-safe.
    for (const Candidate& c : candidates) {
      if (absl::StrContains(c.gv->version, "alpha")) continue;
      const std::optional<Version> introduced =
          CheckedIntroduced(c, check_lifecycle);
      if (introduced.has_value() &&
          introduced->CompareMajorMinor(versions.min_compatibility) > 0) {
        continue;
      }
      chosen = &c;
      decision.reason =
          introduced.has_value()
              ? absl::StrFormat(
                    "%s is the highest-priority non-alpha version of %s "
                    "introduced by min-compatibility %s (at %s), so servers "
                    "back to %s can read it (kube-apiserver %s rule)",
                    c.gv->version, gr, min_compat,
                    introduced->MajorMinorString(), min_compat, binary)
              : absl::StrFormat(
                    "%s is the highest-priority non-alpha version of %s and "
                    "has no introduced version to check%s (kube-apiserver %s "
                    "rule)",
                    c.gv->version, gr, skipped, binary);
      break;
    }
    // Pass 2: any version introduced by the emulation version.
    if (chosen == nullptr) {
      for (const Candidate& c : candidates) {
        const std::optional<Version> introduced =
            CheckedIntroduced(c, check_lifecycle);
        if (introduced.has_value() &&
            introduced->CompareMajorMinor(versions.emulation) > 0) {
          continue;
        }
        chosen = &c;
        const bool rollback_safe =
            !introduced.has_value() ||
            introduced->CompareMajorMinor(versions.min_compatibility) <= 0;
        decision.reason = absl::StrFormat(
            "no non-alpha version of %s was introduced by min-compatibility "
            "%s (%s); %s is the highest-priority version introduced by "
            "emulation %s (kube-apiserver %s rule)%s",
            gr, min_compat, IntroducedList(candidates), c.gv->version,
            emulation, binary,
            rollback_safe ? ""
                          : absl::StrCat(": rolling back to ", min_compat,
                                         " is not safe"));
        break;
      }
    }
    if (chosen == nullptr) {
      // BackwardCompatibileStorageEncodingFor still passes
      // PrioritizedVersionsForGroup(group)[0] as emulatedStorageVersion's
      // fallback (apiserver v0.37.0-beta.0 and master,
      // pkg/server/storage/resource_encoding_config.go lines 102-106 and 215):
      // kubernetes#137375 changed the two passes, not the fallback
      // (docs/kubernetes-rules.md#storage-version-selection).
      decision.version = group_preferred->version;
      decision.fallback = true;
      decision.reason = absl::StrFormat(
          "no version of %s was introduced by emulation %s (%s), so "
          "kube-apiserver %s falls back to the group's preferred version "
          "%s: rolling back to %s is not safe",
          gr, emulation, IntroducedList(candidates), binary,
          group_preferred->version, min_compat);
    }
  }
  if (chosen != nullptr) decision.version = chosen->gv->version;

  // The kind of the stored version (the fallback version may not have the
  // resource: then the resource's kind in its preferred version).
  decision.kind = candidates.front().resource->kind;
  for (const Candidate& c : candidates) {
    if (c.gv->version == decision.version) {
      decision.kind = c.resource->kind;
      break;
    }
  }
  decision.storage_version_hash =
      StorageVersionHash(group, decision.version, decision.kind);
  return decision;
}

}  // namespace compatd::engine
