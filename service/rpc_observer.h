#pragma once

// What the server learns from every call: who called (metadata) and how it
// ended. The server's implementation feeds the metrics and the client tracker;
// tests may use their own.

#include <array>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/support/string_ref.h"

namespace compatd::service {

enum class RpcMethod {
  kGetFeature,
  kListFeatures,
  kGetStorageVersion,
  kListAPIVersions,
  kCheckSkew,
  kResolveVersions,
  kComputeStorageVersionAgreement,
  kPlanVersionRemoval,
  kEvaluate,
  kGetCatalog,
  kWatchCatalog,
  kListClients,
  kLintCatalog,
};

inline constexpr int kRpcMethodCount = 13;

// "GetFeature", ... as in the service definition.
absl::string_view RpcMethodName(RpcMethod method);
// "unary" or "server_stream" (go-grpc-prometheus' grpc_type).
absl::string_view RpcMethodType(RpcMethod method);

inline constexpr absl::string_view kPolicyServiceName =
    "compatd.v1.CompatibilityPolicy";

using ClientMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

class RpcObserver {
 public:
  virtual ~RpcObserver() = default;
  // On the call's thread, before the handler runs. Must not block.
  virtual void OnStart(RpcMethod method, const ClientMetadata& metadata) = 0;
  // When the handler has produced the status (for streams: when the stream
  // ends).
  virtual void OnFinish(RpcMethod method, absl::StatusCode code,
                        absl::Duration latency) = 0;
};

}  // namespace compatd::service
