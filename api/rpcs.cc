#include "api/rpcs.h"

#include "absl/strings/strip.h"

namespace compatd::api {

absl::string_view RpcName(Rpc rpc) {
  switch (rpc) {
#define COMPATD_RPC_NAME(Name) \
  case Rpc::k##Name:           \
    return #Name;
    COMPATD_UNARY_RPCS(COMPATD_RPC_NAME)
#undef COMPATD_RPC_NAME
    case Rpc::kWatchCatalog:
      return "WatchCatalog";
  }
  return "Unknown";
}

bool IsServerStreaming(Rpc rpc) { return rpc == Rpc::kWatchCatalog; }

std::optional<Rpc> FindRpc(absl::string_view name) {
  absl::ConsumePrefix(&name, "/");
  if (absl::ConsumePrefix(&name, kServiceName)) {
    if (!absl::ConsumePrefix(&name, "/") && !absl::ConsumePrefix(&name, ".")) {
      return std::nullopt;
    }
  }
  for (int i = 0; i < kRpcCount; ++i) {
    const auto rpc = static_cast<Rpc>(i);
    if (RpcName(rpc) == name) return rpc;
  }
  return std::nullopt;
}

}  // namespace compatd::api
