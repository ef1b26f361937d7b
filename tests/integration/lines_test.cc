// Every answer from the right binary, on the real binary (issue 21,
// section 2): the embedded catalogs answer per release line and refuse a
// binary they do not describe; a directory of users' catalogs serves one
// line per file, each reloaded on its own, and a bad file neither replaces
// its good predecessor nor stops the others. The catalogs' gates are
// kubernetes/kubernetes pkg/features/kube_features.go at v1.33.3 and v1.34.7
// (tests/testdata/catalogs/lines/).

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/configmap_fixture.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::HasSubstr;
using testing::RunCompatd;
using testing::RunResult;
using namespace std::chrono_literals;

std::string LinesFile(absl::string_view name) {
  return absl::StrCat(COMPATD_TESTDATA_DIR, "/catalogs/lines/", name);
}

std::string ReadAll(const std::string& path) {
  std::string text;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
    text.append(buffer, n);
  }
  std::fclose(f);
  return text;
}

TEST(LinesCliTest, EmbeddedLinesAnswerTheirBinaryAndRefuseOthers) {
  const RunResult ok = RunCompatd(
      COMPATD_BINARY,
      {"eval", "--rpc=GetFeature",
       R"(--request={"name":"WatchList","versions":{"binaryVersion":"1.36"}})"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(ok.out,
              HasSubstr(R"("catalogSource": "embedded:kubernetes-1.36")"));
  EXPECT_THAT(ok.out, HasSubstr(R"("catalogRelease": "1.36)"));
  for (const char* binary : {"1.30", "1.38"}) {
    const RunResult refused = RunCompatd(
        COMPATD_BINARY,
        {"eval", "--rpc=GetFeature",
         absl::StrCat(
             R"(--request={"name":"WatchList","versions":{"binaryVersion":")",
             binary, R"("}})")});
    EXPECT_EQ(refused.exit_code, 1) << refused.out;
    EXPECT_THAT(refused.err,
                HasSubstr(absl::StrCat("ERROR: INVALID_ARGUMENT: "
                                       "versions.binaryVersion \"",
                                       binary, "\": no catalog describes")));
    EXPECT_THAT(refused.err, HasSubstr("the release lines it has are"));
  }
}

RunResult EvalFeature(absl::string_view name, absl::string_view binary) {
  return RunCompatd(
      COMPATD_BINARY,
      {"eval", "--rpc=GetFeature",
       absl::StrCat(R"(--request={"name":")", name,
                    R"(","versions":{"binaryVersion":")", binary, R"("}})")});
}

// The embedded lines, against kube_features.go at each line's tag: WatchList
// is Beta default off from 1.33 (v1.33.3) and default on again from 1.34
// (v1.34.7); AppArmor is GA locked in 1.32 (v1.32.5) and gone from 1.33.
TEST(LinesCliTest, EachEmbeddedLineAnswersFromItsOwnGates) {
  const RunResult at33 = EvalFeature("WatchList", "1.33");
  ASSERT_EQ(at33.exit_code, 0) << at33.err;
  EXPECT_THAT(at33.out, HasSubstr(R"("enabled": false)"));
  EXPECT_THAT(at33.out, HasSubstr(R"("since": "1.33")"));
  EXPECT_THAT(at33.out,
              HasSubstr(R"("catalogSource": "embedded:kubernetes-1.33")"));
  const RunResult at34 = EvalFeature("WatchList", "v1.34.3");
  ASSERT_EQ(at34.exit_code, 0) << at34.err;
  EXPECT_THAT(at34.out, HasSubstr(R"("enabled": true)"));
  EXPECT_THAT(at34.out, HasSubstr(R"("since": "1.34")"));
  EXPECT_THAT(at34.out,
              HasSubstr(R"("catalogSource": "embedded:kubernetes-1.34")"));
  const RunResult apparmor32 = EvalFeature("AppArmor", "1.32");
  ASSERT_EQ(apparmor32.exit_code, 0) << apparmor32.err;
  EXPECT_THAT(apparmor32.out, HasSubstr(R"("stage": "STAGE_GA")"));
  EXPECT_THAT(apparmor32.out, HasSubstr(R"("lockedToDefault": true)"));
  const RunResult apparmor33 = EvalFeature("AppArmor", "1.33");
  EXPECT_EQ(apparmor33.exit_code, 1);
  EXPECT_THAT(apparmor33.err, HasSubstr("ERROR: NOT_FOUND"));
}

// SchedulerAsyncAPICalls: disabled in v1.34.2 (CHANGELOG-1.34, the 1.34
// catalog's patchChanges); 1.34.0 and 1.34.1 had it Beta, default on.
TEST(LinesCliTest, APatchBeforeARecordedChangeIsNamedInTheReason) {
  const RunResult early = EvalFeature("SchedulerAsyncAPICalls", "1.34.1");
  ASSERT_EQ(early.exit_code, 0) << early.err;
  EXPECT_THAT(early.out, HasSubstr("1.34.2 changed this gate: kube-apiserver "
                                   "1.34.1 had it Beta, default true"));
  const RunResult later = EvalFeature("SchedulerAsyncAPICalls", "1.34.5");
  ASSERT_EQ(later.exit_code, 0) << later.err;
  EXPECT_THAT(later.out, ::testing::Not(HasSubstr("changed this gate")));
}

TEST(LinesCliTest, EvalAndCheckCatalogTakeSeveralCatalogs) {
  const RunResult eval = RunCompatd(
      COMPATD_BINARY,
      {"eval", "--catalog=" + LinesFile("kubernetes-1.33.yaml"),
       "--catalog=" + LinesFile("kubernetes-1.34.yaml"), "--rpc=GetFeature",
       R"(--request={"name":"WatchList","versions":{"binaryVersion":"1.33"}})"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_THAT(eval.out, HasSubstr(R"("enabled": false)"));
  EXPECT_THAT(eval.out, HasSubstr(R"("catalogRelease": "1.33.3")"));

  const RunResult check = RunCompatd(
      COMPATD_BINARY, {"--check-catalog=" + LinesFile("kubernetes-1.33.yaml"),
                       "--check-catalog=" + LinesFile("kubernetes-1.34.yaml")});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("kubernetes-1.33.yaml: OK: binaryVersion "
                                   "1.33.3"));
  EXPECT_THAT(check.out, HasSubstr("OK: 2 release lines (1.33, 1.34)"));

  const RunResult twice = RunCompatd(
      COMPATD_BINARY, {"--check-catalog=" + LinesFile("kubernetes-1.33.yaml"),
                       "--check-catalog=" + LinesFile("kubernetes-1.33.yaml")});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_THAT(twice.err, HasSubstr("two catalogs describe kube-apiserver "
                                   "1.33"));
}

// A cluster on the 1.32 binary whose upgrade target is a later binary: the
// target is planned across the lines served together, so a lone file (or a
// set without the line in between) is refused as the server would refuse it.
TEST(LinesCliTest, AnUpgradeTargetOnALaterBinaryNeedsItsLines) {
  testing::ScopedTempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::ifstream in(LinesFile("kubernetes-1.32.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_TRUE(
      testing::WriteFileContents(
          dir.Join("aiming-1.34.yaml"),
          text.str() + "cluster:\n  upgradeTarget: {binaryVersion: \"1.34\"}\n")
          .ok());
  const RunResult alone = RunCompatd(
      COMPATD_BINARY, {"--check-catalog=" + dir.Join("aiming-1.34.yaml")});
  EXPECT_EQ(alone.exit_code, 1) << alone.out;
  EXPECT_THAT(alone.err, HasSubstr("no catalog describes kube-apiserver 1.34"));
  // Kubernetes upgrades binaries one minor at a time: 1.33 is a hop.
  const RunResult gap = RunCompatd(
      COMPATD_BINARY, {"--check-catalog=" + dir.Join("aiming-1.34.yaml"),
                       "--check-catalog=" + LinesFile("kubernetes-1.34.yaml")});
  EXPECT_EQ(gap.exit_code, 1) << gap.out;
  EXPECT_THAT(gap.err, HasSubstr("1.33"));
  const RunResult all = RunCompatd(
      COMPATD_BINARY, {"--check-catalog=" + dir.Join("aiming-1.34.yaml"),
                       "--check-catalog=" + LinesFile("kubernetes-1.33.yaml"),
                       "--check-catalog=" + LinesFile("kubernetes-1.34.yaml")});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("OK: 3 release lines (1.32, 1.33, 1.34)"));
}

class LinesServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_TRUE(
        testing::WriteFileContents(dir_.Join("a-1.33.yaml"),
                                   ReadAll(LinesFile("kubernetes-1.33.yaml")))
            .ok());
    ASSERT_TRUE(
        testing::WriteFileContents(dir_.Join("b-1.34.yaml"),
                                   ReadAll(LinesFile("kubernetes-1.34.yaml")))
            .ok());
    // Not a catalog: ignored.
    ASSERT_TRUE(testing::WriteFileContents(dir_.Join("README"), "x").ok());
  }

  void StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "--listen=127.0.0.1:0", "--metrics-listen=", "--catalog=" + dir_.path(),
        "--reload-interval=0", "--shutdown-grace=2s"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(COMPATD_BINARY, args));
    ASSERT_TRUE(server_.WaitForStderr("gRPC listening on", 20s))
        << server_.Stderr();
    std::smatch match;
    const std::string err = server_.Stderr();
    ASSERT_TRUE(std::regex_search(
        err, match, std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
    const auto channel =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", match[1].str()),
                            grpc::InsecureChannelCredentials());
    stub_ = v1::CompatibilityPolicy::NewStub(channel);
    // Ready, not only listening: SERVING once the first catalogs are served.
    auto health = grpc::health::v1::Health::NewStub(channel);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    bool serving = false;
    while (!serving && std::chrono::steady_clock::now() < deadline) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + 2s);
      grpc::health::v1::HealthCheckResponse response;
      serving =
          health
              ->Check(&context, grpc::health::v1::HealthCheckRequest(),
                      &response)
              .ok() &&
          response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
      if (!serving) std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(serving) << server_.Stderr();
  }

  grpc::Status Feature(absl::string_view name, absl::string_view binary,
                       v1::GetFeatureResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::GetFeatureRequest request;
    request.set_name(std::string(name));
    request.mutable_versions()->set_binary_version(std::string(binary));
    return stub_->GetFeature(&context, request, response);
  }

  v1::GetCatalogResponse Catalog() {
    grpc::ClientContext context;
    v1::GetCatalogResponse response;
    EXPECT_TRUE(
        stub_->GetCatalog(&context, v1::GetCatalogRequest(), &response).ok());
    return response;
  }

  testing::ScopedTempDir dir_;
  testing::Subprocess server_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(LinesServerTest, ADirectoryServesOneLinePerFileReloadedOnItsOwn) {
  StartServer();
  v1::GetFeatureResponse at33, at34;
  ASSERT_TRUE(Feature("WatchList", "1.33", &at33).ok());
  ASSERT_TRUE(Feature("WatchList", "1.34", &at34).ok());
  EXPECT_FALSE(at33.enabled());  // Beta, default off from 1.33 (v1.33.3)
  EXPECT_TRUE(at34.enabled());   // Beta, default on from 1.34 (v1.34.7)
  EXPECT_EQ(at33.catalog_source(), dir_.Join("a-1.33.yaml"));
  EXPECT_EQ(at34.catalog_release(), "1.34.7");
  // No --binary-version: the newest line is the default.
  v1::GetFeatureResponse by_default;
  ASSERT_TRUE(Feature("WatchList", "", &by_default).ok());
  EXPECT_EQ(by_default.catalog_release(), "1.34.7");
  v1::GetFeatureResponse none;
  const grpc::Status refused = Feature("WatchList", "1.36", &none);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("the release lines it has are 1.33, 1.34"));

  // The 1.33 file goes bad: rejected, its last good catalog keeps serving.
  ASSERT_TRUE(
      testing::WriteFileContents(dir_.Join("a-1.33.yaml"), "binaryVersion: [")
          .ok());
  v1::GetCatalogResponse catalog;
  for (int i = 0; i < 400; ++i) {
    catalog = Catalog();
    if (catalog.lines_size() == 2 && !catalog.lines(0).last_error().empty()) {
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(catalog.lines_size(), 2);
  EXPECT_THAT(catalog.lines(0).last_error(), HasSubstr("a-1.33.yaml"));
  EXPECT_TRUE(catalog.lines(1).last_error().empty());
  ASSERT_TRUE(Feature("WatchList", "1.33", &at33).ok());
  EXPECT_EQ(at33.catalog_release(), "1.33.3");
  EXPECT_FALSE(at33.enabled());

  // The 1.34 file still reloads on its own: a new patch release of the line.
  std::string next = ReadAll(LinesFile("kubernetes-1.34.yaml"));
  const size_t at = next.find("\"1.34.7\"");
  ASSERT_NE(at, std::string::npos);
  next.replace(at, 8, "\"1.34.8\"");
  ASSERT_TRUE(testing::WriteFileContents(dir_.Join("b-1.34.yaml"), next).ok());
  bool reloaded = false;
  for (int i = 0; i < 400 && !reloaded; ++i) {
    ASSERT_TRUE(Feature("WatchList", "1.34", &at34).ok());
    reloaded = at34.catalog_release() == "1.34.8";
    if (!reloaded) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(reloaded) << server_.Stderr();
  // And the bad 1.33 file still has not replaced its predecessor.
  ASSERT_TRUE(Feature("WatchList", "1.33", &at33).ok());
  EXPECT_EQ(at33.catalog_release(), "1.33.3");
}

TEST_F(LinesServerTest, ACatalogMovedOntoAnotherFilesLineIsRefused) {
  StartServer({"--binary-version=1.33"});
  v1::GetFeatureResponse by_default;
  ASSERT_TRUE(Feature("WatchList", "", &by_default).ok());
  EXPECT_EQ(by_default.catalog_release(), "1.33.3");
  ASSERT_TRUE(
      testing::WriteFileContents(dir_.Join("b-1.34.yaml"),
                                 ReadAll(LinesFile("kubernetes-1.33.yaml")))
          .ok());
  v1::GetCatalogResponse catalog;
  for (int i = 0; i < 400; ++i) {
    catalog = Catalog();
    if (catalog.lines_size() == 2 && !catalog.lines(1).last_error().empty()) {
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(catalog.lines_size(), 2);
  EXPECT_THAT(catalog.lines(1).last_error(),
              HasSubstr("two catalogs describe kube-apiserver 1.33"));
  v1::GetFeatureResponse at34;
  ASSERT_TRUE(Feature("WatchList", "1.34", &at34).ok());
  EXPECT_EQ(at34.catalog_release(), "1.34.7");
}

TEST_F(LinesServerTest, TwoFilesOfOneLineAtStartUpAreFatal) {
  ASSERT_TRUE(
      testing::WriteFileContents(dir_.Join("c-1.33-again.yaml"),
                                 ReadAll(LinesFile("kubernetes-1.33.yaml")))
          .ok());
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"--listen=127.0.0.1:0",
                       "--metrics-listen=", "--catalog=" + dir_.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("two catalogs describe kube-apiserver 1.33"));
}

TEST_F(LinesServerTest, ADefaultLineWithoutACatalogIsAFlagError) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"--listen=127.0.0.1:0", "--metrics-listen=",
                       "--catalog=" + dir_.path(), "--binary-version=1.37"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("default binary version 1.37: no catalog "
                               "describes that release line"));
}

}  // namespace
}  // namespace compatd
