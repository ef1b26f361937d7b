// The offline commands of the real binary: eval, --check-catalog, --help, bad
// usage.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::HasSubstr;
using testing::RunCompatd;
using testing::RunResult;
using ::testing::StartsWith;

const std::string kGood = std::string(COMPATD_TESTDATA_DIR) + "/cli/good.yaml";
const std::string kBad = std::string(COMPATD_TESTDATA_DIR) + "/cli/bad.yaml";

TEST(CliTest, HelpListsEveryFlagWithItsDefault) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag :
       {"--listen", "--metrics-listen", "--catalog", "--check-catalog",
        "--reload-interval", "--shutdown-grace", "--rpc", "--request"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
  EXPECT_THAT(r.out, HasSubstr("(default: 127.0.0.1:50051)"));
  EXPECT_THAT(r.out, HasSubstr("(default: 127.0.0.1:9464)"));
}

TEST(CliTest, UnknownFlagIsUsageError) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--no-such-flag=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --no-such-flag"));
}

TEST(CliTest, BadDurationNamesTheFlag) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--reload-interval=soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--reload-interval=soon"));
}

TEST(CliTest, EvalPrintsJsonResponse) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"eval", "--catalog=" + kGood, "--rpc=GetFeature",
                       "--request={\"name\":\"Alpha1\"}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"Alpha1\""));
  EXPECT_THAT(r.out, HasSubstr("\"stage\": \"STAGE_ALPHA\""));
  EXPECT_THAT(r.out, HasSubstr("\"enabled\": false"));
}

TEST(CliTest, EvalUsesTheEmbeddedCatalogByDefault) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"eval", "--rpc=GetCatalog"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("embedded:kubernetes-1.36"));
}

TEST(CliTest, EvalAcceptsTheFullMethodName) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY,
                 {"eval", "--catalog=" + kGood,
                  "--rpc=/compatd.v1.CompatibilityPolicy/ResolveVersions"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"emulationMinor\""));
}

TEST(CliTest, EvalRpcErrorPrintsCodeAndExitsOne) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"eval", "--catalog=" + kGood, "--rpc=GetFeature",
                       "--request={\"name\":\"NoSuchGate\"}"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("ERROR: NOT_FOUND: "));
  EXPECT_EQ(r.out, "");
}

TEST(CliTest, EvalInvalidArgumentPrintsCode) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY,
                 {"eval", "--catalog=" + kGood, "--rpc=ResolveVersions",
                  "--request={\"versions\":{\"emulationVersion\":\"1.x\"}}"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("ERROR: INVALID_ARGUMENT: "));
}

TEST(CliTest, EvalBadJsonIsUsageError) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY,
      {"eval", "--catalog=" + kGood, "--rpc=GetFeature", "--request={"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("compatd.v1.GetFeatureRequest"));
}

TEST(CliTest, EvalUnknownFieldIsUsageError) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"eval", "--catalog=" + kGood, "--rpc=GetFeature",
                       "--request={\"nmae\":\"Alpha1\"}"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nmae"));
}

TEST(CliTest, EvalUnknownRpcListsTheAcceptedOnes) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"eval", "--rpc=GetFeatures"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown --rpc \"GetFeatures\""));
  EXPECT_THAT(r.err, HasSubstr("GetFeature, ListFeatures"));
}

TEST(CliTest, EvalWithoutRpcIsUsageError) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"eval"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--rpc"));
}

TEST(CliTest, EvalBadCatalogPrintsItsErrorsAndExitsOne) {
  const RunResult r = RunCompatd(
      COMPATD_BINARY, {"eval", "--catalog=" + kBad, "--rpc=GetCatalog"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.yaml:3:"));
}

TEST(CliTest, CheckCatalogPrintsCountsAndDigest) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--check-catalog=" + kGood});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("OK"));
  EXPECT_THAT(r.out, HasSubstr("2 features"));
  EXPECT_THAT(r.out, HasSubstr("digest sha256:"));
}

TEST(CliTest, CheckCatalogPrintsEveryErrorWithItsLine) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--check-catalog=" + kBad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.yaml:3:"));
  EXPECT_THAT(r.err, HasSubstr("bad.yaml:7:"));
  EXPECT_THAT(r.err, HasSubstr("2 errors"));
}

TEST(CliTest, CheckCatalogPutsTheErrorCountOnItsOwnLine) {
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--check-catalog=" + kBad});
  EXPECT_THAT(r.err, HasSubstr("\n2 errors\n"));
}

// The example at the top of docs/catalog.md ("The catalog") is a catalog users
// copy: it must load.
TEST(CliTest, ReadmeCatalogExampleIsValid) {
  std::ifstream readme(std::string(COMPATD_SOURCE_DIR) + "/docs/catalog.md");
  std::stringstream text;
  text << readme.rdbuf();
  const std::string s = text.str();
  const size_t section = s.find("# The catalog\n");
  ASSERT_NE(section, std::string::npos);
  const size_t start = s.find("```yaml\n", section);
  ASSERT_NE(start, std::string::npos);
  const size_t end = s.find("```", start + 8);
  ASSERT_NE(end, std::string::npos);
  const std::string path = ::testing::TempDir() + "/readme_catalog.yaml";
  std::ofstream(path) << s.substr(start + 8, end - start - 8);
  const RunResult r = RunCompatd(COMPATD_BINARY, {"--check-catalog=" + path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliTest, CheckCatalogMissingFileSaysSo) {
  const RunResult r =
      RunCompatd(COMPATD_BINARY, {"--check-catalog=/nonexistent.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.yaml"));
}

}  // namespace
}  // namespace compatd
