#pragma once

// The API's RPCs: the one list every other list derives from (the gRPC
// service's overrides and its observer, the handlers, the metrics' methods,
// `compatd eval`, the soak test). tests/api/rpcs_test.cc holds it to the
// proto's ServiceDescriptor: same methods, same order, same streaming.

#include <optional>

#include "absl/strings/string_view.h"

// X(Name) for every unary RPC of compatd.v1.CompatibilityPolicy, in the
// service definition's order; the handler, request and response are
// PolicyHandlers::Name, v1::Name##Request and v1::Name##Response.
#define COMPATD_UNARY_RPCS(X)       \
  X(GetFeature)                     \
  X(ListFeatures)                   \
  X(GetStorageVersion)              \
  X(ListAPIVersions)                \
  X(CheckSkew)                      \
  X(ResolveVersions)                \
  X(ComputeStorageVersionAgreement) \
  X(PlanVersionRemoval)             \
  X(PlanUpgrade)                    \
  X(LintCatalog)                    \
  X(ScanObjects)                    \
  X(Evaluate)                       \
  X(GetCatalog)                     \
  X(ListClients)                    \
  X(ListApiUsage)                   \
  X(CheckCelExpression)

namespace compatd::api {

inline constexpr absl::string_view kServiceName =
    "compatd.v1.CompatibilityPolicy";

enum class Rpc {
#define COMPATD_RPC_ENUMERATOR(Name) k##Name,
  COMPATD_UNARY_RPCS(COMPATD_RPC_ENUMERATOR)
#undef COMPATD_RPC_ENUMERATOR
  // The one server-streaming RPC (answered by the transport, not a handler).
  kWatchCatalog,
};

inline constexpr int kRpcCount = static_cast<int>(Rpc::kWatchCatalog) + 1;

// "GetFeature", ... as in the service definition.
absl::string_view RpcName(Rpc rpc);
// True for WatchCatalog.
bool IsServerStreaming(Rpc rpc);

// The RPC a name means: "GetFeature", "/compatd.v1.CompatibilityPolicy/
// GetFeature" (a gRPC path) and grpcurl's "compatd.v1.CompatibilityPolicy.
// GetFeature" all name the same one.
std::optional<Rpc> FindRpc(absl::string_view name);

}  // namespace compatd::api
