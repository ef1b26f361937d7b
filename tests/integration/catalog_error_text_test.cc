// A rejected catalog's errors name the file and may quote its bytes, and reach
// clients in GetCatalog's (and WatchCatalog's) last_error, a proto3 string: it
// must be valid UTF-8, or no client can decode the answer. compatd-soak found
// every GetCatalog failing (client side: UNIMPLEMENTED "No message returned for
// unary request") after a catalog of random bytes was rejected, because
// yaml-cpp's "unknown escape character" error quoted the raw byte. libyaml,
// which reads catalogs now, refuses a file that is not UTF-8 without quoting
// it, but a file name need not be UTF-8 either: this catalog's name is
// Latin-1.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

constexpr char kGoodCatalog[] =
    "binaryVersion: \"1.36\"\nfeatures: []\napis: []\n";
constexpr char kBadCatalog[] = "binaryVersion: [\n";

class CatalogErrorTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/catalog-\xff.yaml";
    ASSERT_TRUE(testing::WriteFile(path_, kGoodCatalog));
    ASSERT_TRUE(
        compatd_.Start({"--catalog=" + path_, "--reload-interval=0"}).ok())
        << compatd_.Stderr();
    stub_ = v1::CompatibilityPolicy::NewStub(compatd_.NewChannel());
  }

  grpc::Status GetCatalog(v1::GetCatalogResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return stub_->GetCatalog(&context, v1::GetCatalogRequest(), response);
  }

  // Replaces the catalog with the bad one (write, then rename, as an editor
  // does) and waits until compatd has rejected it.
  void SwapInBadCatalog() {
    const std::string tmp = path_ + ".tmp";
    ASSERT_TRUE(testing::WriteFile(tmp, kBadCatalog));
    ASSERT_EQ(std::rename(tmp.c_str(), path_.c_str()), 0);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (compatd_.Stderr().find("catalog reload rejected") ==
           std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "no rejection logged:\n"
          << compatd_.Stderr();
      std::this_thread::sleep_for(10ms);
    }
  }

  TempDir dir_;
  std::string path_;
  CompatdProcess compatd_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(CatalogErrorTextTest, GetCatalogAnswersWithTheByteEscaped) {
  v1::GetCatalogResponse before;
  ASSERT_TRUE(GetCatalog(&before).ok());
  SwapInBadCatalog();
  v1::GetCatalogResponse after;
  const grpc::Status status = GetCatalog(&after);
  ASSERT_TRUE(status.ok()) << status.error_code() << ": "
                           << status.error_message();
  EXPECT_THAT(after.last_error(),
              HasSubstr("catalog-\\xff.yaml:1: invalid YAML: "));
  EXPECT_EQ(after.digest(), before.digest());
  EXPECT_EQ(after.generation(), before.generation());
}

TEST_F(CatalogErrorTextTest, WatchCatalogOpensWithTheByteEscaped) {
  SwapInBadCatalog();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  std::unique_ptr<grpc::ClientReader<v1::GetCatalogResponse>> stream =
      stub_->WatchCatalog(&context, v1::WatchCatalogRequest());
  v1::GetCatalogResponse first;
  ASSERT_TRUE(stream->Read(&first)) << stream->Finish().error_message();
  EXPECT_THAT(first.last_error(), HasSubstr("catalog-\\xff.yaml:1: "));
  context.TryCancel();
  while (stream->Read(&first)) {
  }
  stream->Finish();
}

TEST_F(CatalogErrorTextTest, TheLogLineIsValidUtf8Too) {
  SwapInBadCatalog();
  EXPECT_THAT(compatd_.Stderr(), HasSubstr("catalog-\\xff.yaml:1: "));
  EXPECT_THAT(compatd_.Stderr(), Not(HasSubstr("\xff")));
}

}  // namespace
}  // namespace compatd
