// Runs the real Prometheus promtool (Debian package "prometheus",
// /usr/bin/promtool) on what we produce: a full scrape of a registry with
// every family populated, and the rule file of k8s/monitoring.

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "runtime/service_metrics.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

using ::testing::HasSubstr;

constexpr char kPromtool[] = "/usr/bin/promtool";

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `arguments` with `input_path` as standard input.
CommandResult RunPromtool(const std::string& arguments,
                          const std::string& input_path) {
  const std::string command =
      absl::StrCat(kPromtool, " ", arguments, " < '", input_path, "' 2>&1");
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, n);
  }
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name, ".", getpid());
  std::ofstream(path) << contents;
  return path;
}

class PromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(kPromtool, X_OK), 0)
        << kPromtool << " is missing: apt-get install prometheus";
  }
};

TEST_F(PromtoolTest, FullScrapeOfEveryFamilyPassesCheckMetrics) {
  metrics::Registry registry;
  ServiceMetrics::Options options;
  options.methods = {
      {"compatd.v1.CompatibilityPolicy", "CheckSkew", RpcType::kUnary},
      {"compatd.v1.CompatibilityPolicy", "WatchCatalog",
       RpcType::kServerStream},
      {"grpc.health.v1.Health", "Check", RpcType::kUnary}};
  options.version = "0.1.0";
  options.revision = "0123456789ab";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServiceMetrics> metrics,
                       ServiceMetrics::Create(&registry, options));
  ASSERT_OK(metrics::RegisterProcessMetrics(&registry));
  metrics->RecordRequest("CheckSkew", absl::StatusCode::kOk,
                         absl::Microseconds(80));
  metrics->RecordRequest("CheckSkew", absl::StatusCode::kInvalidArgument,
                         absl::Milliseconds(3));
  metrics->RecordRequest("WatchCatalog", absl::StatusCode::kCancelled,
                         absl::Seconds(30));
  metrics->RecordReload(ReloadResult::kLoaded, absl::Now());
  metrics->RecordReload(ReloadResult::kRejected, absl::Now());
  metrics->RecordCatalogPublished(3, absl::Now());
  metrics->RecordClient("kubelet", "1.34", engine::SkewVerdict::kAllowed);
  metrics->RecordClient("kube-controller-manager", "1.30",
                        engine::SkewVerdict::kTooOld);
  metrics->RecordClient("kubectl", "unknown", std::nullopt);
  metrics->RecordClient("we\"ird\\name\n", "1.2", std::nullopt);
  metrics->SetClientsOutOfAllowanceSource([] {
    return std::vector<std::pair<std::string, int64_t>>{
        {"kube-controller-manager", 1}, {"kubelet", 0}};
  });
  metrics->SetUpgradeTargetSources(
      [] {
        return std::vector<std::pair<std::string, int64_t>>{{"kubelet", 2}};
      },
      [] {
        return std::vector<std::pair<std::string, int64_t>>{
            {"apis", 0}, {"clients", 2}, {"flags", 1}};
      });

  const std::string scrape = metrics::SerializeText(registry.Collect());
  for (const char* family :
       {"grpc_server_started_total", "grpc_server_handled_total",
        "grpc_server_handling_seconds", "compatd_catalog_reloads_total",
        "compatd_catalog_generation",
        "compatd_catalog_last_reload_success_timestamp_seconds",
        "compatd_build_info", "compatd_client_requests_total",
        "compatd_clients_out_of_allowance",
        "compatd_clients_out_of_allowance_at_target",
        "compatd_upgrade_blockers", "process_cpu_seconds_total",
        "process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_open_fds", "process_max_fds", "process_start_time_seconds"}) {
    EXPECT_THAT(scrape, HasSubstr(absl::StrCat("\n", family)))
        << family << " is not populated";
  }
  const std::string path = WriteTemp("compatd-scrape", scrape);
  const CommandResult result = RunPromtool("check metrics", path);
  unlink(path.c_str());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "") << "promtool warned about our output";
}

TEST_F(PromtoolTest, CheckMetricsCatchesABrokenExposition) {
  // Guards the test above: promtool does reject a bad scrape.
  const std::string path = WriteTemp(
      "compatd-bad-scrape", "# TYPE x counter\nx{a=\"unterminated} 1\n");
  const CommandResult result = RunPromtool("check metrics", path);
  unlink(path.c_str());
  EXPECT_NE(result.exit_code, 0) << result.output;
}

TEST_F(PromtoolTest, CheckMetricsReportsLintProblems) {
  // Guards the empty-output assertion: lint findings are printed.
  const std::string path =
      WriteTemp("compatd-lint-scrape",
                "# HELP x_count h\n# TYPE x_count counter\nx_count 1\n");
  const CommandResult result = RunPromtool("check metrics", path);
  unlink(path.c_str());
  EXPECT_THAT(result.output, HasSubstr("should have \"_total\" suffix"));
}

// The PrometheusRule's `spec` (everything indented under the last top-level
// key "spec:") is a Prometheus rule file.
TEST_F(PromtoolTest, PrometheusRuleSpecPassesCheckRules) {
  const std::string rule_path =
      absl::StrCat(COMPATD_SOURCE_DIR, "/k8s/monitoring/prometheusrule.yaml");
  std::ifstream in(rule_path);
  ASSERT_TRUE(in) << rule_path;
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_THAT(contents.str(), HasSubstr("kind: PrometheusRule\n"));
  std::string spec;
  bool in_spec = false;
  for (absl::string_view line : absl::StrSplit(contents.str(), '\n')) {
    if (!in_spec) {
      in_spec = line == "spec:";
      continue;
    }
    ASSERT_TRUE(line.empty() || absl::StartsWith(line, "  "))
        << "spec must be the last top-level key: " << line;
    if (!line.empty()) line.remove_prefix(2);
    absl::StrAppend(&spec, line, "\n");
  }
  ASSERT_THAT(spec, HasSubstr("groups:"));
  const std::string path = WriteTemp("compatd-rules.yaml", spec);
  // promtool check rules reads files; "/dev/stdin" makes it read ours.
  const CommandResult result = RunPromtool("check rules /dev/stdin", path);
  unlink(path.c_str());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("SUCCESS: 12 rules found"));
}

// Every "expr" of the Grafana dashboard is valid PromQL: with Grafana's
// variables substituted, each becomes a recording rule for promtool.
TEST_F(PromtoolTest, DashboardQueriesParse) {
  const std::string dashboard_path = absl::StrCat(
      COMPATD_SOURCE_DIR, "/k8s/monitoring/grafana-dashboard.json");
  std::ifstream in(dashboard_path);
  ASSERT_TRUE(in) << dashboard_path;
  std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
  int count = 0;
  std::string line;
  constexpr absl::string_view kExpr = "\"expr\": \"";
  while (std::getline(in, line)) {
    const size_t at = absl::string_view(line).find(kExpr);
    if (at == std::string::npos) continue;
    absl::string_view quoted =
        absl::string_view(line).substr(at + kExpr.size());
    ASSERT_TRUE(absl::ConsumeSuffix(&quoted, "\",") ||
                absl::ConsumeSuffix(&quoted, "\""))
        << line;
    std::string expr;
    for (size_t i = 0; i < quoted.size(); ++i) {
      if (quoted[i] == '\\' && i + 1 < quoted.size()) ++i;  // JSON escape
      expr.push_back(quoted[i]);
    }
    expr =
        absl::StrReplaceAll(expr, {{"$__rate_interval", "5m"}, {"$job", ".*"}});
    absl::StrAppend(&rules, "      - record: dashboard:expr", count++,
                    "\n        expr: |-\n          ", expr, "\n");
  }
  ASSERT_GE(count, 10);
  const std::string path = WriteTemp("compatd-dashboard-rules.yaml", rules);
  const CommandResult result = RunPromtool("check rules /dev/stdin", path);
  unlink(path.c_str());
  EXPECT_EQ(result.exit_code, 0) << result.output << rules;
}

}  // namespace
}  // namespace compatd::runtime
