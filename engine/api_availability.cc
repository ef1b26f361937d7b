#include "engine/api_availability.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "engine/deleted_kinds.h"
#include "engine/resource_config.h"
#include "engine/runtime_config.h"

namespace compatd::engine {
namespace {

// ---------------------------------------------------------------------------
// Start-up validation: ServerRunOptions.Validate (the forward-compatibility
// flags), APIEnablementOptions.Validate (--runtime-config keys, with
// resourceconfig.ParseGroupVersions), and the emulation range of the
// effective version.

// The emulation range of the binary's release line, as ResolveEffectiveVersions
// checks it, for callers that pass EffectiveVersions directly: [N-1, N] with
// the 1.31 floor for 1.31-1.32 (so 1.31 allows only 1.31), max(N-3, 1.31)
// from 1.33 (docs/kubernetes-rules.md#emulation-version-floor).
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
  // The two flags came with apiserver v0.33.0 (ServerRunOptions); before it
  // pflag refuses them as unknown (server_run_options.go at v0.31.0 and
  // v0.32.0 has neither). A false value is taken as "not set".
  if (versions.binary.ToMajorMinor() < Version::MajorMinor(1, 33)) {
    const std::string binary = versions.binary.MajorMinorString();
    if (efc) {
      errors.push_back(absl::StrCat(
          "unknown flag: --emulation-forward-compatible (kube-apiserver ",
          binary, " has no such flag; it was added in 1.33)"));
    }
    if (rcfc) {
      errors.push_back(
          absl::StrCat("unknown flag: "
                       "--runtime-config-emulation-forward-compatible "
                       "(kube-apiserver ",
                       binary, " has no such flag; it was added in 1.33)"));
    }
    return errors;
  }
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
std::optional<std::string> ValidateRuntimeConfig(
    const GroupVersionRegistry& registry, const RuntimeConfigMap& rc) {
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
// Reasons (compatd's own).

std::string ServedReason(const GroupVersionRegistry& registry,
                         const ResourceConfig& config, size_t gv,
                         const std::vector<StoredResource>& stored,
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

absl::StatusOr<std::vector<ServedGroupVersion>> ListServedAPIs(
    const Catalog& catalog, const EffectiveVersions& versions,
    const VersionQuery& query) {
  const GroupVersionRegistry registry(catalog);
  const bool efc = query.emulation_forward_compatible.value_or(
      catalog.cluster.emulation_forward_compatible.value_or(false));
  const bool rcfc = query.runtime_config_emulation_forward_compatible.value_or(
      catalog.cluster.runtime_config_emulation_forward_compatible.value_or(
          false));

  // The cluster section's runtime config, then the query's (query key wins),
  // then kube-apiserver's legacy core-group rewrite (Options.Complete, which
  // kube-apiserver runs before validating;
  // docs/kubernetes-rules.md#runtime-config-merging).
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

  // 6-7. Removed and not-yet-introduced kinds, group by group
  // (InstallAPIs: RemoveUnavailableKinds).
  const ResourceExpirationEvaluator evaluator(registry, versions, efc, rcfc);
  const std::vector<absl::string_view> groups = registry.Groups();
  for (absl::string_view group : groups) {
    COMPATD_RETURN_IF_ERROR(
        evaluator.RemoveUnavailableKinds(group, config, &storage));
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
