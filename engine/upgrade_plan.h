#pragma once

// An upgrade plan from one set of kube-apiserver versions and flags ("from",
// the cluster now) to another ("to"), in KEP-4330's safe order: binaries
// first with the emulation version pinned, then the emulation version one
// minor at a time, then the min-compatibility version one minor at a time
// (kubernetes/enhancements keps/sig-architecture/4330-compatibility-versions,
// "Motivation" and "User Stories", docs/kubernetes-rules.md#upgrade-plan).
// Every check of every step is one of the engine's own decisions at that
// step's versions: the feature gate flags (features.h), the served APIs
// (api_availability.h), storage versions (storage_version.h) and KEP-2339
// agreement (storage_agreement.h), skew (skew.h).
//
// Each end runs a kube-apiserver binary of one release line, and each step
// is answered from the catalog of the binary it runs (engine/catalog_set.h).
// From binary A to binary B > A the plan hops one minor at a time, as
// Kubernetes supports (A+1, ..., B, each hop in the order above on its own
// binary); where B's emulation range reaches back to from's emulation
// version, the skip-level path of KEP-4330's "Motivation" (binaries straight
// to B emulating from's release, then emulation one minor at a time) is an
// alternative, labelled as not supported by Kubernetes' version skew policy.
//
//   from {emulation 1.33}, to {emulation 1.36} on the 1.36 catalog:
//   step 1 binaries 1.36 at 1.33/1.33; steps 2-4 emulation 1.34, 1.35, 1.36
//   (min-compatibility 1.33); step 5 min-compatibility 1.34; step 6 1.35.
//
//   from {binary 1.33}, to {binary 1.36}: hops to the 1.34, 1.35 and 1.36
//   binaries, each "binaries 1.3x" (emulation held), then "emulation 1.3x";
//   the alternative path: binaries 1.36 emulating 1.33, then emulation 1.34,
//   1.35, 1.36.

#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/statusor.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/effective_version.h"
#include "engine/query.h"

namespace compatd::engine {

// A client component to check against each step's skew allowance.
struct PlanClient {
  std::string component;
  std::string version;  // as Version::Parse reads it
  // Where it came from, for the reason: "clients[2]" (the request), or
  // "recorded" (ListClients).
  std::string source;
  // A request's client must be judgeable (INVALID_ARGUMENT otherwise); a
  // recorded one the policy cannot judge is skipped.
  bool required = false;
};

struct UpgradePlanQuery {
  VersionQuery from;
  VersionQuery to;
  std::vector<PlanClient> clients;
};

enum class PlanSection {
  kFlags,         // flags kube-apiserver would refuse to start with
  kFeatureGates,  // enabled state, default or stage changes
  kAPIs,          // group-versions/resources that stop or start being served
  kStorage,       // storage version changes and KEP-2339 disagreement
  kRollback,      // the oldest release each step can roll back to
  kClients,       // clients outside the skew allowance
};

// "flags", "feature_gates", "apis", "storage", "rollback", "clients".
absl::string_view PlanSectionName(PlanSection section);

// One finding. Owns what it holds (engine/catalog.h, "Lifetimes").
struct PlanItem {
  PlanSection section = PlanSection::kFlags;
  int step = 0;         // 1-based index into UpgradePlan::steps
  std::string release;  // the version the step moves to ("1.34")
  std::string subject;  // "--feature-gates WatchList=false", "batch/v1beta1"
  std::string rule;     // "feature-gate-locked", "api-stops-serving", ...
  std::string reason;   // what happens and which rule says so
  std::string action;   // what to do
  // kube-apiserver refuses to start, or a client stops working, until the
  // action is taken.
  bool blocking = false;
};

// A client's skew verdict at one step (every checked client, every step).
struct PlanClientVerdict {
  std::string component;
  std::string version;
  std::string source;       // as PlanClient::source
  std::string verdict;      // "allowed", "too-old", "too-new"
  std::string min_version;  // the allowance at the step, major.minor
  std::string max_version;
};

struct UpgradeStep {
  int number = 0;  // 1-based
  // "binaries" (a restart on the same release line), "binaries 1.34" (a hop
  // to another line), "emulation 1.34", "min-compatibility 1.34".
  std::string name;
  EffectiveVersions versions;
  std::string action;  // the flags to run every kube-apiserver with
  // The oldest release the cluster can roll back to once the step is done:
  // its min-compatibility version.
  std::string rollback_to;
  // The catalog that answered the step: "<source> (kube-apiserver 1.34.7)".
  std::string catalog;
  std::vector<PlanClientVerdict> clients;
};

// A StorageVersionMigration (KEP-4192) a step needs: the stored objects of
// one group-resource rewritten in the step's new storage version, in the
// storagemigration.k8s.io version the step's binary has.
struct StorageMigration {
  int step = 0;         // 1-based, as PlanItem::step
  std::string release;  // as PlanItem::release
  std::string group;    // "" is core
  std::string resource;
  std::string from_version;  // storage version before the step ("v1beta1")
  std::string to_version;    // after it ("v1")
  // "storagemigration.k8s.io/v1" (1.37+), ".../v1beta1" (1.35, 1.36),
  // ".../v1alpha1" (1.30-1.34).
  std::string api_version;
  // metadata.name: "compatd-step-3-deployments.apps".
  std::string name;
  // What the cluster needs before the object can be created: empty, or
  // "--runtime-config=storagemigration.k8s.io/v1beta1=true and
  // --feature-gates=StorageVersionMigrator=true".
  std::string needs;
  // The object as YAML, ready for `kubectl apply -f -`.
  std::string manifest;
};

// One way from `from` to `to`.
struct UpgradePath {
  // "one binary", "one minor at a time", "skip-level through
  // --emulated-version".
  std::string name;
  bool supported = false;  // whether Kubernetes supports it
  std::string support;     // which rule says so
  std::vector<UpgradeStep> steps;
  // By step, then section, then subject.
  std::vector<PlanItem> items;
  int blockers = 0;  // items with `blocking`
  std::string reason;
  // One per storage-version-changes item, in the same order.
  std::vector<StorageMigration> migrations;
};

struct UpgradePlan {
  EffectiveVersions from;
  EffectiveVersions to;
  // The path Kubernetes supports (one binary, or one minor at a time): its
  // name, support, steps, items, blockers and reason.
  UpgradePath path;
  // Other paths (the skip-level one where B's emulation range allows it).
  std::vector<UpgradePath> alternatives;

  // path's, for callers of one path.
  const std::vector<UpgradeStep>& steps() const { return path.steps; }
  const std::vector<PlanItem>& items() const { return path.items; }
  int blockers() const { return path.blockers; }
};

// The plan from the catalog's cluster section (an empty `from`) to its
// cluster.upgradeTarget (`to`; the views point into the catalog). The catalog
// must have a target.
UpgradePlanQuery UpgradeTargetQuery(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND);

// The plan between two states of the lines' binaries (an empty binary version
// is the set's default line). INVALID_ARGUMENT, the message starting with the
// field ("from.", "to.", "clients[i]."), for: a binary version that is
// malformed or of a line the set has no catalog for (naming the lines); a
// target binary older than from's; a line missing between from's and to's
// (the hops need every one); versions kube-apiserver refuses
// (ResolveEffectiveVersions);
// flags the cluster could not be running with now (from's feature gates or
// runtime config refused at from); malformed flag strings; a target older
// than the start (emulation or min-compatibility: plan a rollback with
// emulation instead); a request client of a component no skew rule names or
// with a malformed version. Entries of from's or to's flags that the target
// refuses are items, not errors. Pure and thread-safe; the plan owns
// everything it holds.
absl::StatusOr<UpgradePlan> PlanUpgrade(const CatalogSet& lines,
                                        const UpgradePlanQuery& query);

// The plan on one catalog: both ends must be its binary's line (the set of
// that one catalog).
absl::StatusOr<UpgradePlan> PlanUpgrade(const Catalog& catalog,
                                        const UpgradePlanQuery& query);

}  // namespace compatd::engine
