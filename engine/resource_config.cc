#include "engine/resource_config.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "engine/kube_aware_version.h"

namespace compatd::engine {
namespace {

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// Consumes [0-9]+ at *pos; false if there is none.
bool ConsumeDigits(absl::string_view s, size_t* pos) {
  const size_t start = *pos;
  while (*pos < s.size() && IsAsciiDigit(s[*pos])) ++*pos;
  return *pos != start;
}

// ^v\d+<infix>\d+$ (or ^v\d+$ when infix is empty).
bool MatchesVersionPattern(absl::string_view v, absl::string_view infix) {
  if (v.empty() || v[0] != 'v') return false;
  size_t pos = 1;
  if (!ConsumeDigits(v, &pos)) return false;
  if (infix.empty()) return pos == v.size();
  if (!absl::StartsWith(v.substr(pos), infix)) return false;
  pos += infix.size();
  return ConsumeDigits(v, &pos) && pos == v.size();
}

bool MatcherMatches(absl::string_view matcher, absl::string_view version) {
  if (matcher == kAPIAll) return true;
  if (matcher == kAPIGA) return IsGAVersion(version);
  if (matcher == kAPIBeta) return IsBetaVersion(version);
  return IsAlphaVersion(version);
}

// How a --runtime-config entry reads in a reason: "apps/v1=false", or the bare
// key when the value is empty.
std::string FlagText(absl::string_view key, absl::string_view value) {
  if (value.empty()) return std::string(key);
  return absl::StrCat(key, "=", value);
}

// applyVersionAndResourcePreferences (v0.33.0 split it out of
// MergeAPIResourceConfigs so that the forward-compatible config can apply it
// again).
absl::Status ApplyVersionAndResourcePreferences(
    const GroupVersionRegistry& registry, const RuntimeConfigMap& rc,
    ResourceConfig* config) {
  struct Preference {
    size_t gv;
    std::string resource;
    bool enabled;
    std::string flag;
  };
  std::vector<Preference> version_prefs;
  std::vector<Preference> resource_prefs;
  for (const auto& [key, value] : rc) {
    if (IsMatcherKey(key)) continue;
    const std::vector<absl::string_view> tokens = absl::StrSplit(key, '/');
    if (tokens.size() < 2 || tokens.size() > 3) continue;
    // schema.ParseGroupVersion(tokens[0] + "/" + tokens[1]) cannot fail here:
    // the string has exactly one '/' ("/" alone is the empty GroupVersion).
    const absl::string_view group = tokens[0];
    const absl::string_view version = tokens[1];
    if (!registry.IsGroupRegistered(group)) continue;
    const std::optional<size_t> gv = registry.Find(group, version);
    if (!gv.has_value()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "runtime-config %s: group version %s that has not been registered "
          "(versions of group \"%s\": %s)",
          key, GroupVersionString(group, version), group,
          registry.VersionList(group)));
    }
    bool enabled = true;
    if (!value.empty()) {
      const std::optional<bool> parsed = ParseRuntimeConfigBool(value);
      if (!parsed.has_value()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "invalid value of %s: %s, err: strconv.ParseBool: parsing \"%s\": "
            "invalid syntax (accepted: true, false, 1, 0, t, f, T, F, TRUE, "
            "FALSE, True, False, or empty for true)",
            key, value, value));
      }
      enabled = *parsed;
    }
    if (tokens.size() == 2) {
      version_prefs.push_back(
          Preference{*gv, "", enabled, FlagText(key, value)});
      continue;
    }
    // strings.ToLower(tokens[2]) != tokens[2] (ASCII: resource names are).
    if (absl::AsciiStrToLower(tokens[2]) != tokens[2]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid key %s: group/version/resource and resource is always "
          "lowercase plural, not \"%s\"",
          key, tokens[2]));
    }
    resource_prefs.push_back(
        Preference{*gv, std::string(tokens[2]), enabled, FlagText(key, value)});
  }
  // Version preferences first (they drop resource preferences of their
  // version), then resource preferences, which win.
  for (const Preference& p : version_prefs) {
    config->explicit_versions[p.gv] = p.enabled;
    config->SetVersion(p.gv, p.enabled,
                       absl::StrCat(p.enabled ? "enabled" : "disabled",
                                    " by --runtime-config ", p.flag));
  }
  for (const Preference& p : resource_prefs) {
    config->explicit_resources[ResourceKey(p.gv, p.resource)] = p.enabled;
    config->SetResource(p.gv, p.resource, p.enabled,
                        absl::StrCat(p.enabled ? "enabled" : "disabled",
                                     " by --runtime-config ", p.flag));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsGAVersion(absl::string_view version) {
  return MatchesVersionPattern(version, "");
}
bool IsBetaVersion(absl::string_view version) {
  return MatchesVersionPattern(version, "beta");
}
bool IsAlphaVersion(absl::string_view version) {
  return MatchesVersionPattern(version, "alpha");
}

bool IsMatcherKey(absl::string_view key) {
  return key == kAPIAll || key == kAPIGA || key == kAPIBeta || key == kAPIAlpha;
}

// ---------------------------------------------------------------------------
// GroupVersionRegistry.

GroupVersionRegistry::GroupVersionRegistry(const Catalog& catalog)
    : catalog_(catalog) {
  for (size_t i = 0; i < catalog.apis.size(); ++i) {
    const APIGroupVersion& gv = catalog.apis[i];
    groups_[gv.group].push_back(i);
    index_.emplace(std::make_pair(absl::string_view(gv.group),
                                  absl::string_view(gv.version)),
                   i);
  }
  for (auto& [group, indexes] : groups_) {
    std::vector<size_t> sorted = indexes;
    std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
      return CompareKubeAwareVersionStrings(catalog.apis[a].version,
                                            catalog.apis[b].version) > 0;
    });
    by_priority_.emplace(group, std::move(sorted));
  }
}

bool GroupVersionRegistry::IsGroupRegistered(absl::string_view group) const {
  return groups_.find(group) != groups_.end();
}

std::optional<size_t> GroupVersionRegistry::Find(
    absl::string_view group, absl::string_view version) const {
  auto it = index_.find(std::make_pair(group, version));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<absl::string_view> GroupVersionRegistry::Groups() const {
  std::vector<absl::string_view> out;
  for (const auto& [group, unused] : groups_) out.push_back(group);
  return out;
}

const std::vector<size_t>& GroupVersionRegistry::ByPriority(
    absl::string_view group) const {
  return by_priority_.find(group)->second;
}

std::string GroupVersionRegistry::VersionList(absl::string_view group) const {
  std::vector<absl::string_view> versions;
  for (size_t i : groups_.find(group)->second) {
    versions.push_back(catalog_.apis[i].version);
  }
  return absl::StrJoin(versions, ", ");
}

// ---------------------------------------------------------------------------
// ResourceConfig.

void ResourceConfig::SetVersion(size_t gv, bool on, std::string why) {
  versions[gv] = Enablement{on, std::move(why)};
  for (auto it = resources.begin(); it != resources.end();) {
    it = it->first.first == gv ? resources.erase(it) : std::next(it);
  }
}

void ResourceConfig::SetResource(size_t gv, absl::string_view resource, bool on,
                                 std::string why) {
  resources[ResourceKey(gv, std::string(resource))] =
      Enablement{on, std::move(why)};
}

bool ResourceConfig::ResourceEnabled(size_t gv,
                                     absl::string_view resource) const {
  auto it = resources.find(ResourceKey(gv, std::string(resource)));
  if (it != resources.end()) return it->second.on;
  return versions[gv].on;
}

const Enablement* ResourceConfig::ResourcePreference(
    size_t gv, absl::string_view resource) const {
  auto it = resources.find(ResourceKey(gv, std::string(resource)));
  return it == resources.end() ? nullptr : &it->second;
}

bool ResourceConfig::VersionExplicitlyEnabled(size_t gv) const {
  auto it = explicit_versions.find(gv);
  return it != explicit_versions.end() && it->second;
}

bool ResourceConfig::ResourceExplicitlyEnabled(
    size_t gv, absl::string_view resource) const {
  auto it = explicit_resources.find(ResourceKey(gv, std::string(resource)));
  return it != explicit_resources.end() && it->second;
}

ResourceConfig DefaultResourceConfig(const GroupVersionRegistry& registry) {
  ResourceConfig config;
  config.versions.resize(registry.size());
  for (size_t i = 0; i < registry.size(); ++i) {
    const APIGroupVersion& gv = registry.api(i);
    if (gv.enabled_by_default.has_value()) {
      config.versions[i] = Enablement{
          *gv.enabled_by_default,
          absl::StrCat(*gv.enabled_by_default ? "enabled" : "disabled",
                       " by default (catalog enabledByDefault: ",
                       *gv.enabled_by_default ? "true" : "false", ")")};
    } else if (IsGAVersion(gv.version)) {
      config.versions[i] = Enablement{true, "enabled by default (GA version)"};
    } else {
      config.versions[i] = Enablement{
          false,
          "disabled by default (kube-apiserver enables only GA versions by "
          "default)"};
    }
  }
  return config;
}

absl::Status MergeAPIResourceConfigs(const GroupVersionRegistry& registry,
                                     const RuntimeConfigMap& rc,
                                     ResourceConfig* config) {
  for (absl::string_view matcher : {kAPIAll, kAPIGA, kAPIBeta, kAPIAlpha}) {
    auto it = rc.find(matcher);
    if (it == rc.end()) continue;
    bool on = false;
    if (it->second == "true") {
      on = true;
    } else if (it->second != "false") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid value %s=%s (%s accepts exactly \"true\" or \"false\")",
          matcher, it->second, matcher));
    }
    for (size_t i = 0; i < registry.size(); ++i) {
      if (!MatcherMatches(matcher, registry.api(i).version)) continue;
      config->SetVersion(
          i, on,
          absl::StrCat(on ? "enabled" : "disabled", " by --runtime-config ",
                       matcher, "=", it->second));
    }
  }
  return ApplyVersionAndResourcePreferences(registry, rc, config);
}

// Kubernetes copies each version's entry and enables the higher-priority
// versions in the same loop over a Go map, so a higher version's default
// `false` visited later can undo the forward enablement; compatd copies
// everything first, then enables
// (docs/kubernetes-rules.md#emulation-forward-compatible).
absl::StatusOr<ResourceConfig> EmulationForwardCompatibleResourceConfig(
    const GroupVersionRegistry& registry, const RuntimeConfigMap& rc,
    const ResourceConfig& in) {
  ResourceConfig out;
  out.versions = in.versions;
  for (size_t i = 0; i < registry.size(); ++i) {
    const APIGroupVersion& gv = registry.api(i);
    if (!in.versions[i].on || IsAlphaVersion(gv.version)) continue;
    for (size_t higher : registry.ByPriority(gv.group)) {
      if (registry.api(higher).version == gv.version) break;
      if (out.versions[higher].on) continue;
      out.versions[higher] = Enablement{
          true, absl::StrCat("enabled by --emulation-forward-compatible "
                             "(lower-priority ",
                             GroupVersionString(gv.group, gv.version),
                             " is enabled)")};
    }
  }
  out.resources = in.resources;
  for (const auto& [key, enablement] : in.resources) {
    const APIGroupVersion& gv = registry.api(key.first);
    if (!enablement.on || IsAlphaVersion(gv.version)) continue;
    for (size_t higher : registry.ByPriority(gv.group)) {
      if (registry.api(higher).version == gv.version) break;
      out.SetResource(higher, key.second, true,
                      absl::StrCat("enabled by --emulation-forward-compatible "
                                   "(lower-priority ",
                                   GroupVersionString(gv.group, gv.version),
                                   "/", key.second, " is enabled)"));
    }
  }
  // Re-apply the explicit preferences so that an explicit `false` of a higher
  // version still wins.
  COMPATD_RETURN_IF_ERROR(
      ApplyVersionAndResourcePreferences(registry, rc, &out));
  return out;
}

}  // namespace compatd::engine
