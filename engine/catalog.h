#pragma once

// The in-memory catalog: validated, indexed and immutable once built. Readers
// share it through std::shared_ptr<const Catalog> (see CatalogStore); nothing
// mutates a published one.
//
// Lifetimes: the one rule every engine result follows.
//  1. A decision owns what it holds (strings, vectors, versions), unless
//  2. it borrows from the catalog it was decided on. A borrowing decision says
//     so in its header, the function that makes it takes the catalog as
//     `const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND` (clang's
//     -Wdangling then flags a decision made from a temporary catalog), and the
//     caller keeps the catalog (its shared_ptr) alive as long as the decision.
//     FeatureDecision and SkewDecision borrow; ServedGroupVersion,
//     StorageVersionDecision, EffectiveVersions, StorageVersionAgreement,
//     CRDRemovalPlan and LintReport own.
//  3. Nothing borrows from a VersionQuery: its views are read during the call
//     only. The other borrowers are parses of text (ClientIdentity,
//     FeatureGateFlag), which point into the text they were given, marked the
//     same way; and the engine's own helpers over a catalog
//     (GroupVersionRegistry, ResourceExpirationEvaluator).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/version.h"

namespace compatd::engine {

// A feature gate's lifecycle stage. kPreAlpha is "not yet introduced at this
// version".
enum class PreRelease { kPreAlpha, kAlpha, kBeta, kGA, kDeprecated };

// "PRE-ALPHA", "ALPHA", "BETA", "GA", "DEPRECATED" (component-base's
// spellings).
absl::string_view PreReleaseName(PreRelease stage);

struct FeatureSpec {
  Version version;  // major.minor
  bool default_enabled = false;
  bool lock_to_default = false;
  PreRelease pre_release = PreRelease::kAlpha;
  // Kubernetes 1.35+: the spec applies only when the min-compatibility version
  // is at least this. Holds the inherited value too (an entry without one
  // inherits the previous one's).
  std::optional<Version> min_compatibility_version;
  int line = 0;  // in the catalog file, for error messages
};

// An earlier patch release's form of a gate (the catalog's patchChanges):
// patches of the line before `since` had the specs of
// Catalog::patch_features[before_index], or did not register the gate
// (before_index < 0).
struct PatchVariant {
  Version since;  // major.minor.patch
  int before_index = -1;
};

struct Feature {
  std::string name;
  std::string component;           // may be empty
  std::vector<FeatureSpec> specs;  // validated, in version order
  // The gate's forms in earlier patches of the line, `since` ascending; empty
  // for almost every gate. Read through FeatureAtPatch (engine/patches.h).
  std::vector<PatchVariant> earlier_patches;
  // A planned removal: the first release without the gate (major.minor, after
  // the catalog's binary version). Checked by `compatd lint` only.
  std::optional<Version> removed;
  int line = 0;
};

struct APIResource {
  std::string resource;  // plural, lowercase
  std::string kind;
  std::optional<Version> introduced;  // absent: always existed
  std::optional<Version> deprecated;
  std::optional<Version> removed;
  std::string replacement;       // "group/version" or empty
  std::string replacement_kind;  // empty: the same kind
  bool persisted = true;
  int line = 0;
};

struct APIGroupVersion {
  std::string group;  // "" is core
  std::string version;
  std::optional<bool> enabled_by_default;  // absent: GA on, beta/alpha off
  std::vector<APIResource> resources;
  int line = 0;
};

struct StorageOverride {
  std::string group;
  std::string resource;
  std::string version;
  int line = 0;
};

enum class SkewBase { kMinCompatibility, kEmulation, kBinary };

struct SkewBound {
  SkewBase of = SkewBase::kEmulation;
  int offset = 0;
};

struct SkewRule {
  std::vector<std::string> components;
  SkewBound min;
  SkewBound max;
  int line = 0;
};

// The catalog's cluster.upgradeTarget: a VersionContext (flags in their
// command-line syntax, sorted by key).
struct UpgradeTarget {
  std::string binary_version;  // as written; empty = the catalog's
  std::string emulation_version;
  std::string min_compatibility_version;
  std::string feature_gates;   // "A=true,B=false"
  std::string runtime_config;  // "api/beta=true,batch/v1=false"
  std::optional<bool> emulation_forward_compatible;
  std::optional<bool> runtime_config_emulation_forward_compatible;
  int line = 0;
};

// The catalog's `cluster` section: the defaults of every query's
// VersionContext.
struct ClusterSettings {
  // The cluster's kube-apiserver binary with its patch ("1.35.2"), when a
  // cluster profile said it (cluster/profile.h): the binary of every request
  // without binary_version. Absent: the catalog's binary_version. A catalog's
  // own cluster section never sets it.
  std::optional<Version> binary;
  // Where the settings came from, for messages: empty = the catalog's cluster
  // section ("catalog cluster.emulationVersion"); a profile's values name
  // their file, line and flag ("kube-apiserver.yaml:14 (--emulated-version)").
  std::string source;
  std::string binary_origin;
  std::string emulation_origin;
  std::string min_compatibility_origin;
  std::string feature_gates_origin;
  std::string emulation_version;          // as written; empty = absent
  std::string min_compatibility_version;  // as written; empty = absent
  // --feature-gates as a map, sorted by name.
  std::vector<std::pair<std::string, bool>> feature_gates;
  // --runtime-config as a map, sorted by key.
  std::vector<std::pair<std::string, std::string>> runtime_config;
  std::optional<bool> emulation_forward_compatible;
  std::optional<bool> runtime_config_emulation_forward_compatible;
  std::optional<UpgradeTarget> upgrade_target;
};

struct CRDVersion {
  std::string name;
  bool served = false;
  bool storage = false;
  bool deprecated = false;
};

struct CRDRelease {
  std::string release;  // as written ("v1.9")
  Version version;      // parsed
  std::vector<CRDVersion> versions;
  bool storage_version_migration = false;
  bool managed_fields_cleanup = false;
  int line = 0;
};

struct CRDHistory {
  std::string name;
  std::string project;
  int upgrade_span = 3;
  int deprecation_releases = 1;
  // Releases right after a version stops being served that may serve it
  // again; they do not count as cleanup releases (Cluster API: 1).
  int revert_buffer_releases = 0;
  std::vector<CRDRelease> releases;  // oldest first
  int line = 0;
};

// One group/version/kind of the history of Kubernetes' built-in APIs (the
// catalog's apiHistory): what a manifest scan reads, never served or stored.
struct APIHistoryEntry {
  std::string group;  // "" is core
  std::string version;
  std::string kind;
  std::string resource;  // plural, lowercase; empty when not a resource
  std::optional<Version> introduced;  // absent: unknown (always existed)
  std::optional<Version> deprecated;
  std::optional<Version> removed;
  std::string replacement;       // "group/version" or empty
  std::string replacement_kind;  // empty: the same kind
  // First release whose k8s.io/api no longer has the Go types.
  std::optional<Version> types_deleted;
  // A beta kept on by default from 1.24 (KEP-3136). Absent: the rule.
  std::optional<bool> enabled_by_default;
  int line = 0;
};

// A gate that a patch release inside the catalog's release line changed (the
// catalog's patchChanges): the catalog's spec holds from `since`; earlier
// patches had `before`.
struct PatchChange {
  std::string feature;
  Version since;       // major.minor.patch, inside the catalog's line
  std::string before;  // one phrase: "Beta, default true", "not registered"
  // Whether the patches before `since` registered the gate, and with which
  // specs (Catalog::patch_features[before_index]; -1 when the entry has only
  // the phrase, or the gate was not registered).
  bool registered_before = true;
  int before_index = -1;
  int line = 0;
};

// Whether a catalog's facts come from the release's own sources (kExact) or
// from pre-release ones (kProvisional: a code-freeze tree, beta tags, release
// notes). Every answer says which.
enum class Exactness { kExact, kProvisional };

// "EXACT", "PROVISIONAL".
absl::string_view ExactnessName(Exactness exactness);

// The whole catalog. Built by ParseCatalog() (catalog/catalog_loader.h);
// immutable after.
struct Catalog {
  Version binary_version;  // as parsed (may carry patch and pre-release)
  ClusterSettings cluster;
  std::vector<Feature> features;  // sorted by name
  // File order; within a group, priority order.
  std::vector<APIGroupVersion> apis;
  std::vector<StorageOverride> storage_overrides;
  // The catalog's skewPolicy. Empty means the KEP-4330 table: read the rules
  // through SkewRulesInForce (engine/skew.h), the one place that applies it.
  std::vector<SkewRule> skew_policy;
  std::vector<CRDHistory> crds;
  // The catalog's apiHistory, in file order.
  std::vector<APIHistoryEntry> api_history;
  // The catalog's patchChanges, in file order.
  std::vector<PatchChange> patch_changes;
  // The gates' forms in earlier patches (PatchVariant::before_index and
  // PatchChange::before_index point here). Name and component as the gate's.
  std::vector<Feature> patch_features;
  // The newest patch of the line whose gate changes patch_changes records in
  // full: every patch of the line up to it is answered as itself. Absent: the
  // catalog vouches only for its own patch.
  std::optional<Version> patches_known_through;
  // The catalog's exactness, and why (empty when exact).
  Exactness exactness = Exactness::kExact;
  std::string exactness_reason;

  // Identity, set by the loader. When it was published and as which
  // generation is the serving snapshot's (runtime/serving_snapshot.h).
  std::string digest;  // "sha256:<hex>" of the bytes it was parsed from
  std::string source;  // file path or "embedded:kubernetes-1.36"

  // Indexes, built by the loader.
  // name -> index into features.
  absl::flat_hash_map<std::string, size_t> feature_index;

  // HistoryKey(group, version, kind) -> index into api_history.
  absl::flat_hash_map<std::string, size_t> history_index;

  const Feature* FindFeature(absl::string_view name) const {
    auto it = feature_index.find(name);
    return it == feature_index.end() ? nullptr : &features[it->second];
  }

  // The history of one group/version/kind, or null.
  const APIHistoryEntry* FindHistory(absl::string_view group,
                                     absl::string_view version,
                                     absl::string_view kind) const;
};

// The key of Catalog::history_index: "group/version/kind" ("/v1/Pod" for the
// core group, so that no two keys collide).
std::string HistoryKey(absl::string_view group, absl::string_view version,
                       absl::string_view kind);

}  // namespace compatd::engine
