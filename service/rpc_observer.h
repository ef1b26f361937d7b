#pragma once

// What the server learns from every call: who called (metadata) and how it
// ended. The server's implementation feeds the metrics and the client tracker;
// tests may use their own.

#include <array>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/rpcs.h"
#include "grpcpp/support/string_ref.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::service {

inline constexpr absl::string_view kPolicyServiceName = api::kServiceName;

using ClientMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

class RpcObserver {
 public:
  virtual ~RpcObserver() = default;
  // On the call's thread, before the handler runs, with the snapshot the call
  // is answered from (null before the first publish). Must not block.
  virtual void OnStart(api::Rpc rpc, const ClientMetadata& metadata,
                       const runtime::ServingSnapshot* snapshot) = 0;
  // When the handler has produced the status (for streams: when the stream
  // ends).
  virtual void OnFinish(api::Rpc rpc, absl::StatusCode code,
                        absl::Duration latency) = 0;
};

// The server's observer: every call's gRPC metrics (go-grpc-prometheus'
// families), and its client (x-kubernetes-component / -version metadata, else
// the User-Agent) recorded against the call's own snapshot.
class RecordingObserver final : public RpcObserver {
 public:
  // Both must outlive the observer; `clients` may be null.
  RecordingObserver(const runtime::ServiceMetrics* metrics,
                    runtime::ClientTracker* clients);

  void OnStart(api::Rpc rpc, const ClientMetadata& metadata,
               const runtime::ServingSnapshot* snapshot) override;
  void OnFinish(api::Rpc rpc, absl::StatusCode code,
                absl::Duration latency) override;

 private:
  runtime::ClientTracker* const clients_;
  std::array<const runtime::MethodMetrics*, api::kRpcCount> methods_{};
};

// Every RPC of the service, for runtime::ServiceMetrics::Options::methods.
std::vector<runtime::RpcMethod> ServedMethods();

}  // namespace compatd::service
