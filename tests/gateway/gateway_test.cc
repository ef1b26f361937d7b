// gateway::Gateway's routing: /v1/<RPC> (POST JSON and GET query forms),
// /healthz, 404 and 405 with Allow, grpc-gateway's error mapping, and what
// is answered before a catalog is loaded.

#include "gateway/gateway.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/rpcs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/gateway/gateway_fixture.h"

namespace compatd::gateway {
namespace {

using ::testing::HasSubstr;

std::string AllowOf(const http::Response& response) {
  for (const auto& [name, value] : response.headers) {
    if (name == "Allow") return value;
  }
  return "";
}

TEST_F(GatewayTest, EveryUnaryRpcIsPostable) {
#define COMPATD_TEST_RPC(Name)                                        \
  {                                                                   \
    const http::Response response = Call("POST", "/v1/" #Name, "{}"); \
    EXPECT_TRUE(response.status == 200 || response.status == 400 ||   \
                response.status == 404)                               \
        << #Name << ": " << response.status << " " << response.body;  \
    EXPECT_EQ(response.content_type, "application/json") << #Name;    \
    ParseJson(response.body);                                         \
  }
  COMPATD_UNARY_RPCS(COMPATD_TEST_RPC)
#undef COMPATD_TEST_RPC
  // These need nothing in the request.
  for (const char* rpc : {"ListFeatures", "ListAPIVersions", "ResolveVersions",
                          "LintCatalog", "GetCatalog", "ListClients"}) {
    EXPECT_EQ(Call("POST", absl::StrCat("/v1/", rpc)).status, 200) << rpc;
  }
}

TEST_F(GatewayTest, PostAnswersProto3JsonWithDefaults) {
  const http::Response response = Call(
      "POST", "/v1/GetFeature",
      R"({"name":"WatchList","versions":{"featureGates":"WatchList=false"}})");
  ASSERT_EQ(response.status, 200) << response.body;
  const google::protobuf::Value answer = ParseJson(response.body);
  EXPECT_EQ(At(answer, "name").string_value(), "WatchList");
  // false is printed, not left out.
  ASSERT_TRUE(At(answer, "enabled").has_bool_value()) << response.body;
  EXPECT_FALSE(At(answer, "enabled").bool_value());
  EXPECT_TRUE(At(answer, "overridden").bool_value());
  EXPECT_EQ(At(answer, "catalogGeneration").string_value(), "1");
}

TEST_F(GatewayTest, GetTakesKyvernosQueryForm) {
  const http::Response get = Call(
      "GET", "/v1/GetFeature?name=WatchList&versions.emulationVersion=1.34");
  const http::Response post =
      Call("POST", "/v1/GetFeature",
           R"({"name":"WatchList","versions":{"emulationVersion":"1.34"}})");
  ASSERT_EQ(get.status, 200) << get.body;
  EXPECT_EQ(get.body, post.body);
  EXPECT_EQ(At(ParseJson(get.body), "versions.emulationVersion").string_value(),
            "1.34");
}

TEST_F(GatewayTest, GetWithRepeatedFieldIs400) {
  const http::Response response =
      Call("GET", "/v1/ComputeStorageVersionAgreement?participants=a");
  EXPECT_EQ(response.status, 400);
  EXPECT_THAT(response.body, HasSubstr("POST the request as JSON"));
}

TEST_F(GatewayTest, ErrorsUseGrpcGatewaysStatusesAndBodies) {
  const http::Response not_found =
      Call("POST", "/v1/GetFeature", R"({"name":"NoSuchGate"})");
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(At(ParseJson(not_found.body), "code").number_value(), 5);
  EXPECT_THAT(At(ParseJson(not_found.body), "message").string_value(),
              HasSubstr("NoSuchGate"));
  EXPECT_TRUE(At(ParseJson(not_found.body), "details").has_list_value());

  const http::Response invalid =
      Call("POST", "/v1/GetFeature",
           R"({"name":"WatchList","versions":{"emulationVersion":"banana"}})");
  EXPECT_EQ(invalid.status, 400);
  EXPECT_EQ(At(ParseJson(invalid.body), "code").number_value(), 3);

  const http::Response bad_json = Call("POST", "/v1/GetFeature", "{\"name\":");
  EXPECT_EQ(bad_json.status, 400);
  // The parser's position: the end of the input, where a value was due.
  EXPECT_THAT(bad_json.body, HasSubstr("not valid JSON at byte 8"));

  const http::Response unknown_field =
      Call("POST", "/v1/GetFeature", R"({"feature":"WatchList"})");
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_THAT(unknown_field.body, HasSubstr("feature"));
}

TEST_F(GatewayTest, UnknownRpcsAndPathsAre404) {
  for (const char* path :
       {"/v1/NoSuchRpc", "/v1/WatchCatalog", "/v1/", "/v1/GetFeature/x",
        "/v1/compatd.v1.CompatibilityPolicy.GetFeature", "/v2/GetFeature", "/",
        "/metrics", "/admission/v1/validatex", "/admission/v1",
        "/gatekeeper"}) {
    const http::Response response = Call("POST", path, "{}");
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_EQ(At(ParseJson(response.body), "code").number_value(), 5) << path;
  }
  EXPECT_THAT(Call("GET", "/v1/WatchCatalog").body,
              HasSubstr("WatchCatalog is a stream: use gRPC"));
  EXPECT_THAT(Call("GET", "/nope").body,
              HasSubstr("/v1/<RPC>, /admission/v1/validate, /gatekeeper/v1"));
}

TEST_F(GatewayTest, WrongMethodsAre405WithAllow) {
  for (const char* method : {"PUT", "DELETE", "PATCH", "HEAD"}) {
    const http::Response response = Call(method, "/v1/GetFeature");
    EXPECT_EQ(response.status, 405) << method;
    EXPECT_EQ(AllowOf(response), "GET, POST") << method;
  }
  const http::Response healthz = Call("POST", "/healthz");
  EXPECT_EQ(healthz.status, 405);
  EXPECT_EQ(AllowOf(healthz), "GET, HEAD");
  // Its body is a google.rpc.Status, typed as JSON (it was text/plain).
  EXPECT_EQ(healthz.content_type, "application/json");
  EXPECT_EQ(At(ParseJson(healthz.body), "code").number_value(), 3);
}

TEST_F(GatewayTest, Healthz) {
  const http::Response get = Call("GET", "/healthz");
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "ok\n");
  EXPECT_THAT(get.content_type, HasSubstr("text/plain"));
  const http::Response head = Call("HEAD", "/healthz");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.omit_body);
  EXPECT_EQ(CallUnloaded("GET", "/healthz").status, 503);
}

TEST_F(GatewayTest, RpcsBeforeACatalogAre503) {
  const http::Response response =
      CallUnloaded("POST", "/v1/GetFeature", R"({"name":"WatchList"})");
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(At(ParseJson(response.body), "code").number_value(), 14);
}

TEST_F(GatewayTest, EvaluateAnswersManyQuestionsAtOnce) {
  const http::Response response =
      Call("POST", "/v1/Evaluate",
           R"({"items":[{"getFeature":{"name":"WatchList"}},)"
           R"({"checkSkew":{"component":"kubelet","clientVersion":"1.31.0"}},)"
           R"({"getFeature":{"name":"NoSuchGate"}}]})");
  ASSERT_EQ(response.status, 200) << response.body;
  const google::protobuf::Value answer = ParseJson(response.body);
  EXPECT_EQ(At(answer, "results").list_value().values_size(), 3)
      << response.body;
}

}  // namespace
}  // namespace compatd::gateway
