#include "engine/api_availability.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "engine/runtime_config.h"

namespace compatd::engine {
namespace {

// ---------------------------------------------------------------------------
// apimachinery pkg/version/helpers.go

enum class KubeVersionType { kAlpha = 0, kBeta = 1, kGA = 2 };

struct KubeVersion {
  int64_t major = 0;
  KubeVersionType type = KubeVersionType::kGA;
  int64_t minor = 0;
};

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// strconv.Atoi on a run of ASCII digits: false when it overflows int64.
bool AtoiDigits(absl::string_view digits, int64_t* out) {
  int64_t value = 0;
  for (char c : digits) {
    const int64_t d = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - d) / 10) return false;
    value = value * 10 + d;
  }
  *out = value;
  return true;
}

// Consumes [0-9]+ at *pos; false if there is none.
bool ConsumeDigits(absl::string_view s, size_t* pos, absl::string_view* out) {
  const size_t start = *pos;
  while (*pos < s.size() && IsAsciiDigit(s[*pos])) ++*pos;
  if (*pos == start) return false;
  *out = s.substr(start, *pos - start);
  return true;
}

// kubeVersionRegex `^v([\d]+)(?:(alpha|beta)([\d]+))?$` plus the Atoi calls of
// parseKubeVersion (an overflowing number makes the string non-kube).
bool ParseKubeVersion(absl::string_view v, KubeVersion* out) {
  if (v.empty() || v[0] != 'v') return false;
  size_t pos = 1;
  absl::string_view major_digits;
  if (!ConsumeDigits(v, &pos, &major_digits)) return false;
  KubeVersion parsed;
  if (!AtoiDigits(major_digits, &parsed.major)) return false;
  if (pos == v.size()) {
    parsed.type = KubeVersionType::kGA;
    *out = parsed;
    return true;
  }
  const absl::string_view rest = v.substr(pos);
  if (absl::StartsWith(rest, "alpha")) {
    parsed.type = KubeVersionType::kAlpha;
    pos += 5;
  } else if (absl::StartsWith(rest, "beta")) {
    parsed.type = KubeVersionType::kBeta;
    pos += 4;
  } else {
    return false;
  }
  absl::string_view minor_digits;
  if (!ConsumeDigits(v, &pos, &minor_digits) || pos != v.size()) return false;
  if (!AtoiDigits(minor_digits, &parsed.minor)) return false;
  *out = parsed;
  return true;
}

template <typename T>
int Sign(T a, T b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

// ---------------------------------------------------------------------------
// resourceconfig/helpers.go version matchers (Go's \d is [0-9]).

// ^v\d+<infix>\d+$ (or ^v\d+$ when infix is empty).
bool MatchesVersionPattern(absl::string_view v, absl::string_view infix) {
  if (v.empty() || v[0] != 'v') return false;
  size_t pos = 1;
  absl::string_view digits;
  if (!ConsumeDigits(v, &pos, &digits)) return false;
  if (infix.empty()) return pos == v.size();
  if (!absl::StartsWith(v.substr(pos), infix)) return false;
  pos += infix.size();
  return ConsumeDigits(v, &pos, &digits) && pos == v.size();
}
bool IsGAVersion(absl::string_view v) { return MatchesVersionPattern(v, ""); }
bool IsBetaVersion(absl::string_view v) {
  return MatchesVersionPattern(v, "beta");
}
bool IsAlphaVersion(absl::string_view v) {
  return MatchesVersionPattern(v, "alpha");
}

constexpr absl::string_view kAPIAll = "api/all";
constexpr absl::string_view kAPIGA = "api/ga";
constexpr absl::string_view kAPIBeta = "api/beta";
constexpr absl::string_view kAPIAlpha = "api/alpha";

bool IsMatcherKey(absl::string_view key) {
  return key == kAPIAll || key == kAPIGA || key == kAPIBeta || key == kAPIAlpha;
}

bool MatcherMatches(absl::string_view matcher, absl::string_view version) {
  if (matcher == kAPIAll) return true;
  if (matcher == kAPIGA) return IsGAVersion(version);
  if (matcher == kAPIBeta) return IsBetaVersion(version);
  return IsAlphaVersion(version);
}

// schema.GroupVersion.String(): "v1" for the core group, else "group/v1".
std::string GroupVersionString(absl::string_view group,
                               absl::string_view version) {
  if (group.empty()) return std::string(version);
  return absl::StrCat(group, "/", version);
}

// How a --runtime-config entry reads in a reason: "apps/v1=false", or the bare
// key when the value is empty.
std::string FlagText(absl::string_view key, absl::string_view value) {
  if (value.empty()) return std::string(key);
  return absl::StrCat(key, "=", value);
}

// ---------------------------------------------------------------------------
// The catalog as kube-apiserver's scheme registry (GroupVersionRegistry).

class Registry {
 public:
  explicit Registry(const Catalog& catalog) : catalog_(catalog) {
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

  const Catalog& catalog() const { return catalog_; }
  const APIGroupVersion& api(size_t i) const { return catalog_.apis[i]; }
  size_t size() const { return catalog_.apis.size(); }

  bool IsGroupRegistered(absl::string_view group) const {
    return groups_.find(group) != groups_.end();
  }
  std::optional<size_t> Find(absl::string_view group,
                             absl::string_view version) const {
    auto it = index_.find(std::make_pair(group, version));
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  // Group names, sorted.
  std::vector<absl::string_view> Groups() const {
    std::vector<absl::string_view> out;
    for (const auto& [group, unused] : groups_) out.push_back(group);
    return out;
  }
  // The group's versions sorted by CompareKubeAwareVersionStrings, highest
  // first (what EmulationForwardCompatibleResourceConfig and, since 1.33,
  // removeUnintroducedKinds iterate).
  const std::vector<size_t>& ByPriority(absl::string_view group) const {
    return by_priority_.find(group)->second;
  }
  std::string VersionList(absl::string_view group) const {
    std::vector<absl::string_view> versions;
    for (size_t i : groups_.find(group)->second) {
      versions.push_back(catalog_.apis[i].version);
    }
    return absl::StrJoin(versions, ", ");
  }

 private:
  const Catalog& catalog_;
  std::map<std::string, std::vector<size_t>, std::less<>> groups_;
  std::map<std::string, std::vector<size_t>, std::less<>> by_priority_;
  std::map<std::pair<absl::string_view, absl::string_view>, size_t> index_;
};

// ---------------------------------------------------------------------------
// apiserver pkg/server/storage/resource_config.go (1.31+, with the explicit
// maps KEP-4330 added).

struct Enablement {
  bool on = false;
  std::string why;
};

using ResourceKey = std::pair<size_t, std::string>;

struct ResourceConfig {
  // GroupVersionConfigs: every catalog version has an entry, as
  // kube-apiserver's DefaultAPIResourceConfigSource lists every version it
  // registers.
  std::vector<Enablement> versions;
  std::map<ResourceKey, Enablement> resources;  // ResourceConfigs
  std::map<size_t, bool> explicit_versions;     // ExplicitGroupVersionConfigs
  std::map<ResourceKey, bool> explicit_resources;  // ExplicitResourceConfigs

  // EnableVersions / DisableVersions: a preference about a version removes
  // the previous preferences about its resources.
  void SetVersion(size_t gv, bool on, std::string why) {
    versions[gv] = Enablement{on, std::move(why)};
    for (auto it = resources.begin(); it != resources.end();) {
      it = it->first.first == gv ? resources.erase(it) : std::next(it);
    }
  }
  void SetResource(size_t gv, absl::string_view resource, bool on,
                   std::string why) {
    resources[ResourceKey(gv, std::string(resource))] =
        Enablement{on, std::move(why)};
  }
  // A resource-level preference wins over the version's.
  bool ResourceEnabled(size_t gv, absl::string_view resource) const {
    auto it = resources.find(ResourceKey(gv, std::string(resource)));
    if (it != resources.end()) return it->second.on;
    return versions[gv].on;
  }
  const Enablement* ResourcePreference(size_t gv,
                                       absl::string_view resource) const {
    auto it = resources.find(ResourceKey(gv, std::string(resource)));
    return it == resources.end() ? nullptr : &it->second;
  }
  bool VersionExplicitlyEnabled(size_t gv) const {
    auto it = explicit_versions.find(gv);
    return it != explicit_versions.end() && it->second;
  }
  bool ResourceExplicitlyEnabled(size_t gv, absl::string_view resource) const {
    auto it = explicit_resources.find(ResourceKey(gv, std::string(resource)));
    return it != explicit_resources.end() && it->second;
  }
};

ResourceConfig DefaultResourceConfig(const Registry& registry) {
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

// ---------------------------------------------------------------------------
// Validation (ServerRunOptions.Validate, APIEnablementOptions.Validate, and
// the emulation range of the effective version).

// Where this differs from KUBERNETES-SEMANTICS.md section 2, the code wins:
// at binary 1.31 component-base raised the N-1 floor to 1.31, so 1.31 allows
// only emulation 1.31.
absl::Status ValidateEmulationRange(const EffectiveVersions& versions) {
  const Version binary = versions.binary.ToMajorMinor();
  const Version floor_131 = Version::MajorMinor(1, 31);
  Version floor = binary;
  if (binary >= floor_131) {
    // component-base: max(binary-3, 1.31) from 1.33; 1.31-1.32 allowed N-1
    // with the same 1.31 floor.
    floor = binary.SubtractMinor(binary >= Version::MajorMinor(1, 33) ? 3 : 1);
    if (floor < floor_131) floor = floor_131;
  }
  if (versions.emulation.CompareMajorMinor(binary) > 0 ||
      versions.emulation.CompareMajorMinor(floor) < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "emulation version %s is not between [%s, %s]",
        versions.emulation.MajorMinorString(), floor.MajorMinorString(),
        versions.binary.WithPatch(0).ToString()));
  }
  return absl::OkStatus();
}

std::vector<std::string> ValidateForwardCompatibleFlags(
    const EffectiveVersions& versions, bool efc, bool rcfc) {
  std::vector<std::string> errors;
  // notEmulationMode := binary.WithPatch(0).EqualTo(emulation): major.minor.
  if (versions.binary.CompareMajorMinor(versions.emulation) != 0) {
    return errors;
  }
  const std::string both = versions.emulation.MajorMinorString();
  if (efc) {
    errors.push_back(absl::StrCat(
        "ServerRunOptions.EmulationForwardCompatible cannot be set to true if "
        "the emulation version is the same as the binary version "
        "(--emulation-forward-compatible=true with emulation and binary "
        "version both ",
        both, ")"));
  }
  if (rcfc) {
    errors.push_back(absl::StrCat(
        "ServerRunOptions.RuntimeConfigEmulationForwardCompatible cannot be "
        "set to true if the emulation version is the same as the binary "
        "version (--runtime-config-emulation-forward-compatible=true with "
        "emulation and binary version both ",
        both, ")"));
  }
  return errors;
}

// APIEnablementOptions.Validate with resourceconfig.ParseGroups.
std::optional<std::string> ValidateRuntimeConfig(const Registry& registry,
                                                 const RuntimeConfigMap& rc) {
  auto all = rc.find(kAPIAll);
  if (all != rc.end() && all->second == "false" && rc.size() == 1) {
    return std::string("invalid key with only api/all=false");
  }
  std::vector<std::string> unknown;
  for (const auto& [key, value] : rc) {
    if (IsMatcherKey(key)) continue;
    const std::vector<absl::string_view> tokens = absl::StrSplit(key, '/');
    if (tokens.size() != 2 && tokens.size() != 3) {
      return absl::StrFormat(
          "runtime-config invalid key %s (expected <group>/<version>, "
          "<group>/<version>/<resource>, /v1, v1, api/all, api/ga, api/beta "
          "or api/alpha)",
          key);
    }
    if (!registry.IsGroupRegistered(tokens[0])) {
      unknown.push_back(std::string(tokens[0]));
    }
  }
  if (!unknown.empty()) {
    std::vector<std::string> known;
    for (absl::string_view g : registry.Groups()) {
      known.push_back(g.empty() ? "\"\" (core, written /v1)" : std::string(g));
    }
    return absl::StrFormat("unknown api groups %s (registered groups: %s)",
                           absl::StrJoin(unknown, ","),
                           absl::StrJoin(known, ", "));
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// MergeAPIResourceConfigs / applyVersionAndResourcePreferences.

absl::Status ApplyVersionAndResourcePreferences(const Registry& registry,
                                                const RuntimeConfigMap& rc,
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

absl::Status MergeAPIResourceConfigs(const Registry& registry,
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

// EmulationForwardCompatibleResourceConfig. Kubernetes copies each version's
// entry and enables the higher-priority versions in the same loop over a Go
// map, so an explicit default `false` of a higher version visited later can
// undo the forward enablement (KUBERNETES-SEMANTICS.md A1). compatd follows the
// KEP's intent: copy everything first, then enable.
absl::StatusOr<ResourceConfig> EmulationForwardCompatibleResourceConfig(
    const Registry& registry, const RuntimeConfigMap& rc,
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

// ---------------------------------------------------------------------------
// deleted_kinds.go: removeDeletedKinds / removeUnintroducedKinds on the
// storage map (version -> served resources).

struct StoredResource {
  const APIResource* resource;
  std::vector<std::string> notes;
};

using StorageMap = std::vector<std::vector<StoredResource>>;  // by api index

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

struct Evaluator {
  const Registry& registry;
  const EffectiveVersions& versions;
  Version current;  // emulation major.minor
  bool is_alpha = false;
  bool efc = false;
  bool rcfc = false;

  // ShouldServeForVersion (without the two environment-variable escape
  // hatches, which default off).
  bool ShouldServeForRemoved(const Version& removed, std::string* note) const {
    const Version removed_mm = removed.ToMajorMinor();
    if (removed_mm > current) return true;
    if (removed_mm < current) return false;
    if (is_alpha) {
      *note = absl::StrFormat(
          "removed at %s, but the alpha pre-release binary %s keeps serving "
          "it until the release",
          removed_mm.MajorMinorString(), versions.binary.ToString());
      return true;
    }
    return false;
  }

  void RemoveDeletedKinds(absl::string_view group, StorageMap* storage) const {
    for (size_t gv : registry.ByPriority(group)) {
      std::vector<StoredResource>& stored = (*storage)[gv];
      std::set<std::string> to_remove;
      for (StoredResource& s : stored) {
        if (!s.resource->removed.has_value()) continue;
        std::string note;
        if (ShouldServeForRemoved(*s.resource->removed, &note)) {
          if (!note.empty()) s.notes.push_back(std::move(note));
        } else {
          to_remove.insert(s.resource->resource);
        }
      }
      RemoveResources(to_remove, &stored);
    }
  }

  absl::Status RemoveUnintroducedKinds(absl::string_view group,
                                       const ResourceConfig& config,
                                       StorageMap* storage) const {
    const std::vector<size_t>& by_priority = registry.ByPriority(group);
    std::set<std::string> enabled_resources;
    std::vector<size_t> versions_to_remove;
    // From the lowest priority to the highest, so that forward compatibility
    // sees what the lower versions kept.
    for (auto it = by_priority.rbegin(); it != by_priority.rend(); ++it) {
      const size_t gv = *it;
      const APIGroupVersion& api = registry.api(gv);
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
                return registry.api(a).version < registry.api(b).version;
              });
    for (size_t gv : versions_to_remove) {
      if (config.VersionExplicitlyEnabled(gv)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "cannot enable version %s in runtime-config because all the "
            "resources have been introduced after the current version %s. "
            "Consider setting "
            "--runtime-config-emulation-forward-compatible=true",
            GroupVersionString(registry.api(gv).group,
                               registry.api(gv).version),
            current.MajorMinorString()));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> ShouldServeBasedOnVersionIntroduced(
      const APIGroupVersion& api, size_t gv, const APIResource& r,
      const ResourceConfig& config, bool lower_priority_enabled,
      StoredResource* stored) const {
    const Version introduced = r.introduced.has_value()
                                   ? r.introduced->ToMajorMinor()
                                   : Version::MajorMinor(0, 0);
    if (current >= introduced) return true;
    // Only in emulation mode from here on.
    if (efc && lower_priority_enabled) {
      stored->notes.push_back(absl::StrFormat(
          "%s introduced at %s after emulation %s, served by "
          "--emulation-forward-compatible because a lower-priority version "
          "serves it",
          r.resource, introduced.MajorMinorString(),
          current.MajorMinorString()));
      return true;
    }
    const bool resource_explicit =
        config.ResourceExplicitlyEnabled(gv, r.resource);
    if (rcfc && (resource_explicit || config.VersionExplicitlyEnabled(gv))) {
      stored->notes.push_back(absl::StrFormat(
          "%s introduced at %s after emulation %s, served because it is "
          "enabled in --runtime-config and "
          "--runtime-config-emulation-forward-compatible is set",
          r.resource, introduced.MajorMinorString(),
          current.MajorMinorString()));
      return true;
    }
    if (resource_explicit) {
      // schema.GroupVersionResource.String().
      return absl::InvalidArgumentError(absl::StrFormat(
          "cannot enable resource %s/%s, Resource=%s in runtime-config "
          "because it is introduced at %s after the current version %s. "
          "Consider setting --runtime-config-emulation-forward-compatible=true",
          api.group, api.version, r.resource, introduced.MajorMinorString(),
          current.MajorMinorString()));
    }
    return false;
  }
};

std::string ServedReason(const Registry& registry, const ResourceConfig& config,
                         size_t gv, const std::vector<StoredResource>& stored,
                         bool emulating) {
  std::vector<std::string> parts;
  const Enablement& version = config.versions[gv];
  if (version.on) {
    parts.push_back(version.why);
  } else {
    parts.push_back(absl::StrCat("version ", version.why,
                                 "; resources enabled individually"));
  }
  std::set<std::string> seen(parts.begin(), parts.end());
  auto add = [&](std::string part) {
    if (seen.insert(part).second) parts.push_back(std::move(part));
  };
  bool explicit_alpha = config.VersionExplicitlyEnabled(gv);
  for (const StoredResource& s : stored) {
    const Enablement* pref =
        config.ResourcePreference(gv, s.resource->resource);
    if (pref != nullptr && pref->on) {
      add(absl::StrCat(s.resource->resource, " ", pref->why));
    }
    if (config.ResourceExplicitlyEnabled(gv, s.resource->resource)) {
      explicit_alpha = true;
    }
    for (const std::string& note : s.notes) add(note);
  }
  const absl::string_view v = registry.api(gv).version;
  if (emulating && explicit_alpha && absl::StrContains(v, "alpha")) {
    add("alpha API explicitly enabled while emulating an older version: "
        "kube-apiserver serves it but warns that this is unsupported");
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace

int CompareKubeAwareVersionStrings(absl::string_view a, absl::string_view b) {
  if (a == b) return 0;
  KubeVersion ka, kb;
  const bool ok_a = ParseKubeVersion(a, &ka);
  const bool ok_b = ParseKubeVersion(b, &kb);
  if (!ok_a && !ok_b) {
    // strings.Compare(v2, v1): non-kube strings sort reverse-alphabetically.
    const int c = b.compare(a);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (!ok_a) return -1;
  if (!ok_b) return 1;
  if (ka.type != kb.type) {
    return Sign(static_cast<int>(ka.type), static_cast<int>(kb.type));
  }
  if (ka.major != kb.major) return Sign(ka.major, kb.major);
  return Sign(ka.minor, kb.minor);
}

absl::StatusOr<std::vector<ServedGroupVersion>> ListServedAPIs(
    const Catalog& catalog, const EffectiveVersions& versions,
    const VersionQuery& query) {
  const Registry registry(catalog);
  const bool efc = query.emulation_forward_compatible.value_or(
      catalog.cluster.emulation_forward_compatible.value_or(false));
  const bool rcfc = query.runtime_config_emulation_forward_compatible.value_or(
      catalog.cluster.runtime_config_emulation_forward_compatible.value_or(
          false));

  // The cluster section's runtime config, then the query's (query key wins),
  // then kube-apiserver's legacy core-group rewrite (Options.Complete; not in
  // KUBERNETES-SEMANTICS.md, but kube-apiserver runs it before validating).
  RuntimeConfigMap rc;
  for (const auto& [key, value] : catalog.cluster.runtime_config) {
    rc[key] = value;
  }
  MergeRuntimeConfigFlag(query.runtime_config, &rc);
  NormalizeLegacyRuntimeConfigKeys(&rc);

  // 1. Validation: everything kube-apiserver refuses at start-up, together.
  std::vector<std::string> errors;
  if (absl::Status s = ValidateEmulationRange(versions); !s.ok()) {
    errors.push_back(std::string(s.message()));
  }
  for (std::string& e : ValidateForwardCompatibleFlags(versions, efc, rcfc)) {
    errors.push_back(std::move(e));
  }
  if (std::optional<std::string> e = ValidateRuntimeConfig(registry, rc)) {
    errors.push_back(*std::move(e));
  }
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "; "));
  }

  // 2-4. Default enablement, --runtime-config, forward compatibility.
  ResourceConfig config = DefaultResourceConfig(registry);
  COMPATD_RETURN_IF_ERROR(MergeAPIResourceConfigs(registry, rc, &config));
  if (efc) {
    COMPATD_ASSIGN_OR_RETURN(
        config, EmulationForwardCompatibleResourceConfig(registry, rc, config));
  }

  // 5. Storage exists only for enabled resources.
  StorageMap storage(registry.size());
  for (size_t i = 0; i < registry.size(); ++i) {
    for (const APIResource& r : registry.api(i).resources) {
      if (config.ResourceEnabled(i, r.resource)) {
        storage[i].push_back(StoredResource{&r, {}});
      }
    }
    std::sort(storage[i].begin(), storage[i].end(),
              [](const StoredResource& a, const StoredResource& b) {
                return a.resource->resource < b.resource->resource;
              });
  }

  // 6-7. Removed and not-yet-introduced kinds, group by group.
  const Evaluator evaluator{
      registry,
      versions,
      versions.emulation.ToMajorMinor(),
      absl::StrContains(versions.binary.pre_release(), "alpha"),
      efc,
      rcfc};
  const std::vector<absl::string_view> groups = registry.Groups();
  for (absl::string_view group : groups) {
    evaluator.RemoveDeletedKinds(group, &storage);
    COMPATD_RETURN_IF_ERROR(
        evaluator.RemoveUnintroducedKinds(group, config, &storage));
  }

  // Output: by group, then priority; only versions serving something.
  const bool emulating =
      versions.binary.CompareMajorMinor(versions.emulation) != 0;
  std::vector<ServedGroupVersion> out;
  for (absl::string_view group : groups) {
    for (size_t gv : registry.ByPriority(group)) {
      if (storage[gv].empty()) continue;
      ServedGroupVersion served;
      served.group = registry.api(gv).group;
      served.version = registry.api(gv).version;
      for (const StoredResource& s : storage[gv]) {
        served.resources.push_back(s.resource->resource);
      }
      served.reason =
          ServedReason(registry, config, gv, storage[gv], emulating);
      out.push_back(std::move(served));
    }
  }
  return out;
}

}  // namespace compatd::engine
