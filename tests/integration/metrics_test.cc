// The real compatd binary's /metrics and ListClients, seen as a client and a
// scraper see them: RPCs through the generated stub with Kubernetes
// User-Agents and x-kubernetes-* metadata, then a plain HTTP scrape, parsed,
// and checked with the real `promtool check metrics`.
//
// The embedded 1.36 catalog's cluster is binary 1.36 / emulation 1.36 /
// min-compatibility 1.35, so with the KEP-4330 table: kubelet and kube-proxy
// may be 1.33..1.36, kubectl 1.35..1.37, kube-controller-manager and
// kube-scheduler 1.35..1.36.

#include <stdio.h>
#include <sys/wait.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/status_matchers.h"

namespace compatd {
namespace {

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Sample;
using testing::Select;

constexpr char kPolicyService[] = "compatd.v1.CompatibilityPolicy";
constexpr char kKubeletAgent[] =
    "kubelet/v1.31.0 (linux/amd64) kubernetes/abc1234";
constexpr char kPromtool[] = "/usr/bin/promtool";

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(server_.Start()); }

  // One GetFeature call on `channel` with `metadata`; returns its code.
  grpc::StatusCode GetFeature(
      const std::shared_ptr<grpc::Channel>& channel, const std::string& name,
      const std::map<std::string, std::string>& metadata = {}) {
    auto stub = v1::CompatibilityPolicy::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
    v1::GetFeatureRequest request;
    request.set_name(name);
    v1::GetFeatureResponse response;
    return stub->GetFeature(&context, request, &response).error_code();
  }

  std::vector<Sample> ScrapeSamples() {
    absl::StatusOr<std::string> scrape = server_.Scrape();
    EXPECT_TRUE(scrape.ok()) << scrape.status();
    if (!scrape.ok()) return {};
    absl::StatusOr<std::vector<Sample>> samples =
        testing::ParseExposition(*scrape);
    EXPECT_TRUE(samples.ok()) << samples.status() << "\n" << *scrape;
    return samples.ok() ? *samples : std::vector<Sample>{};
  }

  // The value of the one sample of `name` with exactly these labels among
  // those it has, or -1 (with a failure naming what the scrape had).
  static double Value(const std::vector<Sample>& samples,
                      const std::string& name,
                      const std::map<std::string, std::string>& labels) {
    const std::vector<Sample> found = Select(samples, name, labels);
    if (found.size() == 1) return found[0].value;
    std::string have;
    for (const Sample& s : Select(samples, name)) {
      absl::StrAppend(&have, "\n  ", testing::Describe(s));
    }
    ADD_FAILURE() << found.size() << " samples of " << name
                  << " match the labels; the scrape has:" << have;
    return -1;
  }

  // Sends the traffic most tests look at: a kubelet 1.31 (User-Agent) with 2
  // calls, a kubectl 1.36 (metadata) with 3.
  void SendKubeletAndKubectl() {
    auto kubelet = server_.NewChannel(kKubeletAgent);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(GetFeature(kubelet, "WatchList"), grpc::StatusCode::OK);
    }
    auto plain = server_.NewChannel();
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(GetFeature(plain, "WatchList",
                           {{"x-kubernetes-component", "kubectl"},
                            {"x-kubernetes-version", "v1.36.2"}}),
                grpc::StatusCode::OK);
    }
  }

  testing::CompatdProcess server_;
};

TEST_F(MetricsTest, HandledTotalCountsEachMethodByGrpcCode) {
  auto channel = server_.NewChannel(kKubeletAgent);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(GetFeature(channel, "WatchList"), grpc::StatusCode::OK);
  }
  EXPECT_EQ(GetFeature(channel, "NoSuchGate"), grpc::StatusCode::NOT_FOUND);

  const std::vector<Sample> samples = ScrapeSamples();
  const std::map<std::string, std::string> method = {
      {"grpc_type", "unary"},
      {"grpc_service", kPolicyService},
      {"grpc_method", "GetFeature"}};
  auto with_code = [&](const std::string& code) {
    auto labels = method;
    labels["grpc_code"] = code;
    return labels;
  };
  EXPECT_EQ(Value(samples, "grpc_server_started_total", method), 4);
  EXPECT_EQ(Value(samples, "grpc_server_handled_total", with_code("OK")), 3);
  EXPECT_EQ(Value(samples, "grpc_server_handled_total", with_code("NotFound")),
            1);
  EXPECT_EQ(
      Value(samples, "grpc_server_handled_total", with_code("InvalidArgument")),
      0);
  EXPECT_EQ(Value(samples, "grpc_server_handling_seconds_count", method), 4);
  auto inf = method;
  inf["le"] = "+Inf";
  EXPECT_EQ(Value(samples, "grpc_server_handling_seconds_bucket", inf), 4);
  // Another method, never called: present at 0.
  EXPECT_EQ(Value(samples, "grpc_server_started_total",
                  {{"grpc_method", "CheckSkew"}}),
            0);
}

TEST_F(MetricsTest, ClientRequestsCarryComponentVersionAndVerdict) {
  SendKubeletAndKubectl();
  const std::vector<Sample> samples = ScrapeSamples();
  EXPECT_EQ(Value(samples, "compatd_client_requests_total",
                  {{"component", "kubelet"},
                   {"version", "1.31"},
                   {"verdict", "too_old"}}),
            2);
  EXPECT_EQ(Value(samples, "compatd_client_requests_total",
                  {{"component", "kubectl"},
                   {"version", "1.36"},
                   {"verdict", "allowed"}}),
            3);
  // Nothing else was counted for them.
  EXPECT_EQ(Select(samples, "compatd_client_requests_total",
                   {{"component", "kubelet"}})
                .size(),
            1u);
  EXPECT_EQ(Select(samples, "compatd_client_requests_total",
                   {{"component", "kubectl"}})
                .size(),
            1u);
}

TEST_F(MetricsTest, OutOfAllowanceGaugeCountsLiveVersionsPerComponent) {
  SendKubeletAndKubectl();
  // kube-controller-manager 1.37 is newer than the emulation version 1.36;
  // the component comes from metadata, the version from its User-Agent.
  auto kcm = server_.NewChannel(
      "kube-controller-manager/v1.37.0 (linux/amd64) kubernetes/0123abc");
  EXPECT_EQ(GetFeature(kcm, "WatchList",
                       {{"x-kubernetes-component", "kube-controller-manager"}}),
            grpc::StatusCode::OK);
  // A second out-of-allowance kubelet version.
  EXPECT_EQ(GetFeature(server_.NewChannel(), "WatchList",
                       {{"x-kubernetes-component", "kubelet"},
                        {"x-kubernetes-version", "1.29"}}),
            grpc::StatusCode::OK);

  const std::vector<Sample> samples = ScrapeSamples();
  const std::string gauge = "compatd_clients_out_of_allowance";
  EXPECT_EQ(Value(samples, gauge, {{"component", "kubelet"}}), 2);
  EXPECT_EQ(Value(samples, gauge, {{"component", "kube-controller-manager"}}),
            1);
  EXPECT_EQ(Value(samples, gauge, {{"component", "kubectl"}}), 0);
  EXPECT_EQ(Value(samples, gauge, {{"component", "kube-scheduler"}}), 0);
  EXPECT_EQ(Value(samples, "compatd_client_requests_total",
                  {{"component", "kube-controller-manager"},
                   {"version", "1.37"},
                   {"verdict", "too_new"}}),
            1);
}

TEST_F(MetricsTest, UnidentifiedCallerIsCountedAsUnknown) {
  // gRPC C++'s own User-Agent only: no Kubernetes-form product token.
  EXPECT_EQ(GetFeature(server_.NewChannel(), "WatchList"),
            grpc::StatusCode::OK);
  // A component no skew rule names, with a readable version.
  EXPECT_EQ(GetFeature(server_.NewChannel(), "WatchList",
                       {{"x-kubernetes-component", "my-operator"},
                        {"x-kubernetes-version", "v2.4.0"}}),
            grpc::StatusCode::OK);
  const std::vector<Sample> samples = ScrapeSamples();
  EXPECT_EQ(Value(samples, "compatd_client_requests_total",
                  {{"component", "unknown"},
                   {"version", "unknown"},
                   {"verdict", "unknown"}}),
            1);
  EXPECT_EQ(Value(samples, "compatd_client_requests_total",
                  {{"component", "my-operator"},
                   {"version", "2.4"},
                   {"verdict", "unknown"}}),
            1);
}

TEST_F(MetricsTest, BuildInfoCatalogAndProcessFamiliesArePresent) {
  const std::vector<Sample> samples = ScrapeSamples();
  EXPECT_EQ(Value(samples, "compatd_build_info", {}), 1);
  EXPECT_EQ(Value(samples, "compatd_catalog_generation", {}), 1);
  EXPECT_GT(Value(samples,
                  "compatd_catalog_last_reload_success_timestamp_seconds", {}),
            1.7e9);
  const double rss = Value(samples, "process_resident_memory_bytes", {});
  EXPECT_GT(rss, 1 << 20);
  ASSERT_OK(testing::VmRssBytes(server_.pid()));
  EXPECT_GT(Value(samples, "process_open_fds", {}), 3);
  EXPECT_GT(Value(samples, "process_start_time_seconds", {}), 1.7e9);
}

TEST_F(MetricsTest, MetricsEndpointAnswersTextFormatAndOtherPaths404) {
  absl::StatusOr<testing::HttpReply> reply =
      testing::HttpGet(server_.metrics_port(), "/metrics");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 200);
  EXPECT_THAT(reply->headers,
              HasSubstr("content-type: text/plain; version=0.0.4"));
  absl::StatusOr<testing::HttpReply> other =
      testing::HttpGet(server_.metrics_port(), "/not-metrics");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->status, 404);
}

TEST_F(MetricsTest, LiveScrapePassesPromtoolCheckMetrics) {
  ASSERT_EQ(access(kPromtool, X_OK), 0)
      << kPromtool << " is missing: apt-get install prometheus";
  SendKubeletAndKubectl();
  // Hostile callers: quotes and backslashes in the User-Agent and in the
  // metadata. They must not reach a label value (components are
  // [A-Za-z0-9._+@:~-], versions major.minor), so nothing needs escaping.
  EXPECT_EQ(GetFeature(server_.NewChannel("we\"ird\\agent/v1.2.3"), "NoSuch"),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GetFeature(server_.NewChannel(), "WatchList",
                       {{"x-kubernetes-component", "bad\"component"},
                        {"x-kubernetes-version", "\"1.3\\0\""}}),
            grpc::StatusCode::OK);
  absl::StatusOr<std::string> scrape = server_.Scrape();
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  EXPECT_THAT(*scrape, Not(HasSubstr("ird")));
  // Not a bare "bad": the build's git revision (compatd_build_info's label)
  // is hex and may hold it (7a1e7d644bad did).
  EXPECT_THAT(*scrape, Not(HasSubstr("bad\\\"component")));
  EXPECT_THAT(*scrape, Not(HasSubstr("=\"bad")));
  EXPECT_THAT(*scrape, HasSubstr("compatd_client_requests_total{"
                                 "component=\"unknown\",version=\"unknown\","
                                 "verdict=\"unknown\"} 2\n"));
  testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/scrape.txt";
  ASSERT_TRUE(testing::WriteFile(path, *scrape));
  const std::string command =
      absl::StrCat(kPromtool, " check metrics < '", path, "' 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, n);
  }
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << output << "\n" << *scrape;
  EXPECT_EQ(output, "") << "promtool warned about the live scrape";
}

TEST_F(MetricsTest, ListClientsReturnsEachClientWithItsVerdictAndRange) {
  SendKubeletAndKubectl();
  auto stub = v1::CompatibilityPolicy::NewStub(server_.NewChannel());
  grpc::ClientContext context;
  // The caller of ListClients is a client too: name it.
  context.AddMetadata("x-kubernetes-component", "kubectl");
  context.AddMetadata("x-kubernetes-version", "v1.36.2");
  v1::ListClientsResponse response;
  const grpc::Status status =
      stub->ListClients(&context, v1::ListClientsRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.versions().binary_version(), "1.36");
  EXPECT_EQ(response.versions().emulation_version(), "1.36");
  EXPECT_EQ(response.versions().min_compatibility_version(), "1.35");
  ASSERT_EQ(response.clients_size(), 2) << response.DebugString();
  // Sorted by component, then version.
  const v1::ObservedClient& kubectl = response.clients(0);
  EXPECT_EQ(kubectl.component(), "kubectl");
  EXPECT_EQ(kubectl.version(), "1.36");
  EXPECT_EQ(kubectl.verdict(), v1::SKEW_VERDICT_ALLOWED);
  EXPECT_EQ(kubectl.min_version(), "1.35");
  EXPECT_EQ(kubectl.max_version(), "1.37");
  EXPECT_EQ(kubectl.requests(), 4u);  // 3 GetFeature + this ListClients
  const v1::ObservedClient& kubelet = response.clients(1);
  EXPECT_EQ(kubelet.component(), "kubelet");
  EXPECT_EQ(kubelet.version(), "1.31");
  EXPECT_EQ(kubelet.verdict(), v1::SKEW_VERDICT_TOO_OLD);
  EXPECT_EQ(kubelet.min_version(), "1.33");
  EXPECT_EQ(kubelet.max_version(), "1.36");
  EXPECT_EQ(kubelet.requests(), 2u);
  EXPECT_GT(kubelet.first_seen().seconds(), 1700000000);
  EXPECT_GE(kubelet.last_seen().seconds(), kubelet.first_seen().seconds());
}

TEST_F(MetricsTest, ListClientsFiltersByComponent) {
  SendKubeletAndKubectl();
  auto stub = v1::CompatibilityPolicy::NewStub(server_.NewChannel());
  grpc::ClientContext context;
  context.AddMetadata("x-kubernetes-component", "kubectl");
  context.AddMetadata("x-kubernetes-version", "v1.36.2");
  v1::ListClientsRequest request;
  request.set_component("kubelet");
  v1::ListClientsResponse response;
  const grpc::Status status = stub->ListClients(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<std::string> components;
  for (const auto& client : response.clients()) {
    components.push_back(client.component() + " " + client.version());
  }
  EXPECT_THAT(components, ElementsAre("kubelet 1.31"));
}

TEST_F(MetricsTest, SigtermStopsTheServerAndTheMetricsEndpoint) {
  const int metrics_port = server_.metrics_port();
  EXPECT_EQ(server_.Stop(), 0) << server_.Stderr();
  EXPECT_FALSE(testing::HttpGet(metrics_port, "/metrics").ok());
  // No error-level log line ("<time>Z E <message>").
  EXPECT_THAT(server_.Stderr(), Not(ContainsRegex("Z E ")));
}

}  // namespace
}  // namespace compatd
