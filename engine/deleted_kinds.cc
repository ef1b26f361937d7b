#include "engine/deleted_kinds.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace compatd::engine {
namespace {

// shouldRemoveResourceAndSubresources: a removed resource takes its
// "<resource>/<sub>" entries with it.
void RemoveResources(const std::set<std::string>& to_remove,
                     std::vector<StoredResource>* stored) {
  stored->erase(
      std::remove_if(stored->begin(), stored->end(),
                     [&](const StoredResource& s) {
                       for (const std::string& name : to_remove) {
                         if (s.resource->resource == name ||
                             absl::StartsWith(s.resource->resource,
                                              absl::StrCat(name, "/"))) {
                           return true;
                         }
                       }
                       return false;
                     }),
      stored->end());
}

}  // namespace

DeletedKindsRule ResourceExpirationEvaluator::RuleFor(const Version& binary) {
  const Version mm = binary.ToMajorMinor();
  if (mm < Version::MajorMinor(1, 31)) return DeletedKindsRule::kRemovedOnly;
  if (mm < Version::MajorMinor(1, 33)) return DeletedKindsRule::kShouldServe;
  return DeletedKindsRule::kRemovedThenUnintroduced;
}

ResourceExpirationEvaluator::ResourceExpirationEvaluator(
    const GroupVersionRegistry& registry, const EffectiveVersions& versions,
    bool emulation_forward_compatible,
    bool runtime_config_emulation_forward_compatible)
    : registry_(registry),
      versions_(versions),
      current_(versions.emulation.ToMajorMinor()),
      is_alpha_(absl::StrContains(versions.binary.pre_release(), "alpha")),
      efc_(emulation_forward_compatible),
      rcfc_(runtime_config_emulation_forward_compatible) {}

bool ResourceExpirationEvaluator::ShouldServeForVersion(
    const Version& removed, std::string* note) const {
  const Version removed_mm = removed.ToMajorMinor();
  if (removed_mm > current_) return true;
  if (removed_mm < current_) return false;
  if (is_alpha_) {
    *note = absl::StrFormat(
        "removed at %s, but the alpha pre-release binary %s keeps serving "
        "it until the release",
        removed_mm.MajorMinorString(), versions_.binary.ToString());
    return true;
  }
  return false;
}

absl::Status ResourceExpirationEvaluator::RemoveUnavailableKinds(
    absl::string_view group, const ResourceConfig& config,
    StorageMap* storage) const {
  switch (RuleFor(versions_.binary)) {
    case DeletedKindsRule::kRemovedOnly:
      RemoveDeletedKinds(group, storage, /*check_introduced=*/false);
      return absl::OkStatus();
    case DeletedKindsRule::kShouldServe:
      RemoveDeletedKinds(group, storage, /*check_introduced=*/true);
      return absl::OkStatus();
    case DeletedKindsRule::kRemovedThenUnintroduced:
      break;
  }
  RemoveDeletedKinds(group, storage, /*check_introduced=*/false);
  return RemoveUnintroducedKinds(group, config, storage);
}

void ResourceExpirationEvaluator::RemoveDeletedKinds(
    absl::string_view group, StorageMap* storage, bool check_introduced) const {
  for (size_t gv : registry_.ByPriority(group)) {
    std::vector<StoredResource>& stored = (*storage)[gv];
    std::set<std::string> to_remove;
    for (StoredResource& s : stored) {
      // shouldServe (v0.31.0, v0.32.0): a resource not yet introduced at the
      // current version is dropped, whatever --runtime-config says.
      if (check_introduced && s.resource->introduced.has_value() &&
          current_ < s.resource->introduced->ToMajorMinor()) {
        to_remove.insert(s.resource->resource);
        continue;
      }
      if (!s.resource->removed.has_value()) continue;
      std::string note;
      if (ShouldServeForVersion(*s.resource->removed, &note)) {
        if (!note.empty()) s.notes.push_back(std::move(note));
      } else {
        to_remove.insert(s.resource->resource);
      }
    }
    RemoveResources(to_remove, &stored);
  }
}

absl::Status ResourceExpirationEvaluator::RemoveUnintroducedKinds(
    absl::string_view group, const ResourceConfig& config,
    StorageMap* storage) const {
  const std::vector<size_t>& by_priority = registry_.ByPriority(group);
  std::set<std::string> enabled_resources;
  std::vector<size_t> versions_to_remove;
  // From the lowest priority to the highest, so that forward compatibility
  // sees what the lower versions kept.
  for (auto it = by_priority.rbegin(); it != by_priority.rend(); ++it) {
    const size_t gv = *it;
    const APIGroupVersion& api = registry_.api(gv);
    std::vector<StoredResource>& stored = (*storage)[gv];
    if (stored.empty()) continue;
    std::set<std::string> to_remove;
    for (StoredResource& s : stored) {
      const APIResource& r = *s.resource;
      const bool lower_priority_enabled =
          enabled_resources.count(r.resource) > 0;
      COMPATD_ASSIGN_OR_RETURN(
          bool keep, ShouldServeBasedOnVersionIntroduced(
                         api, gv, r, config, lower_priority_enabled, &s));
      if (!keep) {
        to_remove.insert(r.resource);
      } else if (!IsAlphaVersion(api.version)) {
        enabled_resources.insert(r.resource);
      }
    }
    RemoveResources(to_remove, &stored);
    if (stored.empty()) versions_to_remove.push_back(gv);
  }
  // sets.String.List(): by version name.
  std::sort(versions_to_remove.begin(), versions_to_remove.end(),
            [&](size_t a, size_t b) {
              return registry_.api(a).version < registry_.api(b).version;
            });
  for (size_t gv : versions_to_remove) {
    if (config.VersionExplicitlyEnabled(gv)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cannot enable version %s in runtime-config because all the "
          "resources have been introduced after the current version %s. "
          "Consider setting "
          "--runtime-config-emulation-forward-compatible=true",
          GroupVersionString(registry_.api(gv).group,
                             registry_.api(gv).version),
          current_.MajorMinorString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool>
ResourceExpirationEvaluator::ShouldServeBasedOnVersionIntroduced(
    const APIGroupVersion& api, size_t gv, const APIResource& r,
    const ResourceConfig& config, bool lower_priority_enabled,
    StoredResource* stored) const {
  const Version introduced = r.introduced.has_value()
                                 ? r.introduced->ToMajorMinor()
                                 : Version::MajorMinor(0, 0);
  if (current_ >= introduced) return true;
  // Only in emulation mode from here on.
  if (efc_ && lower_priority_enabled) {
    stored->notes.push_back(absl::StrFormat(
        "%s introduced at %s after emulation %s, served by "
        "--emulation-forward-compatible because a lower-priority version "
        "serves it",
        r.resource, introduced.MajorMinorString(),
        current_.MajorMinorString()));
    return true;
  }
  const bool resource_explicit =
      config.ResourceExplicitlyEnabled(gv, r.resource);
  if (rcfc_ && (resource_explicit || config.VersionExplicitlyEnabled(gv))) {
    stored->notes.push_back(absl::StrFormat(
        "%s introduced at %s after emulation %s, served because it is "
        "enabled in --runtime-config and "
        "--runtime-config-emulation-forward-compatible is set",
        r.resource, introduced.MajorMinorString(),
        current_.MajorMinorString()));
    return true;
  }
  if (resource_explicit) {
    // schema.GroupVersionResource.String().
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot enable resource %s/%s, Resource=%s in runtime-config "
        "because it is introduced at %s after the current version %s. "
        "Consider setting --runtime-config-emulation-forward-compatible=true",
        api.group, api.version, r.resource, introduced.MajorMinorString(),
        current_.MajorMinorString()));
  }
  return false;
}

}  // namespace compatd::engine
