// POST /audit/v1/events (gateway/audit.h): kube-apiserver's audit webhook
// batches, written from the audit.k8s.io/v1 Go types
// (tests/testing/audit_events.h), read by ReadAuditEvents and served through
// gateway::Gateway::Handle on the catalog of
// tests/testdata/catalogs/good/audit_cluster.yaml.

#include "gateway/audit.h"

#include <atomic>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "gateway/gateway.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "runtime/api_usage.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "tests/testing/audit_events.h"

namespace compatd::gateway {
namespace {

runtime::ServiceMetrics::Options MetricOptions() {
  runtime::ServiceMetrics::Options options;
  options.version = "test";
  options.revision = "test";
  return options;
}

using ::compatd::testing::AuditEventJson;
using ::compatd::testing::AuditEventListJson;
using ::compatd::testing::AuditEventSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKubelet[] = "kubelet/v1.33.4 (linux/amd64) kubernetes/74e84a9";
constexpr char kAutoscaler[] =
    "cluster-autoscaler/v1.28.2 (linux/amd64) kubernetes/1a2b3c4";

std::vector<AuditEvent> ReadAll(const std::string& body, AuditReadStats* stats,
                                absl::Status* status, size_t max = 100) {
  std::vector<AuditEvent> events;
  // The views live as long as the callback: keep copies of what is checked.
  static thread_local std::vector<std::string> keep;
  keep.clear();
  keep.reserve(1000);
  *status = ReadAuditEvents(
      body, max,
      [&](const AuditEvent& e) {
        AuditEvent copy = e;
        for (absl::string_view* field :
             {&copy.stage, &copy.verb, &copy.username, &copy.user_agent,
              &copy.api_group, &copy.api_version, &copy.resource,
              &copy.subresource, &copy.removed_release_annotation}) {
          keep.emplace_back(*field);
          *field = keep.back();
        }
        events.push_back(copy);
      },
      stats);
  return events;
}

TEST(ReadAuditEventsTest, ReadsTheFieldsOfEveryEvent) {
  AuditEventSpec e;
  e.user_agent = kAutoscaler;
  e.username = "system:serviceaccount:kube-system:cluster-autoscaler";
  e.api_group = "policy";
  e.api_version = "v1beta1";
  e.resource = "poddisruptionbudgets";
  e.subresource = "status";
  e.code = 404;
  e.deprecated = true;
  e.removed_release = "1.25";
  AuditReadStats stats;
  absl::Status status;
  const std::vector<AuditEvent> events =
      ReadAll(AuditEventListJson({AuditEventJson(e)}), &stats, &status);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].stage, "ResponseComplete");
  EXPECT_EQ(events[0].verb, "get");
  EXPECT_EQ(events[0].username,
            "system:serviceaccount:kube-system:cluster-autoscaler");
  EXPECT_EQ(events[0].user_agent, kAutoscaler);
  EXPECT_TRUE(events[0].has_object_ref);
  EXPECT_EQ(events[0].api_group, "policy");
  EXPECT_EQ(events[0].api_version, "v1beta1");
  EXPECT_EQ(events[0].resource, "poddisruptionbudgets");
  EXPECT_EQ(events[0].subresource, "status");
  EXPECT_EQ(events[0].code, 404);
  EXPECT_TRUE(events[0].deprecated_annotation);
  EXPECT_EQ(events[0].removed_release_annotation, "1.25");
  EXPECT_EQ(stats.events, 1u);
  EXPECT_EQ(stats.malformed, 0u);
}

TEST(ReadAuditEventsTest, ANonResourceRequestHasNoObjectRef) {
  AuditEventSpec e;
  e.user_agent = kKubelet;
  AuditReadStats stats;
  absl::Status status;
  const std::vector<AuditEvent> events =
      ReadAll(AuditEventListJson({AuditEventJson(e)}), &stats, &status);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].has_object_ref);
}

TEST(ReadAuditEventsTest, MalformedEventsAreSkippedAndCounted) {
  AuditEventSpec good;
  good.user_agent = kKubelet;
  good.resource = "pods";
  std::string wrong_type = AuditEventJson(good);
  // userAgent a number: JSON, not an audit event.
  const std::string ua = absl::StrCat("\"userAgent\":\"", kKubelet, "\"");
  wrong_type.replace(wrong_type.find(ua), ua.size(), "\"userAgent\":5");
  std::string no_stage = AuditEventJson(good);
  const std::string stage = "\"stage\":\"ResponseComplete\",";
  no_stage.erase(no_stage.find(stage), stage.size());
  AuditReadStats stats;
  absl::Status status;
  const std::vector<AuditEvent> events = ReadAll(
      AuditEventListJson({AuditEventJson(good), wrong_type, "42", no_stage,
                          R"({"stage":"ResponseComplete","objectRef":[1]})",
                          AuditEventJson(good)}),
      &stats, &status);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(events.size(), 2u);
  EXPECT_EQ(stats.events, 6u);
  EXPECT_EQ(stats.malformed, 4u);
  EXPECT_EQ(stats.first_problem,
            "items[1].userAgent: expected a string, got a number");
}

// Past kMaxSkipDepth levels a value is not read but stepped over: only its
// event is malformed, and the event's later fields, the batch's later events
// and the syntax after it are still read (issue 36).
TEST(ReadAuditEventsTest, AValueTooDeepMakesOnlyItsEventMalformed) {
  AuditEventSpec good;
  good.user_agent = kKubelet;
  good.resource = "pods";
  const std::string deep_value =
      std::string(3000, '[') + "1" + std::string(3000, ']');
  std::string deep = AuditEventJson(good);
  // Before the event's other fields: they are still read (and checked).
  deep.insert(1, "\"requestObject\":" + deep_value + ",");
  AuditReadStats stats;
  absl::Status status;
  std::vector<AuditEvent> events =
      ReadAll(AuditEventListJson({AuditEventJson(good), deep, deep_value,
                                  AuditEventJson(good)}),
              &stats, &status);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(events.size(), 2u);
  EXPECT_EQ(stats.events, 4u);
  EXPECT_EQ(stats.malformed, 2u);
  EXPECT_EQ(stats.first_problem,
            "items[1].requestObject: nested deeper than 1024 levels");
  // A lone Event: skipped and counted the same way.
  std::string lone = deep;
  lone.insert(1, R"("kind":"Event","apiVersion":"audit.k8s.io/v1",)");
  events = ReadAll(lone, &stats, &status);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(stats.malformed, 3u);
  // Broken JSON after the deep value still refuses the batch.
  std::string broken = deep;
  broken.insert(broken.find("\"verb\""), "\"x\":,");
  events = ReadAll(AuditEventListJson({broken}), &stats, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST(ReadAuditEventsTest, OneEventAlone) {
  AuditEventSpec e;
  e.user_agent = kKubelet;
  e.resource = "nodes";
  std::string event = AuditEventJson(e);
  event.insert(1, R"("kind":"Event","apiVersion":"audit.k8s.io/v1",)");
  AuditReadStats stats;
  absl::Status status;
  const std::vector<AuditEvent> events = ReadAll(event, &stats, &status);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].resource, "nodes");
}

TEST(ReadAuditEventsTest, DocumentsThatAreNotEventListsAreRefusedWhole) {
  AuditEventSpec e;
  e.user_agent = kKubelet;
  const std::string item = AuditEventJson(e);
  struct Case {
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "not valid JSON"},
      {"[]", "expected an object"},
      {AuditEventListJson({item}) + "x", "not valid JSON"},
      {AuditEventListJson({item, "{\"stage\":"}), "not valid JSON"},
      {absl::StrCat(
           R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1beta1","items":[)",
           item, "]}"),
       "apiVersion \"audit.k8s.io/v1beta1\": expected \"audit.k8s.io/v1\""},
      {R"({"kind":"PodList","apiVersion":"audit.k8s.io/v1","items":[]})",
       "kind \"PodList\": expected \"EventList\""},
      {R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":{}})",
       "items: expected an array"},
      {R"({"kind":7,"apiVersion":"audit.k8s.io/v1","items":[]})",
       "kind: expected a string"},
  };
  for (const Case& c : cases) {
    int called = 0;
    AuditReadStats stats;
    const absl::Status status = ReadAuditEvents(
        c.body, 100, [&](const AuditEvent&) { ++called; }, &stats);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(status.message(), HasSubstr(c.message)) << c.body;
    EXPECT_EQ(called, 0) << c.body;
  }
}

TEST(ReadAuditEventsTest, MoreEventsThanTheBoundAreRefused) {
  AuditEventSpec e;
  e.user_agent = kKubelet;
  std::vector<std::string> items(5, AuditEventJson(e));
  int called = 0;
  AuditReadStats stats;
  const absl::Status status = ReadAuditEvents(
      AuditEventListJson(items), 4, [&](const AuditEvent&) { ++called; },
      &stats);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("more than 4 events"));
  EXPECT_EQ(called, 0);
}

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(absl::StrCat(COMPATD_TESTDATA_DIR, "/", name));
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AuditIngestTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(AuditIngest::Options()); }

  void Build(AuditIngest::Options options) {
    // In the reverse order of their dependencies: the client tracker
    // unhooks itself from the metrics it was given.
    gateway_.reset();
    ingest_.reset();
    handlers_.reset();
    usage_.reset();
    clients_.reset();
    metrics_.reset();
    registry_.reset();
    runtime::CatalogPipeline::Options pipeline_options;
    pipeline_options.derive = api::DeriveAnswers;
    pipeline_ =
        std::make_unique<runtime::CatalogPipeline>(std::move(pipeline_options));
    auto catalog = catalog::ParseCatalog(
        ReadTestdata("catalogs/good/audit_cluster.yaml"), "audit_cluster.yaml");
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_->Publish(*std::move(catalog), /*initial=*/true);
    registry_ = std::make_unique<metrics::Registry>();
    auto created =
        runtime::ServiceMetrics::Create(registry_.get(), MetricOptions());
    ASSERT_TRUE(created.ok()) << created.status();
    metrics_ = *std::move(created);
    clients_ = std::make_unique<runtime::ClientTracker>(
        &pipeline_->store(), metrics_.get(), runtime::ClientTracker::Options());
    usage_ = std::make_unique<runtime::ApiUsageTracker>(
        metrics_.get(), runtime::ApiUsageTracker::Options());
    handlers_ = std::make_unique<api::PolicyHandlers>(
        nullptr, clients_.get(), api::RequestLimits(), usage_.get());
    ingest_ = std::make_unique<AuditIngest>(clients_.get(), usage_.get(),
                                            metrics_.get(), options);
    gateway_ = std::make_unique<Gateway>(
        handlers_.get(), &pipeline_->store(), clients_.get(), metrics_.get(),
        nullptr, 0, HeavyLane(), ingest_.get());
  }

  http::Response Post(const std::string& body,
                      const std::string& type = "application/json") {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/audit/v1/events";
    request.headers.emplace_back("content-type", type);
    request.headers.emplace_back("user-agent",
                                 "kube-apiserver-admission/v1.36.0 "
                                 "(linux/amd64) kubernetes/abcdef0");
    request.body = body;
    http::Response response;
    gateway_->Handle(request, &response);
    return response;
  }

  std::string Metrics() { return metrics::SerializeText(registry_->Collect()); }

  std::unique_ptr<runtime::CatalogPipeline> pipeline_;
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<runtime::ServiceMetrics> metrics_;
  std::unique_ptr<runtime::ClientTracker> clients_;
  std::unique_ptr<runtime::ApiUsageTracker> usage_;
  std::unique_ptr<api::PolicyHandlers> handlers_;
  std::unique_ptr<AuditIngest> ingest_;
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(AuditIngestTest, ClientsAndApiUseAtRisk) {
  AuditEventSpec autoscaler;
  autoscaler.user_agent = kAutoscaler;
  autoscaler.username = "system:serviceaccount:kube-system:cluster-autoscaler";
  autoscaler.api_group = "policy";
  autoscaler.api_version = "v1beta1";
  autoscaler.resource = "poddisruptionbudgets";
  autoscaler.code = 404;
  AuditEventSpec kubelet;
  kubelet.user_agent = kKubelet;
  kubelet.username = "system:node:node-1";
  kubelet.resource = "pods";
  AuditEventSpec received = kubelet;
  received.stage = "RequestReceived";
  AuditEventSpec anonymous = autoscaler;
  anonymous.user_agent = "forged/v1.0.0 (linux/amd64) kubernetes/0000000";
  anonymous.code = 401;
  const http::Response response = Post(AuditEventListJson(
      {AuditEventJson(autoscaler), AuditEventJson(autoscaler),
       AuditEventJson(kubelet), AuditEventJson(received),
       AuditEventJson(anonymous)}));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.body,
            R"({"events":5,"recorded":3,"skipped":2,"malformed":0})");

  const auto snapshot = pipeline_->store().Current();
  const std::vector<runtime::ObservedClientInfo> clients =
      clients_->List(*snapshot);
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[0].component, "cluster-autoscaler");
  EXPECT_EQ(clients[0].version, "1.28");
  EXPECT_EQ(clients[0].requests, 2u);
  EXPECT_TRUE(clients[0].seen_audit);
  EXPECT_FALSE(clients[0].seen_direct);
  EXPECT_EQ(clients[1].component, "kubelet");
  EXPECT_EQ(clients[1].version, "1.33");
  EXPECT_EQ(clients[1].verdict, engine::SkewVerdict::kAllowed);

  const std::vector<runtime::ApiUsageInfo> usage = usage_->List(*snapshot);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].component, "cluster-autoscaler");
  EXPECT_EQ(usage[0].client_version, "1.28");
  EXPECT_EQ(usage[0].user,
            "system:serviceaccount:kube-system:cluster-autoscaler");
  EXPECT_EQ(usage[0].user_agent, kAutoscaler);
  EXPECT_EQ(usage[0].group, "policy");
  EXPECT_EQ(usage[0].version, "v1beta1");
  EXPECT_EQ(usage[0].resource, "poddisruptionbudgets");
  EXPECT_EQ(usage[0].judgement.verdict, engine::ApiUseVerdict::kNotServed);
  EXPECT_EQ(usage[0].requests, 2u);

  const std::string text = Metrics();
  EXPECT_THAT(
      text, HasSubstr("compatd_api_requests_at_risk_total{component=\"cluster-"
                      "autoscaler\",group_version=\"policy/v1beta1\","
                      "resource=\"poddisruptionbudgets\",verdict=\"not_"
                      "served\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("compatd_audit_events_total{result=\"recorded\"} 3\n"));
  EXPECT_THAT(
      text,
      HasSubstr("compatd_audit_events_total{result=\"skipped_stage\"} 1\n"));
  EXPECT_THAT(
      text,
      HasSubstr("compatd_audit_events_total{result=\"unauthenticated\"} 1\n"));
  EXPECT_THAT(
      text, HasSubstr("compatd_audit_batches_total{result=\"accepted\"} 1\n"));
  // The 401's forged client is nowhere; nor is kube-apiserver, the sender.
  EXPECT_THAT(text, Not(HasSubstr("forged")));
  EXPECT_THAT(text, Not(HasSubstr("kube-apiserver-admission")));
}

TEST_F(AuditIngestTest, HumanUsersAreHashedByDefault) {
  AuditEventSpec kubectl;
  kubectl.user_agent = "kubectl/v1.34.1 (linux/amd64) kubernetes/93248f9";
  kubectl.username = "alice@example.com";
  kubectl.api_group = "networking.k8s.io";
  kubectl.api_version = "v1beta1";
  kubectl.resource = "ipaddresses";
  kubectl.verb = "list";
  ASSERT_EQ(Post(AuditEventListJson({AuditEventJson(kubectl)})).status, 200);
  const auto usage = usage_->List(*pipeline_->store().Current());
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].judgement.verdict, engine::ApiUseVerdict::kDeprecated);
  EXPECT_THAT(usage[0].user, ::testing::MatchesRegex("user:[0-9a-f]{12}"));
  EXPECT_THAT(Metrics(), Not(HasSubstr("alice")));
}

TEST_F(AuditIngestTest, RefusalsKubeApiserverRetries) {
  AuditEventSpec e;
  e.user_agent = kKubelet;
  const std::string batch = AuditEventListJson({AuditEventJson(e)});
  EXPECT_EQ(Post("{").status, 400);
  EXPECT_EQ(Post(batch, "application/yaml").status, 415);
  AuditIngest::Options small;
  small.max_batch_bytes = batch.size() - 1;
  Build(small);
  http::Response too_large = Post(batch);
  EXPECT_EQ(too_large.status, 413);
  EXPECT_THAT(too_large.body, HasSubstr("--audit-max-batch-bytes"));
  AuditIngest::Options busy;
  busy.max_concurrent_batches = 0;
  Build(busy);
  http::Response refused = Post(batch);
  EXPECT_EQ(refused.status, 429);
  EXPECT_THAT(refused.headers,
              ::testing::Contains(std::make_pair(std::string("Retry-After"),
                                                 std::string("1"))));
  EXPECT_TRUE(clients_->List(*pipeline_->store().Current()).empty());
}

// Batches from several kube-apiservers at once while ListApiUsage,
// ListClients and a scrape read: each batch is read whole or refused with
// 429 (one at a time by default), and the counts add up. For TSan.
TEST_F(AuditIngestTest, ConcurrentBatchesAndReaders) {
  AuditIngest::Options options;
  options.max_concurrent_batches = 2;
  Build(options);
  AuditEventSpec e;
  e.user_agent = kAutoscaler;
  e.username = "system:serviceaccount:kube-system:cluster-autoscaler";
  e.api_group = "policy";
  e.api_version = "v1beta1";
  e.resource = "poddisruptionbudgets";
  const std::string batch =
      AuditEventListJson(std::vector<std::string>(50, AuditEventJson(e)));
  std::atomic<int> accepted{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> posters;
  for (int t = 0; t < 4; ++t) {
    posters.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        const http::Response r = Post(batch);
        EXPECT_TRUE(r.status == 200 || r.status == 429) << r.status;
        if (r.status == 200) ++accepted;
      }
    });
  }
  std::thread reader([&] {
    while (!done.load()) {
      v1::ListApiUsageResponse usage;
      EXPECT_TRUE(handlers_
                      ->ListApiUsage(*pipeline_->store().Current(),
                                     v1::ListApiUsageRequest(), &usage)
                      .ok());
      EXPECT_LE(usage.usage_size(), 1);
      clients_->List(*pipeline_->store().Current());
      Metrics();
    }
  });
  for (std::thread& t : posters) t.join();
  done = true;
  reader.join();
  ASSERT_GT(accepted.load(), 0);
  const auto usage = usage_->List(*pipeline_->store().Current());
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].requests, static_cast<uint64_t>(accepted.load()) * 50);
}

TEST_F(AuditIngestTest, OnlyPost) {
  http::Request request;
  request.method = "GET";
  request.path = request.target = "/audit/v1/events";
  http::Response response;
  gateway_->Handle(request, &response);
  EXPECT_EQ(response.status, 405);
}

TEST(UserLabelTest, Modes) {
  using runtime::UserLabel;
  using runtime::UserNames;
  const std::string sa = "system:serviceaccount:kube-system:cluster-autoscaler";
  EXPECT_EQ(UserLabel(sa, UserNames::kServiceAccounts, "k"), sa);
  EXPECT_EQ(UserLabel("system:node:node-7", UserNames::kServiceAccounts, "k"),
            "system:node:*");
  EXPECT_EQ(UserLabel("system:kube-controller-manager",
                      UserNames::kServiceAccounts, "k"),
            "system:kube-controller-manager");
  EXPECT_NE(UserLabel("alice", UserNames::kServiceAccounts, "k"),
            UserLabel("bob", UserNames::kServiceAccounts, "k"));
  EXPECT_NE(UserLabel("alice", UserNames::kServiceAccounts, "k1"),
            UserLabel("alice", UserNames::kServiceAccounts, "k2"));
  EXPECT_EQ(UserLabel("alice", UserNames::kAll, "k"), "alice");
  EXPECT_EQ(UserLabel(sa, UserNames::kNone, "k"), "serviceaccount");
  EXPECT_EQ(UserLabel("alice", UserNames::kNone, "k"), "user");
  EXPECT_FALSE(runtime::ParseUserNames("some").ok());
  EXPECT_EQ(*runtime::ParseUserNames("all"), UserNames::kAll);
}

}  // namespace
}  // namespace compatd::gateway
