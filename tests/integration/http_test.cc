// The real compatd binary's HTTPS/JSON front door (--http-listen), called as
// its callers call it: with curl (every RPC as POST, Kyverno's GET form,
// AdmissionReview, ProviderRequest, TLS and mutual TLS) and with raw sockets
// (keep-alive, the body bound), next to /metrics and gRPC on the same
// process. Also: client recording from the User-Agent, a port in use, and
// that an Authorization header never reaches the logs.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compatd/v1/compatd.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/integration/curl_json.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_certs.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::RunCompatd;
using ::compatd::testing::RunResult;
using ::compatd::testing::TestCerts;
using ::testing::HasSubstr;
using ::testing::Not;

using ::compatd::testing::Curl;
using ::compatd::testing::CurlPresent;
using ::compatd::testing::CurlReply;

google::protobuf::Value Json(const std::string& text) {
  return ::compatd::testing::ParseJson(text);
}

const google::protobuf::Value& Field(const google::protobuf::Value& object,
                                     const std::string& name) {
  return ::compatd::testing::JsonField(object, name);
}

// One plaintext compatd for the tests that need nothing special.
class HttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new CompatdProcess();
    start_ = server_->Start(
        {"--http-listen=127.0.0.1:0", "--max-http-body-bytes=65536"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (!CurlPresent()) GTEST_SKIP() << "curl is not installed";
    ASSERT_OK(start_);
    ASSERT_NE(server_->http_port(), 0) << server_->Stderr();
  }

  static std::string Url(const std::string& path) {
    return absl::StrCat("http://127.0.0.1:", server_->http_port(), path);
  }
  static CurlReply Post(const std::string& path, const std::string& body,
                        std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
        body};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(Url(path));
    return Curl(args);
  }

  static CompatdProcess* server_;
  static absl::Status start_;
};

CompatdProcess* HttpTest::server_ = nullptr;
absl::Status HttpTest::start_;

TEST_F(HttpTest, EveryUnaryRpcAnswersPost) {
  const std::pair<const char*, const char*> calls[] = {
      {"GetFeature", R"({"name":"WatchList"})"},
      {"ListFeatures", R"({"component":"kube-apiserver"})"},
      {"GetStorageVersion", R"({"group":"apps","resource":"deployments"})"},
      {"ListAPIVersions", "{}"},
      {"CheckSkew", R"({"component":"kubelet","clientVersion":"v1.35.1"})"},
      {"ResolveVersions", ""},
      {"ComputeStorageVersionAgreement",
       R"({"group":"apps","resource":"deployments","storageVersions":[)"
       R"({"apiserverId":"a","encodingVersion":"apps/v1",)"
       R"("decodableVersions":["apps/v1"],"servedVersions":["apps/v1"]}]})"},
      {"PlanVersionRemoval",
       R"({"history":{"name":"widgets.example.com","releases":[)"
       R"({"release":"1.30","versions":[{"name":"v1","served":true,)"
       R"("storage":true}]}]},"version":"v1"})"},
      {"PlanUpgrade", R"({"from":{"emulationVersion":"1.34"}})"},
      {"LintCatalog", "{}"},
      {"ScanObjects",
       R"({"target":"1.37","objects":"apiVersion: batch/v1beta1\nkind: CronJob\n"})"},
      {"Evaluate", R"({"items":[{"getFeature":{"name":"WatchList"}}]})"},
      {"GetCatalog", "{}"},
      {"ListClients", "{}"},
  };
  for (const auto& [rpc, body] : calls) {
    const CurlReply reply = Post(absl::StrCat("/v1/", rpc), body);
    EXPECT_EQ(reply.status, 200) << rpc << ": " << reply.body << reply.err;
    const google::protobuf::Value answer = Json(reply.body);
    EXPECT_TRUE(Field(answer, "versions").has_struct_value()) << rpc;
    EXPECT_EQ(Field(answer, "catalogGeneration").string_value(), "1") << rpc;
  }
}

TEST_F(HttpTest, PostAnswersExactlyWhatEvalPrints) {
  const std::string request =
      R"({"name":"WatchList","versions":{"emulationVersion":"1.34"}})";
  const CurlReply reply = Post("/v1/GetFeature", request);
  ASSERT_EQ(reply.status, 200) << reply.body;
  const RunResult eval = RunCompatd(
      COMPATD_BINARY, {"eval", "--rpc=GetFeature", "--request=" + request});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_EQ(Json(reply.body).DebugString(), Json(eval.out).DebugString());
  // Defaults are printed: enabled is there even when false.
  const CurlReply off = Post(
      "/v1/GetFeature",
      R"({"name":"WatchList","versions":{"featureGates":"WatchList=false"}})");
  EXPECT_THAT(off.body, HasSubstr("\"enabled\":false"));
}

TEST_F(HttpTest, GetTakesKyvernosQuery) {
  const CurlReply reply =
      Curl({"-G", "--data-urlencode", "name=WatchList", "--data-urlencode",
            "versions.emulationVersion=1.34", Url("/v1/GetFeature")});
  ASSERT_EQ(reply.status, 200) << reply.body;
  const google::protobuf::Value answer = Json(reply.body);
  EXPECT_EQ(Field(answer, "name").string_value(), "WatchList");
  EXPECT_TRUE(Field(answer, "enabled").has_bool_value());
  EXPECT_EQ(Field(Field(answer, "versions"), "emulationVersion").string_value(),
            "1.34");
}

// k8s/admission/kyverno/clusterpolicy.yaml as Kyverno runs it: its apiCall's
// URL path against the real server, and its jmesPath through jp, Debian's
// JMESPath command (github.com/jmespath/go-jmespath, the Go library Kyverno's
// fork of it follows). The value the policy compares must be the boolean
// the gate has, at the default versions and at an emulation that turns the
// gate off.
TEST_F(HttpTest, KyvernoPolicysJmesPathReadsTheAnswer) {
  constexpr char kJp[] = "/usr/bin/jp";
  if (access(kJp, X_OK) != 0) GTEST_SKIP() << "jp is not installed";
  const RunResult policy =
      RunCompatd("/bin/cat", {std::string(COMPATD_SOURCE_DIR) +
                              "/k8s/admission/kyverno/clusterpolicy.yaml"});
  ASSERT_EQ(policy.exit_code, 0) << policy.err;
  auto value_of = [&](absl::string_view key) -> std::string {
    const size_t at = policy.out.find(absl::StrCat(key, ": "));
    if (at == std::string::npos) return "";
    const size_t start = at + key.size() + 2;
    return policy.out.substr(start, policy.out.find('\n', start) - start);
  };
  const std::string url = value_of("url");
  const std::string jmes_path = value_of("jmesPath");
  ASSERT_EQ(jmes_path, "enabled");
  const size_t path_at = url.find("/v1/");
  ASSERT_NE(path_at, std::string::npos) << url;
  const std::string path = url.substr(path_at);

  // PodLevelResources: alpha in 1.32, beta and on by default from 1.34.
  const std::pair<std::string, std::string> cases[] = {
      {path, "true"},
      {absl::StrCat(path, "&versions.emulationVersion=1.33"), "false"},
  };
  for (const auto& [query, want] : cases) {
    const CurlReply reply = Curl({Url(query)});
    ASSERT_EQ(reply.status, 200) << query << ": " << reply.body;
    const std::string answer_file =
        absl::StrCat(::testing::TempDir(), "/kyverno-answer.json");
    {
      FILE* f = fopen(answer_file.c_str(), "w");
      ASSERT_NE(f, nullptr);
      fwrite(reply.body.data(), 1, reply.body.size(), f);
      fclose(f);
    }
    const RunResult jp = RunCompatd(kJp, {"-f", answer_file, jmes_path});
    EXPECT_EQ(jp.exit_code, 0) << jp.err;
    EXPECT_EQ(std::string(absl::StripAsciiWhitespace(jp.out)), want)
        << query << ": " << reply.body;
  }
}

TEST_F(HttpTest, ErrorsAreGrpcGatewayStatuses) {
  const CurlReply not_found = Post("/v1/GetFeature", R"({"name":"Nope"})");
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(Field(Json(not_found.body), "code").number_value(), 5);
  const CurlReply bad = Post("/v1/GetFeature", "{\"name\":");
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("at byte"));
  const CurlReply method = Curl({"-X", "PUT", "-i", Url("/v1/GetFeature")});
  EXPECT_EQ(method.status, 405);
  EXPECT_THAT(method.body, HasSubstr("Allow: GET, POST"));
  EXPECT_EQ(Curl({Url("/nope")}).status, 404);
  EXPECT_EQ(Curl({Url("/healthz")}).body, "ok\n");
}

TEST_F(HttpTest, AdmissionReviewEndToEnd) {
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
      R"("request":{"uid":"u-1","operation":"CREATE",)"
      R"("kind":{"group":"batch","version":"v1beta1","kind":"CronJob"},)"
      R"("object":{"apiVersion":"batch/v1beta1","kind":"CronJob",)"
      R"("metadata":{"name":"c"}}}})";
  const CurlReply warned = Post("/admission/v1/validate", review);
  ASSERT_EQ(warned.status, 200) << warned.body;
  const google::protobuf::Value answer = Json(warned.body);
  EXPECT_EQ(Field(Field(answer, "response"), "uid").string_value(), "u-1");
  EXPECT_TRUE(Field(Field(answer, "response"), "allowed").bool_value());
  // kube-apiserver served batch/v1beta1 CronJob, which Kubernetes 1.25
  // removed: the catalog does not match the cluster. Never a denial.
  EXPECT_THAT(warned.body, HasSubstr("catalog mismatch"));
  // kube-apiserver adds ?timeout=<timeoutSeconds>s to the webhook's URL.
  for (const char* path : {"/admission/v1/validate?mode=enforce&timeout=2s",
                           "/admission/v1/validate/enforce?timeout=2s"}) {
    const CurlReply enforced = Post(path, review);
    ASSERT_EQ(enforced.status, 200) << enforced.body;
    EXPECT_TRUE(
        Field(Field(Json(enforced.body), "response"), "allowed").bool_value())
        << path;
  }
  absl::StatusOr<std::string> scrape = server_->Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(
      *scrape,
      HasSubstr(
          R"(compatd_admission_catalog_mismatch_total{reason="removed"} )"));
}

TEST_F(HttpTest, GatekeeperAnswersEveryExchangeWith200) {
  // Gatekeeper reads a non-200 answer as an empty ProviderResponse: every
  // answer it can read is a 200 with a systemError.
  for (const auto& [body, error] :
       std::vector<std::pair<std::string, std::string>>{
           {R"({"apiVersion":"externaldata.gatekeeper.sh/v1alpha1",)"
            R"("kind":"ProviderRequest","request":{"keys":["feature:x"]}})",
            "not v1alpha1"},
           {"{garbage", "not valid JSON"},
           {R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
            R"("kind":"ProviderRequest"})",
            "no request.keys"}}) {
    const CurlReply reply = Post("/gatekeeper/v1", body);
    ASSERT_EQ(reply.status, 200) << reply.body;
    const google::protobuf::Value answer = Json(reply.body);
    EXPECT_EQ(Field(answer, "kind").string_value(), "ProviderResponse");
    EXPECT_THAT(Field(Field(answer, "response"), "systemError").string_value(),
                HasSubstr(error));
  }
  // A malformed key is the item's error (Gatekeeper caches it), not
  // "state: unknown".
  const CurlReply malformed = Post(
      "/gatekeeper/v1", R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
                        R"("kind":"ProviderRequest","request":{"keys":)"
                        R"(["api:apps/v1/Deployment@1.34@1.35"]}})");
  ASSERT_EQ(malformed.status, 200) << malformed.body;
  EXPECT_THAT(malformed.body,
              HasSubstr(R"("value":null,"error":"INVALID_ARGUMENT: )"));
  EXPECT_THAT(malformed.body, Not(HasSubstr("unknown")));
}

TEST_F(HttpTest, GatekeeperEndToEnd) {
  const CurlReply reply =
      Post("/gatekeeper/v1",
           R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)"
           R"("kind":"ProviderRequest","request":{"keys":)"
           R"(["api:batch/v1beta1/CronJob","feature:NoSuchGate"]}})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_THAT(reply.body, HasSubstr(R"("idempotent":true)"));
  EXPECT_THAT(reply.body, HasSubstr(R"("state":"notServed")"));
  EXPECT_THAT(reply.body, HasSubstr("NOT_FOUND: "));
}

TEST_F(HttpTest, ClientsAreRecordedFromTheUserAgent) {
  const CurlReply call =
      Post("/v1/GetFeature", R"({"name":"WatchList"})",
           {"-A", "kubelet/v1.31.0 (linux/amd64) kubernetes/abc1234"});
  ASSERT_EQ(call.status, 200);
  const CurlReply list = Post("/v1/ListClients", R"({"component":"kubelet"})",
                              {"-A", "kubectl/v1.36.0 (linux/amd64)"});
  ASSERT_EQ(list.status, 200) << list.body;
  v1::ListClientsResponse clients;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(list.body, &clients).ok())
      << list.body;
  ASSERT_EQ(clients.clients_size(), 1) << list.body;
  EXPECT_EQ(clients.clients(0).component(), "kubelet");
  EXPECT_EQ(clients.clients(0).version(), "1.31");
  EXPECT_EQ(clients.clients(0).verdict(), v1::SKEW_VERDICT_TOO_OLD);
  EXPECT_THAT(list.body, HasSubstr("\"SKEW_VERDICT_TOO_OLD\""));
}

TEST_F(HttpTest, MetricsStillWorkAndCountTheFrontDoor) {
  ASSERT_EQ(Post("/v1/GetFeature", R"({"name":"WatchList"})").status, 200);
  absl::StatusOr<std::string> scrape = server_->Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(
      *scrape,
      HasSubstr(
          R"(compatd_http_requests_total{route="/v1/GetFeature",code="200"})"));
  EXPECT_THAT(*scrape, HasSubstr("compatd_http_request_duration_seconds"));
  // And the curl of /metrics itself.
  const CurlReply metrics = Curl(
      {absl::StrCat("http://127.0.0.1:", server_->metrics_port(), "/metrics")});
  EXPECT_EQ(metrics.status, 200);
}

// Raw sockets: keep-alive and the body bound on the real binary.
std::string Exchange(int port, const std::string& request) {
  const int fd = testing::ConnectLoopback(port, timeval{5, 0});
  if (fd < 0) return "";
  (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buffer[16384];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

TEST_F(HttpTest, KeepAliveOverOneConnection) {
  const std::string body = R"({"name":"WatchList"})";
  const std::string post = absl::StrCat(
      "POST /v1/GetFeature HTTP/1.1\r\nHost: x\r\nContent-Length: ",
      body.size(), "\r\n\r\n", body);
  // Two requests, then one that closes: three answers on one connection.
  const std::string reply = Exchange(
      server_->http_port(),
      post + post +
          "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  size_t answers = 0;
  for (size_t at = reply.find("HTTP/1.1 200"); at != std::string::npos;
       at = reply.find("HTTP/1.1 200", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 3u) << reply;
}

TEST_F(HttpTest, BodyOverTheBoundIs413BeforeItIsSent) {
  // --max-http-body-bytes=65536: the head alone gets the answer.
  const std::string reply =
      Exchange(server_->http_port(),
               "POST /v1/GetFeature HTTP/1.1\r\nHost: x\r\n"
               "Content-Length: 65537\r\n\r\n");
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 413"));
  EXPECT_THAT(reply, HasSubstr("--max-http-body-bytes=65536"));
  // A client that sends Expect: 100-continue gets the 413 before its body.
  // (curl adds the header on its own only above 1 MiB; without it, curl may
  // still be sending when the 413 and the close arrive: a broken pipe.)
  testing::TempDir dir;
  const std::string file = dir.path() + "/big.json";
  ASSERT_TRUE(testing::WriteFile(file, std::string(1 << 20, 'x')));
  const CurlReply big =
      Curl({"-X", "POST", "-H", "Expect: 100-continue", "--data-binary",
            "@" + file, Url("/gatekeeper/v1")});
  EXPECT_EQ(big.status, 413) << big.err;
  // The admission webhook's bound is its own (--max-admission-body-bytes).
  const std::string admission =
      Exchange(server_->http_port(),
               "POST /admission/v1/validate/warn HTTP/1.1\r\nHost: x\r\n"
               "Content-Length: 16777217\r\n\r\n");
  EXPECT_THAT(admission, HasSubstr("HTTP/1.1 413"));
  EXPECT_THAT(admission, HasSubstr("--max-admission-body-bytes=16777216"));
}

// An UPDATE of a ConfigMap near etcd's 1.5 MiB: object and oldObject, each
// about 1.5 MiB of JSON, in one AdmissionReview: over the front door's
// 3 MiB default, under the webhook's own bound.
TEST_F(HttpTest, BigUpdateReviewIsAnswered) {
  const std::string data(3 * (1 << 19), 'x');  // 1.5 MiB
  const std::string object = absl::StrCat(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big",)",
      R"("namespace":"default"},"data":{"blob":")", data, R"("}})");
  const std::string review = absl::StrCat(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
      R"("request":{"uid":"big-1",)",
      R"("kind":{"group":"","version":"v1","kind":"ConfigMap"},)",
      R"("resource":{"group":"","version":"v1","resource":"configmaps"},)",
      R"("operation":"UPDATE","object":)", object, R"(,"oldObject":)", object,
      "}}");
  ASSERT_GT(review.size(), 3u << 20);
  testing::TempDir dir;
  const std::string file = dir.path() + "/review.json";
  ASSERT_TRUE(testing::WriteFile(file, review));
  const CurlReply reply =
      Curl({"-X", "POST", "-H", "Content-Type: application/json",
            "--data-binary", "@" + file, Url("/admission/v1/validate/warn")});
  ASSERT_EQ(reply.status, 200) << reply.err << reply.body.substr(0, 300);
  EXPECT_THAT(reply.body, HasSubstr(R"("uid":"big-1","allowed":true)"));
}

// The webhook as kube-apiserver calls it, on a catalog of a cluster at
// emulation 1.34 going to 1.35 (tests/testdata/catalogs/good/
// admission_cluster.yaml), options in the path.
TEST(HttpAdmissionClusterTest, PathFormEnforcesTheUpgradeTarget) {
  if (!CurlPresent()) GTEST_SKIP() << "curl is not installed";
  CompatdProcess server;
  ASSERT_OK(server.Start({"--http-listen=127.0.0.1:0",
                          absl::StrCat("--catalog=", COMPATD_TESTDATA_DIR,
                                       "/catalogs/good/admission_cluster.yaml"),
                          "--reload-interval=0"}));
  auto post = [&](const std::string& path, const std::string& body) {
    return Curl({"-X", "POST", "-H", "Content-Type: application/json",
                 "--data-binary", body,
                 absl::StrCat("http://127.0.0.1:", server.http_port(), path)});
  };
  auto review = [](const std::string& group, const std::string& version,
                   const std::string& kind) {
    const std::string api_version =
        group.empty() ? version : absl::StrCat(group, "/", version);
    return absl::StrCat(
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
        R"("request":{"uid":"c-1","kind":{"group":")", group,
        R"(","version":")", version, R"(","kind":")", kind, R"("},)",
        R"("requestKind":null,"operation":"CREATE","object":{"apiVersion":")",
        api_version, R"(","kind":")", kind,
        R"(","metadata":{"name":"x"}},"oldObject":null}})");
  };
  // storage.k8s.io/v1alpha1 VolumeAttributesClass is removed in 1.35.
  const std::string vac =
      review("storage.k8s.io", "v1alpha1", "VolumeAttributesClass");
  const CurlReply denied =
      post("/admission/v1/validate/enforce?timeout=2s", vac);
  ASSERT_EQ(denied.status, 200) << denied.body;
  const google::protobuf::Value answer = Json(denied.body);
  EXPECT_FALSE(Field(Field(answer, "response"), "allowed").bool_value());
  EXPECT_EQ(Field(Field(Field(answer, "response"), "status"), "message")
                .string_value(),
            "compatd: use storage.k8s.io/v1 VolumeAttributesClass, not "
            "storage.k8s.io/v1alpha1 VolumeAttributesClass: not served at the "
            "cluster's upgrade target (emulation 1.35): removed in Kubernetes "
            "1.35");
  const CurlReply warned = post("/admission/v1/validate/warn?timeout=2s", vac);
  ASSERT_EQ(warned.status, 200) << warned.body;
  EXPECT_TRUE(
      Field(Field(Json(warned.body), "response"), "allowed").bool_value());
  // v1 Endpoints: the replacement is another kind.
  const CurlReply endpoints =
      post("/admission/v1/validate/enforce", review("", "v1", "Endpoints"));
  ASSERT_EQ(endpoints.status, 200) << endpoints.body;
  EXPECT_THAT(endpoints.body,
              HasSubstr("use discovery.k8s.io/v1 EndpointSlice, not v1 "
                        "Endpoints: deprecated since Kubernetes 1.33"));
  // A per-webhook override: emulation 1.35 as the cluster's version.
  const CurlReply at_135 =
      post("/admission/v1/validate/warn/emulation-1.35/min-compatibility-1.34",
           review("apps", "v1", "Deployment"));
  EXPECT_EQ(at_135.status, 200) << at_135.body;
  // A segment kube-apiserver would refuse is refused here too.
  EXPECT_EQ(post("/admission/v1/validate/Enforce", vac).status, 400);
}

TEST_F(HttpTest, AuthorizationHeadersNeverReachTheLogs) {
  const std::string secret = "Bearer eyJhbGciOi.s3cr3t-t0ken.never-logged";
  for (const std::string& path :
       {std::string("/v1/GetFeature"), std::string("/v1/NoSuch"),
        std::string("/admission/v1/validate"), std::string("/gatekeeper/v1")}) {
    Post(path, "{garbage", {"-H", "Authorization: " + secret});
  }
  Curl({"-H", "Authorization: " + secret, Url("/healthz")});
  Exchange(server_->http_port(),
           "POST /v1/GetFeature HTTP/1.1\r\nHost: x\r\nAuthorization: " +
               secret + "\r\nContent-Length: 9999999\r\n\r\n");
  EXPECT_THAT(server_->Stderr(), Not(HasSubstr("s3cr3t-t0ken")));
  EXPECT_THAT(server_->Stderr(), Not(HasSubstr("eyJhbGciOi")));
}

// TLS and mutual TLS with certificates made for the test.
class HttpTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CurlPresent()) GTEST_SKIP() << "curl is not installed";
    ASSERT_TRUE(certs_.MakeCa("ca1"));
    ASSERT_TRUE(certs_.MakeServer("ca1", "server1"));
    ASSERT_TRUE(certs_.MakeClient("ca1", "client1"));
    ASSERT_TRUE(certs_.MakeCa("ca2"));
    ASSERT_TRUE(certs_.MakeClient("ca2", "client2"));
  }

  absl::Status Start(bool mutual) {
    std::vector<std::string> args = {
        "--http-listen=127.0.0.1:0",
        "--http-tls-cert=" + certs_.Path("server1.crt"),
        "--http-tls-key=" + certs_.Path("server1.key")};
    if (mutual)
      args.push_back("--http-tls-client-ca=" + certs_.Path("ca1.crt"));
    return server_.Start(args);
  }

  CurlReply Get(const std::string& path, std::vector<std::string> extra) {
    extra.push_back(
        absl::StrCat("https://127.0.0.1:", server_.http_port(), path));
    return Curl(extra);
  }

  TestCerts certs_;
  CompatdProcess server_;
};

TEST_F(HttpTlsTest, ServesTls12And13) {
  ASSERT_OK(Start(/*mutual=*/false));
  EXPECT_THAT(server_.Stderr(), HasSubstr("HTTPS/JSON on https://127.0.0.1:"));
  const std::string ca = certs_.Path("ca1.crt");
  const CurlReply tls13 =
      Get("/v1/GetFeature?name=WatchList", {"--cacert", ca, "--tlsv1.3"});
  EXPECT_EQ(tls13.status, 200) << tls13.err;
  EXPECT_THAT(tls13.body, HasSubstr("\"name\":\"WatchList\""));
  const CurlReply tls12 =
      Get("/healthz", {"--cacert", ca, "--tlsv1.2", "--tls-max", "1.2"});
  EXPECT_EQ(tls12.status, 200) << tls12.err;
  // A client that does not trust the CA, and plain HTTP, get nothing.
  EXPECT_NE(Get("/healthz", {}).exit_code, 0);
  const CurlReply plain = Curl(
      {absl::StrCat("http://127.0.0.1:", server_.http_port(), "/healthz")});
  EXPECT_NE(plain.status, 200);
}

TEST_F(HttpTlsTest, MutualTlsNeedsAClientCertificateOfTheClientCa) {
  ASSERT_OK(Start(/*mutual=*/true));
  const std::string ca = certs_.Path("ca1.crt");
  const CurlReply with =
      Get("/healthz", {"--cacert", ca, "--cert", certs_.Path("client1.crt"),
                       "--key", certs_.Path("client1.key")});
  EXPECT_EQ(with.status, 200) << with.err;
  EXPECT_NE(Get("/healthz", {"--cacert", ca}).status, 200);
  EXPECT_NE(
      Get("/healthz", {"--cacert", ca, "--cert", certs_.Path("client2.crt"),
                       "--key", certs_.Path("client2.key")})
          .status,
      200);
}

TEST(HttpStartupTest, PortInUseIsAStartupErrorNamingTheFlag) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
            0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string flag =
      absl::StrCat("--http-listen=127.0.0.1:", ntohs(address.sin_port));
  const RunResult run = RunCompatd(
      COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0", flag});
  close(fd);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr(flag));
  EXPECT_THAT(run.err, HasSubstr("in use"));
}

}  // namespace
}  // namespace compatd
