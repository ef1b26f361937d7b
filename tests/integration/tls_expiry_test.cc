// Certificates past their validity are never served without a word: the real
// binary logs every certificate's validity at start and on rotation (a
// warning for an expired or not yet valid one), logs an error when one in
// force expires, and exports each certificate's expiry as
// compatd_tls_certificate_expiry_timestamp_seconds.

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/loopback.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/time_scale.h"

namespace compatd {
namespace {

using ::compatd::testing::Sample;
using ::compatd::testing::Subprocess;
using ::compatd::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// A self-signed EC P-256 certificate for 127.0.0.1 valid from
// now + `from` to now + `until`, written to <dir>/<name>.crt and .key.
// Returns notAfter as Unix time (0 on failure).
time_t MakeCertificate(const std::string& dir, const std::string& name,
                       long from, long until) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  time_t not_after = 0;
  if (key != nullptr && cert != nullptr) {
    X509_set_version(cert, 2);
    BIGNUM* serial = BN_new();
    BN_rand(serial, 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
    BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert));
    BN_free(serial);
    time_t now = time(nullptr);
    X509_time_adj_ex(X509_getm_notBefore(cert), 0, from, &now);
    X509_time_adj_ex(X509_getm_notAfter(cert), 0, until, &now);
    not_after = now + until;
    X509_NAME* subject = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(
        subject, "CN", MBSTRING_ASC,
        reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert, subject);
    X509_set_pubkey(cert, key);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    if (X509_EXTENSION* san = X509V3_EXT_conf_nid(
            nullptr, &ctx, NID_subject_alt_name, "IP:127.0.0.1")) {
      X509_add_ext(cert, san, -1);
      X509_EXTENSION_free(san);
    }
    if (X509_sign(cert, key, EVP_sha256()) == 0) not_after = 0;
  }
  FILE* crt = fopen((dir + "/" + name + ".crt").c_str(), "w");
  FILE* pem = fopen((dir + "/" + name + ".key").c_str(), "w");
  if (crt == nullptr || pem == nullptr || not_after == 0 ||
      PEM_write_X509(crt, cert) != 1 ||
      PEM_write_PrivateKey(pem, key, nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    not_after = 0;
  }
  if (crt != nullptr) fclose(crt);
  if (pem != nullptr) fclose(pem);
  X509_free(cert);
  EVP_PKEY_free(key);
  ERR_clear_error();
  return not_after;
}

// GET /metrics over HTTPS without verifying the server (its certificate may
// be expired: that is the point).
std::string HttpsScrape(int port) {
  std::string body;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  const int fd = testing::ConnectLoopback(port, timeval{5, 0});
  SSL* ssl = SSL_new(ctx);
  if (fd >= 0 && SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1) {
    const std::string request =
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    SSL_write(ssl, request.data(), static_cast<int>(request.size()));
    char buffer[16384];
    int n;
    while ((n = SSL_read(ssl, buffer, sizeof(buffer))) > 0) {
      body.append(buffer, static_cast<size_t>(n));
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  if (fd >= 0) close(fd);
  SSL_CTX_free(ctx);
  const size_t end = body.find("\r\n\r\n");
  return end == std::string::npos ? "" : body.substr(end + 4);
}

class TlsExpiryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }

  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }

  // compatd with the gRPC port and /metrics on `name`'s certificate.
  void StartServer(const std::string& name,
                   const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "--listen=127.0.0.1:0",
        "--metrics-listen=127.0.0.1:0",
        "--shutdown-grace=1s",
        "--tls-cert=" + Path(name + ".crt"),
        "--tls-key=" + Path(name + ".key"),
        "--metrics-tls-cert=" + Path(name + ".crt"),
        "--metrics-tls-key=" + Path(name + ".key")};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(testing::StartTiedToThisProcess(server_, COMPATD_BINARY, args));
    ASSERT_TRUE(server_.WaitForStderr("serving catalog", 20s))
        << server_.Stderr();
    std::smatch match;
    const std::string err = server_.Stderr();
    ASSERT_TRUE(std::regex_search(
        err, match, std::regex("metrics on https://127\\.0\\.0\\.1:([0-9]+)")))
        << err;
    metrics_port_ = std::stoi(match[1]);
  }

  // The expiry series of `listener`'s leaf certificate `subject`.
  std::optional<double> Expiry(const std::string& listener,
                               const std::string& subject) {
    absl::StatusOr<std::vector<Sample>> samples =
        testing::ParseExposition(HttpsScrape(metrics_port_));
    if (!samples.ok()) return std::nullopt;
    std::vector<Sample> selected = testing::Select(
        *samples, "compatd_tls_certificate_expiry_timestamp_seconds",
        {{"listener", listener},
         {"file", "cert"},
         {"subject", "CN=" + subject}});
    if (selected.size() != 1) return std::nullopt;
    return selected[0].value;
  }

  TempDir dir_;
  Subprocess server_;
  int metrics_port_ = 0;
};

TEST_F(TlsExpiryTest, ExpiredCertificateIsLoggedAtStartAndExported) {
  const time_t not_after =
      MakeCertificate(dir_.path(), "expired", -2 * 86400, -86400);
  ASSERT_NE(not_after, 0);
  StartServer("expired");

  const std::string err = server_.Stderr();
  EXPECT_THAT(err, HasSubstr(" W the certificate of --tls-cert="));
  EXPECT_THAT(err, HasSubstr("(subject CN=expired, serial "));
  EXPECT_THAT(err, HasSubstr("expired at "));
  EXPECT_THAT(err, HasSubstr("TLS clients refuse it; rotate it"));
  EXPECT_THAT(err, HasSubstr(" W the certificate of --metrics-tls-cert="));
  for (const char* listener : {"grpc", "metrics"}) {
    const std::optional<double> expiry = Expiry(listener, "expired");
    ASSERT_TRUE(expiry.has_value()) << listener << "\n"
                                    << HttpsScrape(metrics_port_);
    EXPECT_NEAR(*expiry, static_cast<double>(not_after), 2) << listener;
  }
  server_.Signal(SIGTERM);
  EXPECT_EQ(server_.Wait(10s), 0);
}

TEST_F(TlsExpiryTest, NotYetValidCertificateIsLoggedAtStart) {
  ASSERT_NE(MakeCertificate(dir_.path(), "future", 86400, 2 * 86400), 0);
  StartServer("future");
  EXPECT_THAT(server_.Stderr(), HasSubstr("is not valid before "));
  EXPECT_THAT(server_.Stderr(), HasSubstr("TLS clients refuse it until then"));
}

TEST_F(TlsExpiryTest, CertificateThatExpiresWhileServingIsLoggedWhenItDoes) {
  // Valid for 3 s past its making, scaled: a TSan build's start-up alone
  // took 2.7 s, and the expiry came before the server was ready.
  ASSERT_NE(MakeCertificate(dir_.path(), "brief", -60,
                            static_cast<int>(3 * testing::kTimeScale)),
            0);
  StartServer("brief");
  EXPECT_THAT(server_.Stderr(), HasSubstr("is valid until"));
  EXPECT_THAT(server_.Stderr(), Not(HasSubstr("expired at")));

  // No rotation, no handshake: the expiry itself is logged, for both
  // listeners, as an error.
  ASSERT_TRUE(server_.WaitForStderr(
      "TLS clients fail their handshake until it is rotated",
      testing::Scaled(10s)))
      << server_.Stderr();
  std::this_thread::sleep_for(200ms);
  const std::string err = server_.Stderr();
  EXPECT_THAT(err, HasSubstr(" E the certificate of --tls-cert="));
  EXPECT_THAT(err, HasSubstr(" E the certificate of --metrics-tls-cert="));
  server_.Signal(SIGTERM);
  EXPECT_EQ(server_.Wait(10s), 0);
}

TEST_F(TlsExpiryTest, RotationLogsAndExportsTheNewExpiry) {
  const time_t first = MakeCertificate(dir_.path(), "tls", -60, 86400);
  ASSERT_NE(first, 0);
  StartServer("tls", {"--tls-refresh-interval=1s"});
  ASSERT_TRUE(Expiry("grpc", "tls").has_value());
  EXPECT_NEAR(*Expiry("grpc", "tls"), static_cast<double>(first), 2);

  // A new certificate (same name, later expiry), renamed into place.
  TempDir next;
  const time_t second = MakeCertificate(next.path(), "tls", -60, 30 * 86400);
  ASSERT_NE(second, 0);
  for (const char* ext : {".crt", ".key"}) {
    ASSERT_EQ(std::rename((next.path() + "/tls" + ext).c_str(),
                          Path(std::string("tls") + ext).c_str()),
              0);
  }
  const std::string until = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", absl::FromTimeT(second), absl::UTCTimeZone());
  ASSERT_TRUE(server_.WaitForStderr("valid until " + until, 10s))
      << server_.Stderr();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  bool exported = false;
  while (!exported && std::chrono::steady_clock::now() < deadline) {
    const std::optional<double> grpc = Expiry("grpc", "tls");
    exported = grpc.has_value() && std::abs(*grpc - second) < 2;
    if (!exported) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(exported) << HttpsScrape(metrics_port_);
  server_.Signal(SIGTERM);
  EXPECT_EQ(server_.Wait(10s), 0);
}

}  // namespace
}  // namespace compatd
