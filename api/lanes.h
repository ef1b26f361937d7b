#pragma once

// Which lane a call runs in, one table for both ports (gRPC and the HTTP
// front door). Light calls (every decision RPC, admission, Gatekeeper,
// health, metrics, the status page) are answered where they arrive, on the
// transport's threads; heavy ones (a scan, a plan, a lint, a large Evaluate)
// run on the heavy lane's bounded pool (base/work_pool.h; --heavy-workers,
// --heavy-queue), and when it is full the caller gets RESOURCE_EXHAUSTED
// (gRPC) or 429 with Retry-After (HTTP) at once. So a light call never waits
// behind a heavy one (docs/limits.md).
//
// Adding an RPC or an HTTP route to a lane is one row of kLaneRules:
//   {"ScanObjects", Lane::kHeavy},        // an RPC, by its name (both ports)
//   {"/audit/v1/events", Lane::kHeavy},   // an HTTP route, by its path
// Anything without a row is light. A new lane with its own pool is one
// enumerator of Lane, its name in LaneName() and its pool's flags (service/).

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "api/rpcs.h"
#include "base/work_pool.h"
#include "compatd/v1/compatd.pb.h"

namespace compatd::api {

enum class Lane {
  kLight,  // answered on the transport's own threads
  kHeavy,  // the heavy pool
};
inline constexpr int kLaneCount = 2;

// "light", "heavy": the metrics' lane label.
absl::string_view LaneName(Lane lane);

struct LaneRule {
  absl::string_view name;  // an RPC's name, or an HTTP route's path
  Lane lane;
};

// Every RPC and route that is not light. Evaluate's row is its lane when its
// items are not known yet; LaneOf(EvaluateRequest) refines it.
inline constexpr LaneRule kLaneRules[] = {
    {"ScanObjects", Lane::kHeavy},
    {"PlanUpgrade", Lane::kHeavy},
    {"LintCatalog", Lane::kHeavy},
    {"Evaluate", Lane::kHeavy},
    // Cluster API's hooks that make a plan (gateway/capi_extension.h);
    // discovery, GenerateUpgradePlan and the other hooks are light.
    {"/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterupgrade/"
     "before-cluster-upgrade",
     Lane::kHeavy},
    {"/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforecontrolplaneupgrade/"
     "before-control-plane-upgrade",
     Lane::kHeavy},
    {"/hooks.runtime.cluster.x-k8s.io/v1alpha1/aftercontrolplaneupgrade/"
     "after-control-plane-upgrade",
     Lane::kHeavy},
};

// A size rule besides the rows: CheckCelExpression (a call, or an Evaluate
// item) whose request is more than this many bytes is heavy, whatever its
// row says. Reading CEL costs about 0.23 ms per KiB (a 100 KB expression:
// 23 ms of CPU and a 617 KB answer), so 16 callers of 100 KB expressions held
// light calls to 246-371 ms on the light lane (issue 36); at 16 KiB one
// costs about 4 ms. Measured by the request's serialized size (gRPC) or its
// body's (HTTP), and by the expression's for an Evaluate item.
inline constexpr size_t kLightCelBytes = 16 * 1024;

// An Evaluate call is light when its request is at most this many bytes
// (then it is read to look at its items) ...
inline constexpr size_t kLightEvaluateBytes = 64 * 1024;
// ... it has at most this many items, and none of them is heavy.
inline constexpr int kLightEvaluateItems = 64;

// The row's lane of an RPC name or HTTP path; kLight without a row.
Lane LaneOf(absl::string_view rpc_or_route);
Lane LaneOf(Rpc rpc);
// Evaluate's lane from its items.
Lane LaneOf(const v1::EvaluateRequest& request);

// The lane of a gRPC call of `rpc` whose serialized request is
// `request_bytes` long: its RPC's row; an Evaluate of at most
// kLightEvaluateBytes by its items, which `parse(v1::EvaluateRequest*)`
// reads (false when they do not decode: the call is refused at once, in the
// light lane). The server (service/policy_service.cc) and compatd-soak decide
// with it.
template <typename Parse>
Lane LaneOfCall(Rpc rpc, size_t request_bytes, Parse parse) {
  if (rpc == Rpc::kCheckCelExpression && request_bytes > kLightCelBytes) {
    return Lane::kHeavy;
  }
  const Lane lane = LaneOf(rpc);
  if (rpc != Rpc::kEvaluate || lane == Lane::kLight ||
      request_bytes > kLightEvaluateBytes) {
    return lane;
  }
  v1::EvaluateRequest request;
  if (!parse(&request)) return Lane::kLight;
  return LaneOf(request);
}

// What a caller refused by a full pool reads (RESOURCE_EXHAUSTED, 429):
// "the heavy lane is full (1 running, 8 waiting; --heavy-workers,
// --heavy-queue): retry in a few seconds".
std::string LaneFullMessage(const base::WorkPool& pool);
// The HTTP answer's Retry-After, in seconds.
inline constexpr int kLaneFullRetryAfterSeconds = 2;

}  // namespace compatd::api
