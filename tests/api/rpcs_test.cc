// api/rpcs.h is the one RPC list; it must be the service definition's, to the
// letter: same methods, same order, same streaming.

#include "api/rpcs.h"

#include <string>

#include "compatd/v1/compatd.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace compatd::api {
namespace {

const google::protobuf::ServiceDescriptor& Service() {
  const google::protobuf::ServiceDescriptor* service =
      v1::GetFeatureRequest::descriptor()->file()->pool()->FindServiceByName(
          std::string(kServiceName));
  EXPECT_NE(service, nullptr);
  return *service;
}

TEST(RpcsTest, TheListIsTheServiceDefinition) {
  const google::protobuf::ServiceDescriptor& service = Service();
  ASSERT_EQ(service.method_count(), kRpcCount);
  // The unary ones in order, then WatchCatalog wherever the proto has it.
  int unary = 0;
  for (int i = 0; i < service.method_count(); ++i) {
    const google::protobuf::MethodDescriptor* method = service.method(i);
    const std::optional<Rpc> rpc = FindRpc(method->name());
    ASSERT_TRUE(rpc.has_value()) << method->name();
    EXPECT_EQ(RpcName(*rpc), method->name());
    EXPECT_EQ(IsServerStreaming(*rpc), method->server_streaming())
        << method->name();
    EXPECT_FALSE(method->client_streaming()) << method->name();
    if (!method->server_streaming()) {
      EXPECT_EQ(static_cast<int>(*rpc), unary) << method->name();
      ++unary;
    }
  }
  EXPECT_EQ(unary, kRpcCount - 1);
}

TEST(RpcsTest, FindRpcTakesTheThreeSpellings) {
  EXPECT_EQ(FindRpc("GetFeature"), Rpc::kGetFeature);
  EXPECT_EQ(FindRpc("/compatd.v1.CompatibilityPolicy/GetFeature"),
            Rpc::kGetFeature);
  EXPECT_EQ(FindRpc("compatd.v1.CompatibilityPolicy.CheckSkew"),
            Rpc::kCheckSkew);
  EXPECT_EQ(FindRpc("WatchCatalog"), Rpc::kWatchCatalog);
  EXPECT_EQ(FindRpc("getfeature"), std::nullopt);
  EXPECT_EQ(FindRpc("compatd.v1.CompatibilityPolicyGetFeature"), std::nullopt);
  EXPECT_EQ(FindRpc("/other.Service/GetFeature"), std::nullopt);
  EXPECT_EQ(FindRpc(""), std::nullopt);
}

}  // namespace
}  // namespace compatd::api
