// The status page on the real binary's front door (--http-listen), read with
// raw sockets: content types, the Content-Security-Policy and no cookie on
// every answer, 404s, the redirect, a hostile User-Agent shown as text, the
// page not recording its readers as clients, and --ui=false.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::HttpGet;
using ::compatd::testing::HttpReply;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCsp[] =
    "content-security-policy: default-src 'none'; script-src 'self'; "
    "style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri "
    "'none'; form-action 'self'; frame-ancestors 'none'";

// One request with `headers` (CRLF-terminated lines) on its own connection,
// HTTP/1.0 so that the server closes it after the answer.
std::string Raw(int port, const std::string& method, const std::string& path,
                const std::string& headers = "", const std::string& body = "") {
  const int fd = testing::ConnectLoopback(port, timeval{10, 0});
  if (fd < 0) return "";
  const std::string request =
      absl::StrCat(method, " ", path, " HTTP/1.0\r\nHost: x\r\n", headers,
                   "Content-Length: ", body.size(), "\r\n\r\n", body);
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

class UiTest : public ::testing::Test {
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
  static HttpReply Get(const std::string& target) {
    absl::StatusOr<HttpReply> reply = HttpGet(server_->http_port(), target);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : HttpReply();
  }

  static CompatdProcess* server_;
  static absl::Status start_;
};

CompatdProcess* UiTest::server_ = nullptr;
absl::Status UiTest::start_;

TEST_F(UiTest, EveryViewIsHtmlWithTheCspAndNoCookie) {
  for (const char* path :
       {"/ui/", "/ui/clients", "/ui/features", "/ui/features?q=watch",
        "/ui/features/WatchList", "/ui/apis"}) {
    const HttpReply r = Get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_THAT(r.headers, HasSubstr("content-type: text/html; charset=utf-8"))
        << path;
    EXPECT_THAT(r.headers, HasSubstr(kCsp)) << path;
    EXPECT_THAT(r.headers, HasSubstr("x-content-type-options: nosniff"));
    EXPECT_THAT(r.headers, HasSubstr("cache-control: no-store"));
    EXPECT_THAT(r.headers, Not(HasSubstr("set-cookie")));
    EXPECT_THAT(r.body, HasSubstr("<!DOCTYPE html>")) << path;
    // No inline script: the page's one script is the external one.
    EXPECT_THAT(r.body,
                HasSubstr("<script src=\"/ui/app.js\" defer></script>"));
    EXPECT_EQ(r.body.find("<script"), r.body.rfind("<script")) << path;
  }
}

TEST_F(UiTest, AssetsStatusAndRedirect) {
  HttpReply r = Get("/ui/style.css");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.headers, HasSubstr("content-type: text/css; charset=utf-8"));
  EXPECT_THAT(r.headers, HasSubstr(kCsp));
  r = Get("/ui/app.js");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.headers,
              HasSubstr("content-type: text/javascript; charset=utf-8"));
  r = Get("/ui/status.json");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.headers, HasSubstr("content-type: application/json"));
  EXPECT_THAT(r.body, HasSubstr("{\"generation\":1,\"digest\":\"sha256:"));
  r = Get("/");
  EXPECT_EQ(r.status, 302);
  EXPECT_THAT(r.headers, HasSubstr("location: /ui/"));
  EXPECT_THAT(r.headers, HasSubstr(kCsp));
}

TEST_F(UiTest, NotFoundAndMethods) {
  HttpReply r = Get("/ui/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.headers, HasSubstr("content-type: text/html"));
  EXPECT_THAT(r.headers, HasSubstr(kCsp));
  r = Get("/ui/features/NoSuchGate");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body,
              HasSubstr("&quot;NoSuchGate&quot; is not in the catalog"));
  const std::string post = Raw(server_->http_port(), "POST", "/ui/", "", "x");
  EXPECT_THAT(post, HasSubstr("HTTP/1.0 405"));
  EXPECT_THAT(post, HasSubstr("Allow: GET, HEAD"));
  const std::string head = Raw(server_->http_port(), "HEAD", "/ui/clients");
  EXPECT_THAT(head, HasSubstr("HTTP/1.0 200"));
  EXPECT_THAT(head, HasSubstr("text/html"));
  EXPECT_THAT(head, Not(HasSubstr("<!DOCTYPE")));
}

TEST_F(UiTest, AHostileUserAgentIsShownAsText) {
  const std::string answer =
      Raw(server_->http_port(), "POST", "/v1/GetFeature",
          "User-Agent: kubelet/<script>alert(1)</script>\r\n"
          "Content-Type: application/json\r\n",
          "{\"name\":\"WatchList\"}");
  ASSERT_THAT(answer, HasSubstr("HTTP/1.0 200"));
  const HttpReply r = Get("/ui/clients");
  EXPECT_THAT(r.body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(r.body, Not(HasSubstr("<script>alert")));
}

TEST_F(UiTest, ReadersAreNotClients) {
  Raw(server_->http_port(), "GET", "/ui/",
      "User-Agent: kubectl/v1.20.0 (linux/amd64) kubernetes/abc\r\n");
  // The same client on /v1/ is one.
  Raw(server_->http_port(), "GET", "/v1/ResolveVersions",
      "User-Agent: kubectl/v1.21.0 (linux/amd64) kubernetes/abc\r\n");
  const HttpReply r = Get("/v1/ListClients?component=kubectl");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("\"1.21\"")) << r.body;
  EXPECT_THAT(r.body, Not(HasSubstr("1.20"))) << r.body;
}

TEST(UiDisabledTest, UiFalseGives404) {
  CompatdProcess server;
  ASSERT_OK(server.Start({"--http-listen=127.0.0.1:0", "--ui=false"}));
  ASSERT_NE(server.http_port(), 0);
  for (const char* path :
       {"/", "/ui/", "/ui/clients", "/ui/app.js", "/ui/status.json"}) {
    absl::StatusOr<HttpReply> r = HttpGet(server.http_port(), path);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_THAT(r->headers, HasSubstr("content-type: application/json"));
  }
  absl::StatusOr<HttpReply> health = HttpGet(server.http_port(), "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  EXPECT_THAT(server.Stderr(), Not(HasSubstr("status page")));
}

}  // namespace
}  // namespace compatd
