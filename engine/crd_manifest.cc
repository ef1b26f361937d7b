#include "engine/crd_manifest.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/crd_removal.h"

namespace compatd::engine {
namespace {

bool SameVersions(const std::vector<CRDVersion>& a,
                  const std::vector<CRDVersion>& b) {
  if (a.size() != b.size()) return false;
  for (const CRDVersion& x : a) {
    const bool found =
        std::any_of(b.begin(), b.end(), [&](const CRDVersion& y) {
          return y.name == x.name && y.served == x.served &&
                 y.storage == x.storage;
        });
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::vector<CRDManifestFinding> CheckCRDManifest(
    const Catalog& catalog, absl::string_view name,
    const std::vector<CRDVersion>& versions,
    const std::vector<std::string>& stored_versions) {
  std::vector<CRDManifestFinding> findings;
  absl::flat_hash_set<std::string> listed;
  int storage = 0;
  for (const CRDVersion& version : versions) {
    listed.insert(version.name);
    if (version.storage) ++storage;
  }
  for (const std::string& stored : stored_versions) {
    if (listed.contains(stored)) continue;
    findings.push_back(CRDManifestFinding{
        "stored-version-not-listed", stored, "",
        absl::StrFormat(
            "CRD %s: status.storedVersions lists %s, which spec.versions no "
            "longer has: objects stored in %s were not migrated to the "
            "storage version, and kube-apiserver rejects the CRD (\"must "
            "appear in spec.versions\")",
            name, stored, stored)});
  }
  if (!versions.empty() && storage != 1) {
    findings.push_back(CRDManifestFinding{
        "storage-versions", "", "",
        absl::StrFormat("CRD %s: %d versions are marked storage; a CRD has "
                        "exactly one storage version",
                        name, storage)});
    return findings;
  }
  const CRDHistory* history = nullptr;
  for (const CRDHistory& h : catalog.crds) {
    if (h.name == name) history = &h;
  }
  if (history == nullptr || history->releases.empty() || versions.empty()) {
    return findings;
  }
  // The release the manifest is: the last one with the same versions, else
  // one after the history's last.
  CRDHistory extended = *history;
  std::string release;
  for (const CRDRelease& r : history->releases) {
    if (SameVersions(r.versions, versions)) release = r.release;
  }
  std::string taken_as;
  if (release.empty()) {
    const CRDRelease& last = history->releases.back();
    CRDRelease next = last;
    next.version =
        Version::MajorMinor(last.version.major(), last.version.minor() + 1);
    next.release = absl::StrCat(absl::StartsWith(last.release, "v") ? "v" : "",
                                next.version.MajorMinorString());
    next.versions = versions;
    next.line = 0;
    release = next.release;
    extended.releases.push_back(std::move(next));
    taken_as =
        absl::StrFormat(" (taken as release %s, after the history's last, %s)",
                        release, last.release);
  } else {
    taken_as = absl::StrFormat(" (the versions of release %s)", release);
  }
  absl::flat_hash_set<std::string> planned;
  absl::flat_hash_set<std::string> seen;
  for (const CRDRelease& r : extended.releases) {
    for (const CRDVersion& v : r.versions) {
      if (!planned.insert(v.name).second) continue;
      absl::StatusOr<CRDRemovalPlan> plan =
          PlanCRDVersionRemoval(extended, v.name);
      if (!plan.ok()) continue;
      for (const CRDRemovalViolation& violation : plan->violations) {
        if (violation.release != release) continue;
        if (!seen.insert(absl::StrCat(violation.rule, "\n", violation.message))
                 .second) {
          continue;
        }
        findings.push_back(CRDManifestFinding{
            violation.rule, v.name, release,
            absl::StrCat("CRD ", name, taken_as, ": ", violation.message)});
      }
    }
  }
  return findings;
}

}  // namespace compatd::engine
