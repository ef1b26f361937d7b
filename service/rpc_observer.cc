#include "service/rpc_observer.h"

namespace compatd::service {

absl::string_view RpcMethodName(RpcMethod method) {
  switch (method) {
    case RpcMethod::kGetFeature:
      return "GetFeature";
    case RpcMethod::kListFeatures:
      return "ListFeatures";
    case RpcMethod::kGetStorageVersion:
      return "GetStorageVersion";
    case RpcMethod::kListAPIVersions:
      return "ListAPIVersions";
    case RpcMethod::kCheckSkew:
      return "CheckSkew";
    case RpcMethod::kResolveVersions:
      return "ResolveVersions";
    case RpcMethod::kComputeStorageVersionAgreement:
      return "ComputeStorageVersionAgreement";
    case RpcMethod::kPlanVersionRemoval:
      return "PlanVersionRemoval";
    case RpcMethod::kEvaluate:
      return "Evaluate";
    case RpcMethod::kGetCatalog:
      return "GetCatalog";
    case RpcMethod::kWatchCatalog:
      return "WatchCatalog";
    case RpcMethod::kListClients:
      return "ListClients";
    case RpcMethod::kLintCatalog:
      return "LintCatalog";
  }
  return "Unknown";
}

absl::string_view RpcMethodType(RpcMethod method) {
  return method == RpcMethod::kWatchCatalog ? "server_stream" : "unary";
}

}  // namespace compatd::service
