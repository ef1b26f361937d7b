// POST /gatekeeper/v1 (gateway/gatekeeper.h) through gateway::Gateway::Handle
// over the embedded Kubernetes 1.36 catalog: an OPA Gatekeeper external data
// provider (externaldata.gatekeeper.sh/v1beta1 ProviderRequest in,
// ProviderResponse out).

#include "gateway/gatekeeper.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gateway/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/gateway/gateway_fixture.h"

namespace compatd::gateway {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kProvider[] = "/gatekeeper/v1";

std::string ProviderRequest(const std::vector<std::string>& keys) {
  std::vector<std::string> quoted;
  for (const std::string& key : keys) quoted.push_back(JsonQuote(key));
  return absl::StrCat(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)",
                      R"("kind":"ProviderRequest","request":{"keys":[)",
                      absl::StrJoin(quoted, ","), "]}}");
}

class GatekeeperTest : public GatewayTest {
 protected:
  // Asks for `keys`; expects a 200 ProviderResponse without a systemError
  // and one item per key, in order. Returns the items.
  std::vector<google::protobuf::Value> Ask(
      const std::vector<std::string>& keys) {
    const http::Response response =
        Call("POST", kProvider, ProviderRequest(keys));
    EXPECT_EQ(response.status, 200) << response.body;
    const google::protobuf::Value answer = ParseJson(response.body);
    EXPECT_EQ(At(answer, "apiVersion").string_value(),
              "externaldata.gatekeeper.sh/v1beta1");
    EXPECT_EQ(At(answer, "kind").string_value(), "ProviderResponse");
    EXPECT_TRUE(At(answer, "response.idempotent").bool_value());
    EXPECT_EQ(At(answer, "response.systemError").string_value(), "");
    std::vector<google::protobuf::Value> items;
    const google::protobuf::Value list = At(answer, "response.items");
    for (const auto& item : list.list_value().values()) items.push_back(item);
    EXPECT_EQ(items.size(), keys.size()) << response.body;
    for (size_t i = 0; i < items.size() && i < keys.size(); ++i) {
      EXPECT_EQ(At(items[i], "key").string_value(), keys[i]);
    }
    return items;
  }

  google::protobuf::Value Value(const std::string& key) {
    std::vector<google::protobuf::Value> items = Ask({key});
    if (items.size() != 1) return google::protobuf::Value();
    EXPECT_EQ(At(items[0], "error").string_value(), "") << key;
    return At(items[0], "value");
  }

  std::string Error(const std::string& key) {
    std::vector<google::protobuf::Value> items = Ask({key});
    if (items.size() != 1) return "";
    EXPECT_EQ(At(items[0], "value").kind_case(),
              google::protobuf::Value::kNullValue)
        << key;
    return At(items[0], "error").string_value();
  }

  // Gatekeeper reads only 200 answers (a 4xx reaches its policy as an empty
  // ProviderResponse: no error, nothing denied): expects a 200
  // ProviderResponse with no items and a systemError, and returns it.
  std::string Refused(absl::string_view body,
                      absl::string_view method = "POST") {
    const http::Response response = Call(std::string(method), kProvider, body);
    EXPECT_EQ(response.status, 200) << body << "\n" << response.body;
    const google::protobuf::Value parsed = ParseJson(response.body);
    EXPECT_EQ(At(parsed, "apiVersion").string_value(),
              "externaldata.gatekeeper.sh/v1beta1");
    EXPECT_EQ(At(parsed, "kind").string_value(), "ProviderResponse");
    EXPECT_TRUE(At(parsed, "response.idempotent").bool_value());
    EXPECT_EQ(At(parsed, "response.items").list_value().values_size(), 0);
    const std::string error = At(parsed, "response.systemError").string_value();
    EXPECT_NE(error, "") << response.body;
    return error;
  }
};

TEST_F(GatekeeperTest, FeatureKeys) {
  const google::protobuf::Value now = Value("feature:WatchList");
  EXPECT_EQ(At(now, "name").string_value(), "WatchList");
  EXPECT_TRUE(At(now, "enabled").has_bool_value());
  EXPECT_EQ(At(now, "versions.emulationVersion").string_value(), "1.36");
  const google::protobuf::Value then = Value("feature:WatchList@1.33");
  EXPECT_EQ(At(then, "versions.emulationVersion").string_value(), "1.33");
  // The same answer as GET /v1/GetFeature.
  const http::Response rpc = Call(
      "GET", "/v1/GetFeature?name=WatchList&versions.emulationVersion=1.33");
  EXPECT_EQ(rpc.status, 200);
  EXPECT_EQ(ParseJson(rpc.body).DebugString(), then.DebugString());
}

TEST_F(GatekeeperTest, ApiKeys) {
  const google::protobuf::Value removed = Value("api:batch/v1beta1/CronJob");
  EXPECT_EQ(At(removed, "state").string_value(), "notServed");
  EXPECT_FALSE(At(removed, "served").bool_value());
  EXPECT_EQ(At(removed, "resource").string_value(), "cronjobs");
  EXPECT_EQ(At(removed, "deprecated").string_value(), "1.21");
  EXPECT_EQ(At(removed, "removed").string_value(), "1.25");
  EXPECT_EQ(At(removed, "replacement").string_value(), "batch/v1");
  EXPECT_EQ(At(removed, "emulationVersion").string_value(), "1.36");
  EXPECT_THAT(At(removed, "reason").string_value(),
              HasSubstr("removed in Kubernetes 1.25"));

  const google::protobuf::Value pod = Value("api:v1/Pod");
  EXPECT_EQ(At(pod, "state").string_value(), "served");
  EXPECT_TRUE(At(pod, "served").bool_value());
  EXPECT_EQ(At(pod, "resource").string_value(), "pods");

  EXPECT_EQ(At(Value("api:example.com/v1/Widget"), "state").string_value(),
            "unknown");

  const google::protobuf::Value mutating =
      Value("api:admissionregistration.k8s.io/v1/MutatingAdmissionPolicy@1.35");
  EXPECT_EQ(At(mutating, "state").string_value(), "notServed");
  EXPECT_EQ(At(mutating, "emulationVersion").string_value(), "1.35");
  EXPECT_THAT(At(mutating, "reason").string_value(),
              HasSubstr("introduced in Kubernetes 1.36"));
  EXPECT_EQ(At(Value("api:admissionregistration.k8s.io/v1/"
                     "MutatingAdmissionPolicy"),
               "state")
                .string_value(),
            "served");
}

TEST_F(GatekeeperTest, StorageKeys) {
  const google::protobuf::Value deployments = Value("storage:apps/deployments");
  EXPECT_EQ(At(deployments, "version").string_value(), "v1");
  EXPECT_EQ(At(deployments, "kind").string_value(), "Deployment");
  EXPECT_FALSE(At(deployments, "storageVersionHash").string_value().empty());
  const google::protobuf::Value pods = Value("storage:pods");
  EXPECT_EQ(At(pods, "group").string_value(), "");
  EXPECT_EQ(At(pods, "kind").string_value(), "Pod");
  EXPECT_EQ(At(Value("storage:pods@1.34"), "versions.emulationVersion")
                .string_value(),
            "1.34");
}

TEST_F(GatekeeperTest, SkewKeys) {
  const google::protobuf::Value old = Value("skew:kubelet/1.31.4");
  EXPECT_FALSE(At(old, "allowed").bool_value());
  EXPECT_EQ(At(old, "verdict").string_value(), "SKEW_VERDICT_TOO_OLD");
  EXPECT_TRUE(At(Value("skew:kubelet/v1.36.0"), "allowed").bool_value());
}

TEST_F(GatekeeperTest, ManyKeysAnswerInOrderFromOneSnapshot) {
  const std::vector<std::string> keys = {
      "feature:WatchList", "api:v1/Pod",        "nonsense",
      "storage:pods",      "feature:WatchList", "skew:kubelet/1.35.0",
      "feature:NoSuchGate"};
  const std::vector<google::protobuf::Value> items = Ask(keys);
  ASSERT_EQ(items.size(), keys.size());
  EXPECT_NE(At(items[2], "error").string_value(), "");
  EXPECT_NE(At(items[6], "error").string_value(), "");
  EXPECT_EQ(At(items[0], "value").DebugString(),
            At(items[4], "value").DebugString());
  // Every RPC answer names the same catalog generation.
  for (size_t i : {0, 3, 5}) {
    EXPECT_EQ(At(items[i], "value.catalogGeneration").string_value(), "1");
  }
}

// The answers kept between requests (gateway/provider_cache.h) are the
// answers computed afresh, byte for byte; a reload is never answered from
// the catalog before it.
TEST_F(GatekeeperTest, KeptAnswersAreTheAnswersOfTheCatalogNowServing) {
  const std::string body = ProviderRequest(
      {"feature:WatchList", "api:batch/v1beta1/CronJob",
       "storage:apps/deployments", "skew:kubelet/1.33.1", "feature:NoSuchGate",
       "nonsense", "feature:WatchList@1.34", "feature:WatchList"});
  const Gateway uncached(&handlers_, &pipeline_->store(), nullptr, nullptr,
                         nullptr, /*gatekeeper_cache_bytes=*/0);
  http::Response fresh;
  uncached.Handle(MakeRequest("POST", kProvider, body), &fresh);
  ASSERT_EQ(fresh.status, 200);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Call("POST", kProvider, body).body, fresh.body) << round;
  }
  // A reload: generation 2 answers, none kept from generation 1.
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                            catalog::EmbeddedCatalogSource());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  pipeline_->Publish(*std::move(catalog), /*initial=*/false);
  const google::protobuf::Value answer =
      ParseJson(Call("POST", kProvider, body).body);
  const google::protobuf::Value items = At(answer, "response.items");
  ASSERT_EQ(items.list_value().values_size(), 8);
  for (const auto& item : items.list_value().values()) {
    if (Has(item, "value.catalogGeneration")) {
      EXPECT_EQ(At(item, "value.catalogGeneration").string_value(), "2")
          << At(item, "key").string_value();
    }
  }
  http::Response fresh2;
  uncached.Handle(MakeRequest("POST", kProvider, body), &fresh2);
  EXPECT_EQ(Call("POST", kProvider, body).body, fresh2.body);
}

TEST_F(GatekeeperTest, UnknownGateIsAnItemError) {
  EXPECT_THAT(Error("feature:NoSuchGate"),
              AllOf(StartsWith("NOT_FOUND: "), HasSubstr("NoSuchGate")));
  EXPECT_THAT(Error("storage:apps/nosuchresources"), StartsWith("NOT_FOUND: "));
}

TEST_F(GatekeeperTest, MalformedKeysAreItemErrors) {
  for (const char* key :
       {"", "nonsense", "feature", "Feature:WatchList", "api:Pod",
        "api:a/b/c/d", "storage:a/b/c", "skew:kubelet",
        "feature:", "feature:WatchList@banana", "feature:WatchList@1.20",
        "skew:kubelet/not-a-version", "api:batch/v1beta1/CronJob@x",
        "api:apps/v1/Deployment@1.34@1.35", "api:apps//Deployment",
        "feature:WatchList@1.34@1.35", "storage:apps/@1.35", "skew:/1.34"}) {
    EXPECT_THAT(Error(key), StartsWith("INVALID_ARGUMENT: ")) << key;
  }
  EXPECT_THAT(Error("nonsense"),
              HasSubstr("expected feature:NAME[@EMULATION], "
                        "api:[GROUP/]VERSION/KIND[@EMULATION]"));
}

TEST_F(GatekeeperTest, NoCatalogYetIsASystemError) {
  const http::Response response =
      CallUnloaded("POST", kProvider, ProviderRequest({"feature:WatchList"}));
  EXPECT_EQ(response.status, 200);
  const google::protobuf::Value answer = ParseJson(response.body);
  EXPECT_THAT(At(answer, "response.systemError").string_value(),
              HasSubstr("no catalog is loaded yet"));
  EXPECT_EQ(At(answer, "response.items").list_value().values_size(), 0);
  EXPECT_TRUE(At(answer, "response.idempotent").bool_value());
}

TEST_F(GatekeeperTest, NoKeysIsAnEmptyAnswer) { EXPECT_TRUE(Ask({}).empty()); }

TEST_F(GatekeeperTest, AtMostAThousandKeys) {
  std::vector<std::string> keys(kMaxProviderKeys, "feature:WatchList");
  EXPECT_EQ(Ask(keys).size(), kMaxProviderKeys);
  keys.push_back("feature:WatchList");
  EXPECT_THAT(Refused(ProviderRequest(keys)),
              HasSubstr("more than 1000 keys; split the request"));
}

TEST_F(GatekeeperTest, WrongDocumentsAreSystemErrors) {
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderResponse","request":{"keys":[]}})"),
              HasSubstr("kind ProviderRequest, got"));
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1alpha1",)"
                      R"("kind":"ProviderRequest","request":{"keys":[]}})"),
              HasSubstr("not v1alpha1"));
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderRequest","request":{}})"),
              HasSubstr("no request.keys"));
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderRequest"})"),
              HasSubstr("no request.keys"));
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderRequest","request":{"keys":"x"}})"),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderRequest","request":{"keys":[1]}})"),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(
      Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
              R"("kind":"ProviderRequest","request":{"keys":[],"keys":[]}})"),
      HasSubstr("request.keys appears twice"));
  for (const char* garbage : {"", "garbage", "[]", "{", "null"}) {
    EXPECT_THAT(Refused(garbage), HasSubstr("ProviderRequest")) << garbage;
  }
}

TEST_F(GatekeeperTest, TrailingBytesAreSystemErrors) {
  for (const char* trailing : {"garbage", "}", "{}", "[]"}) {
    EXPECT_THAT(Refused(ProviderRequest({"feature:WatchList"}) + trailing),
                HasSubstr("not valid JSON"))
        << trailing;
  }
  // Whitespace is fine.
  EXPECT_EQ(
      Call("POST", kProvider, ProviderRequest({"feature:WatchList"}) + " \n")
          .status,
      200);
}

TEST_F(GatekeeperTest, FieldsNotReadMustBeJsonToo) {
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderRequest","metadata":{"a":},)"
                      R"("request":{"keys":[]}})"),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(Refused(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                      R"("kind":"ProviderRequest","request":{"other":[1,,2],)"
                      R"("keys":[]}})"),
              HasSubstr("not valid JSON"));
}

TEST_F(GatekeeperTest, OnlyPostIsAllowed) {
  // As Gatekeeper's provider template answers: 200, a systemError.
  EXPECT_THAT(Refused("", "GET"), HasSubstr("takes POST, not GET"));
}

// The provider's URL selects the release line, as the admission webhook's
// path does: /gatekeeper/v1/binary-1.32 answers every key from the 1.32
// binary's facts; one Provider per cluster binary.
class GatekeeperLinesTest : public GatewayTest {
 protected:
  void SetUp() override {
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    options.sources = catalog::EmbeddedCatalogs().size();
    pipeline_ = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    size_t slot = 0;
    for (const catalog::EmbeddedCatalog& embedded :
         catalog::EmbeddedCatalogs()) {
      absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
          catalog::ParseCatalog(embedded.bytes, embedded.name);
      ASSERT_TRUE(catalog.ok()) << catalog.status();
      ASSERT_TRUE(
          pipeline_->PublishLine(slot++, *std::move(catalog), true).ok());
    }
    ASSERT_NE(pipeline_->Current(), nullptr);
    gateway_ = std::make_unique<Gateway>(&handlers_, &pipeline_->store(),
                                         nullptr, nullptr);
  }

  google::protobuf::Value Answer(const std::string& target,
                                 const std::vector<std::string>& keys) {
    const http::Response response = Call("POST", target, ProviderRequest(keys));
    EXPECT_EQ(response.status, 200) << response.body;
    return ParseJson(response.body);
  }

  // The one item's value (its error expected empty).
  google::protobuf::Value Value(const std::string& target,
                                const std::string& key) {
    const google::protobuf::Value answer = Answer(target, {key});
    EXPECT_EQ(At(answer, "response.systemError").string_value(), "");
    const google::protobuf::Value list = At(answer, "response.items");
    const auto& items = list.list_value().values();
    if (items.size() != 1) return google::protobuf::Value();
    EXPECT_EQ(At(items[0], "error").string_value(), "") << target << key;
    return At(items[0], "value");
  }
};

// Issue 35: built-ins no start-up of the line installs are judged by the
// line's API history, not "unknown", on every line (kubernetes/api
// prerelease lifecycles; the deprecated API migration guide).
TEST_F(GatekeeperLinesTest, BuiltInsOutsideTheStartUpOnEveryLine) {
  for (const char* line : {"1.31", "1.32", "1.33", "1.34", "1.35", "1.36"}) {
    const std::string url = absl::StrCat("/gatekeeper/v1/binary-", line);
    for (const char* key :
         {"api:apiextensions.k8s.io/v1/CustomResourceDefinition",
          "api:apiregistration.k8s.io/v1/APIService",
          "api:policy/v1/Eviction"}) {
      const google::protobuf::Value v = Value(url, key);
      EXPECT_EQ(At(v, "state").string_value(), "served") << line << key;
      EXPECT_EQ(At(v, "verdict").string_value(), "served") << line << key;
    }
    for (const auto& [key, removed] :
         std::vector<std::pair<std::string, std::string>>{
             {"api:policy/v1beta1/PodSecurityPolicy", "1.25"},
             {"api:autoscaling/v2beta2/HorizontalPodAutoscaler", "1.26"},
             {"api:extensions/v1beta1/Ingress", "1.22"}}) {
      const google::protobuf::Value v = Value(url, key);
      EXPECT_EQ(At(v, "state").string_value(), "notServed") << line << key;
      EXPECT_EQ(At(v, "verdict").string_value(), "removed") << line << key;
      EXPECT_EQ(At(v, "removed").string_value(), removed) << line << key;
    }
    EXPECT_EQ(
        At(Value(url, "api:example.com/v1/Widget"), "verdict").string_value(),
        "unknown");
  }
}

// k8s.io/kubernetes v1.32.5 pkg/features/versioned_kube_features.go:
// WindowsHostNetwork {1.26, Default: true, Alpha}; v1.33.3
// kube_features.go: {1.26, false, Alpha}, {1.33, false, Deprecated}.
TEST_F(GatekeeperLinesTest, TheUrlsBinarySelectsTheLine) {
  const google::protobuf::Value on132 =
      Value("/gatekeeper/v1/binary-1.32", "feature:WindowsHostNetwork");
  EXPECT_TRUE(At(on132, "enabled").bool_value());
  EXPECT_EQ(At(on132, "catalogRelease").string_value(), "1.32.5");
  const google::protobuf::Value on133 =
      Value("/gatekeeper/v1/binary-1.33", "feature:WindowsHostNetwork");
  EXPECT_FALSE(At(on133, "enabled").bool_value());
  EXPECT_EQ(At(on133, "catalogRelease").string_value(), "1.33.3");
  // The query form, as a Provider's url may carry it.
  const google::protobuf::Value queried =
      Value("/gatekeeper/v1?binaryVersion=1.32", "feature:WindowsHostNetwork");
  EXPECT_TRUE(At(queried, "enabled").bool_value());
  // The same key through two URLs: two answers (the cache keeps each).
  EXPECT_TRUE(
      At(Value("/gatekeeper/v1/binary-1.32", "feature:WindowsHostNetwork"),
         "enabled")
          .bool_value());
}

// `PodHostIPs: {Default: true, PreRelease: featuregate.GA, LockToDefault:
// true}, // remove in 1.32` (k8s.io/kubernetes v1.31.8 kube_features.go):
// the 1.31 binary has the gate, the default line (1.36) does not.
TEST_F(GatekeeperLinesTest, AGateOnlyAnOlderBinaryHas) {
  const google::protobuf::Value on131 =
      Value("/gatekeeper/v1/binary-1.31/", "feature:PodHostIPs");
  EXPECT_TRUE(At(on131, "enabled").bool_value());
  const google::protobuf::Value answer =
      Answer("/gatekeeper/v1", {"feature:PodHostIPs"});
  const google::protobuf::Value list = At(answer, "response.items");
  const auto& items = list.list_value().values();
  ASSERT_EQ(items.size(), 1);
  EXPECT_THAT(At(items[0], "error").string_value(), HasSubstr("NOT_FOUND"));
}

// emulation- is the default of keys without "@"; a key's own wins.
TEST_F(GatekeeperLinesTest, TheUrlsEmulationIsTheKeysDefault) {
  EXPECT_EQ(At(Value("/gatekeeper/v1/binary-1.34/emulation-1.33",
                     "feature:WatchList"),
               "versions.emulationVersion")
                .string_value(),
            "1.33");
  EXPECT_EQ(At(Value("/gatekeeper/v1/binary-1.34/emulation-1.33",
                     "feature:WatchList@1.34"),
               "versions.emulationVersion")
                .string_value(),
            "1.34");
}

TEST_F(GatekeeperLinesTest, AUrlItCannotServeIsASystemError) {
  for (const auto& [target, says] :
       std::vector<std::pair<std::string, std::string>>{
           {"/gatekeeper/v1/binary-1.30", "1.31"},  // names the lines it has
           {"/gatekeeper/v1/binary-1.38", "1.36"},
           {"/gatekeeper/v1/enforce", "only versions"},
           {"/gatekeeper/v1/enable-gate.watchlist", "only versions"},
           {"/gatekeeper/v1/binary-1.32/binary-1.33", "binary"},
           {"/gatekeeper/v1/nonsense", "nonsense"},
           {"/gatekeeper/v1/binary-1.32?binaryVersion=1.33", "binary"},
       }) {
    const google::protobuf::Value answer =
        Answer(target, {"feature:WatchList"});
    EXPECT_THAT(At(answer, "response.systemError").string_value(),
                HasSubstr(says))
        << target;
    EXPECT_EQ(At(answer, "response.items").list_value().values_size(), 0)
        << target;
  }
}

}  // namespace
}  // namespace compatd::gateway
