// The fleet view end to end: three compatd replicas on loopback, each with
// --prometheus-url of a real Prometheus (Debian's /usr/bin/prometheus, its
// own temporary directory, 1s scrapes) that scrapes all three. Each replica
// is called by a different client; every replica's ListClients, status page
// and plan then show all three clients, as the fleet's. With Prometheus
// stopped, every replica falls back to its own clients within the timeout
// and says so. Both kinds of process stop by themselves (RAII, and
// setpriv's parent-death signal).

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/integration/prometheus_process.h"
#include "tests/testing/status_matchers.h"

namespace compatd {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

using ::compatd::testing::kPrometheus;

// Prometheus on 127.0.0.1 (a free port, read from its log), scraping the
// targets of `dir`/targets.json every second and evaluating the rules of
// k8s/monitoring/prometheusrule.yaml (for the recording rules).
class Prometheus {
 public:
  absl::Status Start(const std::string& dir) {
    absl::StatusOr<std::string> rules = RuleFile();
    if (!rules.ok()) return rules.status();
    if (!testing::WriteFile(dir + "/rules.yaml", *rules) ||
        !testing::WriteFile(dir + "/targets.json", "[]")) {
      return absl::InternalError("cannot write Prometheus' files");
    }
    const std::string config = absl::StrCat(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "  evaluation_interval: 1s\n"
        "rule_files:\n  - \"",
        dir, "/rules.yaml\"\n",
        "scrape_configs:\n  - job_name: compatd\n    file_sd_configs:\n"
        "      - files: [\"",
        dir, "/targets.json\"]\n        refresh_interval: 1s\n");
    if (!testing::WriteFile(dir + "/prometheus.yml", config)) {
      return absl::InternalError("cannot write prometheus.yml");
    }
    return process_.Start(dir + "/prometheus.yml", dir + "/data");
  }

  // Scrape these /metrics ports from now on (written whole, then renamed).
  bool SetTargets(const std::string& dir, const std::vector<int>& ports) {
    std::vector<std::string> targets;
    for (int port : ports) {
      targets.push_back(absl::StrCat("\"127.0.0.1:", port, "\""));
    }
    const std::string json =
        absl::StrCat("[{\"targets\":[", absl::StrJoin(targets, ","), "]}]");
    if (!testing::WriteFile(dir + "/targets.json.new", json)) return false;
    return rename((dir + "/targets.json.new").c_str(),
                  (dir + "/targets.json").c_str()) == 0;
  }

  void Stop() { process_.Stop(); }

  int port() const { return process_.port(); }
  std::string Stderr() const { return process_.Stderr(); }

 private:
  // The `spec` of the PrometheusRule: a plain Prometheus rule file.
  static absl::StatusOr<std::string> RuleFile() {
    absl::StatusOr<std::string> contents = testing::ReadFile(absl::StrCat(
        COMPATD_SOURCE_DIR, "/k8s/monitoring/prometheusrule.yaml"));
    if (!contents.ok()) return contents.status();
    std::string spec;
    bool in_spec = false;
    for (absl::string_view line : absl::StrSplit(*contents, '\n')) {
      if (!in_spec) {
        in_spec = line == "spec:";
        continue;
      }
      if (!line.empty()) line.remove_prefix(2);
      absl::StrAppend(&spec, line, "\n");
    }
    return spec;
  }

  testing::PrometheusProcess process_;
};

using Pairs = std::set<std::pair<std::string, std::string>>;

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(kPrometheus, X_OK), 0)
        << kPrometheus
        << " is missing: scripts/install-deps.sh installs Debian's prometheus";
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_OK(prometheus_.Start(dir_.path()));
    std::vector<int> ports;
    for (int i = 0; i < 3; ++i) {
      std::vector<std::string> args = {
          "--http-listen=127.0.0.1:0",
          absl::StrCat("--prometheus-url=http://127.0.0.1:",
                       prometheus_.port()),
          "--prometheus-selector=job=\"compatd\"", "--prometheus-cache-ttl=1s",
          "--prometheus-timeout=1s"};
      // The third asks the recording rules' series.
      if (i == 2) args.push_back("--prometheus-recording-rules");
      ASSERT_OK(replicas_[i].Start(args));
      ports.push_back(replicas_[i].metrics_port());
    }
    ASSERT_TRUE(prometheus_.SetTargets(dir_.path(), ports));
  }

  // One GetFeature call to `replica` as `metadata` / `user_agent` says.
  void Call(int replica, const std::string& user_agent,
            const std::map<std::string, std::string>& metadata) {
    auto stub = v1::CompatibilityPolicy::NewStub(
        replicas_[replica].NewChannel(user_agent));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
    v1::GetFeatureRequest request;
    request.set_name("WatchList");
    v1::GetFeatureResponse response;
    ASSERT_TRUE(stub->GetFeature(&context, request, &response).ok());
  }

  absl::StatusOr<v1::ListClientsResponse> ListClients(int replica) {
    auto stub =
        v1::CompatibilityPolicy::NewStub(replicas_[replica].NewChannel());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::ListClientsResponse response;
    grpc::Status status =
        stub->ListClients(&context, v1::ListClientsRequest(), &response);
    if (!status.ok()) {
      return absl::UnknownError(status.error_message());
    }
    return response;
  }

  // The identified clients (the test's own ListClients calls, with gRPC's
  // User-Agent only, are recorded as component "unknown").
  static Pairs PairsOf(const v1::ListClientsResponse& response) {
    Pairs pairs;
    for (const v1::ObservedClient& client : response.clients()) {
      if (client.component() == "unknown") continue;
      pairs.emplace(client.component(), client.version());
    }
    return pairs;
  }

  // Polls ListClients on `replica` until `done` holds (up to `timeout`).
  template <typename Predicate>
  v1::ListClientsResponse ListUntil(int replica, Predicate done,
                                    std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    v1::ListClientsResponse last;
    while (std::chrono::steady_clock::now() < deadline) {
      absl::StatusOr<v1::ListClientsResponse> response = ListClients(replica);
      if (response.ok()) {
        last = *response;
        if (done(last)) break;
      }
      std::this_thread::sleep_for(200ms);
    }
    return last;
  }

  // Declared first, destroyed last: after every process is gone.
  testing::TempDir dir_;
  Prometheus prometheus_;
  testing::CompatdProcess replicas_[3];
};

const Pairs kEveryone = {
    {"kubelet", "1.31"}, {"kubectl", "1.36"}, {"kube-proxy", "1.33"}};

TEST_F(FleetTest, EveryReplicaShowsEveryClientThenFallsBackWithoutPrometheus) {
  // A different client reaches each replica.
  Call(0, "kubelet/v1.31.0 (linux/amd64) kubernetes/abc1234", {});
  Call(1, "",
       {{"x-kubernetes-component", "kubectl"},
        {"x-kubernetes-version", "v1.36.2"}});
  Call(2, "",
       {{"x-kubernetes-component", "kube-proxy"},
        {"x-kubernetes-version", "v1.33.5"}});

  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(absl::StrCat("replica ", i));
    const v1::ListClientsResponse fleet = ListUntil(
        i,
        [](const v1::ListClientsResponse& r) {
          return r.view().scope() == v1::CLIENT_SCOPE_FLEET &&
                 r.view().replicas() == 3 && PairsOf(r) == kEveryone;
        },
        60s);
    EXPECT_EQ(fleet.view().scope(), v1::CLIENT_SCOPE_FLEET)
        << fleet.view().note() << "\n"
        << replicas_[i].Stderr();
    EXPECT_EQ(fleet.view().replicas(), 3u);
    EXPECT_EQ(PairsOf(fleet), kEveryone) << fleet.DebugString();
    EXPECT_EQ(
        fleet.view().source(),
        absl::StrCat("Prometheus at http://127.0.0.1:", prometheus_.port()));
    EXPECT_THAT(fleet.reason(), HasSubstr("the fleet's 3 replica(s)"));
    for (const v1::ObservedClient& client : fleet.clients()) {
      if (client.component() == "unknown") continue;
      EXPECT_EQ(client.requests(), 1u) << client.component();
      // kubelet 1.31 is out of allowance at the embedded catalog's versions
      // (as in prometheus_test.cc), whichever replica it reached.
      EXPECT_EQ(client.verdict(), client.component() == "kubelet"
                                      ? v1::SKEW_VERDICT_TOO_OLD
                                      : v1::SKEW_VERDICT_ALLOWED)
          << client.component();
    }

    // The page says so, and lists all three.
    ASSERT_OK_AND_ASSIGN(
        testing::HttpReply page,
        testing::HttpGet(replicas_[i].http_port(), "/ui/clients"));
    EXPECT_EQ(page.status, 200);
    EXPECT_THAT(page.body, HasSubstr("scope-fleet"));
    EXPECT_THAT(page.body, HasSubstr("3 replicas summed by Prometheus at"));
    for (const auto& [component, version] : kEveryone) {
      EXPECT_THAT(page.body, HasSubstr(absl::StrCat(">", component, "<")));
    }
    ASSERT_OK_AND_ASSIGN(testing::HttpReply overview,
                         testing::HttpGet(replicas_[i].http_port(), "/ui/"));
    EXPECT_THAT(overview.body, HasSubstr("scope-fleet"));
    EXPECT_THAT(overview.body, HasSubstr("1 out of allowance"));

    // The plan checks the fleet's clients: the kubelet another replica saw.
    auto stub = v1::CompatibilityPolicy::NewStub(replicas_[i].NewChannel());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::PlanUpgradeRequest plan_request;
    plan_request.mutable_from()->set_emulation_version("1.33");
    plan_request.mutable_to()->set_emulation_version("1.36");
    v1::PlanUpgradeResponse plan;
    ASSERT_TRUE(stub->PlanUpgrade(&context, plan_request, &plan).ok());
    EXPECT_THAT(plan.clients_checked(),
                HasSubstr("3 recorded by the fleet's 3 replica(s) through "
                          "Prometheus at"));
    EXPECT_EQ(plan.client_view().scope(), v1::CLIENT_SCOPE_FLEET);

    ASSERT_OK_AND_ASSIGN(std::string scrape, replicas_[i].Scrape());
    EXPECT_THAT(scrape, HasSubstr("compatd_client_view_fleet 1"));
    // The gauge counts the fleet's kubelet in every replica.
    EXPECT_THAT(scrape, HasSubstr("compatd_clients_out_of_allowance{"
                                  "component=\"kubelet\"} 1"));
  }
  std::cerr << "every replica showed the fleet's clients "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms after the calls\n";

  // Prometheus goes away: each replica falls back to its own client within
  // the refresh interval and the timeout (1s + 1s), and never waits for it.
  prometheus_.Stop();
  const auto stopped = std::chrono::steady_clock::now();
  const Pairs own[3] = {
      {{"kubelet", "1.31"}}, {{"kubectl", "1.36"}}, {{"kube-proxy", "1.33"}}};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(absl::StrCat("replica ", i));
    const v1::ListClientsResponse alone = ListUntil(
        i,
        [](const v1::ListClientsResponse& r) {
          return r.view().scope() == v1::CLIENT_SCOPE_REPLICA;
        },
        10s);
    EXPECT_EQ(alone.view().scope(), v1::CLIENT_SCOPE_REPLICA);
    EXPECT_EQ(PairsOf(alone), own[i]);
    EXPECT_THAT(alone.view().note(),
                HasSubstr("This replica's clients only, not the fleet's: "
                          "Prometheus at http://127.0.0.1:"));
    EXPECT_EQ(alone.view().source(), "this replica");
    ASSERT_OK_AND_ASSIGN(
        testing::HttpReply page,
        testing::HttpGet(replicas_[i].http_port(), "/ui/clients"));
    EXPECT_THAT(page.body, HasSubstr("scope-replica"));
    EXPECT_THAT(page.body, Not(HasSubstr("scope-fleet")));
  }
  const auto fell_back = std::chrono::steady_clock::now() - stopped;
  EXPECT_LT(fell_back, 5s);
  std::cerr << "every replica fell back "
            << std::chrono::duration_cast<std::chrono::milliseconds>(fell_back)
                   .count()
            << " ms after Prometheus stopped\n";
  // A call answers at once while Prometheus is away.
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_OK(ListClients(i).status());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 500ms);
    ASSERT_OK_AND_ASSIGN(std::string scrape, replicas_[i].Scrape());
    EXPECT_THAT(scrape, HasSubstr("compatd_client_view_fleet 0"));
    EXPECT_THAT(scrape, Not(HasSubstr("compatd_prometheus_queries_total{result="
                                      "\"unreachable\"} 0")));
    EXPECT_THAT(replicas_[i].Stderr(),
                HasSubstr("the fleet's clients are not available"));
  }
}

}  // namespace
}  // namespace compatd
