#include "engine/features.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/status_macros.h"

namespace compatd::engine {
namespace {

// component-base's AddVersioned gained the equal-version / min-compatibility /
// no-transition-without-change / no-unlock rules in Kubernetes 1.35.
bool HasMinCompatibilityRules(const Version& binary_version) {
  return binary_version.CompareMajorMinor(Version::MajorMinor(1, 35)) >= 0;
}

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
      HasMinCompatibilityRules(binary_version) ? "1.35 and later"
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

// component-base featuregate AddVersioned before 1.35 (v0.31.0 .. v0.34.x):
// versions strictly increase, no patch, deprecated-first needs minor 0,
// no stability regression, Deprecated is terminal.
absl::Status ValidateBefore135(absl::string_view name,
                               const std::vector<FeatureSpec>& specs,
                               const Version& binary_version) {
  bool was_beta = false, was_ga = false, was_deprecated = false;
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

}  // namespace

absl::Status ValidateFeatureSpecs(absl::string_view name,
                                  std::vector<FeatureSpec>& specs,
                                  const Version& binary_version) {
  if (HasMinCompatibilityRules(binary_version)) {
    return ValidateFrom135(name, specs, binary_version);
  }
  return ValidateBefore135(name, specs, binary_version);
}

}  // namespace compatd::engine
