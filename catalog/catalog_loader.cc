#include "catalog/catalog_loader.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "catalog/yaml_to_proto.h"
#include "compatd/v1/catalog.pb.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/resource_config.h"
#include "engine/sha256.h"
#include "engine/skew.h"
#include "engine/upgrade_plan.h"

namespace compatd::catalog {

// The model this loader builds and the rules it validates with.
using engine::APIGroupVersion;
using engine::APIHistoryEntry;
using engine::APIResource;
using engine::Catalog;
using engine::ClusterSettings;
using engine::CRDHistory;
using engine::CRDRelease;
using engine::CRDVersion;
using engine::DecideFeatures;
using engine::EffectiveVersions;
using engine::Feature;
using engine::FeatureDecision;
using engine::FeatureSpec;
using engine::ListServedAPIs;
using engine::PatchChange;
using engine::PatchVariant;
using engine::PreRelease;
using engine::ResolveEffectiveVersions;
using engine::ServedGroupVersion;
using engine::Sha256;
using engine::SkewBase;
using engine::SkewBound;
using engine::SkewRule;
using engine::StorageOverride;
using engine::ValidateFeatureSpecs;
using engine::Version;
using engine::VersionQuery;
namespace {

namespace pb = ::compatd::catalog::v1;

constexpr absl::string_view kAllAlpha = "AllAlpha";
constexpr absl::string_view kAllBeta = "AllBeta";

std::string Sha256Digest(absl::string_view bytes) {
  const std::array<uint8_t, 32> digest = Sha256(bytes);
  return absl::StrCat(
      "sha256:",
      absl::BytesToHexString(absl::string_view(
          reinterpret_cast<const char*>(digest.data()), digest.size())));
}

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Number of dot-separated all-digit components of `text`, or 0 if it is not
// of that shape ("1.30" -> 2, "1.30.2" -> 3, "1.3x" -> 0).
size_t NumericComponents(absl::string_view text) {
  size_t count = 0;
  while (true) {
    const size_t dot = text.find('.');
    if (!AllDigits(text.substr(0, dot))) return 0;
    ++count;
    if (dot == absl::string_view::npos) return count;
    text.remove_prefix(dot + 1);
  }
}

// A version the catalog itself owns (a feature spec's version, an API
// lifecycle version): "major.minor", or "major.minor.patch" when
// `allow_patch` (so that ValidateFeatureSpecs can reject a patch the way
// Kubernetes words it). Stricter than Version::Parse, which ignores whatever
// follows the numbers ("1.3x" would be 1.3): in a catalog that is a typo.
absl::StatusOr<Version> ParseCatalogVersion(absl::string_view text,
                                            bool allow_patch) {
  const size_t components = NumericComponents(text);
  if (components != 2 && !(allow_patch && components == 3)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a version: expected \"major.minor\", e.g. \"1.30\"",
        text));
  }
  absl::StatusOr<Version> version = Version::Parse(text);
  if (!version.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a version: %s", text, version.status().message()));
  }
  return version;
}

// preRelease spellings of Kubernetes'
// test/compatibility_lifecycle/reference/versioned_feature_list.yaml.
std::optional<PreRelease> ParsePreRelease(absl::string_view text) {
  if (text == "Alpha") return PreRelease::kAlpha;
  if (text == "Beta") return PreRelease::kBeta;
  if (text == "GA") return PreRelease::kGA;
  if (text == "Deprecated") return PreRelease::kDeprecated;
  return std::nullopt;
}

std::optional<SkewBase> ParseSkewBase(absl::string_view text) {
  if (text == "minCompatibility") return SkewBase::kMinCompatibility;
  if (text == "emulation") return SkewBase::kEmulation;
  if (text == "binary") return SkewBase::kBinary;
  return std::nullopt;
}

// Validates the proto catalog and builds the engine's model, collecting every
// error with its line.
class CatalogBuilder {
 public:
  CatalogBuilder(const SourceLines& lines, std::vector<CatalogError>& errors)
      : lines_(lines), errors_(errors) {
    for (const CatalogError& error : errors_) error_lines_.insert(error.line);
  }

  void Build(const pb::Catalog& in, Catalog& out) {
    root_line_ = std::max(1, lines_.MessageLine(in));
    const bool binary_ok = BuildBinaryVersion(in, out);
    const bool cluster_ok = BuildCluster(in, out);
    BuildFeatures(in, binary_ok, out);
    CheckClusterFeatureGates(in, out);
    BuildApis(in, out);
    BuildStorageOverrides(in, out);
    BuildSkewPolicy(in, out);
    BuildCrds(in, out);
    BuildApiHistory(in, out);
    BuildPatchChanges(in, binary_ok, out);
    BuildExactness(in, out);
    // The cluster section must be what kube-apiserver would accept as flags
    // at start-up; only meaningful once its parts are individually valid.
    if (binary_ok && cluster_ok) CheckClusterAsFlags(in, out);
    if (binary_ok && cluster_ok) CheckUpgradeTarget(in, out);
  }

 private:
  // Resolves the effective versions, applies the cluster's feature gates and
  // runtime config exactly as a query without overrides would, and reports
  // what kube-apiserver would refuse at start-up with those flags.
  void CheckClusterAsFlags(const pb::Catalog& in, const Catalog& out) {
    const int cluster_line = in.has_cluster() ? lines_.MessageLine(in.cluster())
                                              : BinaryVersionLine(in);
    absl::StatusOr<EffectiveVersions> versions =
        ResolveEffectiveVersions(out, VersionQuery{});
    if (!versions.ok()) {
      Error(cluster_line,
            absl::StrCat("cluster: ", versions.status().message()));
      return;
    }
    // The gates and the API configuration need a catalog without errors.
    if (!errors_.empty() || !in.has_cluster()) return;
    const pb::ClusterSettings& cluster = in.cluster();
    if (!out.cluster.feature_gates.empty()) {
      absl::StatusOr<std::vector<FeatureDecision>> gates =
          DecideFeatures(out, *versions, VersionQuery{}, "");
      if (!gates.ok()) {
        Error(
            LineOr(lines_.FieldLine(
                       cluster, pb::ClusterSettings::kFeatureGatesFieldNumber),
                   cluster_line),
            absl::StrCat("cluster.featureGates: ", gates.status().message()));
      }
    }
    if (!out.cluster.runtime_config.empty() ||
        out.cluster.emulation_forward_compatible.has_value() ||
        out.cluster.runtime_config_emulation_forward_compatible.has_value()) {
      absl::StatusOr<std::vector<ServedGroupVersion>> apis =
          ListServedAPIs(out, *versions, VersionQuery{});
      if (!apis.ok()) {
        const int line = lines_.FieldLine(
            cluster, pb::ClusterSettings::kRuntimeConfigFieldNumber);
        Error(LineOr(line, cluster_line),
              absl::StrCat("cluster: ", apis.status().message()));
      }
    }
  }

  // cluster.upgradeTarget: the plan from the cluster section to it must be
  // answerable (engine/upgrade_plan.h): the catalog's binary, versions
  // kube-apiserver accepts, not older than the cluster section. Flags the
  // target refuses are the plan's blockers, not catalog errors.
  void CheckUpgradeTarget(const pb::Catalog& in, const Catalog& out) {
    if (!errors_.empty() || !out.cluster.upgrade_target.has_value()) return;
    // A target on a later binary is planned across the lines (hop by hop),
    // which only the set of catalogs served together can do: the pipeline
    // checks that plan when the lines are published together.
    const int target_line = out.cluster.upgrade_target->line > 0
                                ? out.cluster.upgrade_target->line
                                : lines_.MessageLine(in.cluster());
    if (!out.cluster.upgrade_target->binary_version.empty()) {
      absl::StatusOr<Version> binary =
          Version::Parse(out.cluster.upgrade_target->binary_version);
      if (binary.ok() && binary->CompareMajorMinor(out.binary_version) < 0) {
        Error(target_line,
              absl::StrCat("cluster.upgradeTarget.binaryVersion: \"",
                           out.cluster.upgrade_target->binary_version,
                           "\" is older than this catalog's binary ",
                           out.binary_version.MajorMinorString(),
                           "; a target is the same binary or a later one (a "
                           "rollback is an emulation version)"));
        return;
      }
      if (binary.ok() && binary->CompareMajorMinor(out.binary_version) > 0) {
        return;
      }
    }
    absl::StatusOr<engine::UpgradePlan> plan =
        engine::PlanUpgrade(out, engine::UpgradeTargetQuery(out));
    if (plan.ok()) return;
    absl::string_view message = plan.status().message();
    absl::ConsumePrefix(&message, "to.");
    Error(target_line, absl::StrCat("cluster.upgradeTarget: ", message));
  }

  static int LineOr(int line, int fallback) {
    return line > 0 ? line : fallback;
  }

  void Error(int line, std::string message) {
    error_lines_.insert(line);
    errors_.push_back(CatalogError{line, std::move(message)});
  }

  // For "missing or empty" checks: the walker has already reported a value of
  // the wrong type on that line.
  bool AlreadyReported(int line) const { return error_lines_.contains(line); }

  int BinaryVersionLine(const pb::Catalog& in) const {
    const int line =
        lines_.FieldLine(in, pb::Catalog::kBinaryVersionFieldNumber);
    return line > 0 ? line : root_line_;
  }

  bool BuildBinaryVersion(const pb::Catalog& in, Catalog& out) {
    const int line =
        lines_.FieldLine(in, pb::Catalog::kBinaryVersionFieldNumber);
    if (in.binary_version().empty()) {
      if (line == 0) {
        Error(root_line_,
              "binaryVersion is required: the Kubernetes release this catalog "
              "describes, e.g. \"1.36\"");
      } else if (!AlreadyReported(line)) {
        Error(line,
              "binaryVersion is empty; expected a Kubernetes release, "
              "e.g. \"1.36\" or \"1.36.2\"");
      }
      return false;
    }
    absl::StatusOr<Version> version = Version::Parse(in.binary_version());
    if (!version.ok()) {
      Error(line, absl::StrFormat("binaryVersion: %s; expected e.g. \"1.36\", "
                                  "\"v1.36.2\" or \"1.37.0-alpha.1\"",
                                  version.status().message()));
      return false;
    }
    out.binary_version = *std::move(version);
    return true;
  }

  // Parses a cluster-section version string; false (reported) if malformed.
  bool CheckClusterVersion(const pb::ClusterSettings& cluster, int field_number,
                           absl::string_view key, const std::string& text) {
    if (text.empty()) return true;
    absl::StatusOr<Version> version = Version::Parse(text);
    if (!version.ok()) {
      Error(lines_.FieldLine(cluster, field_number),
            absl::StrFormat("cluster.%s: %s; expected e.g. \"1.35\"", key,
                            version.status().message()));
      return false;
    }
    return true;
  }

  bool BuildCluster(const pb::Catalog& in, Catalog& out) {
    if (!in.has_cluster()) return true;
    const pb::ClusterSettings& cluster = in.cluster();
    bool ok = true;
    ok &= CheckClusterVersion(cluster,
                              pb::ClusterSettings::kEmulationVersionFieldNumber,
                              "emulationVersion", cluster.emulation_version());
    ok &= CheckClusterVersion(
        cluster, pb::ClusterSettings::kMinCompatibilityVersionFieldNumber,
        "minCompatibilityVersion", cluster.min_compatibility_version());
    out.cluster.emulation_version = cluster.emulation_version();
    out.cluster.min_compatibility_version = cluster.min_compatibility_version();
    for (const auto& [name, value] : cluster.feature_gates()) {
      out.cluster.feature_gates.emplace_back(name, value);
    }
    std::sort(out.cluster.feature_gates.begin(),
              out.cluster.feature_gates.end());
    for (const auto& [key, value] : cluster.runtime_config()) {
      if (key.empty()) {
        Error(lines_.MapKeyLine(
                  cluster, pb::ClusterSettings::kRuntimeConfigFieldNumber, key),
              "cluster.runtimeConfig: empty key; expected \"group/version\", "
              "\"group/version/resource\" or \"api/all|ga|beta|alpha\"");
        ok = false;
        continue;
      }
      out.cluster.runtime_config.emplace_back(key, value);
    }
    std::sort(out.cluster.runtime_config.begin(),
              out.cluster.runtime_config.end());
    if (cluster.has_emulation_forward_compatible()) {
      out.cluster.emulation_forward_compatible =
          cluster.emulation_forward_compatible();
    }
    if (cluster.has_runtime_config_emulation_forward_compatible()) {
      out.cluster.runtime_config_emulation_forward_compatible =
          cluster.runtime_config_emulation_forward_compatible();
    }
    if (cluster.has_upgrade_target()) ok &= BuildUpgradeTarget(cluster, out);
    return ok;
  }

  bool BuildUpgradeTarget(const pb::ClusterSettings& cluster, Catalog& out) {
    const pb::UpgradeTarget& in = cluster.upgrade_target();
    engine::UpgradeTarget target;
    target.line = lines_.FieldLine(
        cluster, pb::ClusterSettings::kUpgradeTargetFieldNumber);
    bool ok = true;
    const std::pair<int, const std::string*> versions[] = {
        {pb::UpgradeTarget::kBinaryVersionFieldNumber, &in.binary_version()},
        {pb::UpgradeTarget::kEmulationVersionFieldNumber,
         &in.emulation_version()},
        {pb::UpgradeTarget::kMinCompatibilityVersionFieldNumber,
         &in.min_compatibility_version()}};
    for (const auto& [field, text] : versions) {
      if (text->empty()) continue;
      absl::StatusOr<Version> version = Version::Parse(*text);
      if (!version.ok()) {
        Error(LineOr(lines_.FieldLine(in, field), target.line),
              absl::StrFormat(
                  "cluster.upgradeTarget.%s: %s; expected e.g. \"1.36\"",
                  in.GetDescriptor()->FindFieldByNumber(field)->json_name(),
                  version.status().message()));
        ok = false;
      }
    }
    target.binary_version = in.binary_version();
    target.emulation_version = in.emulation_version();
    target.min_compatibility_version = in.min_compatibility_version();
    std::vector<std::pair<std::string, bool>> gates(in.feature_gates().begin(),
                                                    in.feature_gates().end());
    std::sort(gates.begin(), gates.end());
    std::vector<std::string> parts;
    for (const auto& [name, value] : gates) {
      parts.push_back(absl::StrCat(name, "=", value ? "true" : "false"));
    }
    target.feature_gates = absl::StrJoin(parts, ",");
    std::vector<std::pair<std::string, std::string>> rc(
        in.runtime_config().begin(), in.runtime_config().end());
    std::sort(rc.begin(), rc.end());
    parts.clear();
    for (const auto& [key, value] : rc) {
      if (key.empty() || absl::StrContains(key, ',') ||
          absl::StrContains(value, ',')) {
        Error(LineOr(lines_.MapKeyLine(
                         in, pb::UpgradeTarget::kRuntimeConfigFieldNumber, key),
                     target.line),
              absl::StrFormat("cluster.upgradeTarget.runtimeConfig: key "
                              "\"%s\" value \"%s\": expected a non-empty "
                              "\"group/version\" key and a value without ','",
                              key, value));
        ok = false;
        continue;
      }
      parts.push_back(absl::StrCat(key, "=", value));
    }
    target.runtime_config = absl::StrJoin(parts, ",");
    if (in.has_emulation_forward_compatible()) {
      target.emulation_forward_compatible = in.emulation_forward_compatible();
    }
    if (in.has_runtime_config_emulation_forward_compatible()) {
      target.runtime_config_emulation_forward_compatible =
          in.runtime_config_emulation_forward_compatible();
    }
    out.cluster.upgrade_target = std::move(target);
    return ok;
  }

  // One versionedSpecs entry; nullopt (reported) if malformed.
  std::optional<FeatureSpec> BuildSpec(const pb::FeatureSpec& in,
                                       const std::string& where) {
    FeatureSpec spec;
    spec.line = lines_.MessageLine(in);
    bool ok = true;
    const int version_line =
        lines_.FieldLine(in, pb::FeatureSpec::kVersionFieldNumber);
    if (in.version().empty()) {
      if (!AlreadyReported(version_line)) {
        Error(version_line > 0 ? version_line : spec.line,
              absl::StrFormat("%s: version is required (\"major.minor\")",
                              where));
      }
      ok = false;
    } else {
      absl::StatusOr<Version> version =
          ParseCatalogVersion(in.version(), /*allow_patch=*/true);
      if (version.ok()) {
        spec.version = *std::move(version);
      } else {
        Error(version_line, absl::StrFormat("%s: version %s", where,
                                            version.status().message()));
        ok = false;
      }
    }
    const int stage_line =
        lines_.FieldLine(in, pb::FeatureSpec::kPreReleaseFieldNumber);
    std::optional<PreRelease> stage = ParsePreRelease(in.pre_release());
    if (stage.has_value()) {
      spec.pre_release = *stage;
    } else if (in.pre_release().empty() && stage_line == 0) {
      Error(spec.line,
            absl::StrFormat("%s: preRelease is required; accepted: Alpha, "
                            "Beta, GA, Deprecated",
                            where));
      ok = false;
    } else {
      if (!AlreadyReported(stage_line)) {
        Error(stage_line,
              absl::StrFormat("%s: preRelease \"%s\" is not a stage; "
                              "accepted: Alpha, Beta, GA, Deprecated",
                              where, in.pre_release()));
      }
      ok = false;
    }
    if (!in.min_compatibility_version().empty()) {
      absl::StatusOr<Version> min_compat = ParseCatalogVersion(
          in.min_compatibility_version(), /*allow_patch=*/true);
      if (min_compat.ok()) {
        spec.min_compatibility_version = *std::move(min_compat);
      } else {
        Error(lines_.FieldLine(
                  in, pb::FeatureSpec::kMinCompatibilityVersionFieldNumber),
              absl::StrFormat("%s: minCompatibilityVersion %s", where,
                              min_compat.status().message()));
        ok = false;
      }
    }
    spec.default_enabled = in.default_();
    spec.lock_to_default = in.lock_to_default();
    if (!ok) return std::nullopt;
    return spec;
  }

  // A spec's minCompatibilityVersion on a line whose kube-apiserver had no
  // such rule: component-base's FeatureSpec gained MinCompatibilityVersion,
  // and featureSpecAtEmulationAndMinCompatVersion began to honour it, in
  // v0.35.0 (commit 0b47e99, "Add --min-compatibility flag"); v0.34.0's
  // FeatureSpec has no such field. Reported at the field, false if any.
  bool RejectSpecMinCompatibility(const pb::Feature& feature,
                                  const std::string& where,
                                  const Version& binary_version) {
    if (engine::FeatureGatesUseMinCompatibility(binary_version)) return true;
    bool ok = true;
    for (int j = 0; j < feature.versioned_specs_size(); ++j) {
      const pb::FeatureSpec& spec = feature.versioned_specs(j);
      if (spec.min_compatibility_version().empty()) continue;
      ok = false;
      Error(LineOr(
                lines_.FieldLine(
                    spec, pb::FeatureSpec::kMinCompatibilityVersionFieldNumber),
                lines_.MessageLine(spec)),
            absl::StrFormat(
                "%s versionedSpecs[%d]: minCompatibilityVersion is not a "
                "feature spec field of kube-apiserver %s (binaryVersion): "
                "feature specs have it, and spec selection honours it, from "
                "Kubernetes 1.35 (component-base v0.35.0); remove it, or give "
                "binaryVersion 1.35 or later",
                where, j, binary_version.MajorMinorString()));
    }
    return ok;
  }

  // Runs Kubernetes' AddVersioned checks on the whole list; on failure, finds
  // the first entry at which a prefix of the list fails (every rule compares
  // an entry with the ones before it) so the error points at its line.
  void ValidateSpecs(const std::string& name, std::vector<FeatureSpec>& specs,
                     const Version& binary_version, int feature_line) {
    absl::Status status = ValidateFeatureSpecs(name, specs, binary_version);
    if (status.ok()) return;
    int line = feature_line;
    for (size_t n = 1; n <= specs.size(); ++n) {
      std::vector<FeatureSpec> prefix(specs.begin(), specs.begin() + n);
      if (!ValidateFeatureSpecs(name, prefix, binary_version).ok()) {
        line = specs[n - 1].line > 0 ? specs[n - 1].line : feature_line;
        break;
      }
    }
    Error(line, std::string(status.message()));
  }

  void BuildFeatures(const pb::Catalog& in, bool binary_ok, Catalog& out) {
    absl::flat_hash_map<std::string, int> first_line;  // name -> line
    first_line.reserve(in.features_size());
    out.features.reserve(in.features_size());
    for (int i = 0; i < in.features_size(); ++i) {
      const pb::Feature& feature = in.features(i);
      const int line = lines_.MessageLine(feature);
      if (feature.name().empty()) {
        const int name_line =
            lines_.FieldLine(feature, pb::Feature::kNameFieldNumber);
        if (!AlreadyReported(name_line)) {
          Error(name_line > 0 ? name_line : line,
                absl::StrFormat("features[%d]: name is required", i));
        }
        continue;
      }
      const std::string where =
          absl::StrFormat("feature \"%s\"", feature.name());
      auto [it, inserted] = first_line.try_emplace(feature.name(), line);
      if (!inserted) {
        Error(line, absl::StrFormat("duplicate feature \"%s\" (first defined "
                                    "at line %d)",
                                    feature.name(), it->second));
        continue;
      }
      Feature built;
      built.name = feature.name();
      built.component = feature.component();
      built.line = line;
      if (!feature.removed().empty() &&
          !BuildFeatureRemoved(feature, where, binary_ok, out, built)) {
        continue;
      }
      if (feature.versioned_specs_size() == 0) {
        if (!AlreadyReported(lines_.FieldLine(
                feature, pb::Feature::kVersionedSpecsFieldNumber))) {
          Error(line,
                absl::StrFormat("%s has no versionedSpecs; a gate needs at "
                                "least one {version, default, lockToDefault, "
                                "preRelease} entry",
                                where));
        }
        continue;
      }
      bool specs_ok = true;
      built.specs.reserve(feature.versioned_specs_size());
      for (int j = 0; j < feature.versioned_specs_size(); ++j) {
        std::optional<FeatureSpec> spec =
            BuildSpec(feature.versioned_specs(j),
                      absl::StrFormat("%s versionedSpecs[%d]", where, j));
        if (spec.has_value()) {
          built.specs.push_back(*std::move(spec));
        } else {
          specs_ok = false;
        }
      }
      if (!specs_ok) continue;
      if (binary_ok &&
          !RejectSpecMinCompatibility(feature, where, out.binary_version)) {
        continue;
      }
      if (binary_ok) {
        ValidateSpecs(built.name, built.specs, out.binary_version, line);
      }
      out.features.push_back(std::move(built));
    }
    std::sort(
        out.features.begin(), out.features.end(),
        [](const Feature& a, const Feature& b) { return a.name < b.name; });
    out.feature_index.reserve(out.features.size());
    for (size_t i = 0; i < out.features.size(); ++i) {
      out.feature_index.emplace(out.features[i].name, i);
    }
    features_by_name_ = std::move(first_line);
  }

  // A gate's planned removal: major.minor, after the binary version (a binary
  // at or past the removal does not have the gate).
  bool BuildFeatureRemoved(const pb::Feature& feature, const std::string& where,
                           bool binary_ok, const Catalog& out, Feature& built) {
    const int line =
        LineOr(lines_.FieldLine(feature, pb::Feature::kRemovedFieldNumber),
               built.line);
    absl::StatusOr<Version> removed =
        ParseCatalogVersion(feature.removed(), /*allow_patch=*/false);
    if (!removed.ok()) {
      Error(line, absl::StrFormat("%s: removed %s", where,
                                  removed.status().message()));
      return false;
    }
    if (binary_ok && removed->CompareMajorMinor(out.binary_version) <= 0) {
      Error(line, absl::StrFormat(
                      "%s: removed %s is not after binaryVersion %s: a "
                      "%s binary no longer registers the gate, so leave "
                      "it out of features (removed records a planned "
                      "removal)",
                      where, feature.removed(), out.binary_version.ToString(),
                      out.binary_version.MajorMinorString()));
      return false;
    }
    built.removed = *std::move(removed);
    return true;
  }

  void CheckClusterFeatureGates(const pb::Catalog& in, const Catalog& out) {
    if (!in.has_cluster()) return;
    const pb::ClusterSettings& cluster = in.cluster();
    for (const auto& [name, value] : out.cluster.feature_gates) {
      if (name == kAllAlpha || name == kAllBeta) continue;
      // Known means declared in `features` (even if that entry is invalid
      // and reported on its own line).
      if (features_by_name_.contains(name)) continue;
      Error(lines_.MapKeyLine(
                cluster, pb::ClusterSettings::kFeatureGatesFieldNumber, name),
            absl::StrFormat("cluster.featureGates: unknown feature gate "
                            "\"%s\"; accepted: a name from features, %s or %s",
                            name, kAllAlpha, kAllBeta));
    }
  }

  // An API lifecycle version ("introduced: 1.30"); nullopt if absent or
  // malformed (reported).
  std::optional<Version> LifecycleVersion(const pb::APIResource& in,
                                          int field_number,
                                          absl::string_view key,
                                          const std::string& text,
                                          const std::string& where) {
    if (text.empty()) return std::nullopt;
    absl::StatusOr<Version> version =
        ParseCatalogVersion(text, /*allow_patch=*/false);
    if (!version.ok()) {
      Error(
          lines_.FieldLine(in, field_number),
          absl::StrFormat("%s: %s %s", where, key, version.status().message()));
      return std::nullopt;
    }
    return *std::move(version);
  }

  void BuildApis(const pb::Catalog& in, Catalog& out) {
    absl::flat_hash_map<std::string, int> first_line;  // "group/version"
    out.apis.reserve(in.apis_size());
    for (int i = 0; i < in.apis_size(); ++i) {
      const pb::APIGroupVersion& gv = in.apis(i);
      const int line = lines_.MessageLine(gv);
      const int version_line =
          lines_.FieldLine(gv, pb::APIGroupVersion::kVersionFieldNumber);
      if (gv.version().empty()) {
        if (!AlreadyReported(version_line)) {
          Error(version_line > 0 ? version_line : line,
                absl::StrFormat("apis[%d] (group \"%s\"): version is required "
                                "(\"v1\", \"v1beta2\")",
                                i, gv.group()));
        }
        continue;
      }
      if (absl::StrContains(gv.version(), "/") ||
          absl::StrContains(gv.group(), "/")) {
        Error(line, absl::StrFormat("apis[%d]: group \"%s\" and version \"%s\" "
                                    "must not contain \"/\" (write group and "
                                    "version separately)",
                                    i, gv.group(), gv.version()));
        continue;
      }
      const std::string name =
          engine::GroupVersionString(gv.group(), gv.version());
      auto [it, inserted] = first_line.try_emplace(name, line);
      if (!inserted) {
        Error(line, absl::StrFormat("duplicate group-version \"%s\" (first "
                                    "defined at line %d)",
                                    name, it->second));
        continue;
      }
      APIGroupVersion built;
      built.group = gv.group();
      built.version = gv.version();
      built.line = line;
      if (gv.has_enabled_by_default()) {
        built.enabled_by_default = gv.enabled_by_default();
      }
      absl::flat_hash_map<std::string, int> resource_lines;
      built.resources.reserve(gv.resources_size());
      for (int j = 0; j < gv.resources_size(); ++j) {
        std::optional<APIResource> resource =
            BuildResource(gv.resources(j), name, resource_lines);
        if (resource.has_value())
          built.resources.push_back(*std::move(resource));
      }
      out.apis.push_back(std::move(built));
    }
    // Replacements must name a group-version of this catalog.
    for (const APIGroupVersion& gv : out.apis) {
      for (const APIResource& resource : gv.resources) {
        if (resource.replacement.empty() ||
            first_line.contains(resource.replacement)) {
          continue;
        }
        Error(resource.line,
              absl::StrFormat("%s %s: replacement \"%s\" is not a "
                              "group-version of apis; expected \"group/"
                              "version\" (\"v1\" for the core group)",
                              engine::GroupVersionString(gv.group, gv.version),
                              resource.resource, resource.replacement));
      }
    }
  }

  // A resource's introduced, deprecated and removed releases, in order.
  bool ResourceLifecycle(const pb::APIResource& in, const std::string& where,
                         APIResource& out) {
    bool ok = true;
    out.introduced =
        LifecycleVersion(in, pb::APIResource::kIntroducedFieldNumber,
                         "introduced", in.introduced(), where);
    out.deprecated =
        LifecycleVersion(in, pb::APIResource::kDeprecatedFieldNumber,
                         "deprecated", in.deprecated(), where);
    out.removed = LifecycleVersion(in, pb::APIResource::kRemovedFieldNumber,
                                   "removed", in.removed(), where);
    if (out.introduced && out.deprecated && *out.deprecated < *out.introduced) {
      Error(lines_.FieldLine(in, pb::APIResource::kDeprecatedFieldNumber),
            absl::StrFormat("%s: deprecated %s is before introduced %s", where,
                            in.deprecated(), in.introduced()));
      ok = false;
    }
    if (out.removed) {
      const std::optional<Version>& earlier =
          out.deprecated ? out.deprecated : out.introduced;
      if (earlier && *out.removed < *earlier) {
        Error(lines_.FieldLine(in, pb::APIResource::kRemovedFieldNumber),
              absl::StrFormat("%s: removed %s is before %s %s", where,
                              in.removed(),
                              out.deprecated ? "deprecated" : "introduced",
                              earlier->MajorMinorString()));
        ok = false;
      }
    }
    return ok;
  }

  std::optional<APIResource> BuildResource(
      const pb::APIResource& in, const std::string& group_version,
      absl::flat_hash_map<std::string, int>& resource_lines) {
    APIResource out;
    out.line = lines_.MessageLine(in);
    if (in.resource().empty()) {
      const int resource_line =
          lines_.FieldLine(in, pb::APIResource::kResourceFieldNumber);
      if (!AlreadyReported(resource_line)) {
        Error(resource_line > 0 ? resource_line : out.line,
              absl::StrFormat("%s: a resource needs `resource` (the plural, "
                              "lowercase name, e.g. \"deployments\")",
                              group_version));
      }
      return std::nullopt;
    }
    const std::string where =
        absl::StrFormat("%s %s", group_version, in.resource());
    auto [it, inserted] = resource_lines.try_emplace(in.resource(), out.line);
    if (!inserted) {
      Error(out.line,
            absl::StrFormat("duplicate resource \"%s\" in %s (first "
                            "defined at line %d)",
                            in.resource(), group_version, it->second));
      return std::nullopt;
    }
    bool ok = true;
    // kube-apiserver matches resource names lowercase (--runtime-config
    // group/version/resource must be lowercase).
    if (absl::AsciiStrToLower(in.resource()) != in.resource() ||
        absl::StrContains(in.resource(), "/")) {
      Error(lines_.FieldLine(in, pb::APIResource::kResourceFieldNumber),
            absl::StrFormat("%s: resource \"%s\" must be the lowercase plural "
                            "name without \"/\" (e.g. \"deployments\")",
                            group_version, in.resource()));
      ok = false;
    }
    if (in.kind().empty()) {
      const int kind_line =
          lines_.FieldLine(in, pb::APIResource::kKindFieldNumber);
      if (!AlreadyReported(kind_line)) {
        Error(kind_line > 0 ? kind_line : out.line,
              absl::StrFormat("%s: kind is required (e.g. \"Deployment\")",
                              where));
      }
      ok = false;
    }
    ok = ResourceLifecycle(in, where, out) && ok;
    out.resource = in.resource();
    out.kind = in.kind();
    out.replacement = in.replacement();
    out.replacement_kind = in.replacement_kind();
    if (!out.replacement_kind.empty() && out.replacement.empty()) {
      Error(LineOr(lines_.FieldLine(
                       in, pb::APIResource::kReplacementKindFieldNumber),
                   out.line),
            absl::StrFormat("%s: replacementKind \"%s\" needs replacement "
                            "(the group-version it belongs to)",
                            where, out.replacement_kind));
      ok = false;
    }
    out.persisted = in.has_persisted() ? in.persisted() : true;
    if (!ok) return std::nullopt;
    return out;
  }

  void BuildStorageOverrides(const pb::Catalog& in, Catalog& out) {
    // group/resource -> the versions of that group that have it, in order.
    absl::flat_hash_map<std::string, std::vector<std::string>> versions_of;
    for (const APIGroupVersion& gv : out.apis) {
      for (const APIResource& resource : gv.resources) {
        versions_of[engine::CatalogGroupResource(gv.group, resource.resource)]
            .push_back(gv.version);
      }
    }
    absl::flat_hash_map<std::string, int> first_line;
    for (int i = 0; i < in.storage_overrides_size(); ++i) {
      const pb::StorageOverride& entry = in.storage_overrides(i);
      const int line = lines_.MessageLine(entry);
      if (entry.resource().empty() || entry.version().empty()) {
        Error(line, absl::StrFormat("storageOverrides[%d]: resource and "
                                    "version are required (group \"\" is the "
                                    "core group)",
                                    i));
        continue;
      }
      const std::string name =
          engine::CatalogGroupResource(entry.group(), entry.resource());
      auto [it, inserted] = first_line.try_emplace(name, line);
      if (!inserted) {
        Error(line, absl::StrFormat("duplicate storage override for %s (first "
                                    "at line %d)",
                                    name, it->second));
        continue;
      }
      auto versions = versions_of.find(name);
      if (versions == versions_of.end()) {
        Error(line,
              absl::StrFormat("storage override for %s: no group-version in "
                              "apis has resource \"%s\" in group \"%s\"; an "
                              "override must name a resource the catalog "
                              "lists",
                              name, entry.resource(), entry.group()));
        continue;
      }
      if (std::find(versions->second.begin(), versions->second.end(),
                    entry.version()) == versions->second.end()) {
        Error(lines_.FieldLine(entry,
                               pb::StorageOverride::kVersionFieldNumber) > 0
                  ? lines_.FieldLine(entry,
                                     pb::StorageOverride::kVersionFieldNumber)
                  : line,
              absl::StrFormat("storage override for %s: version \"%s\" does "
                              "not have that resource; accepted: %s",
                              name, entry.version(),
                              absl::StrJoin(versions->second, ", ")));
        continue;
      }
      out.storage_overrides.push_back(StorageOverride{
          entry.group(), entry.resource(), entry.version(), line});
    }
  }

  std::optional<SkewBound> BuildBound(bool has, const pb::SkewBound& bound,
                                      absl::string_view key, int rule_index,
                                      int rule_line) {
    if (!has) {
      Error(rule_line,
            absl::StrFormat("skewPolicy[%d]: %s is required ({of: "
                            "minCompatibility|emulation|binary, offset: N})",
                            rule_index, key));
      return std::nullopt;
    }
    std::optional<SkewBase> base = ParseSkewBase(bound.of());
    if (!base.has_value()) {
      const int of_line =
          lines_.FieldLine(bound, pb::SkewBound::kOfFieldNumber);
      if (!AlreadyReported(of_line)) {
        Error(of_line > 0 ? of_line : lines_.MessageLine(bound),
              absl::StrFormat("skewPolicy[%d].%s.of \"%s\" is not a base "
                              "version; accepted: minCompatibility, "
                              "emulation, binary",
                              rule_index, key, bound.of()));
      }
      return std::nullopt;
    }
    return SkewBound{*base, bound.offset()};
  }

  void BuildSkewPolicy(const pb::Catalog& in, Catalog& out) {
    // No skewPolicy: the KEP-4330 table applies, through
    // engine::SkewRulesInForce (the one place that applies it).
    if (in.skew_policy_size() == 0) return;
    absl::flat_hash_map<std::string, int> component_lines;
    for (int i = 0; i < in.skew_policy_size(); ++i) {
      const pb::SkewRule& rule = in.skew_policy(i);
      const int line = lines_.MessageLine(rule);
      SkewRule built;
      built.line = line;
      bool ok = true;
      if (rule.components_size() == 0) {
        if (!AlreadyReported(
                lines_.FieldLine(rule, pb::SkewRule::kComponentsFieldNumber))) {
          Error(line, absl::StrFormat("skewPolicy[%d]: components is required "
                                      "(e.g. [kubelet, kube-proxy])",
                                      i));
        }
        ok = false;
      }
      for (int j = 0; j < rule.components_size(); ++j) {
        const std::string& component = rule.components(j);
        int component_line =
            lines_.ElementLine(rule, pb::SkewRule::kComponentsFieldNumber, j);
        if (component_line == 0) component_line = line;
        if (component.empty()) {
          Error(
              component_line,
              absl::StrFormat("skewPolicy[%d].components[%d] is empty", i, j));
          ok = false;
          continue;
        }
        auto [it, inserted] =
            component_lines.try_emplace(component, component_line);
        if (!inserted) {
          Error(component_line,
                absl::StrFormat("component \"%s\" is already covered by the "
                                "skew rule at line %d; each component may "
                                "appear in one rule only",
                                component, it->second));
          ok = false;
          continue;
        }
        built.components.push_back(component);
      }
      std::optional<SkewBound> min =
          BuildBound(rule.has_min(), rule.min(), "min", i, line);
      std::optional<SkewBound> max =
          BuildBound(rule.has_max(), rule.max(), "max", i, line);
      if (!ok || !min || !max) continue;
      built.min = *min;
      built.max = *max;
      out.skew_policy.push_back(std::move(built));
    }
  }

  void BuildCrds(const pb::Catalog& in, Catalog& out) {
    absl::flat_hash_map<std::string, int> first_line;
    for (int i = 0; i < in.crds_size(); ++i) {
      const pb::CRDHistory& crd = in.crds(i);
      const int line = lines_.MessageLine(crd);
      if (crd.name().empty()) {
        Error(line, absl::StrFormat("crds[%d]: name is required "
                                    "(\"<plural>.<group>\")",
                                    i));
        continue;
      }
      auto [it, inserted] = first_line.try_emplace(crd.name(), line);
      if (!inserted) {
        Error(line, absl::StrFormat("duplicate CRD \"%s\" (first defined at "
                                    "line %d)",
                                    crd.name(), it->second));
        continue;
      }
      const std::string where = absl::StrFormat("crd \"%s\"", crd.name());
      CRDHistory built;
      built.name = crd.name();
      built.project = crd.project();
      built.line = line;
      bool ok = true;
      if (crd.has_upgrade_span()) {
        if (crd.upgrade_span() < 1) {
          Error(lines_.FieldLine(crd, pb::CRDHistory::kUpgradeSpanFieldNumber),
                absl::StrFormat("%s: upgradeSpan %d must be at least 1", where,
                                crd.upgrade_span()));
          ok = false;
        }
        built.upgrade_span = crd.upgrade_span();
      }
      if (crd.has_deprecation_releases()) {
        if (crd.deprecation_releases() < 0) {
          Error(lines_.FieldLine(
                    crd, pb::CRDHistory::kDeprecationReleasesFieldNumber),
                absl::StrFormat("%s: deprecationReleases %d must not be "
                                "negative",
                                where, crd.deprecation_releases()));
          ok = false;
        }
        built.deprecation_releases = crd.deprecation_releases();
      }
      if (crd.has_revert_buffer_releases()) {
        if (crd.revert_buffer_releases() < 0) {
          Error(lines_.FieldLine(
                    crd, pb::CRDHistory::kRevertBufferReleasesFieldNumber),
                absl::StrFormat("%s: revertBufferReleases %d must not be "
                                "negative",
                                where, crd.revert_buffer_releases()));
          ok = false;
        }
        built.revert_buffer_releases = crd.revert_buffer_releases();
      }
      for (int j = 0; j < crd.releases_size(); ++j) {
        std::optional<CRDRelease> release =
            BuildCrdRelease(crd.releases(j), where);
        if (!release.has_value()) {
          ok = false;
          continue;
        }
        if (!built.releases.empty() &&
            !(built.releases.back().version < release->version)) {
          Error(release->line,
                absl::StrFormat("%s: release %s is not after release %s (line "
                                "%d); list releases oldest first",
                                where, release->release,
                                built.releases.back().release,
                                built.releases.back().line));
          ok = false;
          continue;
        }
        built.releases.push_back(*std::move(release));
      }
      if (ok) out.crds.push_back(std::move(built));
    }
  }

  std::optional<CRDRelease> BuildCrdRelease(const pb::CRDRelease& in,
                                            const std::string& crd_where) {
    CRDRelease out;
    out.line = lines_.MessageLine(in);
    out.release = in.release();
    if (in.release().empty()) {
      Error(out.line, absl::StrFormat("%s: a release needs `release` (e.g. "
                                      "\"v1.9\")",
                                      crd_where));
      return std::nullopt;
    }
    // Version::Parse takes an optional leading "v" itself ("v1.9" -> 1.9).
    absl::StatusOr<Version> version = Version::Parse(in.release());
    if (!version.ok()) {
      Error(lines_.FieldLine(in, pb::CRDRelease::kReleaseFieldNumber),
            absl::StrFormat("%s: release %s; expected e.g. \"v1.9\" or "
                            "\"1.10.2\"",
                            crd_where, version.status().message()));
      return std::nullopt;
    }
    out.version = *std::move(version);
    out.storage_version_migration = in.storage_version_migration();
    out.managed_fields_cleanup = in.managed_fields_cleanup();
    const std::string where =
        absl::StrFormat("%s release %s", crd_where, in.release());
    bool ok = true;
    absl::flat_hash_map<std::string, int> names;
    int storage_versions = 0;
    for (int j = 0; j < in.versions_size(); ++j) {
      const pb::CRDVersion& version_in = in.versions(j);
      int line = lines_.MessageLine(version_in);
      if (line == 0) line = out.line;
      if (version_in.name().empty()) {
        Error(line, absl::StrFormat("%s: versions[%d] needs a name (e.g. "
                                    "\"v1beta2\")",
                                    where, j));
        ok = false;
        continue;
      }
      auto [it, inserted] = names.try_emplace(version_in.name(), line);
      if (!inserted) {
        Error(line, absl::StrFormat("%s: duplicate version \"%s\" (first at "
                                    "line %d)",
                                    where, version_in.name(), it->second));
        ok = false;
        continue;
      }
      if (version_in.storage()) ++storage_versions;
      out.versions.push_back(CRDVersion{version_in.name(), version_in.served(),
                                        version_in.storage(),
                                        version_in.deprecated()});
    }
    // apiextensions-apiserver's CRD validation: "must have exactly one
    // version marked as storage version".
    if (ok && in.versions_size() > 0 && storage_versions != 1) {
      Error(out.line, absl::StrFormat("%s: %d versions are marked storage; a "
                                      "CRD has exactly one storage version",
                                      where, storage_versions));
      ok = false;
    }
    if (!ok) return std::nullopt;
    return out;
  }

  // One apiHistory lifecycle version; nullopt if absent or malformed
  // (reported).
  std::optional<Version> HistoryVersion(const pb::APIHistoryEntry& in,
                                        int field_number, absl::string_view key,
                                        const std::string& text,
                                        const std::string& where, bool& ok) {
    if (text.empty()) return std::nullopt;
    absl::StatusOr<Version> version =
        ParseCatalogVersion(text, /*allow_patch=*/false);
    if (!version.ok()) {
      Error(
          LineOr(lines_.FieldLine(in, field_number), lines_.MessageLine(in)),
          absl::StrFormat("%s: %s %s", where, key, version.status().message()));
      ok = false;
      return std::nullopt;
    }
    return *std::move(version);
  }

  // apiHistory: every built-in group/version/kind with its lifecycle. Each
  // entry stands alone (it is never served), so the checks are the entry's
  // own: names, versions in order, a replacement that names a group-version
  // the catalog knows.
  void BuildApiHistory(const pb::Catalog& in, Catalog& out) {
    absl::flat_hash_map<std::string, int> first_line;
    absl::flat_hash_set<std::string> group_versions;
    for (const APIGroupVersion& gv : out.apis) {
      group_versions.insert(engine::GroupVersionString(gv.group, gv.version));
    }
    for (const pb::APIHistoryEntry& entry : in.api_history()) {
      group_versions.insert(
          engine::GroupVersionString(entry.group(), entry.version()));
    }
    out.api_history.reserve(in.api_history_size());
    for (int i = 0; i < in.api_history_size(); ++i) {
      std::string key;
      std::optional<APIHistoryEntry> built = BuildHistoryEntry(
          in.api_history(i), i, group_versions, first_line, key);
      if (!built.has_value()) continue;
      out.history_index.emplace(key, out.api_history.size());
      out.api_history.push_back(*std::move(built));
    }
  }

  // apiHistory[i], or nullopt after its errors; `key` its history key.
  std::optional<APIHistoryEntry> BuildHistoryEntry(
      const pb::APIHistoryEntry& entry, int i,
      const absl::flat_hash_set<std::string>& group_versions,
      absl::flat_hash_map<std::string, int>& first_line, std::string& key) {
    const int line = lines_.MessageLine(entry);
    if (entry.version().empty() || entry.kind().empty()) {
      Error(line, absl::StrFormat("apiHistory[%d]: version and kind are "
                                  "required ({group, version, kind, ...}; "
                                  "group \"\" is the core group)",
                                  i));
      return std::nullopt;
    }
    const std::string where = absl::StrFormat(
        "apiHistory %s %s",
        engine::GroupVersionString(entry.group(), entry.version()),
        entry.kind());
    if (absl::StrContains(entry.group(), "/") ||
        absl::StrContains(entry.version(), "/") ||
        absl::StrContains(entry.kind(), "/")) {
      Error(line, absl::StrFormat("%s: group, version and kind must not "
                                  "contain \"/\" (write them separately)",
                                  where));
      return std::nullopt;
    }
    key = engine::HistoryKey(entry.group(), entry.version(), entry.kind());
    auto [it, inserted] = first_line.try_emplace(key, line);
    if (!inserted) {
      Error(line, absl::StrFormat("duplicate %s (first defined at line %d)",
                                  where, it->second));
      return std::nullopt;
    }
    APIHistoryEntry built;
    built.group = entry.group();
    built.version = entry.version();
    built.kind = entry.kind();
    built.resource = entry.resource();
    built.line = line;
    bool ok = HistoryLifecycle(entry, where, line, built);
    ok = HistoryReplacement(entry, where, line, group_versions, built) && ok;
    if (!ok) return std::nullopt;
    return built;
  }

  // An apiHistory entry's resource and lifecycle versions, in order.
  bool HistoryLifecycle(const pb::APIHistoryEntry& entry,
                        const std::string& where, int line,
                        APIHistoryEntry& built) {
    bool ok = true;
    if (absl::AsciiStrToLower(entry.resource()) != entry.resource() ||
        absl::StrContains(entry.resource(), "/")) {
      Error(LineOr(lines_.FieldLine(entry,
                                    pb::APIHistoryEntry::kResourceFieldNumber),
                   line),
            absl::StrFormat("%s: resource \"%s\" must be the lowercase "
                            "plural name without \"/\" (e.g. "
                            "\"deployments\")",
                            where, entry.resource()));
      ok = false;
    }
    built.introduced =
        HistoryVersion(entry, pb::APIHistoryEntry::kIntroducedFieldNumber,
                       "introduced", entry.introduced(), where, ok);
    built.deprecated =
        HistoryVersion(entry, pb::APIHistoryEntry::kDeprecatedFieldNumber,
                       "deprecated", entry.deprecated(), where, ok);
    built.removed =
        HistoryVersion(entry, pb::APIHistoryEntry::kRemovedFieldNumber,
                       "removed", entry.removed(), where, ok);
    built.types_deleted =
        HistoryVersion(entry, pb::APIHistoryEntry::kTypesDeletedFieldNumber,
                       "typesDeleted", entry.types_deleted(), where, ok);
    // introduced <= deprecated <= removed, and the types outlive the
    // introduction (prerelease-lifecycle-gen's order).
    struct Step {
      const std::optional<Version>& value;
      absl::string_view key;
      int field;
    };
    const Step steps[] = {
        {built.introduced, "introduced",
         pb::APIHistoryEntry::kIntroducedFieldNumber},
        {built.deprecated, "deprecated",
         pb::APIHistoryEntry::kDeprecatedFieldNumber},
        {built.removed, "removed", pb::APIHistoryEntry::kRemovedFieldNumber},
    };
    const Step* earlier = nullptr;
    for (const Step& step : steps) {
      if (!step.value.has_value()) continue;
      if (earlier != nullptr && *step.value < *earlier->value) {
        Error(LineOr(lines_.FieldLine(entry, step.field), line),
              absl::StrFormat("%s: %s %s is before %s %s", where, step.key,
                              step.value->MajorMinorString(), earlier->key,
                              earlier->value->MajorMinorString()));
        ok = false;
      }
      earlier = &step;
    }
    if (built.types_deleted && built.introduced &&
        *built.types_deleted <= *built.introduced) {
      Error(LineOr(lines_.FieldLine(
                       entry, pb::APIHistoryEntry::kTypesDeletedFieldNumber),
                   line),
            absl::StrFormat("%s: typesDeleted %s is not after introduced %s",
                            where, entry.types_deleted(), entry.introduced()));
      ok = false;
    }
    return ok;
  }

  // An apiHistory entry's replacement, replacementKind and enabledByDefault.
  bool HistoryReplacement(
      const pb::APIHistoryEntry& entry, const std::string& where, int line,
      const absl::flat_hash_set<std::string>& group_versions,
      APIHistoryEntry& built) {
    bool ok = true;
    built.replacement = entry.replacement();
    built.replacement_kind = entry.replacement_kind();
    const int replacement_line = LineOr(
        lines_.FieldLine(entry, pb::APIHistoryEntry::kReplacementFieldNumber),
        line);
    if (!built.replacement.empty() &&
        !group_versions.contains(built.replacement)) {
      Error(replacement_line,
            absl::StrFormat("%s: replacement \"%s\" is not a group-version "
                            "of apiHistory or apis; expected \"group/"
                            "version\" (\"v1\" for the core group)",
                            where, built.replacement));
      ok = false;
    }
    if (!built.replacement_kind.empty() && built.replacement.empty()) {
      Error(LineOr(lines_.FieldLine(
                       entry, pb::APIHistoryEntry::kReplacementKindFieldNumber),
                   line),
            absl::StrFormat("%s: replacementKind \"%s\" needs replacement "
                            "(the group-version it belongs to)",
                            where, built.replacement_kind));
      ok = false;
    }
    if (entry.has_enabled_by_default()) {
      if (!engine::IsBetaVersion(entry.version())) {
        Error(LineOr(
                  lines_.FieldLine(
                      entry, pb::APIHistoryEntry::kEnabledByDefaultFieldNumber),
                  line),
              absl::StrFormat("%s: enabledByDefault applies to beta "
                              "versions only (GA is on and alpha off by "
                              "default); \"%s\" is not a beta version",
                              where, entry.version()));
        ok = false;
      }
      built.enabled_by_default = entry.enabled_by_default();
    }
    return ok;
  }

  // patchChanges: gates a patch release inside the catalog's line changed.
  // Each names a gate of `features`, a patch release of the catalog's
  // major.minor no later than its binaryVersion, and what came before: a
  // phrase, and the specs (specsBefore) or registeredBefore: false. A gate may
  // have several entries, `since` ascending.
  void BuildPatchChanges(const pb::Catalog& in, bool binary_ok, Catalog& out) {
    absl::flat_hash_map<std::string, Version> last_since;
    out.patch_changes.reserve(in.patch_changes_size());
    for (int i = 0; i < in.patch_changes_size(); ++i) {
      const pb::PatchChange& change = in.patch_changes(i);
      const int line = std::max(1, lines_.MessageLine(change));
      const std::string where = absl::StrFormat("patchChanges[%d]", i);
      bool ok = CheckPatchFeature(change, where, line, out);
      std::optional<Version> since =
          BuildPatchSince(change, where, line, binary_ok, out);
      if (!since.has_value()) ok = false;
      if (ok && since.has_value()) {
        auto [it, inserted] = last_since.try_emplace(change.feature(), *since);
        if (!inserted) {
          if (*since <= it->second) {
            Error(LineOr(lines_.FieldLine(change,
                                          pb::PatchChange::kSinceFieldNumber),
                         line),
                  absl::StrFormat("%s: feature \"%s\" has an entry since %s "
                                  "already; entries of one gate are listed "
                                  "with since ascending, each once",
                                  where, change.feature(),
                                  it->second.ToString()));
            ok = false;
          } else {
            it->second = *since;
          }
        }
      }
      std::vector<FeatureSpec> specs_before;
      if (!BuildPatchBefore(change, where, line, binary_ok, out,
                            specs_before)) {
        ok = false;
      }
      if (!ok || !since.has_value()) continue;
      const bool registered_before =
          !change.has_registered_before() || change.registered_before();
      PatchChange built{change.feature(),
                        *std::move(since),
                        change.before(),
                        registered_before,
                        -1,
                        line};
      if (!specs_before.empty()) {
        const Feature* gate = out.FindFeature(change.feature());
        Feature earlier;
        earlier.name = change.feature();
        earlier.component = gate != nullptr ? gate->component : "";
        earlier.specs = std::move(specs_before);
        earlier.line = line;
        built.before_index = static_cast<int>(out.patch_features.size());
        out.patch_features.push_back(std::move(earlier));
      }
      out.patch_changes.push_back(std::move(built));
    }
    // Each gate's earlier forms, since ascending (the entries' order). An
    // entry with only the phrase changes no answer: the gate answers from
    // the catalog's specs, and AppendPatchNote says what the patch had.
    for (const PatchChange& change : out.patch_changes) {
      if (change.registered_before && change.before_index < 0) continue;
      auto it = out.feature_index.find(change.feature);
      if (it == out.feature_index.end()) continue;
      out.features[it->second].earlier_patches.push_back(PatchVariant{
          change.since, change.registered_before ? change.before_index : -1});
    }
    BuildPatchesKnownThrough(in, binary_ok, out);
  }

  // A patch change's feature: required, and a gate of `features`.
  bool CheckPatchFeature(const pb::PatchChange& change,
                         const std::string& where, int line,
                         const Catalog& out) {
    if (change.feature().empty()) {
      Error(line, absl::StrFormat("%s: feature is required (a gate of "
                                  "features)",
                                  where));
      return false;
    }
    if (out.FindFeature(change.feature()) == nullptr &&
        !features_by_name_.contains(change.feature())) {
      Error(
          LineOr(lines_.FieldLine(change, pb::PatchChange::kFeatureFieldNumber),
                 line),
          absl::StrFormat("%s: feature \"%s\" is not a gate of this "
                          "catalog's features",
                          where, change.feature()));
      return false;
    }
    return true;
  }

  // A patch change's since: a .1-or-later patch of the catalog's line, not
  // after its binaryVersion. nullopt (with the error recorded) otherwise.
  std::optional<Version> BuildPatchSince(const pb::PatchChange& change,
                                         const std::string& where, int line,
                                         bool binary_ok, const Catalog& out) {
    const int since_line = LineOr(
        lines_.FieldLine(change, pb::PatchChange::kSinceFieldNumber), line);
    if (change.since().empty()) {
      Error(line, absl::StrFormat("%s: since is required: the patch release "
                                  "the catalog's spec holds from, e.g. "
                                  "\"1.31.7\"",
                                  where));
      return std::nullopt;
    }
    absl::StatusOr<Version> parsed =
        ParseCatalogVersion(change.since(), /*allow_patch=*/true);
    std::string problem;
    if (!parsed.ok() || parsed->components().size() != 3) {
      problem = absl::StrFormat(
          "since \"%s\" is not a patch release: "
          "expected \"major.minor.patch\", e.g. "
          "\"1.31.7\"",
          change.since());
    } else if (binary_ok &&
               parsed->CompareMajorMinor(out.binary_version) != 0) {
      problem = absl::StrFormat(
          "since %s is not a patch of this catalog's "
          "line %s",
          change.since(), out.binary_version.MajorMinorString());
    } else if (binary_ok && out.binary_version.components().size() > 2 &&
               parsed->patch() > out.binary_version.patch()) {
      problem = absl::StrFormat(
          "since %s is after the catalog's "
          "binaryVersion %s, whose facts it describes",
          change.since(), out.binary_version.ToString());
    } else if (parsed->patch() == 0) {
      problem = absl::StrFormat(
          "since %s is the line's first release; a "
          "patch change starts at .1 or later",
          change.since());
    }
    if (!problem.empty()) {
      Error(since_line, absl::StrCat(where, ": ", problem));
      return std::nullopt;
    }
    return *std::move(parsed);
  }

  // What the earlier patches had: the phrase (required), and either
  // specsBefore (validated as the gate's specs are) or registeredBefore:
  // false. Fills specs_before; false when an error was recorded.
  bool BuildPatchBefore(const pb::PatchChange& change, const std::string& where,
                        int line, bool binary_ok, const Catalog& out,
                        std::vector<FeatureSpec>& specs_before) {
    auto field_line = [&](int field_number) {
      return LineOr(lines_.FieldLine(change, field_number), line);
    };
    bool ok = true;
    if (change.before().empty()) {
      Error(line, absl::StrFormat("%s: before is required: what earlier "
                                  "patches had, e.g. \"Beta, default true\" "
                                  "or \"not registered\"",
                                  where));
      ok = false;
    }
    if (change.has_registered_before() && change.registered_before()) {
      Error(field_line(pb::PatchChange::kRegisteredBeforeFieldNumber),
            absl::StrFormat("%s: registeredBefore is written only as false "
                            "(the earlier patches did not register the "
                            "gate); a gate they registered has specsBefore",
                            where));
      ok = false;
    }
    if (change.has_registered_before() && !change.registered_before() &&
        change.specs_before_size() > 0) {
      Error(field_line(pb::PatchChange::kSpecsBeforeFieldNumber),
            absl::StrFormat("%s: specsBefore with registeredBefore: false; "
                            "give one of them",
                            where));
      ok = false;
    }
    for (int j = 0; j < change.specs_before_size(); ++j) {
      std::optional<FeatureSpec> spec =
          BuildSpec(change.specs_before(j),
                    absl::StrFormat("%s.specsBefore[%d]", where, j));
      if (spec.has_value()) {
        specs_before.push_back(*std::move(spec));
      } else {
        ok = false;
      }
    }
    if (ok && binary_ok && !specs_before.empty()) {
      const size_t errors_before = errors_.size();
      ValidateSpecs(change.feature(), specs_before, out.binary_version,
                    field_line(pb::PatchChange::kSpecsBeforeFieldNumber));
      if (errors_.size() != errors_before) ok = false;
    }
    return ok;
  }

  // patchesKnownThrough: a patch of the catalog's line, not before its
  // binaryVersion.
  void BuildPatchesKnownThrough(const pb::Catalog& in, bool binary_ok,
                                Catalog& out) {
    if (in.patches_known_through().empty()) return;
    const int line = LineOr(
        lines_.FieldLine(in, pb::Catalog::kPatchesKnownThroughFieldNumber),
        root_line_);
    absl::StatusOr<Version> parsed =
        ParseCatalogVersion(in.patches_known_through(), /*allow_patch=*/true);
    if (!parsed.ok() || parsed->components().size() != 3) {
      Error(line, absl::StrFormat("patchesKnownThrough \"%s\" is not a patch "
                                  "release: expected \"major.minor.patch\", "
                                  "e.g. \"1.35.6\"",
                                  in.patches_known_through()));
      return;
    }
    if (!binary_ok) return;
    if (out.binary_version.components().size() < 3) {
      Error(line, absl::StrFormat("patchesKnownThrough needs a binaryVersion "
                                  "with its patch (\"%s.N\"), the patch the "
                                  "catalog's facts describe",
                                  out.binary_version.ToString()));
      return;
    }
    if (parsed->CompareMajorMinor(out.binary_version) != 0 ||
        parsed->patch() < out.binary_version.patch()) {
      Error(line, absl::StrFormat("patchesKnownThrough %s is not a patch of "
                                  "the line %s at or after its binaryVersion "
                                  "%s",
                                  in.patches_known_through(),
                                  out.binary_version.MajorMinorString(),
                                  out.binary_version.ToString()));
      return;
    }
    out.patches_known_through = *std::move(parsed);
  }

  // exactness: {level: EXACT|PROVISIONAL, reason}; a PROVISIONAL catalog
  // says why.
  void BuildExactness(const pb::Catalog& in, Catalog& out) {
    if (!in.has_exactness()) return;
    const pb::Exactness& exactness = in.exactness();
    const int line = LineOr(lines_.MessageLine(exactness), root_line_);
    const int level_line = LineOr(
        lines_.FieldLine(exactness, pb::Exactness::kLevelFieldNumber), line);
    if (exactness.level() == "EXACT") {
      out.exactness = engine::Exactness::kExact;
    } else if (exactness.level() == "PROVISIONAL") {
      out.exactness = engine::Exactness::kProvisional;
      if (exactness.reason().empty()) {
        Error(line,
              "exactness: a PROVISIONAL catalog needs a reason: which "
              "pre-release sources, of which date");
      }
    } else {
      Error(level_line,
            absl::StrFormat("exactness.level \"%s\" is not accepted; "
                            "accepted: EXACT, PROVISIONAL",
                            exactness.level()));
      return;
    }
    out.exactness_reason = exactness.reason();
  }

  const SourceLines& lines_;
  std::vector<CatalogError>& errors_;
  absl::flat_hash_set<int> error_lines_;
  absl::flat_hash_map<std::string, int> features_by_name_;
  int root_line_ = 1;
};

// An error quotes what the file says (an unknown key, a value): at most
// kMaxErrorMessageBytes of it, cut at a UTF-8 boundary, with the count cut.
constexpr size_t kMaxErrorMessageBytes = 2048;
void CutMessage(std::string& message) {
  if (message.size() <= kMaxErrorMessageBytes) return;
  size_t keep = kMaxErrorMessageBytes;
  while (keep > 0 &&
         (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80) {
    --keep;
  }
  const size_t cut = message.size() - keep;
  message.resize(keep);
  absl::StrAppend(&message, "... (", cut, " more bytes)");
}

absl::Status ErrorsToStatus(const CatalogErrors& errors,
                            absl::string_view source) {
  return absl::InvalidArgumentError(errors.Format(source));
}

}  // namespace

std::string CatalogErrors::Format(absl::string_view source) const {
  std::string out;
  for (const CatalogError& error : errors) {
    if (!out.empty()) out.push_back('\n');
    if (error.line > 0) {
      absl::StrAppend(&out, source, ":", error.line, ": ", error.message);
    } else {
      absl::StrAppend(&out, source, ": ", error.message);
    }
  }
  if (omitted > 0) {
    absl::StrAppend(&out, "\n", source, ": ",
                    absl::StrFormat("and %d more errors (the first %d by line "
                                    "are listed)",
                                    omitted, errors.size()));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Catalog>> ParseCatalog(
    absl::string_view bytes, absl::string_view source,
    CatalogErrors* errors_out) {
  CatalogErrors errors;
  auto fail = [&]() -> absl::Status {
    std::stable_sort(errors.errors.begin(), errors.errors.end(),
                     [](const CatalogError& a, const CatalogError& b) {
                       return a.line < b.line;
                     });
    if (errors.errors.size() > kMaxReportedErrors) {
      errors.omitted = errors.errors.size() - kMaxReportedErrors;
      errors.errors.resize(kMaxReportedErrors);
      errors.errors.shrink_to_fit();
    }
    for (CatalogError& error : errors.errors) CutMessage(error.message);
    absl::Status status = ErrorsToStatus(errors, source);
    if (errors_out != nullptr) *errors_out = std::move(errors);
    return status;
  };

  if (bytes.size() > kMaxCatalogBytes) {
    errors.errors.push_back(CatalogError{
        0, absl::StrFormat("catalog is %d bytes; the limit is %d bytes",
                           bytes.size(), kMaxCatalogBytes)});
    return fail();
  }

  pb::Catalog proto;
  SourceLines lines;
  auto catalog = std::make_unique<Catalog>();
  if (YamlToProto(bytes, proto, lines, errors.errors)) {
    CatalogBuilder(lines, errors.errors).Build(proto, *catalog);
  }
  if (!errors.errors.empty()) return fail();

  catalog->digest = Sha256Digest(bytes);
  catalog->source = std::string(source);
  if (errors_out != nullptr) errors_out->errors.clear();
  return catalog;
}

}  // namespace compatd::catalog
