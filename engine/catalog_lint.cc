#include "engine/catalog_lint.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "engine/api_names.h"
#include "engine/effective_version.h"
#include "engine/storage_version.h"

namespace compatd::engine {
namespace {

// The documented real-world exceptions. Each entry says why Kubernetes does
// what the rule warns about.
constexpr std::array<LintException, 1> kExceptions = {{
    {"ga-feature-not-locked", "feature AllowServiceExternalIPs",
     "KEP-5707 (deprecate Service.spec.externalIPs) adds this kube-proxy gate "
     "in 1.36 as GA since 1.0, default on and unlocked on purpose: it exists "
     "to be switched off. The KEP flips its default to false about 1.40, "
     "locks it about 1.43 and removes it 3 releases after that, which is the "
     "lock-then-3-releases order the rule asks for"},
}};

enum class Stability { kAlpha, kBeta, kGA, kOther };

// Kubernetes' API version forms (apimachinery pkg/version/helpers.go):
// v<N>, v<N>beta<M>, v<N>alpha<M>.
Stability StabilityOf(absl::string_view version) {
  if (!absl::ConsumePrefix(&version, "v") || version.empty() ||
      !absl::ascii_isdigit(static_cast<unsigned char>(version[0]))) {
    return Stability::kOther;
  }
  while (!version.empty() &&
         absl::ascii_isdigit(static_cast<unsigned char>(version[0]))) {
    version.remove_prefix(1);
  }
  if (version.empty()) return Stability::kGA;
  Stability stability;
  if (absl::ConsumePrefix(&version, "beta")) {
    stability = Stability::kBeta;
  } else if (absl::ConsumePrefix(&version, "alpha")) {
    stability = Stability::kAlpha;
  } else {
    return Stability::kOther;
  }
  if (version.empty()) return Stability::kOther;
  for (char c : version) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return Stability::kOther;
    }
  }
  return stability;
}

int64_t MinorsBetween(const Version& from, const Version& to) {
  // Kubernetes has one major version; a catalog spanning two counts the
  // minors of the later one from 0.
  if (to.major() != from.major()) return static_cast<int64_t>(to.minor()) + 1;
  return static_cast<int64_t>(to.minor()) - static_cast<int64_t>(from.minor());
}

// Whether a resource entry is served at `release`.
bool ServedAt(const APIResource& r, const Version& release) {
  if (r.introduced.has_value() &&
      r.introduced->CompareMajorMinor(release) > 0) {
    return false;
  }
  return !r.removed.has_value() || r.removed->CompareMajorMinor(release) > 0;
}

class Linter {
 public:
  explicit Linter(const Catalog& catalog) : catalog_(catalog) {}

  LintReport Run() {
    LintStorageVersions();
    LintApiRemovals();
    LintFeatures();
    LintApiHistory();
    return Finish();
  }

 private:
  void Add(LintSeverity severity, absl::string_view rule, std::string subject,
           const Version& release, std::string message, int line) {
    LintFinding f;
    f.severity = severity;
    f.rule = std::string(rule);
    f.subject = std::move(subject);
    f.release = release.MajorMinorString();
    f.message = std::move(message);
    f.line = line;
    findings_.push_back(std::move(f));
  }

  // The releases the binary can emulate: KubeVersionFloor .. binary.
  std::vector<Version> Releases() const {
    const Version binary = catalog_.binary_version.ToMajorMinor();
    Version release = KubeVersionFloor(catalog_.binary_version);
    if (release > binary) release = binary;
    std::vector<Version> releases;
    for (; release <= binary; release = release.AddMinor(1)) {
      releases.push_back(release);
    }
    return releases;
  }

  void LintStorageVersions() {
    // Every persisted group-resource, once, in catalog order.
    std::vector<std::pair<std::string, std::string>> resources;
    for (const APIGroupVersion& gv : catalog_.apis) {
      for (const APIResource& r : gv.resources) {
        std::pair<std::string, std::string> key{gv.group, r.resource};
        if (std::find(resources.begin(), resources.end(), key) ==
            resources.end()) {
          resources.push_back(std::move(key));
        }
      }
    }
    for (const Version& release : Releases()) {
      // The release's own default: rollback to the release before.
      const Version previous = release.SubtractMinor(1);
      const EffectiveVersions versions{catalog_.binary_version, release,
                                       previous};
      for (const auto& [group, resource] : resources) {
        absl::StatusOr<StorageVersionDecision> decision =
            DecideStorageVersion(catalog_, versions, group, resource);
        // Not persisted (FAILED_PRECONDITION): nothing is stored.
        if (!decision.ok()) continue;
        CheckStorage(group, resource, release, previous, *decision);
      }
    }
  }

  void CheckStorage(const std::string& group, const std::string& resource,
                    const Version& release, const Version& previous,
                    const StorageVersionDecision& decision) {
    const APIResource* stored = nullptr;
    const APIResource* served_before = nullptr;
    std::string served_before_version;
    for (const APIGroupVersion& gv : catalog_.apis) {
      if (gv.group != group) continue;
      for (const APIResource& r : gv.resources) {
        if (r.resource != resource) continue;
        if (gv.version == decision.version) {
          stored = &r;
        } else if (served_before == nullptr &&
                   StabilityOf(gv.version) != Stability::kAlpha &&
                   ServedAt(r, previous)) {
          served_before = &r;
          served_before_version = gv.version;
        }
      }
    }
    // Only alpha (or nothing) before: no rollback guarantee.
    if (stored == nullptr || served_before == nullptr ||
        !stored->introduced.has_value()) {
      return;
    }
    const Version introduced = stored->introduced->ToMajorMinor();
    if (introduced.CompareMajorMinor(previous) <= 0) return;
    const std::string how =
        decision.overridden
            ? " (storage override)"
            : (decision.fallback ? " (no version qualified: the group's "
                                   "preferred version)"
                                 : "");
    const std::string who =
        release.CompareMajorMinor(catalog_.binary_version) == 0
            ? absl::StrCat("kube-apiserver ", release.MajorMinorString())
            : absl::StrFormat("kube-apiserver %s emulating %s",
                              catalog_.binary_version.MajorMinorString(),
                              release.MajorMinorString());
    const std::string subject = GroupResourceString(group, resource);
    if (introduced.CompareMajorMinor(release) == 0) {
      Add(LintSeverity::kError, "storage-version-new-in-release", subject,
          release,
          absl::StrFormat(
              "%s stores %s as %s%s, the version %s introduces, although %s "
              "was served in %s: an apiserver rolled back to %s cannot decode "
              "it (api-changes guide: do not make a new version the storage "
              "version in the release that introduces it)",
              who, subject, decision.version, how, release.MajorMinorString(),
              served_before_version, previous.MajorMinorString(),
              previous.MajorMinorString()),
          stored->line);
      return;
    }
    Add(LintSeverity::kError, "storage-version-not-decodable", subject, release,
        absl::StrFormat(
            "%s stores %s as %s%s, introduced only in %s, although %s was "
            "served in %s: an apiserver rolled back to %s cannot decode it",
            who, subject, decision.version, how, introduced.MajorMinorString(),
            served_before_version, previous.MajorMinorString(),
            previous.MajorMinorString()),
        stored->line);
  }

  void LintApiRemovals() {
    for (const APIGroupVersion& gv : catalog_.apis) {
      const Stability stability = StabilityOf(gv.version);
      if (stability != Stability::kGA && stability != Stability::kBeta) {
        continue;
      }
      const std::string name = GroupVersionString(gv.group, gv.version);
      for (const APIResource& r : gv.resources) {
        if (!r.removed.has_value()) continue;
        const std::string subject = absl::StrCat(name, " ", r.resource);
        const Version removed = r.removed->ToMajorMinor();
        if (stability == Stability::kGA) {
          Add(LintSeverity::kError, "ga-version-removed", subject, removed,
              absl::StrFormat(
                  "%s is removed in %s, but %s is a GA version: GA API "
                  "versions must not be removed within a major version "
                  "(Kubernetes deprecation policy, rule #4a)",
                  subject, removed.MajorMinorString(), gv.version),
              r.line);
          continue;
        }
        if (!r.deprecated.has_value()) {
          Add(LintSeverity::kError, "beta-removed-too-soon", subject, removed,
              absl::StrFormat(
                  "beta %s is removed in %s without being deprecated first: "
                  "a beta version is served 3 releases (or 9 months, "
                  "whichever is longer) after its deprecation (Kubernetes "
                  "deprecation policy, rule #4a)",
                  subject, removed.MajorMinorString()),
              r.line);
          continue;
        }
        const int64_t served = MinorsBetween(*r.deprecated, removed);
        if (served >= 3) continue;
        Add(LintSeverity::kError, "beta-removed-too-soon", subject, removed,
            absl::StrFormat(
                "beta %s is deprecated in %s and removed in %s, %d release(s) "
                "later: a beta version is served 3 releases (or 9 months, "
                "whichever is longer) after its deprecation (Kubernetes "
                "deprecation policy, rule #4a); the earliest removal is %s",
                subject, r.deprecated->MajorMinorString(),
                removed.MajorMinorString(), served,
                r.deprecated->AddMinor(3).MajorMinorString()),
            r.line);
      }
    }
  }

  // apiHistory against apis: a scan reads apis inside the emulation window and
  // the history outside it, so the two must not contradict each other.
  void LintApiHistory() {
    if (catalog_.api_history.empty()) return;
    const std::vector<Version> releases = Releases();
    for (const APIGroupVersion& gv : catalog_.apis) {
      const std::string name = GroupVersionString(gv.group, gv.version);
      for (const APIResource& r : gv.resources) {
        const std::string subject = absl::StrCat(name, " ", r.resource);
        const APIHistoryEntry* entry =
            catalog_.FindHistory(gv.group, gv.version, r.kind);
        if (entry == nullptr) {
          Add(LintSeverity::kError, "api-history-missing-kind", subject,
              catalog_.binary_version.ToMajorMinor(),
              absl::StrFormat("apis has %s %s, which apiHistory does not "
                              "list: a scan outside the emulation window "
                              "would call it unknown; add it to apiHistory",
                              name, r.kind),
              r.line);
          continue;
        }
        std::optional<Version> end = entry->removed;
        if (entry->types_deleted.has_value() &&
            (!end.has_value() || *entry->types_deleted < *end)) {
          end = entry->types_deleted;
        }
        if (!end.has_value()) continue;
        for (const Version& release : releases) {
          if (release.CompareMajorMinor(*end) < 0 || !ServedAt(r, release)) {
            continue;
          }
          Add(LintSeverity::kError, "api-history-removed-but-served", subject,
              release,
              absl::StrFormat(
                  "apiHistory (line %d) ends %s %s in %s, but apis still "
                  "serves it in %s: a scan would call it removed where the "
                  "catalog serves it; correct one of the two",
                  entry->line, name, r.kind, end->MajorMinorString(),
                  release.MajorMinorString()),
              r.line);
          break;
        }
      }
    }
  }

  void LintFeatures() {
    const Version floor = KubeVersionFloor(catalog_.binary_version);
    for (const Feature& feature : catalog_.features) {
      const std::string subject = absl::StrCat("feature ", feature.name);
      if (feature.removed.has_value()) {
        std::optional<std::string> problem = CheckFeatureRemoval(
            feature, *feature.removed, FeatureRemovalThreshold());
        if (problem.has_value()) {
          Add(LintSeverity::kError, "feature-removed-in-emulation-window",
              subject, *feature.removed, *std::move(problem), feature.line);
        }
        continue;
      }
      if (feature.specs.empty()) continue;
      const FeatureSpec& last = feature.specs.back();
      if (last.pre_release != PreRelease::kGA || last.lock_to_default ||
          last.version.CompareMajorMinor(floor) > 0) {
        continue;
      }
      Add(LintSeverity::kWarning, "ga-feature-not-locked", subject,
          last.version,
          absl::StrFormat(
              "%s is GA since %s, for every release kube-apiserver %s can "
              "emulate, and still not locked to its default: a gate goes "
              "only 3 releases after it is locked (verifyFeatureRemoval), so "
              "locking it in %s allows removing it in %s",
              feature.name, last.version.MajorMinorString(),
              catalog_.binary_version.MajorMinorString(),
              catalog_.binary_version.AddMinor(1).MajorMinorString(),
              catalog_.binary_version.AddMinor(4).MajorMinorString()),
          last.line > 0 ? last.line : feature.line);
    }
  }

  LintReport Finish() {
    LintReport report;
    for (LintFinding& f : findings_) {
      for (const LintException& e : LintExceptions()) {
        if (e.rule == f.rule && e.subject == f.subject) {
          f.exception = std::string(e.reason);
        }
      }
      if (!f.exception.empty()) {
        ++report.exceptions;
      } else if (f.severity == LintSeverity::kError) {
        ++report.errors;
      } else {
        ++report.warnings;
      }
    }
    auto key = [](const LintFinding& f) {
      const int group = !f.exception.empty()
                            ? 2
                            : (f.severity == LintSeverity::kError ? 0 : 1);
      const Version release =
          Version::Parse(f.release).value_or(Version::MajorMinor(0, 0));
      return std::make_tuple(group, release.major(), release.minor(), f.subject,
                             f.rule);
    };
    std::stable_sort(findings_.begin(), findings_.end(),
                     [&](const LintFinding& a, const LintFinding& b) {
                       return key(a) < key(b);
                     });
    report.findings = std::move(findings_);
    return report;
  }

  const Catalog& catalog_;
  std::vector<LintFinding> findings_;
};

absl::string_view PreReleaseWord(PreRelease stage) {
  switch (stage) {
    case PreRelease::kPreAlpha:
      return "PreAlpha";
    case PreRelease::kAlpha:
      return "Alpha";
    case PreRelease::kBeta:
      return "Beta";
    case PreRelease::kGA:
      return "GA";
    case PreRelease::kDeprecated:
      return "Deprecated";
  }
  return "Unknown";
}

}  // namespace

absl::string_view LintSeverityName(LintSeverity severity) {
  return severity == LintSeverity::kError ? "error" : "warning";
}

absl::Span<const LintException> LintExceptions() { return kExceptions; }

std::optional<std::string> CheckFeatureRemoval(const Feature& feature,
                                               const Version& removed,
                                               const Version& threshold) {
  // The gate's last state before the release that drops it.
  const FeatureSpec* last = nullptr;
  for (const FeatureSpec& spec : feature.specs) {
    if (spec.version.CompareMajorMinor(removed) < 0) last = &spec;
  }
  if (last == nullptr) return std::nullopt;  // never shipped before removal
  const std::string removal = absl::StrFormat(
      "feature %s, removed in %s,", feature.name, removed.MajorMinorString());
  switch (last->pre_release) {
    case PreRelease::kPreAlpha:
    case PreRelease::kAlpha:
      return std::nullopt;  // alpha gates may go at any time
    case PreRelease::kBeta:
      return absl::StrFormat(
          "%s is Beta since %s: feature %s cannot be removed while in beta "
          "(test/compatibility_lifecycle verifyFeatureRemoval); deprecate it "
          "or graduate it and lock it first",
          removal, last->version.MajorMinorString(), feature.name);
    case PreRelease::kGA:
    case PreRelease::kDeprecated:
      break;
  }
  if (!last->lock_to_default) {
    return absl::StrFormat(
        "%s is %s since %s without lockToDefault: feature %s cannot be "
        "removed because it is in GA or Deprecated state and is not locked to "
        "default (verifyFeatureRemoval); lock it, then keep it 3 releases",
        removal, PreReleaseWord(last->pre_release),
        last->version.MajorMinorString(), feature.name);
  }
  // Locked at or before the threshold (1.31, the first release with
  // emulation): no retention needed.
  if (last->version.CompareMajorMinor(threshold) <= 0) return std::nullopt;
  const Version earliest = last->version.AddMinor(3);
  if (removed.CompareMajorMinor(earliest) >= 0) return std::nullopt;
  return absl::StrFormat(
      "%s is locked to its default only since %s: feature %s cannot be "
      "removed until version %s (required for emulation support): a %s "
      "binary emulates down to %s, where the gate's earlier state still "
      "applies "
      "(verifyFeatureRemoval; KEP-4330 feature gate lifecycles)",
      removal, last->version.MajorMinorString(), feature.name,
      earliest.MajorMinorString(), removed.MajorMinorString(),
      removed.SubtractMinor(3).MajorMinorString());
}

LintReport LintCatalog(const Catalog& catalog) { return Linter(catalog).Run(); }

}  // namespace compatd::engine
