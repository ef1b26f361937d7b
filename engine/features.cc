#include "engine/features.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/feature_gate_flags.h"
#include "engine/patches.h"

namespace compatd::engine {

// component-base's AddVersioned gained the equal-version / min-compatibility /
// no-transition-without-change / no-unlock rules, and spec selection the
// min-compatibility check, in Kubernetes 1.35.
bool FeatureGatesUseMinCompatibility(const Version& binary_version) {
  return binary_version.major() > 1 ||
         (binary_version.major() == 1 && binary_version.minor() >= 35);
}

namespace {

absl::string_view BoolName(bool b) { return b ? "true" : "false"; }

// Go's %s of a prerelease value prints "" for GA; we print the stage name.
std::string StageName(PreRelease stage) {
  return std::string(PreReleaseName(stage));
}

// Wraps one of Kubernetes' AddVersioned messages with where it happened and
// which release line's rules applied.
absl::Status SpecError(size_t index, const FeatureSpec& spec,
                       const Version& binary_version,
                       absl::string_view kubernetes_message) {
  std::string where = absl::StrCat("versionedSpecs[", index, "]");
  if (spec.line > 0) absl::StrAppend(&where, " (line ", spec.line, ")");
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s; at %s, under the feature-gate rules of Kubernetes %s (%s)",
      kubernetes_message, where, binary_version.MajorMinorString(),
      FeatureGatesUseMinCompatibility(binary_version) ? "1.35 and later"
                                                      : "before 1.35"));
}

// Rules common to every release line that AddVersioned checks on one entry
// against the entries before it (the stability switch).
absl::Status CheckStability(absl::string_view name, size_t index,
                            const FeatureSpec& spec, bool was_beta, bool was_ga,
                            bool was_deprecated,
                            const Version& binary_version) {
  if (spec.pre_release != PreRelease::kDeprecated && was_deprecated) {
    return SpecError(
        index, spec, binary_version,
        absl::StrFormat(
            "deprecated feature \"%s\" must not resurrect from its terminal "
            "state",
            name));
  }
  if ((spec.pre_release == PreRelease::kAlpha && (was_beta || was_ga)) ||
      (spec.pre_release == PreRelease::kBeta && was_ga)) {
    return SpecError(index, spec, binary_version,
                     absl::StrFormat("feature \"%s\" regresses stability from "
                                     "more stable level to %s in %s",
                                     name, StageName(spec.pre_release),
                                     spec.version.ToString()));
  }
  return absl::OkStatus();
}

// Whether AddVersioned validates spec lists at all: from component-base v0.33.0
// (commit 2234523, "Add Validation to versioned feature specs").
bool FeatureSpecsValidated(const Version& binary_version) {
  return binary_version.major() > 1 ||
         (binary_version.major() == 1 && binary_version.minor() >= 33);
}

// The min-compatibility field of a spec exists only from 1.35
// (docs/kubernetes-rules.md#feature-spec-validation).
absl::Status RejectMinCompatibilityBefore135(
    absl::string_view name, const std::vector<FeatureSpec>& specs,
    const Version& binary_version) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const FeatureSpec& spec = specs[i];
    if (spec.min_compatibility_version.has_value()) {
      return SpecError(
          i, spec, binary_version,
          absl::StrFormat(
              "feature \"%s\" specifies minCompatibilityVersion %s, which "
              "feature gates support only from Kubernetes 1.35",
              name, spec.min_compatibility_version->ToString()));
    }
  }
  return absl::OkStatus();
}

// component-base featuregate AddVersioned before 1.33 (v0.31.0 and v0.32.0,
// feature_gate.go lines 418-445): no check at all; each list is sorted by
// version (sort.Sort(specs), VersionedSpecs.Less = Version.LessThan). Go's
// sort.Sort is an insertion sort up to 12 entries, so entries at one version
// keep their order there; std::stable_sort keeps it at any length. Binaries
// before 1.31 had no versioned specs; compatd reads them the same way.
void SortBefore133(std::vector<FeatureSpec>& specs) {
  std::stable_sort(specs.begin(), specs.end(),
                   [](const FeatureSpec& a, const FeatureSpec& b) {
                     return a.version < b.version;
                   });
}

// component-base featuregate AddVersioned in 1.33-1.34 (v0.33.0 .. v0.34.x):
// versions strictly increase, no patch, deprecated-first needs minor 0,
// no stability regression, Deprecated is terminal.
absl::Status ValidateBefore135(absl::string_view name,
                               const std::vector<FeatureSpec>& specs,
                               const Version& binary_version) {
  COMPATD_RETURN_IF_ERROR(
      RejectMinCompatibilityBefore135(name, specs, binary_version));
  bool was_beta = false, was_ga = false, was_deprecated = false;
  for (size_t i = 0; i < specs.size(); ++i) {
    const FeatureSpec& spec = specs[i];
    if (spec.version.components().size() != 2) {
      return SpecError(i, spec, binary_version,
                       absl::StrFormat("feature \"%s\" specified patch "
                                       "version: %s",
                                       name, spec.version.ToString()));
    }
    if (i == 0 && spec.pre_release == PreRelease::kDeprecated &&
        spec.version.minor() != 0) {
      return SpecError(
          i, spec, binary_version,
          absl::StrFormat("feature \"%s\" introduced as deprecated "
                          "must provide a 1.0 entry indicating "
                          "initial state",
                          name));
    }
    if (i > 0) {
      const Version& last_version = specs[i - 1].version;
      if (!(last_version < spec.version)) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat("feature \"%s\" lists version transitions in "
                            "non-increasing order (%s <= %s)",
                            name, spec.version.ToString(),
                            last_version.ToString()));
      }
      COMPATD_RETURN_IF_ERROR(CheckStability(name, i, spec, was_beta, was_ga,
                                             was_deprecated, binary_version));
    }
    was_beta = was_beta || spec.pre_release == PreRelease::kBeta;
    was_ga = was_ga || spec.pre_release == PreRelease::kGA;
    was_deprecated =
        was_deprecated || spec.pre_release == PreRelease::kDeprecated;
  }
  return absl::OkStatus();
}

// Go's (*version.Version).EqualTo with nil pointers: nil equals only nil.
bool OptionalVersionsEqual(const std::optional<Version>& a,
                           const std::optional<Version>& b) {
  if (!a.has_value()) return !b.has_value();
  if (!b.has_value()) return false;
  return *a == *b;
}

// component-base featuregate AddVersioned from 1.35 (v0.35.0 and master),
// check by check in the same order, so the first error reported is the one
// Kubernetes reports. `specs` gets the inherited min-compatibility versions.
absl::Status ValidateFrom135(absl::string_view name,
                             std::vector<FeatureSpec>& specs,
                             const Version& binary_version) {
  bool was_beta = false, was_ga = false, was_deprecated = false,
       was_locked = false;
  // Each entry's min-compatibility version once completed (inherited); written
  // back only when the whole list is valid.
  std::vector<std::optional<Version>> completed(specs.size());
  std::optional<Version> last_min_compat;
  for (size_t i = 0; i < specs.size(); ++i) {
    const FeatureSpec& spec = specs[i];
    // As written in the catalog, before inheritance.
    const std::optional<Version> raw_min_compat =
        spec.min_compatibility_version;
    if (spec.version.components().size() != 2) {
      return SpecError(i, spec, binary_version,
                       absl::StrFormat("feature \"%s\" specified patch "
                                       "version: %s",
                                       name, spec.version.ToString()));
    }
    if (raw_min_compat.has_value()) {
      if (i == 0 || spec.version != specs[i - 1].version) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat(
                "feature \"%s\" specified MinCompatibilityVersion: %s without "
                "a preceding entry at the same Version without "
                "MinCompatibilityVersion set",
                name, raw_min_compat->ToString()));
      }
      if (raw_min_compat->components().size() != 2) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat(
                "feature \"%s\" specified patch MinCompatibilityVersion: %s",
                name, raw_min_compat->ToString()));
      }
      if (*raw_min_compat > spec.version) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat(
                "feature \"%s\" MinCompatibilityVersion %s greater than "
                "Version %s",
                name, raw_min_compat->ToString(), spec.version.ToString()));
      }
    }
    if (i == 0 && spec.pre_release == PreRelease::kDeprecated &&
        spec.version.minor() != 0) {
      return SpecError(
          i, spec, binary_version,
          absl::StrFormat("feature \"%s\" introduced as deprecated "
                          "must provide a 1.0 entry indicating "
                          "initial state",
                          name));
    }
    if (i > 0) {
      const FeatureSpec& last = specs[i - 1];
      if (spec.version < last.version) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat("feature \"%s\" lists version transitions in "
                            "decreasing order (%s < %s)",
                            name, spec.version.ToString(),
                            last.version.ToString()));
      }
      if (raw_min_compat.has_value() && last_min_compat.has_value() &&
          *raw_min_compat < *last_min_compat) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat("feature \"%s\" lists min compatibility version "
                            "transitions in decreasing order (%s < %s)",
                            name, raw_min_compat->ToString(),
                            last_min_compat->ToString()));
      }
      if (spec.version == last.version) {
        if (OptionalVersionsEqual(raw_min_compat, last_min_compat)) {
          return SpecError(
              i, spec, binary_version,
              absl::StrFormat("feature \"%s\" lists duplicate entries with "
                              "the same versions (%s = %s)",
                              name, spec.version.ToString(),
                              last.version.ToString()));
        }
        if (spec.pre_release != last.pre_release) {
          return SpecError(
              i, spec, binary_version,
              absl::StrFormat("feature \"%s\" lists stability changes with "
                              "the same version (%s -> %s)",
                              name, StageName(last.pre_release),
                              StageName(spec.pre_release)));
        }
        if (spec.lock_to_default != last.lock_to_default) {
          return SpecError(
              i, spec, binary_version,
              absl::StrFormat("feature \"%s\" lists locked to default "
                              "changes with the same version (%s -> %s)",
                              name, BoolName(last.lock_to_default),
                              BoolName(spec.lock_to_default)));
        }
      }
      if (spec.pre_release == last.pre_release &&
          spec.default_enabled == last.default_enabled &&
          spec.lock_to_default == last.lock_to_default) {
        return SpecError(
            i, spec, binary_version,
            absl::StrFormat("feature \"%s\" lists transition without "
                            "stability change (%s -> %s)",
                            name, last.version.ToString(),
                            spec.version.ToString()));
      }
      if (was_locked && !spec.lock_to_default) {
        return SpecError(i, spec, binary_version,
                         absl::StrFormat("feature \"%s\" must not unlock "
                                         "after locking to default",
                                         name));
      }
      COMPATD_RETURN_IF_ERROR(CheckStability(name, i, spec, was_beta, was_ga,
                                             was_deprecated, binary_version));
    }
    // An entry without its own min-compatibility version inherits the
    // previous entry's, so that it never decreases along the list.
    completed[i] = raw_min_compat;
    if (!raw_min_compat.has_value() && i > 0) completed[i] = last_min_compat;
    last_min_compat = completed[i];
    was_beta = was_beta || spec.pre_release == PreRelease::kBeta;
    was_ga = was_ga || spec.pre_release == PreRelease::kGA;
    was_deprecated =
        was_deprecated || spec.pre_release == PreRelease::kDeprecated;
    was_locked = was_locked || spec.lock_to_default;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].min_compatibility_version = std::move(completed[i]);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Decisions.

constexpr absl::string_view kAllAlpha = "AllAlpha";
constexpr absl::string_view kAllBeta = "AllBeta";

// component-base's defaultFeatures: AllAlpha and AllBeta are gates of every
// feature gate, at version 0.0, default off.
const Feature& PseudoGate(absl::string_view name) {
  static const Feature* const kAlpha = [] {
    auto* f = new Feature;
    f->name = std::string(kAllAlpha);
    f->specs.push_back(FeatureSpec{Version::MajorMinor(0, 0), false, false,
                                   PreRelease::kAlpha, std::nullopt, 0});
    return f;
  }();
  static const Feature* const kBeta = [] {
    auto* f = new Feature;
    f->name = std::string(kAllBeta);
    f->specs.push_back(FeatureSpec{Version::MajorMinor(0, 0), false, false,
                                   PreRelease::kBeta, std::nullopt, 0});
    return f;
  }();
  return name == kAllAlpha ? *kAlpha : *kBeta;
}

// The gate `name` as the binary's patch registers it (engine/patches.h).
const Feature* FindGate(const Catalog& catalog, absl::string_view name,
                        const Version& binary) {
  if (name == kAllAlpha || name == kAllBeta) return &PseudoGate(name);
  const Feature* feature = catalog.FindFeature(name);
  return feature == nullptr ? nullptr
                            : FeatureAtPatch(catalog, *feature, binary);
}

enum class GateSource { kRequest, kCluster };

// `cluster_origin`: where a cluster profile's --feature-gates came from
// ("kube-apiserver.yaml:14 (--feature-gates)"); empty for a catalog's own
// cluster section.
absl::string_view SourceName(GateSource source,
                             absl::string_view cluster_origin) {
  if (source == GateSource::kRequest) return "feature_gates request field";
  return cluster_origin.empty() ? "catalog cluster.featureGates"
                                : cluster_origin;
}

absl::string_view ShortSourceName(GateSource source,
                                  absl::string_view cluster_origin) {
  if (source == GateSource::kRequest) return "feature_gates";
  return cluster_origin.empty() ? "cluster.featureGates" : cluster_origin;
}

struct GateSetting {
  absl::string_view name;
  bool value = false;
  GateSource source = GateSource::kRequest;
};

// The merged --feature-gates map: the cluster section's gates, then the
// request's (a request key wins), validated as unsafeSetFromMap does.
struct GateSet {
  absl::InlinedVector<GateSetting, 8> settings;  // sorted by name
  std::optional<GateSetting> all_alpha;
  std::optional<GateSetting> all_beta;
  // Catalog::cluster.feature_gates_origin (points into the catalog).
  absl::string_view cluster_origin;

  const GateSetting* Find(absl::string_view name) const {
    for (const GateSetting& s : settings) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
};

// "did you mean" for a name that differs only in case, else a pointer to
// ListFeatures.
std::string UnknownGateHint(const Catalog& catalog, absl::string_view name,
                            const Version& binary) {
  if (const Feature* later = catalog.FindFeature(name); later != nullptr) {
    for (const PatchVariant& variant : later->earlier_patches) {
      if (variant.before_index < 0 && binary.patch() < variant.since.patch()) {
        return absl::StrFormat(
            "kube-apiserver %s does not register it: %s added it",
            binary.ToString(), variant.since.ToString());
      }
    }
  }
  for (const Feature& f : catalog.features) {
    if (absl::EqualsIgnoreCase(f.name, name)) {
      return absl::StrFormat("did you mean \"%s\"?", f.name);
    }
  }
  for (absl::string_view special : {kAllAlpha, kAllBeta}) {
    if (absl::EqualsIgnoreCase(special, name)) {
      return absl::StrFormat("did you mean \"%s\"?", special);
    }
  }
  return absl::StrFormat(
      "the catalog knows %d gates (ListFeatures lists them) plus AllAlpha and "
      "AllBeta",
      catalog.features.size());
}

// featureSpecAtEmulationAndMinCompatVersion for one gate at the effective
// versions, in the binary's release line.
const FeatureSpec* SelectAt(const Feature& feature,
                            const EffectiveVersions& versions) {
  return SelectFeatureSpec(feature.specs, versions.emulation,
                           versions.min_compatibility,
                           FeatureGatesUseMinCompatibility(versions.binary));
}

// unsafeSetFromMap's checks of the merged map; fills all_alpha / all_beta.
absl::Status ValidateGateSet(const Catalog& catalog,
                             const EffectiveVersions& versions,
                             GateSet* set_out) {
  GateSet& set = *set_out;
  // unsafeSetFromMap: an unknown key fails at once.
  for (const GateSetting& s : set.settings) {
    if (FindGate(catalog, s.name, versions.binary) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: unrecognized feature gate: %s; %s",
                          SourceName(s.source, set.cluster_origin), s.name,
                          UnknownGateHint(catalog, s.name, versions.binary)));
    }
  }
  const bool use_min_compat = FeatureGatesUseMinCompatibility(versions.binary);
  std::vector<std::string> errors;
  for (const GateSetting& s : set.settings) {
    const Feature& feature = *FindGate(catalog, s.name, versions.binary);
    const FeatureSpec* spec = SelectAt(feature, versions);
    const bool default_enabled = spec != nullptr && spec->default_enabled;
    if (spec != nullptr && spec->lock_to_default &&
        spec->default_enabled != s.value) {
      errors.push_back(absl::StrFormat(
          "cannot set feature gate %s to %s, feature is locked to %s (%s)",
          s.name, BoolName(s.value), BoolName(default_enabled),
          SourceName(s.source, set.cluster_origin)));
      continue;
    }
    if (s.name == kAllAlpha) {
      set.all_alpha = s;
      continue;
    }
    if (s.name == kAllBeta) {
      set.all_beta = s;
      continue;
    }
    if (spec == nullptr) {
      std::string first_spec;
      if (!feature.specs.empty()) {
        first_spec =
            absl::StrFormat("; it is introduced as %s in %s",
                            PreReleaseName(feature.specs.front().pre_release),
                            feature.specs.front().version.ToString());
      }
      errors.push_back(
          use_min_compat
              ? absl::StrFormat(
                    "cannot set feature gate %s to %s, feature is PreAlpha at "
                    "emulated version %s, min compatibility version %s (%s%s)",
                    s.name, BoolName(s.value), versions.emulation.ToString(),
                    versions.min_compatibility.ToString(),
                    SourceName(s.source, set.cluster_origin), first_spec)
              : absl::StrFormat(
                    "cannot set feature gate %s to %s, feature is PreAlpha at "
                    "emulated version %s (%s%s)",
                    s.name, BoolName(s.value), versions.emulation.ToString(),
                    SourceName(s.source, set.cluster_origin), first_spec));
    }
  }
  if (errors.empty()) return absl::OkStatus();
  if (errors.size() == 1) return absl::InvalidArgumentError(errors[0]);
  // utilerrors.NewAggregate's wording for several errors.
  return absl::InvalidArgumentError(
      absl::StrCat("[", absl::StrJoin(errors, ", "), "]"));
}

// Fills *set (empty on entry).
absl::Status BuildGateSet(const Catalog& catalog,
                          const EffectiveVersions& versions,
                          const VersionQuery& query, GateSet* set_out) {
  GateSet& set = *set_out;
  set.cluster_origin = catalog.cluster.feature_gates_origin;
  if (catalog.cluster.feature_gates.empty() && query.feature_gates.empty()) {
    return absl::OkStatus();
  }
  std::vector<FeatureGateFlag> requested;
  if (!query.feature_gates.empty()) {
    absl::StatusOr<std::vector<FeatureGateFlag>> parsed =
        ParseFeatureGates(query.feature_gates);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("feature_gates request field \"%s\": %s; expected "
                          "Name=true|false pairs separated by commas",
                          query.feature_gates, parsed.status().message()));
    }
    requested = *std::move(parsed);
  }
  // Merge two sorted lists; the request wins on equal keys.
  const auto& cluster = catalog.cluster.feature_gates;
  size_t i = 0, j = 0;
  while (i < cluster.size() || j < requested.size()) {
    if (j == requested.size() ||
        (i < cluster.size() &&
         absl::string_view(cluster[i].first) < requested[j].name)) {
      set.settings.push_back(
          {cluster[i].first, cluster[i].second, GateSource::kCluster});
      ++i;
      continue;
    }
    if (i < cluster.size() &&
        absl::string_view(cluster[i].first) == requested[j].name) {
      ++i;
    }
    set.settings.push_back(
        {requested[j].name, requested[j].value, GateSource::kRequest});
    ++j;
  }

  return ValidateGateSet(catalog, versions, &set);
}

absl::string_view OnOff(bool b) { return b ? "on" : "off"; }

// Builds a short sentence on the stack, so that writing the reason grows the
// response's string once. The longest sentence is under 230 characters even
// with 20-digit version numbers (three versions, the longest fixed text);
// Add stops at the buffer's end rather than overrun it.
class ReasonBuilder {
 public:
  ReasonBuilder& Add(absl::string_view text) {
    const size_t n = std::min(text.size(), sizeof(buf_) - size_);
    std::memcpy(buf_ + size_, text.data(), n);
    size_ += n;
    return *this;
  }
  ReasonBuilder& Add(uint64_t number) {
    char digits[20];
    size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + number % 10);
      number /= 10;
    } while (number != 0);
    while (n > 0 && size_ < sizeof(buf_)) buf_[size_++] = digits[--n];
    return *this;
  }
  ReasonBuilder& Add(const Version& v) {
    return Add(v.major()).Add(".").Add(v.minor());
  }
  void AppendTo(std::string* out) const { out->append(buf_, size_); }

 private:
  char buf_[256];
  size_t size_ = 0;
};

FeatureDecision Decide(const Feature& feature,
                       const EffectiveVersions& versions, const GateSet& gates,
                       bool use_min_compat) {
  FeatureDecision d;
  d.feature = &feature;
  d.spec = SelectFeatureSpec(feature.specs, versions.emulation,
                             versions.min_compatibility, use_min_compat);
  if (d.spec != nullptr) {
    d.stage = d.spec->pre_release;
    d.default_enabled = d.spec->default_enabled;
    d.locked_to_default = d.spec->lock_to_default;
  }
  d.enabled = d.default_enabled;

  // featureEnabled: an explicit value, else what AllAlpha/AllBeta set for
  // gates whose spec in force is Alpha/Beta (setUnsetAlphaGates does not look
  // at the lock), else the default.
  const GateSetting* by = gates.Find(feature.name);
  absl::string_view via;
  if (by == nullptr && d.spec != nullptr && feature.name != kAllAlpha &&
      feature.name != kAllBeta) {
    if (d.stage == PreRelease::kAlpha && gates.all_alpha.has_value()) {
      by = &*gates.all_alpha;
      via = kAllAlpha;
    } else if (d.stage == PreRelease::kBeta && gates.all_beta.has_value()) {
      by = &*gates.all_beta;
      via = kAllBeta;
    }
  }
  if (by != nullptr) {
    d.enabled = by->value;
    d.overridden = true;
  }

  d.emulation = versions.emulation.ToMajorMinor();
  d.min_compatibility_rules = use_min_compat;
  if (by != nullptr) {
    d.overridden_via = via;
    d.overridden_in_cluster = by->source == GateSource::kCluster;
    if (d.overridden_in_cluster) d.cluster_origin = gates.cluster_origin;
  }
  return d;
}

}  // namespace

std::string FeatureDecision::Reason() const {
  std::string out;
  AppendReason(&out);
  return out;
}

void FeatureDecision::AppendReason(std::string* out) const {
  ReasonBuilder reason;
  if (spec == nullptr) {
    if (feature == nullptr || feature->specs.empty()) {
      reason.Add("no spec at any version, so off at emulation version ")
          .Add(emulation);
    } else {
      const FeatureSpec& first = feature->specs.front();
      reason.Add("not yet introduced at emulation version ")
          .Add(emulation)
          .Add(" (first spec: ")
          .Add(PreReleaseName(first.pre_release))
          .Add(" in ")
          .Add(first.version)
          .Add(")");
    }
    reason.AppendTo(out);
    return;
  }
  reason.Add(PreReleaseName(spec->pre_release))
      .Add(" since ")
      .Add(spec->version);
  if (spec->min_compatibility_version.has_value() && min_compatibility_rules) {
    reason.Add(" with min-compatibility version >= ")
        .Add(*spec->min_compatibility_version);
  }
  reason.Add(spec->lock_to_default ? ", locked to default " : ", default ")
      .Add(OnOff(spec->default_enabled));
  if (overridden) {
    reason.Add("; overridden ").Add(OnOff(enabled)).Add(" by ");
    if (!overridden_via.empty()) {
      reason.Add(overridden_via).Add(enabled ? "=true in " : "=false in ");
    }
    reason.Add(ShortSourceName(
        overridden_in_cluster ? GateSource::kCluster : GateSource::kRequest,
        cluster_origin));
  }
  reason.AppendTo(out);
}

absl::Status ValidateFeatureSpecs(absl::string_view name,
                                  std::vector<FeatureSpec>& specs,
                                  const Version& binary_version) {
  if (FeatureGatesUseMinCompatibility(binary_version)) {
    return ValidateFrom135(name, specs, binary_version);
  }
  if (FeatureSpecsValidated(binary_version)) {
    return ValidateBefore135(name, specs, binary_version);
  }
  COMPATD_RETURN_IF_ERROR(
      RejectMinCompatibilityBefore135(name, specs, binary_version));
  SortBefore133(specs);
  return absl::OkStatus();
}

}  // namespace compatd::engine

namespace compatd::engine {

const FeatureSpec* SelectFeatureSpec(const std::vector<FeatureSpec>& specs,
                                     const Version& emulation,
                                     const Version& min_compatibility,
                                     bool use_min_compatibility) {
  for (size_t i = specs.size(); i-- > 0;) {
    const FeatureSpec& spec = specs[i];
    if (spec.version > emulation) continue;
    if (use_min_compatibility && spec.min_compatibility_version.has_value() &&
        min_compatibility < *spec.min_compatibility_version) {
      continue;
    }
    return &spec;
  }
  return nullptr;
}

absl::StatusOr<FeatureDecision> DecideFeature(const Catalog& catalog,
                                              const EffectiveVersions& versions,
                                              const VersionQuery& query,
                                              absl::string_view name) {
  const Feature* feature = FindGate(catalog, name, versions.binary);
  if (feature == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("unknown feature gate \"%s\"; %s", name,
                        UnknownGateHint(catalog, name, versions.binary)));
  }
  GateSet gates;
  COMPATD_RETURN_IF_ERROR(BuildGateSet(catalog, versions, query, &gates));
  return Decide(*feature, versions, gates,
                FeatureGatesUseMinCompatibility(versions.binary));
}

absl::StatusOr<std::vector<FeatureDecision>> DecideFeatures(
    const Catalog& catalog, const EffectiveVersions& versions,
    const VersionQuery& query, absl::string_view component) {
  GateSet gates;
  COMPATD_RETURN_IF_ERROR(BuildGateSet(catalog, versions, query, &gates));
  const bool use_min_compat = FeatureGatesUseMinCompatibility(versions.binary);
  std::vector<FeatureDecision> decisions;
  decisions.reserve(component.empty() ? catalog.features.size() : 16);
  for (const Feature& feature : catalog.features) {
    if (!component.empty() && feature.component != component) continue;
    const Feature* at = FeatureAtPatch(catalog, feature, versions.binary);
    if (at == nullptr) continue;
    decisions.push_back(Decide(*at, versions, gates, use_min_compat));
  }
  // The loader keeps features sorted by name; sort anyway so that a
  // hand-built catalog answers the same.
  std::sort(decisions.begin(), decisions.end(),
            [](const FeatureDecision& a, const FeatureDecision& b) {
              return a.feature->name < b.feature->name;
            });
  return decisions;
}

}  // namespace compatd::engine

namespace compatd::engine {

GateFlagCheck CheckFeatureGateFlag(const Catalog& catalog,
                                   const EffectiveVersions& versions,
                                   absl::string_view name, bool value) {
  GateFlagCheck check;
  const Feature* feature = FindGate(catalog, name, versions.binary);
  if (feature == nullptr) {
    check.problem = GateFlagProblem::kUnknown;
    check.message = absl::StrFormat("unrecognized feature gate: %s", name);
    return check;
  }
  const FeatureSpec* spec = SelectAt(*feature, versions);
  // The order of ValidateGateSet: the lock first (AllAlpha/AllBeta have
  // specs, so they never reach the PreAlpha check).
  if (spec != nullptr && spec->lock_to_default &&
      spec->default_enabled != value) {
    check.problem = GateFlagProblem::kLocked;
    check.message = absl::StrFormat(
        "cannot set feature gate %s to %s, feature is locked to %s", name,
        BoolName(value), BoolName(spec->default_enabled));
    return check;
  }
  if (spec == nullptr) {
    check.problem = GateFlagProblem::kNotIntroduced;
    // unsafeSetFromMap names the min-compatibility version too from 1.35
    // (component-base v0.35.0).
    check.message =
        FeatureGatesUseMinCompatibility(versions.binary)
            ? absl::StrFormat(
                  "cannot set feature gate %s to %s, feature is PreAlpha at "
                  "emulated version %s, min compatibility version %s",
                  name, BoolName(value), versions.emulation.ToString(),
                  versions.min_compatibility.ToString())
            : absl::StrFormat(
                  "cannot set feature gate %s to %s, feature is PreAlpha at "
                  "emulated version %s",
                  name, BoolName(value), versions.emulation.ToString());
  }
  return check;
}

absl::StatusOr<std::vector<FeatureDecision>> DecideFeaturesWithFlags(
    const Catalog& catalog, const EffectiveVersions& versions,
    const std::vector<std::pair<std::string, bool>>& flags) {
  GateSet gates;
  for (const auto& [name, value] : flags) {
    gates.settings.push_back({name, value, GateSource::kRequest});
  }
  COMPATD_RETURN_IF_ERROR(ValidateGateSet(catalog, versions, &gates));
  const bool use_min_compat = FeatureGatesUseMinCompatibility(versions.binary);
  std::vector<FeatureDecision> decisions;
  decisions.reserve(catalog.features.size());
  for (const Feature& feature : catalog.features) {
    const Feature* at = FeatureAtPatch(catalog, feature, versions.binary);
    if (at == nullptr) continue;
    decisions.push_back(Decide(*at, versions, gates, use_min_compat));
  }
  std::sort(decisions.begin(), decisions.end(),
            [](const FeatureDecision& a, const FeatureDecision& b) {
              return a.feature->name < b.feature->name;
            });
  return decisions;
}

}  // namespace compatd::engine
