// kube-apiserver's audit webhook on the real binary (--http-listen): batches
// in the shape kube-apiserver posts them (tests/testing/audit_events.h:
// audit.k8s.io/v1 EventList of Metadata-level events) from a mixed cluster
// (kubelet, kube-proxy, kube-controller-manager, kubectl, an operator, the
// cluster autoscaler), with deprecated, removed and turned-off APIs,
// subresources, denied and unauthenticated requests, malformed events and a
// batch over the bound; then ListApiUsage, ListClients, /metrics and the
// status page show what was sent, and nothing else. The catalog:
// tests/testdata/catalogs/good/audit_cluster.yaml (emulation 1.34,
// rollback floor 1.33, upgrade target 1.36).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/audit_events.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/time_scale.h"

namespace compatd {
namespace {

using ::compatd::testing::AuditEventJson;
using ::compatd::testing::AuditEventListJson;
using ::compatd::testing::AuditEventSpec;
using ::compatd::testing::CompatdProcess;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKubelet[] = "kubelet/v1.31.6 (linux/amd64) kubernetes/9a1b2c3";
constexpr char kProxy[] = "kube-proxy/v1.34.1 (linux/arm64) kubernetes/93248f9";
constexpr char kKcm[] =
    "kube-controller-manager/v1.34.1 (linux/amd64) "
    "kubernetes/93248f9/system:serviceaccount:kube-system:"
    "replicaset-controller";
constexpr char kKubectl[] = "kubectl/v1.35.2 (darwin/arm64) kubernetes/5d3a1f0";
constexpr char kOperator[] =
    "cert-manager-cainjector/v1.17.2 (linux/amd64) kubernetes/6e3f1f8";
constexpr char kAutoscaler[] =
    "cluster-autoscaler/v1.28.2 (linux/amd64) kubernetes/1a2b3c4";

// A POST on its own HTTP/1.0 connection; status and body.
std::pair<int, std::string> Post(int port, const std::string& path,
                                 const std::string& body) {
  const int fd = testing::ConnectLoopback(port, timeval{10, 0});
  if (fd < 0) return {0, ""};
  const std::string request =
      absl::StrCat("POST ", path,
                   " HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "User-Agent: kube-apiserver-admission\r\nContent-Length: ",
                   body.size(), "\r\n\r\n", body);
  (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buffer[16384];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t end = reply.find("\r\n\r\n");
  if (reply.size() < 12 || end == std::string::npos) return {0, reply};
  return {std::stoi(reply.substr(9, 3)), reply.substr(end + 4)};
}

AuditEventSpec Call(const char* user_agent, std::string username,
                    std::string group, std::string version,
                    std::string resource, std::string verb = "get") {
  AuditEventSpec e;
  e.user_agent = user_agent;
  e.username = std::move(username);
  e.api_group = std::move(group);
  e.api_version = std::move(version);
  e.resource = std::move(resource);
  e.verb = std::move(verb);
  return e;
}

class AuditTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new CompatdProcess();
    start_ = server_->Start({"--http-listen=127.0.0.1:0",
                             "--catalog=" + std::string(COMPATD_TESTDATA_DIR) +
                                 "/catalogs/good/audit_cluster.yaml",
                             "--audit-max-batch-events=100"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_OK(start_);
    ASSERT_NE(server_->http_port(), 0) << server_->Stderr();
  }
  static CompatdProcess* server_;
  static absl::Status start_;
};

CompatdProcess* AuditTest::server_ = nullptr;
absl::Status AuditTest::start_;

TEST_F(AuditTest, TheWholeClusterInOneBatch) {
  const std::string sa = "system:serviceaccount:";
  std::vector<std::string> items;
  // The autoscaler lists PodDisruptionBudgets in policy/v1beta1 (removed in
  // 1.25: 404 now) three times.
  AuditEventSpec pdb =
      Call(kAutoscaler, sa + "kube-system:cluster-autoscaler", "policy",
           "v1beta1", "poddisruptionbudgets", "list");
  pdb.code = 404;
  pdb.namespace_ = "";
  for (int i = 0; i < 3; ++i) items.push_back(AuditEventJson(pdb));
  // kubelet: pods and their status subresource (served: nothing at risk).
  AuditEventSpec status =
      Call(kKubelet, "system:node:node-1", "", "v1", "pods", "patch");
  status.subresource = "status";
  items.push_back(AuditEventJson(status));
  // kube-proxy watching networking.k8s.io/v1beta1 IPAddresses (deprecated in
  // 1.34), RequestReceived first (not counted), then completed.
  AuditEventSpec ip = Call(kProxy, "system:kube-proxy", "networking.k8s.io",
                           "v1beta1", "ipaddresses", "watch");
  AuditEventSpec started = ip;
  started.stage = "ResponseStarted";
  items.push_back(AuditEventJson(started));
  items.push_back(AuditEventJson(ip));
  // kube-controller-manager: apps/v1 deployments' scale subresource.
  AuditEventSpec scale = Call(kKcm, "system:kube-controller-manager", "apps",
                              "v1", "deployments", "update");
  scale.subresource = "scale";
  items.push_back(AuditEventJson(scale));
  // A person's kubectl creating an admissionregistration.k8s.io/v1beta1
  // MutatingAdmissionPolicy (introduced 1.34: not served at the rollback
  // floor 1.33), denied by RBAC.
  AuditEventSpec map =
      Call(kKubectl, "alice@example.com", "admissionregistration.k8s.io",
           "v1beta1", "mutatingadmissionpolicies", "create");
  map.code = 403;
  items.push_back(AuditEventJson(map));
  // An operator reading certificates.k8s.io/v1alpha1 ClusterTrustBundles,
  // which the upgrade target turns off.
  items.push_back(AuditEventJson(
      Call(kOperator, sa + "cert-manager:cert-manager-cainjector",
           "certificates.k8s.io", "v1alpha1", "clustertrustbundles", "list")));
  // A custom resource the catalog does not know, annotated deprecated by
  // kube-apiserver (a deprecated CRD version).
  AuditEventSpec widget =
      Call(kOperator, sa + "cert-manager:cert-manager-cainjector",
           "example.com", "v1alpha1", "widgets");
  widget.deprecated = true;
  items.push_back(AuditEventJson(widget));
  // Unauthenticated: not a client of the cluster.
  AuditEventSpec anonymous =
      Call("forged-tool/v9.9.9 (linux/amd64) kubernetes/0000000",
           "system:anonymous", "policy", "v1beta1", "poddisruptionbudgets");
  anonymous.code = 401;
  items.push_back(AuditEventJson(anonymous));
  // Malformed events among good ones: skipped and counted.
  items.push_back(R"({"stage":"ResponseComplete","userAgent":["x"]})");
  items.push_back("null");

  const auto [code, body] =
      Post(server_->http_port(), "/audit/v1/events", AuditEventListJson(items));
  ASSERT_EQ(code, 200) << body;
  EXPECT_THAT(
      body, HasSubstr(R"("events":13,"recorded":9,"skipped":2,"malformed":2)"));

  auto stub = v1::CompatibilityPolicy::NewStub(server_->NewChannel());
  v1::ListApiUsageResponse usage;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(
        stub->ListApiUsage(&context, v1::ListApiUsageRequest(), &usage).ok());
  }
  std::map<std::string, v1::ApiUsage> by_resource;
  for (const v1::ApiUsage& row : usage.usage()) {
    by_resource[row.resource()] = row;
  }
  ASSERT_EQ(usage.usage_size(), 5) << usage.DebugString();
  const v1::ApiUsage& removed = by_resource["poddisruptionbudgets"];
  EXPECT_EQ(removed.verdict(), v1::API_USE_VERDICT_NOT_SERVED);
  EXPECT_EQ(removed.component(), "cluster-autoscaler");
  EXPECT_EQ(removed.client_version(), "1.28");
  EXPECT_EQ(removed.user(),
            "system:serviceaccount:kube-system:cluster-autoscaler");
  EXPECT_EQ(removed.user_agent(), kAutoscaler);
  EXPECT_EQ(removed.kind(), "PodDisruptionBudget");
  EXPECT_EQ(removed.replacement(), "policy/v1");
  EXPECT_EQ(removed.requests(), 3u);
  EXPECT_EQ(removed.denied(), 0u);
  EXPECT_EQ(by_resource["ipaddresses"].verdict(),
            v1::API_USE_VERDICT_DEPRECATED);
  EXPECT_EQ(by_resource["ipaddresses"].requests(), 1u);
  EXPECT_EQ(by_resource["ipaddresses"].component(), "kube-proxy");
  const v1::ApiUsage& rollback = by_resource["mutatingadmissionpolicies"];
  EXPECT_EQ(rollback.verdict(), v1::API_USE_VERDICT_NOT_SERVED_AT_ROLLBACK);
  EXPECT_EQ(rollback.denied(), 1u);
  EXPECT_THAT(rollback.user(), ::testing::MatchesRegex("user:[0-9a-f]{12}"));
  EXPECT_EQ(by_resource["clustertrustbundles"].verdict(),
            v1::API_USE_VERDICT_NOT_SERVED_AT_TARGET);
  EXPECT_EQ(by_resource["widgets"].verdict(), v1::API_USE_VERDICT_DEPRECATED);
  EXPECT_TRUE(by_resource["widgets"].apiserver_deprecated());
  // Most severe first.
  EXPECT_EQ(usage.usage(0).resource(), "poddisruptionbudgets");

  v1::ListClientsResponse clients;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(
        stub->ListClients(&context, v1::ListClientsRequest(), &clients).ok());
  }
  std::map<std::string, v1::ObservedClient> by_component;
  for (const v1::ObservedClient& c : clients.clients()) {
    by_component[c.component()] = c;
  }
  for (const char* component :
       {"kubelet", "kube-proxy", "kube-controller-manager", "kubectl",
        "cert-manager-cainjector", "cluster-autoscaler"}) {
    ASSERT_TRUE(by_component.contains(component)) << clients.DebugString();
    EXPECT_THAT(by_component[component].seen_via(),
                ::testing::Contains(v1::CLIENT_SEEN_VIA_AUDIT))
        << component;
  }
  EXPECT_FALSE(by_component.contains("forged-tool"));
  // kubelet 1.31 under emulation 1.34, min-compatibility 1.33: allowed
  // (min-compatibility - 2, KEP-4330).
  EXPECT_EQ(by_component["kubelet"].verdict(), v1::SKEW_VERDICT_ALLOWED);
  EXPECT_EQ(by_component["kubectl"].verdict(), v1::SKEW_VERDICT_ALLOWED);
  EXPECT_EQ(by_component["cert-manager-cainjector"].requests(), 2u);

  absl::StatusOr<std::string> scrape = server_->Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(*scrape,
              HasSubstr("compatd_api_requests_at_risk_total{component=\""
                        "cluster-autoscaler\",group_version=\"policy/v1beta1\","
                        "resource=\"poddisruptionbudgets\",verdict=\"not_"
                        "served\"} 3\n"));
  EXPECT_THAT(*scrape,
              HasSubstr("compatd_api_requests_at_risk_total{component=\""
                        "kube-proxy\",group_version=\"networking.k8s.io/"
                        "v1beta1\",resource=\"ipaddresses\",verdict=\""
                        "deprecated\"} 1\n"));
  EXPECT_THAT(
      *scrape,
      HasSubstr("compatd_audit_events_total{result=\"malformed\"} 2\n"));
  EXPECT_THAT(*scrape, Not(HasSubstr("forged-tool")));
  EXPECT_THAT(*scrape, Not(HasSubstr("alice")));
  EXPECT_THAT(*scrape, Not(HasSubstr("component=\"kubelet\",group_version")));

  absl::StatusOr<testing::HttpReply> page =
      testing::HttpGet(server_->http_port(), "/ui/api-use");
  ASSERT_OK(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("cluster-autoscaler"));
  EXPECT_THAT(page->body, HasSubstr("poddisruptionbudgets"));
  EXPECT_THAT(page->body, HasSubstr("not served at the rollback floor"));
  EXPECT_THAT(page->body, Not(HasSubstr("alice")));
  EXPECT_THAT(page->body, Not(HasSubstr("forged-tool")));

  // The same rows as JSON through the RPC table.
  absl::StatusOr<testing::HttpReply> json = testing::HttpGet(
      server_->http_port(), "/v1/ListApiUsage?component=kube-proxy");
  ASSERT_OK(json);
  EXPECT_EQ(json->status, 200) << json->body;
  EXPECT_THAT(json->body, HasSubstr("ipaddresses"));
  EXPECT_THAT(json->body, Not(HasSubstr("poddisruptionbudgets")));

  // The plan names the calls.
  v1::PlanUpgradeResponse plan;
  {
    grpc::ClientContext context;
    v1::PlanUpgradeRequest request;
    request.mutable_to()->set_emulation_version("1.36");
    request.mutable_to()->set_runtime_config(
        "certificates.k8s.io/v1alpha1=false");
    ASSERT_TRUE(stub->PlanUpgrade(&context, request, &plan).ok());
  }
  bool named = false;
  for (const v1::UpgradeItem& item : plan.apis()) {
    if (absl::StrContains(item.reason(), "cert-manager-cainjector/1.17")) {
      named = true;
    }
  }
  EXPECT_TRUE(named) << plan.DebugString();
}

TEST_F(AuditTest, ABatchOverTheBoundIsRefused) {
  AuditEventSpec e = Call(kKubelet, "system:node:node-2", "", "v1", "nodes");
  std::vector<std::string> items(101, AuditEventJson(e));
  const auto [code, body] =
      Post(server_->http_port(), "/audit/v1/events", AuditEventListJson(items));
  EXPECT_EQ(code, 413) << body;
  EXPECT_THAT(body, HasSubstr("--audit-max-batch-events"));
  absl::StatusOr<std::string> scrape = server_->Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(
      *scrape,
      HasSubstr("compatd_audit_batches_total{result=\"too_large\"} 1\n"));
}

// Issue 36: an event's fields are bounded at intake. 20 batches of events
// with 100 KB user names, resources, subresources and removed-release
// annotations (for a custom API marked deprecated, the path that kept them
// whole) leave one bounded row per API, ListApiUsage and /metrics answer,
// and compatd's RSS stays far under what keeping them would take.
TEST_F(AuditTest, GiantFieldsAreCutAtIntake) {
  const std::string huge(100000, 'x');
  for (int batch = 0; batch < 30; ++batch) {
    std::vector<std::string> items;
    for (int i = 0; i < 4; ++i) {
      AuditEventSpec e = Call(
          kOperator,
          absl::StrCat("system:serviceaccount:ns:", huge, 100 + batch * 4 + i),
          "giant.example.com", "v1", absl::StrCat("widgets", huge));
      e.subresource = absl::StrCat("status", huge);
      e.deprecated = true;
      e.removed_release = absl::StrCat("1.40", huge);
      items.push_back(AuditEventJson(e));
    }
    const auto [code, body] = Post(server_->http_port(), "/audit/v1/events",
                                   AuditEventListJson(items));
    ASSERT_EQ(code, 200) << body.substr(0, 300);
  }
  auto stub = v1::CompatibilityPolicy::NewStub(server_->NewChannel());
  v1::ListApiUsageResponse usage;
  grpc::ClientContext context;
  ASSERT_TRUE(
      stub->ListApiUsage(&context, v1::ListApiUsageRequest(), &usage).ok());
  size_t giant_rows = 0;
  for (const v1::ApiUsage& row : usage.usage()) {
    if (row.group() != "giant.example.com") continue;
    ++giant_rows;
    EXPECT_LE(row.user().size(), 256u);
    EXPECT_LE(row.resource().size(), 256u);
    EXPECT_LE(row.subresource().size(), 256u);
    EXPECT_LE(row.apiserver_removed_release().size(), 256u);
    EXPECT_THAT(row.resource(), HasSubstr("bytes cut)"));
  }
  // Every user name differs only past the bound (and has the same length,
  // so the same marker): one row.
  EXPECT_EQ(giant_rows, 1u) << usage.DebugString().substr(0, 2000);
  EXPECT_LT(usage.ByteSizeLong(), 64u << 10);
  absl::StatusOr<std::string> scrape = server_->Scrape();
  ASSERT_OK(scrape);
  EXPECT_LT(scrape->size(), 1u << 20);
  // 120 events of 400 KB of fields kept whole would be 48 MB more. (Not
  // under the sanitizers, whose shadow memory is most of their RSS.)
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(COMPATD_TSAN)
  absl::StatusOr<int64_t> rss = testing::VmRssBytes(server_->pid());
  ASSERT_OK(rss);
  EXPECT_LT(*rss, int64_t{60} << 20);
#endif
}

// One event nested deeper than compatd reads (1,100 levels: valid JSON, which
// Go's decoder reads to 10,000) is skipped and counted as malformed; the 399
// other events of kube-apiserver's default batch of 400 are read (issue 36:
// the whole batch was a 400, and kube-apiserver dropped it after its retries).
TEST(AuditDeepEventTest, ADeepEventIsSkippedAndTheRestOfItsBatchRead) {
  CompatdProcess server;
  ASSERT_OK(server.Start({"--http-listen=127.0.0.1:0",
                          "--catalog=" + std::string(COMPATD_TESTDATA_DIR) +
                              "/catalogs/good/audit_cluster.yaml"}));
  AuditEventSpec e = Call(kKubelet, "system:node:node-4", "", "v1", "nodes");
  const std::string good = AuditEventJson(e);
  constexpr int kLevels = 1100;
  // As a RequestResponse-level event carries it: arrays and objects.
  std::string deep_object;
  for (int i = 0; i < kLevels; ++i) deep_object += i % 2 ? "[" : "{\"a\":";
  deep_object += "1";
  for (int i = kLevels - 1; i >= 0; --i) deep_object += i % 2 ? "]" : "}";
  std::string deep = good;
  deep.insert(deep.size() - 1, ",\"requestObject\":" + deep_object);
  for (const std::string& odd : {deep, "[" + deep_object + "]"}) {
    std::vector<std::string> items(399, good);
    items.insert(items.begin() + 200, odd);
    const auto [code, body] =
        Post(server.http_port(), "/audit/v1/events", AuditEventListJson(items));
    EXPECT_EQ(code, 200) << body;
    EXPECT_THAT(body, HasSubstr("\"events\":400,\"recorded\":399,"));
    EXPECT_THAT(body, HasSubstr("\"malformed\":1,"));
    EXPECT_THAT(body, HasSubstr("items[200]."));
  }
  absl::StatusOr<std::string> scrape = server.Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(*scrape, HasSubstr("compatd_audit_events_total{result="
                                 "\"malformed\"} 2\n"));
  EXPECT_THAT(*scrape, HasSubstr("compatd_audit_events_total{result="
                                 "\"recorded\"} 798\n"));
  EXPECT_THAT(
      *scrape,
      HasSubstr("compatd_audit_batches_total{result=\"accepted\"} 2\n"));
}

// Senders take turns: three that post 1 MB batches back to back never take
// every turn from a fourth, whose 51 batches are all accepted within five
// tries each (issue 36: 10 of them never were, with one slot given to whoever
// came first); and audit batches leave the front door's other calls a
// thread.
TEST(AuditTurnsTest, BackToBackSendersLeaveOthersTheirTurn) {
  CompatdProcess server;
  ASSERT_OK(server.Start({"--http-listen=127.0.0.1:0",
                          "--catalog=" + std::string(COMPATD_TESTDATA_DIR) +
                              "/catalogs/good/audit_cluster.yaml"}));
  AuditEventSpec e = Call(kKubelet, "system:node:node-5", "", "v1", "nodes");
  std::vector<std::string> items;
  std::string batch;
  while (batch.size() < 1000000) {
    items.push_back(AuditEventJson(e));
    batch = AuditEventListJson(items);
  }
  std::atomic<bool> done{false};
  std::atomic<int> hammered{0}, hammer_refused{0};
  std::vector<std::thread> hammers;
  for (int i = 0; i < 3; ++i) {
    hammers.emplace_back([&] {
      while (!done.load()) {
        const int code =
            Post(server.http_port(), "/audit/v1/events", batch).first;
        ++(code == 200 ? hammered : hammer_refused);
      }
    });
  }
  int accepted = 0, tries = 0;
  std::chrono::steady_clock::duration slowest_health{};
  for (int b = 0; b < 51; ++b) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      ++tries;
      if (Post(server.http_port(), "/audit/v1/events", batch).first == 200) {
        ++accepted;
        break;
      }
      // kube-apiserver waits 10 s, then x1.5: a tenth of it here.
      usleep(100 * 1000);
    }
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<testing::HttpReply> health =
        testing::HttpGet(server.http_port(), "/healthz");
    slowest_health =
        std::max(slowest_health, std::chrono::steady_clock::now() - start);
    ASSERT_OK(health);
    EXPECT_EQ(health->status, 200);
  }
  done = true;
  for (std::thread& t : hammers) t.join();
  EXPECT_EQ(accepted, 51) << tries << " tries; the three others: " << hammered
                          << " accepted, " << hammer_refused << " refused";
  EXPECT_GT(hammered.load(), 0);
  std::printf(
      "the fourth: %d of 51 accepted in %d tries; the three others: %d "
      "accepted, %d refused; slowest /healthz %lld ms\n",
      accepted, tries, hammered.load(), hammer_refused.load(),
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(slowest_health)
              .count()));
  EXPECT_LT(slowest_health, testing::Scaled(std::chrono::milliseconds(250)));
}

// A batch over the front door's body bound never reaches the audit handler
// (the HTTP server answers 413 after the head): it is still counted as
// too_large and logged with its size, since kube-apiserver drops it after
// its retries (issue 35).
TEST(AuditBodyBoundTest, ABatchOverTheBodyBoundIsCountedAndLogged) {
  CompatdProcess server;
  ASSERT_OK(server.Start(
      {"--http-listen=127.0.0.1:0", "--max-http-body-bytes=65536"}));
  AuditEventSpec e = Call(kKubelet, "system:node:node-3", "", "v1", "nodes");
  std::vector<std::string> items;
  std::string batch;
  while (batch.size() <= 70000) {
    items.push_back(AuditEventJson(e));
    batch = AuditEventListJson(items);
  }
  const auto [code, body] = Post(server.http_port(), "/audit/v1/events", batch);
  EXPECT_EQ(code, 413) << body;
  absl::StatusOr<std::string> scrape = server.Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(
      *scrape,
      HasSubstr("compatd_audit_batches_total{result=\"too_large\"} 1\n"));
  const std::string logged =
      absl::StrCat("audit batch refused (413, too_large): ", batch.size(),
                   " bytes is over --max-http-body-bytes=65536");
  for (int i = 0; i < 100 && !absl::StrContains(server.Stderr(), logged); ++i) {
    usleep(50 * 1000);
  }
  EXPECT_THAT(server.Stderr(), HasSubstr(logged));
}

}  // namespace
}  // namespace compatd
