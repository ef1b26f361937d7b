#pragma once

// compatd as a Cluster API Runtime Extension (docs/cluster-api.md): the
// Runtime SDK's paths on the HTTPS front door, answering the exact JSON of
// cluster-api's api/runtime/hooks/v1alpha1 types (v1.14.0), over the same
// plan the PlanUpgrade RPC makes (api::PolicyHandlers::PlanUpgrade).
//
//   POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery
//        DiscoveryRequest -> DiscoveryResponse listing the handlers below
//   POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook, lowercased>/<name>
//        <Hook>Request -> <Hook>Response, one handler per hook (kCapiHandlers)
//
// The path is catalog.GVHToPath's ("/<group>/<version>/<lower(hook)>/
// <lower(name)>"); Cluster API posts JSON with apiVersion and kind set and a
// "?timeout=10s" query (ignored), and reads any status but 200 as a failed
// call. Every answer to a known path is 200 with status Success or Failure;
// an unknown path is 404 and a method other than POST 405, both failed calls
// for Cluster API.
//
// What each handler answers:
//   GenerateUpgradePlan        controlPlaneUpgrades: one version per minor
//                              after fromControlPlaneKubernetesVersion, each
//                              the patch release of that line's catalog, the
//                              last the request's toKubernetesVersion;
//                              workersUpgrades only where the kubelet skew
//                              (CheckSkew at each control-plane step) forces
//                              an intermediate step. Failure naming a line
//                              compatd has no catalog of.
//   BeforeClusterUpgrade       the plan from fromKubernetesVersion to
//                              toKubernetesVersion (every hop);
//   BeforeControlPlaneUpgrade  the plan of the one step from -> to;
//     both Failure (or Success with retryAfterSeconds, settings
//     "blockWith: retry") listing the blockers: --feature-gates and
//     --runtime-config entries the next binary refuses, clients out of skew,
//     APIs still called that stop being served.
//   BeforeWorkersUpgrade       kubelet toKubernetesVersion against every
//                              control-plane version until the workers' next
//                              step (CheckSkew).
//   AfterControlPlaneUpgrade   the StorageVersionMigrations of the hop to
//                              kubernetesVersion's line in the message, and
//                              retryAfterSeconds until the Cluster carries
//                              the annotation kMigratedAnnotation with that
//                              minor (settings "storageMigrations: report"
//                              only reports).
//   AfterWorkersUpgrade, AfterClusterUpgrade: Success with a summary.
//
// Settings (the ExtensionConfig's spec.settings, as Cluster API sends them
// in every request; docs/cluster-api.md has the table): featureGates,
// runtimeConfig (kube-apiserver's syntax), featureGatesVariable,
// runtimeConfigVariable (names of the Cluster's topology variables holding
// them), kubeadmControlPlane (a KubeadmControlPlane as YAML or JSON: its
// apiServer extraArgs), checks.flags / checks.clients / checks.apis
// (block | warn | off), blockWith (failure | retry), retryAfterSeconds,
// storageMigrations (wait | report). A setting compatd does not know, or a
// value it cannot read, is a Failure naming it.
//
// Bad input (not JSON, another apiVersion or kind, a missing required field,
// a version that is not semver, a target older than the start) is a Failure
// with the reason and a log line; never a Success.

#include <cstddef>

#include "absl/strings/string_view.h"
#include "api/handlers.h"
#include "http/server.h"
#include "runtime/capi_verdicts.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::gateway {

inline constexpr absl::string_view kCapiHooksApiVersion =
    "hooks.runtime.cluster.x-k8s.io/v1alpha1";
// Every Runtime SDK path starts with it.
inline constexpr absl::string_view kCapiPathPrefix =
    "/hooks.runtime.cluster.x-k8s.io/v1alpha1/";
inline constexpr absl::string_view kCapiDiscoveryPath =
    "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery";

// The annotation AfterControlPlaneUpgrade waits for: its value the
// Kubernetes version (any patch of the minor) whose storage migrations are
// done ("v1.35.4").
inline constexpr absl::string_view kMigratedAnnotation =
    "compatd/storage-migrations-done";

// One handler compatd registers (DiscoveryResponse.handlers).
struct CapiHandler {
  absl::string_view hook;  // "BeforeClusterUpgrade"
  absl::string_view name;  // "before-cluster-upgrade" (a DNS-1123 label)
  absl::string_view path;  // GVHToPath(hook, name)
  int timeout_seconds;     // 1..30 (Cluster API's discovery validation)
  absl::string_view failure_policy;  // "Fail" or "Ignore"
  bool retry_response;               // the response has retryAfterSeconds
};

inline constexpr CapiHandler kCapiHandlers[] = {
    {"GenerateUpgradePlan", "upgrade-plan",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/generateupgradeplan/"
     "upgrade-plan",
     10, "Fail", false},
    {"BeforeClusterUpgrade", "before-cluster-upgrade",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterupgrade/"
     "before-cluster-upgrade",
     20, "Fail", true},
    {"BeforeControlPlaneUpgrade", "before-control-plane-upgrade",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforecontrolplaneupgrade/"
     "before-control-plane-upgrade",
     20, "Fail", true},
    {"AfterControlPlaneUpgrade", "after-control-plane-upgrade",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/aftercontrolplaneupgrade/"
     "after-control-plane-upgrade",
     20, "Fail", true},
    {"BeforeWorkersUpgrade", "before-workers-upgrade",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeworkersupgrade/"
     "before-workers-upgrade",
     10, "Fail", true},
    {"AfterWorkersUpgrade", "after-workers-upgrade",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/afterworkersupgrade/"
     "after-workers-upgrade",
     10, "Ignore", true},
    {"AfterClusterUpgrade", "after-cluster-upgrade",
     "/hooks.runtime.cluster.x-k8s.io/v1alpha1/afterclusterupgrade/"
     "after-cluster-upgrade",
     10, "Ignore", true},
};

// Whether `path` is under kCapiPathPrefix.
bool IsCapiPath(absl::string_view path);

// The metrics route of a Runtime SDK path: the handler's path, the discovery
// path, or kCapiPathPrefix for any other (bounded).
absl::string_view CapiRoute(absl::string_view path);

class CapiExtension final {
 public:
  // `handlers` must outlive this; `metrics` and `verdicts` may be null.
  CapiExtension(const api::PolicyHandlers* handlers,
                const runtime::ServiceMetrics* metrics,
                runtime::CapiVerdicts* verdicts);

  // Answers one request under kCapiPathPrefix from `snapshot` (null: 503,
  // which Cluster API retries). Thread-safe.
  void Serve(const runtime::ServingSnapshot* snapshot,
             const http::Request& request, http::Response* response) const;

 private:
  const api::PolicyHandlers* handlers_;
  const runtime::ServiceMetrics* metrics_;
  runtime::CapiVerdicts* verdicts_;
};

}  // namespace compatd::gateway
