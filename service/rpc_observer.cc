#include "service/rpc_observer.h"

#include <string>

#include "engine/user_agent.h"

namespace compatd::service {
namespace {

absl::string_view MetadataValue(const ClientMetadata& metadata,
                                absl::string_view key) {
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

}  // namespace

std::vector<runtime::RpcMethod> ServedMethods() {
  std::vector<runtime::RpcMethod> methods;
  for (int i = 0; i < api::kRpcCount; ++i) {
    const auto rpc = static_cast<api::Rpc>(i);
    methods.push_back(runtime::RpcMethod{
        std::string(kPolicyServiceName), std::string(api::RpcName(rpc)),
        api::IsServerStreaming(rpc) ? runtime::RpcType::kServerStream
                                    : runtime::RpcType::kUnary});
  }
  return methods;
}

RecordingObserver::RecordingObserver(const runtime::ServiceMetrics* metrics,
                                     runtime::ClientTracker* clients)
    : clients_(clients) {
  for (int i = 0; i < api::kRpcCount; ++i) {
    methods_[i] = metrics->Method(kPolicyServiceName,
                                  api::RpcName(static_cast<api::Rpc>(i)));
  }
}

void RecordingObserver::OnStart(api::Rpc rpc, const ClientMetadata& metadata,
                                const runtime::ServingSnapshot* snapshot) {
  methods_[static_cast<int>(rpc)]->Started();
  if (clients_ == nullptr || snapshot == nullptr) return;
  clients_->Record(
      *snapshot,
      engine::IdentifyClient(MetadataValue(metadata, "x-kubernetes-component"),
                             MetadataValue(metadata, "x-kubernetes-version"),
                             MetadataValue(metadata, "user-agent")));
}

void RecordingObserver::OnFinish(api::Rpc rpc, absl::StatusCode code,
                                 absl::Duration latency) {
  methods_[static_cast<int>(rpc)]->Handled(code, latency);
}

}  // namespace compatd::service
