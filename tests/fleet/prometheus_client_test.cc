// PrometheusClient against a stand-in Prometheus on loopback: the request it
// sends (path, query encoding, bearer token re-read on change), and each way
// a query fails, within its timeout.

#include "fleet/prometheus_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fleet/fake_prometheus.h"

namespace compatd::fleet {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(ParsePrometheusUrlTest, Forms) {
  absl::StatusOr<PrometheusUrl> url =
      ParsePrometheusUrl("http://prometheus-operated.monitoring.svc:9090");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_FALSE(url->https);
  EXPECT_EQ(url->host, "prometheus-operated.monitoring.svc");
  EXPECT_EQ(url->port, "9090");
  EXPECT_EQ(url->path_prefix, "");

  url = ParsePrometheusUrl("HTTPS://prom.example.com/prometheus/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_TRUE(url->https);
  EXPECT_EQ(url->port, "443");
  EXPECT_EQ(url->path_prefix, "/prometheus");

  url = ParsePrometheusUrl("http://[::1]:9090");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, "9090");
}

TEST(ParsePrometheusUrlTest, RefusesWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"prom:9090", "http:// or https://"},
      {"ftp://prom", "http:// or https://"},
      {"http://", "the host is missing"},
      {"http://:9090", "the host is missing"},
      {"http://prom:0", "1..65535"},
      {"http://prom:65536", "1..65535"},
      {"http://prom:", "an empty port"},
      {"http://user:pw@prom:9090", "user information"},
      {"http://prom:9090/?x=1", "a query or fragment"},
      {"http://prom/a b", "space or control"},
      {"http://[::1", "an unclosed ["},
      {"http://pr*m", "outside [A-Za-z0-9.-_]"},
  };
  for (const auto& [url, says] : cases) {
    absl::StatusOr<PrometheusUrl> parsed = ParsePrometheusUrl(url);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << url;
    EXPECT_THAT(parsed.status().message(), HasSubstr(says)) << url;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--prometheus-url"))
        << url;
  }
}

TEST(ValidatePrometheusClientOptionsTest, NamesTheFlag) {
  PrometheusClientOptions options;
  options.url = "http://prom:9090";
  EXPECT_TRUE(ValidatePrometheusClientOptions(options).ok());
  options.ca_file = "/nonexistent/ca.crt";
  EXPECT_THAT(ValidatePrometheusClientOptions(options).message(),
              HasSubstr("need an https:// --prometheus-url"));
  options.url = "https://prom:9090";
  EXPECT_THAT(ValidatePrometheusClientOptions(options).message(),
              HasSubstr("--prometheus-ca-file=/nonexistent/ca.crt"));
  options.ca_file.clear();
  options.cert_file = "/nonexistent/tls.crt";
  EXPECT_THAT(ValidatePrometheusClientOptions(options).message(),
              HasSubstr("go together"));
  options.cert_file.clear();
  options.bearer_token_file = "/nonexistent/token";
  EXPECT_THAT(ValidatePrometheusClientOptions(options).message(),
              HasSubstr("--prometheus-bearer-token-file"));
  options.bearer_token_file.clear();
  options.timeout = absl::ZeroDuration();
  EXPECT_THAT(ValidatePrometheusClientOptions(options).message(),
              HasSubstr("--prometheus-timeout=0: must be positive"));
}

TEST(UrlEncodeTest, KeepsUnreservedOnly) {
  EXPECT_EQ(UrlEncode("max by (a) (x{j=\"c\"}) > time() - 600"),
            "max%20by%20%28a%29%20%28x%7Bj%3D%22c%22%7D%29%20%3E%20time%28%29"
            "%20-%20600");
  EXPECT_EQ(UrlEncode("a-b_c.d~e"), "a-b_c.d~e");
}

TEST(PrometheusClientTest, SendsTheQueryAndReturnsTheBody) {
  FakePrometheus prometheus([](const std::string& query) {
    return FakeReply{.body = absl::StrCat("{\"asked\":\"", query, "\"}")};
  });
  PrometheusClient client({.url = prometheus.url() + "/prefix/"});
  absl::StatusOr<std::string> body = client.Query("count(up{a=\"b c\"})");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, "{\"asked\":\"count(up{a=\"b c\"})\"}");
  ASSERT_EQ(prometheus.requests().size(), 1u);
  EXPECT_THAT(prometheus.requests()[0],
              HasSubstr("GET /prefix/api/v1/query?query=count%28up"));
  EXPECT_THAT(prometheus.requests()[0],
              HasSubstr(absl::StrCat("Host: 127.0.0.1:", prometheus.port())));
}

TEST(PrometheusClientTest, BearerTokenIsReadAgainWhenItChanges) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    absl::StrCat("compatd-token-", getpid());
  std::filesystem::create_directories(dir);
  const std::string token = (dir / "token").string();
  std::ofstream(token) << "first-token\n";
  FakePrometheus prometheus(
      [](const std::string&) { return FakeReply{.body = "{}"}; });
  PrometheusClient client(
      {.url = prometheus.url(), .bearer_token_file = token});
  ASSERT_TRUE(client.Query("up").ok());
  // A rotation writes a new file and renames it over the old one, as
  // kubelet's projected volumes do.
  std::ofstream(dir / "token.new") << "second-token-longer";
  std::filesystem::rename(dir / "token.new", token);
  ASSERT_TRUE(client.Query("up").ok());
  const std::vector<std::string> requests = prometheus.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_THAT(requests[0], HasSubstr("Authorization: Bearer first-token\r\n"));
  EXPECT_THAT(requests[1],
              HasSubstr("Authorization: Bearer second-token-longer\r\n"));
  // An emptied file is an error, not an empty token.
  std::ofstream(token, std::ios::trunc) << "  \n";
  absl::StatusOr<std::string> empty = client.Query("up");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(empty.status().message(), HasSubstr("the file is empty"));
  std::filesystem::remove_all(dir);
}

TEST(PrometheusClientTest, SlowAnswerTimesOutWithinTheTimeout) {
  FakePrometheus prometheus([](const std::string&) {
    return FakeReply{.body = "{}", .delay = 3000ms};
  });
  PrometheusClient client(
      {.url = prometheus.url(), .timeout = absl::Milliseconds(300)});
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> body = client.Query("up");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(body.status().code(), absl::StatusCode::kDeadlineExceeded)
      << body.status();
  EXPECT_THAT(body.status().message(), HasSubstr("reading the answer"));
  EXPECT_LT(took, 1500ms);
}

TEST(PrometheusClientTest, NobodyListeningIsUnavailable) {
  // A port that was just free.
  int port = 0;
  {
    FakePrometheus gone([](const std::string&) { return FakeReply{}; });
    port = gone.port();
  }
  PrometheusClient client({.url = absl::StrCat("http://127.0.0.1:", port),
                           .timeout = absl::Seconds(2)});
  absl::StatusOr<std::string> body = client.Query("up");
  EXPECT_EQ(body.status().code(), absl::StatusCode::kUnavailable)
      << body.status();
  EXPECT_THAT(body.status().message(), HasSubstr("failed connecting"));
}

TEST(PrometheusClientTest, HttpErrorsAndOversizedAnswers) {
  FakePrometheus prometheus([](const std::string& query) {
    if (query == "unauthorized") {
      return FakeReply{.status = 401,
                       .content_type = "text/plain",
                       .body = "Unauthorized\n"};
    }
    if (query == "bad") {
      // Prometheus' own error answer comes with 400 and JSON.
      return FakeReply{
          .status = 400,
          .body = R"({"status":"error","errorType":"bad_data","error":"x"})"};
    }
    if (query == "big-chunks") {
      // No Content-Length: the body ends with the connection.
      return FakeReply{.body = std::string(5000, ' '), .no_length = true};
    }
    return FakeReply{.body = std::string(5000, ' ')};
  });
  PrometheusClient client({.url = prometheus.url(), .max_answer_bytes = 4096});
  absl::StatusOr<std::string> body = client.Query("unauthorized");
  EXPECT_EQ(body.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(body.status().message(),
              HasSubstr("answered HTTP 401: Unauthorized"));
  body = client.Query("bad");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("bad_data"));
  body = client.Query("big");
  EXPECT_EQ(body.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(body.status().message(), HasSubstr("more than 4096 bytes"));
  body = client.Query("big-chunks");
  EXPECT_EQ(body.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace compatd::fleet
