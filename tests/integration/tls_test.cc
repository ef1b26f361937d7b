// TLS and mutual TLS against the real compatd binary, gRPC and /metrics, with
// certificates made by the openssl CLI at test time: plaintext and
// wrong-CA clients are refused, good clients accepted, and replaced
// certificate files are picked up without a restart.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/loopback.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_certs.h"

namespace compatd {
namespace {

using ::compatd::testing::Subprocess;
using ::compatd::testing::TestCerts;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// One HTTPS GET /metrics over OpenSSL, verifying the server against `ca`
// (and its IP SAN 127.0.0.1); with `client`, presents <client>.crt/.key.
struct HttpsResult {
  bool handshake = false;
  int status = 0;  // 0: no HTTP response
  std::string body;
};

HttpsResult HttpsGet(const TestCerts& certs, int port, const std::string& ca,
                     const std::string& client = "") {
  HttpsResult result;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_load_verify_locations(ctx, certs.Path(ca + ".crt").c_str(), nullptr);
  if (!client.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx,
                                       certs.Path(client + ".crt").c_str());
    SSL_CTX_use_PrivateKey_file(ctx, certs.Path(client + ".key").c_str(),
                                SSL_FILETYPE_PEM);
  }
  const int fd = testing::ConnectLoopback(port, timeval{5, 0});
  SSL* ssl = SSL_new(ctx);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
  if (fd >= 0 && SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1) {
    result.handshake = true;
    const std::string request =
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
      std::string reply;
      char buffer[16384];
      int n;
      while ((n = SSL_read(ssl, buffer, sizeof(buffer))) > 0) {
        reply.append(buffer, static_cast<size_t>(n));
      }
      std::smatch match;
      if (std::regex_search(reply, match,
                            std::regex("^HTTP/1\\.[01] ([0-9]{3})"))) {
        result.status = std::stoi(match[1]);
        const size_t body = reply.find("\r\n\r\n");
        if (body != std::string::npos) result.body = reply.substr(body + 4);
      }
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  if (fd >= 0) close(fd);
  SSL_CTX_free(ctx);
  return result;
}

// Plain HTTP GET /metrics; the status, or 0 if no HTTP answer came.
int PlainHttpStatus(int port) {
  const int fd = testing::ConnectLoopback(port, timeval{5, 0});
  int status = 0;
  if (fd >= 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
    (void)!write(fd, request.data(), request.size());
    char buffer[512];
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    std::smatch match;
    const std::string reply = n > 0 ? std::string(buffer, n) : "";
    if (std::regex_search(reply, match,
                          std::regex("^HTTP/1\\.[01] ([0-9]{3})"))) {
      status = std::stoi(match[1]);
    }
  }
  if (fd >= 0) close(fd);
  return status;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.MakeCa("ca1"));
    ASSERT_TRUE(certs_.MakeServer("ca1", "server1"));
    ASSERT_TRUE(certs_.MakeClient("ca1", "client1"));
    ASSERT_TRUE(certs_.MakeCa("ca2"));
    ASSERT_TRUE(certs_.MakeServer("ca2", "server2"));
    ASSERT_TRUE(certs_.MakeClient("ca2", "client2"));
    // What the server reads: replaced in place by the rotation tests.
    ASSERT_TRUE(certs_.Replace("server1.crt", "tls.crt"));
    ASSERT_TRUE(certs_.Replace("server1.key", "tls.key"));
    ASSERT_TRUE(certs_.Replace("ca1.crt", "client-ca.crt"));
  }

  std::vector<std::string> TlsFlags(bool mutual) {
    std::vector<std::string> flags = {"--tls-cert=" + certs_.Path("tls.crt"),
                                      "--tls-key=" + certs_.Path("tls.key")};
    if (mutual)
      flags.push_back("--tls-client-ca=" + certs_.Path("client-ca.crt"));
    return flags;
  }
  std::vector<std::string> MetricsTlsFlags(bool mutual) {
    std::vector<std::string> flags = {
        "--metrics-tls-cert=" + certs_.Path("tls.crt"),
        "--metrics-tls-key=" + certs_.Path("tls.key")};
    if (mutual) {
      flags.push_back("--metrics-tls-client-ca=" +
                      certs_.Path("client-ca.crt"));
    }
    return flags;
  }

  void StartServer(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                     "--metrics-listen=127.0.0.1:0",
                                     "--shutdown-grace=2s"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(COMPATD_BINARY, args));
    ASSERT_TRUE(server_.WaitForStderr("serving catalog", 20s))
        << server_.Stderr();
    const std::string err = server_.Stderr();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(
        err, match, std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
    port_ = std::stoi(match[1]);
    ASSERT_TRUE(std::regex_search(
        err, match,
        std::regex("metrics on https?://127\\.0\\.0\\.1:([0-9]+)")));
    metrics_port_ = std::stoi(match[1]);
  }

  // GetCatalog over a fresh channel; `ca` empty: plaintext.
  grpc::Status Call(const std::string& ca, const std::string& client = "") {
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (ca.empty()) {
      credentials = grpc::InsecureChannelCredentials();
    } else {
      grpc::SslCredentialsOptions options;
      options.pem_root_certs = certs_.Read(ca + ".crt");
      if (!client.empty()) {
        options.pem_cert_chain = certs_.Read(client + ".crt");
        options.pem_private_key = certs_.Read(client + ".key");
      }
      credentials = grpc::SslCredentials(options);
    }
    auto channel =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port_), credentials);
    auto stub = v1::CompatibilityPolicy::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 3s);
    v1::GetCatalogResponse response;
    return stub->GetCatalog(&context, v1::GetCatalogRequest(), &response);
  }

  // Retries `ok` for up to `timeout` (a rotation is seen within the refresh
  // interval plus a handshake).
  template <typename F>
  bool Eventually(F ok, std::chrono::seconds timeout = 15s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (ok()) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }

  TestCerts certs_;
  Subprocess server_;
  int port_ = 0;
  int metrics_port_ = 0;
};

TEST_F(TlsTest, StartupLogSaysTls) {
  StartServer(TlsFlags(false));
  EXPECT_THAT(server_.Stderr(), HasSubstr("(TLS)"));
}

TEST_F(TlsTest, ClientTrustingTheCaIsAccepted) {
  StartServer(TlsFlags(false));
  const grpc::Status status = Call("ca1");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(TlsTest, PlaintextClientIsRefused) {
  StartServer(TlsFlags(false));
  EXPECT_EQ(Call("").error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, ClientTrustingAnotherCaIsRefused) {
  StartServer(TlsFlags(false));
  EXPECT_EQ(Call("ca2").error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsAcceptsClientCertificateOfTheClientCa) {
  StartServer(TlsFlags(true));
  EXPECT_THAT(server_.Stderr(), HasSubstr("(mutual TLS)"));
  const grpc::Status status = Call("ca1", "client1");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(TlsTest, MutualTlsRefusesClientWithoutCertificate) {
  StartServer(TlsFlags(true));
  EXPECT_EQ(Call("ca1").error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRefusesClientCertificateOfAnotherCa) {
  StartServer(TlsFlags(true));
  EXPECT_EQ(Call("ca1", "client2").error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, RotationIsPickedUpWithoutRestart) {
  StartServer([&] {
    auto flags = TlsFlags(true);
    flags.push_back("--tls-refresh-interval=1s");
    return flags;
  }());
  ASSERT_TRUE(Call("ca1", "client1").ok());
  // cert-manager issues from a new CA: new pair and new client CA.
  ASSERT_TRUE(certs_.Replace("server2.crt", "tls.crt"));
  ASSERT_TRUE(certs_.Replace("server2.key", "tls.key"));
  ASSERT_TRUE(certs_.Replace("ca2.crt", "client-ca.crt"));
  EXPECT_TRUE(Eventually([&] { return Call("ca2", "client2").ok(); }))
      << server_.Stderr();
  // The old CA's clients are refused now, and it is the same process.
  EXPECT_EQ(Call("ca1", "client1").error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(server_.Wait(0ms).has_value());
}

TEST_F(TlsTest, MetricsOverTlsServeTheExposition) {
  StartServer(MetricsTlsFlags(false));
  EXPECT_THAT(server_.Stderr(), HasSubstr("metrics on https://127.0.0.1:"));
  const HttpsResult result = HttpsGet(certs_, metrics_port_, "ca1");
  EXPECT_TRUE(result.handshake);
  EXPECT_EQ(result.status, 200);
  EXPECT_THAT(result.body, HasSubstr("compatd_build_info"));
}

// Issue 17, item 5: 16 idle TCP connections (replaced as they close) made 5
// of 6 scrapes fail when a relay with 16 workers terminated TLS. Now 32 idle
// connections and 8 that trickle a TLS hello leave every scrape served.
TEST_F(TlsTest, MetricsOverTlsScrapesWhileSlowClientsHoldConnections) {
  StartServer(MetricsTlsFlags(false));
  std::vector<int> idle;
  for (int i = 0; i < 32; ++i) {
    const int fd = testing::ConnectLoopback(metrics_port_);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  std::vector<int> trickling;
  for (int i = 0; i < 8; ++i) {
    const int fd = testing::ConnectLoopback(metrics_port_);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, "\x16", 1, MSG_NOSIGNAL), 1);  // a record's first byte
    trickling.push_back(fd);
  }
  for (int scrape = 0; scrape < 6; ++scrape) {
    const auto start = std::chrono::steady_clock::now();
    const HttpsResult result = HttpsGet(certs_, metrics_port_, "ca1");
    EXPECT_EQ(result.status, 200) << "scrape " << scrape;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    for (int fd : trickling) send(fd, "\x03", 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(100ms);
  }
  for (int fd : idle) close(fd);
  for (int fd : trickling) close(fd);
}

TEST_F(TlsTest, MetricsOverTlsRefusePlainHttp) {
  StartServer(MetricsTlsFlags(false));
  EXPECT_EQ(PlainHttpStatus(metrics_port_), 0);
}

TEST_F(TlsTest, MetricsOverTlsRefuseAClientTrustingAnotherCa) {
  StartServer(MetricsTlsFlags(false));
  EXPECT_FALSE(HttpsGet(certs_, metrics_port_, "ca2").handshake);
}

TEST_F(TlsTest, MetricsMutualTlsNeedsAClientCertificateOfTheClientCa) {
  StartServer(MetricsTlsFlags(true));
  EXPECT_EQ(HttpsGet(certs_, metrics_port_, "ca1").status, 0);
  EXPECT_EQ(HttpsGet(certs_, metrics_port_, "ca1", "client2").status, 0);
  EXPECT_EQ(HttpsGet(certs_, metrics_port_, "ca1", "client1").status, 200);
}

TEST_F(TlsTest, MetricsRotationIsPickedUpWithoutRestart) {
  StartServer([&] {
    auto flags = MetricsTlsFlags(false);
    flags.push_back("--tls-refresh-interval=1s");
    return flags;
  }());
  ASSERT_EQ(HttpsGet(certs_, metrics_port_, "ca1").status, 200);
  ASSERT_TRUE(certs_.Replace("server2.crt", "tls.crt"));
  ASSERT_TRUE(certs_.Replace("server2.key", "tls.key"));
  EXPECT_TRUE(Eventually([&] {
    return HttpsGet(certs_, metrics_port_, "ca2").status == 200;
  })) << server_.Stderr();
  EXPECT_THAT(server_.Stderr(), HasSubstr("reloaded"));
}

TEST_F(TlsTest, GrpcTlsAndPlainMetricsCoexist) {
  StartServer(TlsFlags(false));
  EXPECT_EQ(PlainHttpStatus(metrics_port_), 200);
}

// --health-listen: kubelet's gRPC probes cannot speak TLS, so a plaintext
// port serves grpc.health.v1 and nothing else.
class HealthListenTest : public TlsTest {
 protected:
  void SetUp() override {
    TlsTest::SetUp();
    std::vector<std::string> flags = TlsFlags(true);
    flags.push_back("--health-listen=127.0.0.1:0");
    StartServer(flags);
    std::smatch match;
    const std::string err = server_.Stderr();
    ASSERT_TRUE(std::regex_search(
        err, match,
        std::regex("gRPC health \\(grpc\\.health\\.v1 only, plaintext\\) on "
                   "127\\.0\\.0\\.1:([0-9]+)")))
        << err;
    health_port_ = std::stoi(match[1]);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(health_port_),
                                   grpc::InsecureChannelCredentials());
  }

  grpc::health::v1::HealthCheckResponse::ServingStatus Check(
      const std::string& service) {
    auto stub = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 3s);
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = stub->Check(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.status();
  }

  int health_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(HealthListenTest, PlaintextProbeSeesServingWhileGrpcNeedsMutualTls) {
  EXPECT_EQ(Check(""), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(Check("compatd.v1.CompatibilityPolicy"),
            grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(Call("").error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(HealthListenTest, ServesNothingButHealth) {
  auto stub = v1::CompatibilityPolicy::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 3s);
  v1::GetCatalogResponse response;
  const grpc::Status status =
      stub->GetCatalog(&context, v1::GetCatalogRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("/compatd.v1.CompatibilityPolicy/GetCatalog is not "
                        "served on the --health-listen port"));
}

TEST_F(TlsTest, ListenPortOutOfRangeFailsStartup) {
  Subprocess bad;
  ASSERT_TRUE(bad.Start(COMPATD_BINARY,
                        {"--listen=127.0.0.1:99999", "--metrics-listen="}));
  EXPECT_EQ(bad.Wait(20s), 1);
  EXPECT_THAT(bad.Stderr(),
              HasSubstr("--listen=127.0.0.1:99999: expected host:port with a "
                        "port in 0..65535"));
}

TEST_F(HealthListenTest, UnknownServiceIsNotFoundAsOnTheMainPort) {
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 3s);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("no.such.Service");
  grpc::health::v1::HealthCheckResponse response;
  EXPECT_EQ(stub->Check(&context, request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(HealthListenTest, WatchSeesNotServingOnSigterm) {
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 20s);
  auto stream = stub->Watch(&context, grpc::health::v1::HealthCheckRequest());
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  server_.Signal(SIGTERM);
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.status(),
            grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  context.TryCancel();
  while (stream->Read(&response)) {
  }
  stream->Finish();
  EXPECT_EQ(server_.Wait(20s), 0) << server_.Stderr();
}

TEST_F(TlsTest, HealthListenOnABadAddressFailsStartup) {
  Subprocess bad;
  ASSERT_TRUE(
      bad.Start(COMPATD_BINARY, {"--listen=127.0.0.1:0", "--metrics-listen=",
                                 "--health-listen=127.0.0.1:99999"}));
  EXPECT_EQ(bad.Wait(20s), 1);
  EXPECT_THAT(bad.Stderr(),
              HasSubstr("--health-listen=127.0.0.1:99999: expected host:port "
                        "with a port in 0..65535"));
}

TEST_F(TlsTest, KeyOfAnotherCertificateFailsStartup) {
  Subprocess bad;
  ASSERT_TRUE(
      bad.Start(COMPATD_BINARY, {"--listen=127.0.0.1:0", "--metrics-listen=",
                                 "--tls-cert=" + certs_.Path("server1.crt"),
                                 "--tls-key=" + certs_.Path("server2.key")}));
  EXPECT_EQ(bad.Wait(20s), 1);
  EXPECT_THAT(bad.Stderr(), HasSubstr("does not belong to the first "
                                      "certificate of --tls-cert"));
}

TEST_F(TlsTest, ClientCaWithoutServerCertificateFailsStartup) {
  Subprocess bad;
  ASSERT_TRUE(
      bad.Start(COMPATD_BINARY, {"--listen=127.0.0.1:0", "--metrics-listen=",
                                 "--tls-client-ca=" + certs_.Path("ca1.crt")}));
  EXPECT_EQ(bad.Wait(20s), 1);
  EXPECT_THAT(bad.Stderr(), HasSubstr("--tls-client-ca needs --tls-cert"));
}

TEST_F(TlsTest, RefreshIntervalBelowOneSecondFailsStartup) {
  Subprocess bad;
  std::vector<std::string> args = TlsFlags(false);
  args.push_back("--listen=127.0.0.1:0");
  args.push_back("--metrics-listen=");
  args.push_back("--tls-refresh-interval=100ms");
  ASSERT_TRUE(bad.Start(COMPATD_BINARY, args));
  EXPECT_EQ(bad.Wait(20s), 1);
  EXPECT_THAT(bad.Stderr(), HasSubstr("--tls-refresh-interval=100ms"));
}

}  // namespace
}  // namespace compatd
