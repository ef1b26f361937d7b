// TLS file checks and reloading (http/tls.h), with certificates made by
// the openssl CLI at test time.

#include "http/tls.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_certs.h"

namespace compatd::http {
namespace {

using ::compatd::testing::StatusIs;
using ::compatd::testing::TestCerts;
using ::testing::AllOf;
using ::testing::HasSubstr;

class TlsFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs_ = new TestCerts();
    ASSERT_TRUE(certs_->MakeCa("ca1"));
    ASSERT_TRUE(certs_->MakeServer("ca1", "server1"));
    ASSERT_TRUE(certs_->MakeCa("ca2"));
    ASSERT_TRUE(certs_->MakeServer("ca2", "server2"));
  }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }

  static TlsFiles Files(const std::string& name, const std::string& ca = "") {
    TlsFiles files;
    files.cert = certs_->Path(name + ".crt");
    files.key = certs_->Path(name + ".key");
    if (!ca.empty()) files.client_ca = certs_->Path(ca + ".crt");
    return files;
  }

  static TestCerts* certs_;
};

TestCerts* TlsFilesTest::certs_ = nullptr;

TEST_F(TlsFilesTest, NothingSetIsPlaintext) {
  EXPECT_OK(CheckTlsFiles(TlsFiles(), "--tls"));
  EXPECT_FALSE(TlsFiles().enabled());
}

TEST_F(TlsFilesTest, MatchingPairIsAccepted) {
  EXPECT_OK(CheckTlsFiles(Files("server1"), "--tls"));
}

TEST_F(TlsFilesTest, PairWithClientCaIsAccepted) {
  EXPECT_OK(CheckTlsFiles(Files("server1", "ca2"), "--tls"));
}

TEST_F(TlsFilesTest, CertWithoutKeyIsRejected) {
  TlsFiles files = Files("server1");
  files.key.clear();
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--tls-cert and --tls-key go together")));
}

TEST_F(TlsFilesTest, ClientCaWithoutCertIsRejected) {
  TlsFiles files;
  files.client_ca = certs_->Path("ca1.crt");
  EXPECT_THAT(CheckTlsFiles(files, "--metrics-tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--metrics-tls-client-ca needs "
                                 "--metrics-tls-cert")));
}

TEST_F(TlsFilesTest, MissingFileNamesFlagAndPath) {
  TlsFiles files = Files("server1");
  files.cert = certs_->Path("absent.crt");
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("--tls-cert="),
                             HasSubstr("absent.crt: cannot open the file"))));
}

// --tls-key=/dev/zero used to be read until the OOM killer came, a FIFO
// blocked start-up for ever.
TEST_F(TlsFilesTest, DeviceIsRejectedWithoutReadingIt) {
  TlsFiles files = Files("server1");
  files.key = "/dev/zero";
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--tls-key=/dev/zero: not a regular file "
                                 "(it is a device)")));
}

TEST_F(TlsFilesTest, FifoIsRejectedWithoutBlocking) {
  const std::string fifo = certs_->Path("fifo.crt");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  TlsFiles files = Files("server1");
  files.cert = fifo;
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("--tls-cert="),
                             HasSubstr("not a regular file (it is a FIFO)"))));
  unlink(fifo.c_str());
}

TEST_F(TlsFilesTest, FileOverTheLimitIsRejectedWithoutReadingIt) {
  // Sparse: 2 GiB that take no disk space.
  const std::string huge = certs_->Path("huge.crt");
  const int fd = open(huge.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, int64_t{2} << 30), 0);
  close(fd);
  TlsFiles files = Files("server1", "ca1");
  files.client_ca = huge;
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("--tls-client-ca="),
                             HasSubstr("larger than the limit of 1048576"))));
  unlink(huge.c_str());
}

TEST_F(TlsFilesTest, KeyOfAnotherCertificateIsRejected) {
  TlsFiles files = Files("server1");
  files.key = certs_->Path("server2.key");
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("does not belong to the first certificate "
                                 "of --tls-cert")));
}

TEST_F(TlsFilesTest, NonPemCertificateIsRejected) {
  TlsFiles files = Files("server1");
  files.cert = certs_->Path("server1.ext");  // text, but no certificate
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no PEM certificate")));
}

TEST_F(TlsFilesTest, CertificateAsKeyIsRejected) {
  TlsFiles files = Files("server1");
  files.key = certs_->Path("server1.crt");
  EXPECT_THAT(
      CheckTlsFiles(files, "--tls"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--tls-key=")));
}

TEST_F(TlsFilesTest, ClientCaWithoutCertificatesIsRejected) {
  TlsFiles files = Files("server1");
  files.client_ca = certs_->Path("server1.key");
  EXPECT_THAT(CheckTlsFiles(files, "--tls"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--tls-client-ca=")));
}

TEST(TlsFileContextTest, UnchangedFilesAreNotReloaded) {
  TestCerts certs;
  ASSERT_TRUE(certs.MakeCa("ca"));
  ASSERT_TRUE(certs.MakeServer("ca", "a"));
  ASSERT_TRUE(certs.Replace("a.crt", "tls.crt"));
  ASSERT_TRUE(certs.Replace("a.key", "tls.key"));
  TlsFiles files{certs.Path("tls.crt"), certs.Path("tls.key"), ""};
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<TlsFileContext> context,
      TlsFileContext::Create(files, absl::Seconds(1), "--tls"));
  ASSERT_OK_AND_ASSIGN(bool reloaded, context->ReloadNow());
  EXPECT_FALSE(reloaded);
  EXPECT_EQ(context->reloads(), 0);
}

TEST(TlsFileContextTest, RotatedPairIsTaken) {
  TestCerts certs;
  ASSERT_TRUE(certs.MakeCa("ca"));
  ASSERT_TRUE(certs.MakeServer("ca", "a"));
  ASSERT_TRUE(certs.MakeServer("ca", "b"));
  ASSERT_TRUE(certs.Replace("a.crt", "tls.crt"));
  ASSERT_TRUE(certs.Replace("a.key", "tls.key"));
  TlsFiles files{certs.Path("tls.crt"), certs.Path("tls.key"), ""};
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<TlsFileContext> context,
      TlsFileContext::Create(files, absl::Seconds(1), "--tls"));
  ASSERT_TRUE(certs.Replace("b.crt", "tls.crt"));
  ASSERT_TRUE(certs.Replace("b.key", "tls.key"));
  ASSERT_OK_AND_ASSIGN(bool reloaded, context->ReloadNow());
  EXPECT_TRUE(reloaded);
  EXPECT_EQ(context->reloads(), 1);
}

TEST(TlsFileContextTest, HalfWrittenRotationKeepsThePreviousPair) {
  TestCerts certs;
  ASSERT_TRUE(certs.MakeCa("ca"));
  ASSERT_TRUE(certs.MakeServer("ca", "a"));
  ASSERT_TRUE(certs.MakeServer("ca", "b"));
  ASSERT_TRUE(certs.Replace("a.crt", "tls.crt"));
  ASSERT_TRUE(certs.Replace("a.key", "tls.key"));
  TlsFiles files{certs.Path("tls.crt"), certs.Path("tls.key"), ""};
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<TlsFileContext> context,
      TlsFileContext::Create(files, absl::Seconds(1), "--tls"));
  ASSERT_TRUE(certs.Replace("b.crt", "tls.crt"));  // key not yet replaced
  EXPECT_THAT(context->ReloadNow(), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("does not belong")));
  EXPECT_EQ(context->reloads(), 0);
  ASSERT_TRUE(certs.Replace("b.key", "tls.key"));
  ASSERT_OK_AND_ASSIGN(bool reloaded, context->ReloadNow());
  EXPECT_TRUE(reloaded);
}

}  // namespace
}  // namespace compatd::http
