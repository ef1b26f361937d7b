// One verdict everywhere (issue 35): the real compatd binary asked the same
// question (is group/version/kind served at release line L, judged at L's own
// binary and emulation version?) through every surface that answers it, on
// every embedded line 1.31-1.36:
//
//   the Gatekeeper provider    POST /gatekeeper/v1/binary-L, key api:G/V/K
//                              ("verdict")
//   the admission webhook      POST /admission/v1/validate/binary-L
//                              (a deprecation warning, or a catalog-mismatch
//                              warning for what the catalog says is not
//                              served)
//   the scan                   POST /v1/ScanObjects with target L (the line of
//                              the target judges: catalogRelease is L's)
//   the status page            GET /ui/apis?binary=L (a served resource is
//                              marked deprecated or not)
//   the audit view             the default line (1.36): ListApiUsage rows
//
// Expected values are Kubernetes' (kubernetes/api prerelease lifecycles at the
// staging tags; the deprecated API migration guide), written out below, not
// compatd's: extensions/v1beta1 Ingress removed in 1.22, policy/v1beta1
// PodSecurityPolicy in 1.25, batch/v1beta1 CronJob in 1.25, autoscaling/
// v2beta2 HorizontalPodAutoscaler in 1.26; core v1 Endpoints deprecated in
// 1.33 (for discovery.k8s.io/v1 EndpointSlice); apiextensions.k8s.io/v1
// CustomResourceDefinition, apiregistration.k8s.io/v1 APIService, policy/v1
// Eviction and apps/v1 Deployment served on every line.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/audit_events.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"

namespace compatd {
namespace {

using ::compatd::testing::AuditEventJson;
using ::compatd::testing::AuditEventListJson;
using ::compatd::testing::AuditEventSpec;
using ::compatd::testing::CompatdProcess;
using ::compatd::testing::HttpGet;
using ::compatd::testing::HttpReply;
using ::testing::HasSubstr;
using ::testing::Not;

// A request on its own HTTP/1.0 connection; status and body.
std::pair<int, std::string> Post(int port, const std::string& path,
                                 const std::string& body) {
  const int fd = testing::ConnectLoopback(port, timeval{20, 0});
  if (fd < 0) return {0, ""};
  const std::string request =
      absl::StrCat("POST ", path,
                   " HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "Content-Length: ",
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

google::protobuf::Value Json(const std::string& text) {
  google::protobuf::Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &value);
  EXPECT_TRUE(status.ok()) << status.ToString() << " in: " << text;
  return value;
}

// The value at a dotted path ("response.items"); null when absent.
google::protobuf::Value At(const google::protobuf::Value& value,
                           const std::string& path) {
  google::protobuf::Value at = value;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string name = path.substr(
        start, dot == std::string::npos ? std::string::npos : dot - start);
    const auto& fields = at.struct_value().fields();
    auto it = fields.find(name);
    if (it == fields.end()) return google::protobuf::Value();
    google::protobuf::Value next = it->second;
    at = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return at;
}

// One question and Kubernetes' answer at every line ("served",
// "deprecated", "removed", "unknown"; `deprecated_from`: deprecated from
// that line on, served before).
struct Question {
  std::string group, version, kind, resource;
  std::string verdict;
  std::string deprecated_from;
};

const std::vector<Question>& Questions() {
  static const auto* const questions = new std::vector<Question>{
      {"apiextensions.k8s.io", "v1", "CustomResourceDefinition",
       "customresourcedefinitions", "served", ""},
      {"apiregistration.k8s.io", "v1", "APIService", "apiservices", "served",
       ""},
      {"policy", "v1", "Eviction", "evictions", "served", ""},
      {"apps", "v1", "Deployment", "deployments", "served", ""},
      {"policy", "v1beta1", "PodSecurityPolicy", "podsecuritypolicies",
       "removed", ""},
      {"autoscaling", "v2beta2", "HorizontalPodAutoscaler",
       "horizontalpodautoscalers", "removed", ""},
      {"extensions", "v1beta1", "Ingress", "ingresses", "removed", ""},
      {"batch", "v1beta1", "CronJob", "cronjobs", "removed", ""},
      {"", "v1", "Endpoints", "endpoints", "served", "1.33"},
      {"example.com", "v1", "Widget", "widgets", "unknown", ""},
  };
  return *questions;
}

const char* const kLines[] = {"1.31", "1.32", "1.33", "1.34",
                              "1.35", "1.36", "1.37"};

// Kubernetes' verdict of `q` at `line`.
std::string Expected(const Question& q, const std::string& line) {
  if (!q.deprecated_from.empty() &&
      std::stod(line.substr(2)) >= std::stod(q.deprecated_from.substr(2))) {
    return "deprecated";
  }
  return q.verdict;
}

std::string ApiVersion(const Question& q) {
  return q.group.empty() ? q.version : absl::StrCat(q.group, "/", q.version);
}

class OneVerdictTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new CompatdProcess();
    start_ = server_->Start({"--http-listen=127.0.0.1:0"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_OK(start_);
    ASSERT_NE(server_->http_port(), 0) << server_->Stderr();
  }

  // The Gatekeeper provider's verdict.
  static std::string Gatekeeper(const std::string& line, const Question& q) {
    const std::string key = absl::StrCat("api:", ApiVersion(q), "/", q.kind);
    const auto [code, body] =
        Post(server_->http_port(), "/gatekeeper/v1/binary-" + line,
             absl::StrCat(R"({"apiVersion":"externaldata.gatekeeper.sh/)",
                          R"(v1beta1","kind":"ProviderRequest",)",
                          R"("request":{"keys":[")", key, R"("]}})"));
    EXPECT_EQ(code, 200) << body;
    const google::protobuf::Value items = At(Json(body), "response.items");
    if (items.list_value().values_size() != 1) return "(no item) " + body;
    return At(items.list_value().values(0), "value.verdict").string_value();
  }

  // The admission webhook's verdict, from its warnings: a deprecation, a
  // catalog mismatch (the catalog says the API the cluster served is not
  // served: removed), or nothing (served, or not a built-in API).
  static std::string Admission(const std::string& line, const Question& q) {
    const std::string review = absl::StrCat(
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
        R"("request":{"uid":"u-1","operation":"CREATE",)",
        R"("kind":{"group":")", q.group, R"(","version":")", q.version,
        R"(","kind":")", q.kind, R"("},"object":{"apiVersion":")",
        ApiVersion(q), R"(","kind":")", q.kind,
        R"(","metadata":{"name":"x"}}}})");
    const auto [code, body] = Post(
        server_->http_port(), "/admission/v1/validate/binary-" + line, review);
    EXPECT_EQ(code, 200) << body;
    EXPECT_THAT(body, HasSubstr(R"("allowed":true)"));
    if (absl::StrContains(body, "catalog mismatch") &&
        absl::StrContains(body, "removed there")) {
      return "removed";
    }
    if (absl::StrContains(body, "deprecated since")) return "deprecated";
    return "served-or-unknown";
  }

  // The scan's verdict of one object at target `line` (no binary version:
  // the target's own line judges), and the release of the catalog that did.
  static std::string Scan(const std::string& line, const Question& q,
                          std::string* catalog_release) {
    const std::string manifest =
        absl::StrCat("apiVersion: ", ApiVersion(q), "\\nkind: ", q.kind,
                     "\\nmetadata:\\n  name: x\\n");
    const auto [code, body] =
        Post(server_->http_port(), "/v1/ScanObjects",
             absl::StrCat(R"({"target":")", line, R"(","objects":")", manifest,
                          R"("})"));
    EXPECT_EQ(code, 200) << body;
    const google::protobuf::Value answer = Json(body);
    *catalog_release = At(answer, "catalogRelease").string_value();
    const google::protobuf::Value findings = At(answer, "findings");
    if (findings.list_value().values_size() == 0) {
      return At(answer, "unchecked").number_value() == 1 ? "unknown" : "served";
    }
    const std::string status =
        At(findings.list_value().values(0), "status").string_value();
    if (status == "SCAN_STATUS_DEPRECATED") return "deprecated";
    if (status == "SCAN_STATUS_REMOVED") return "removed";
    return status;
  }

  static CompatdProcess* server_;
  static absl::Status start_;
};

CompatdProcess* OneVerdictTest::server_ = nullptr;
absl::Status OneVerdictTest::start_;

TEST_F(OneVerdictTest, EverySurfaceOnEveryLine) {
  for (const std::string line : kLines) {
    for (const Question& q : Questions()) {
      const std::string expected = Expected(q, line);
      SCOPED_TRACE(absl::StrCat("line ", line, ": ", ApiVersion(q), " ", q.kind,
                                " expected ", expected));
      EXPECT_EQ(Gatekeeper(line, q), expected);
      std::string release;
      EXPECT_EQ(Scan(line, q, &release), expected);
      EXPECT_TRUE(release == line || absl::StartsWith(release, line + "."))
          << release;
      const std::string admission = Admission(line, q);
      if (expected == "served" || expected == "unknown") {
        EXPECT_EQ(admission, "served-or-unknown");
      } else {
        EXPECT_EQ(admission, expected);
      }
    }
  }
}

TEST_F(OneVerdictTest, TheStatusPageMarksWhatIsDeprecated) {
  for (const std::string line : kLines) {
    absl::StatusOr<HttpReply> page =
        HttpGet(server_->http_port(), "/ui/apis?binary=" + line);
    ASSERT_OK(page);
    ASSERT_EQ(page->status, 200);
    // Served at every line; deprecated from 1.33 with its replacement's kind.
    const bool deprecated = line >= std::string("1.33");
    EXPECT_EQ(absl::StrContains(page->body,
                                "<li class=\"deprecated\">endpoints <span "
                                "class=\"note\">deprecated 1.33; use "
                                "discovery.k8s.io/v1 EndpointSlice"),
              deprecated)
        << line;
    EXPECT_THAT(page->body,
                Not(HasSubstr("<li class=\"deprecated\">deployments")));
  }
}

// The audit view judges the default line (1.36) by the same verdict: a call
// to a removed API answered 404 fails now; the same call answered 200 is the
// catalog's mismatch with the cluster, not a failure; the deprecated v1
// Endpoints are to be replaced by discovery.k8s.io/v1 EndpointSlice.
TEST_F(OneVerdictTest, TheAuditViewOnTheDefaultLine) {
  std::vector<std::string> items;
  AuditEventSpec ingress;
  ingress.user_agent = "old-controller/v0.9.0 (linux/amd64) kubernetes/abc";
  ingress.username = "system:serviceaccount:ops:old-controller";
  ingress.api_group = "extensions";
  ingress.api_version = "v1beta1";
  ingress.resource = "ingresses";
  ingress.verb = "list";
  ingress.code = 404;
  items.push_back(AuditEventJson(ingress));
  AuditEventSpec served = ingress;
  served.user_agent = "served-controller/v1.0.0 (linux/amd64) kubernetes/abc";
  served.username = "system:serviceaccount:ops:served-controller";
  served.code = 200;
  items.push_back(AuditEventJson(served));
  AuditEventSpec crd = served;
  crd.api_group = "apiextensions.k8s.io";
  crd.api_version = "v1";
  crd.resource = "customresourcedefinitions";
  items.push_back(AuditEventJson(crd));
  AuditEventSpec endpoints = served;
  endpoints.api_group = "";
  endpoints.api_version = "v1";
  endpoints.resource = "endpoints";
  items.push_back(AuditEventJson(endpoints));
  const auto [code, body] =
      Post(server_->http_port(), "/audit/v1/events", AuditEventListJson(items));
  ASSERT_EQ(code, 200) << body;

  auto stub = v1::CompatibilityPolicy::NewStub(server_->NewChannel());
  v1::ListApiUsageResponse usage;
  grpc::ClientContext context;
  ASSERT_TRUE(
      stub->ListApiUsage(&context, v1::ListApiUsageRequest(), &usage).ok());
  std::map<std::string, v1::ApiUsage> by;
  for (const v1::ApiUsage& row : usage.usage()) {
    by[absl::StrCat(row.component(), " ", row.resource())] = row;
  }
  ASSERT_EQ(usage.usage_size(), 3) << usage.DebugString();
  const v1::ApiUsage& fails = by["old-controller ingresses"];
  EXPECT_EQ(fails.verdict(), v1::API_USE_VERDICT_NOT_SERVED);
  EXPECT_EQ(fails.kind(), "Ingress");
  EXPECT_THAT(fails.message(), HasSubstr("the call fails now"));
  EXPECT_THAT(fails.message(),
              HasSubstr("use networking.k8s.io/v1 Ingress instead"));
  const v1::ApiUsage& mismatch = by["served-controller ingresses"];
  EXPECT_EQ(mismatch.verdict(), v1::API_USE_VERDICT_CATALOG_MISMATCH);
  EXPECT_THAT(mismatch.message(), HasSubstr("catalog mismatch"));
  EXPECT_THAT(mismatch.message(), Not(HasSubstr("fails now")));
  const v1::ApiUsage& deprecated = by["served-controller endpoints"];
  EXPECT_EQ(deprecated.verdict(), v1::API_USE_VERDICT_DEPRECATED);
  EXPECT_THAT(deprecated.message(),
              HasSubstr("use discovery.k8s.io/v1 EndpointSlice instead"));
  // A served CRD call keeps no row.
  EXPECT_EQ(by.count("served-controller customresourcedefinitions"), 0u);
  absl::StatusOr<std::string> scrape = server_->Scrape();
  ASSERT_OK(scrape);
  EXPECT_THAT(*scrape, HasSubstr(R"(verdict="catalog_mismatch")"));
}

}  // namespace
}  // namespace compatd
