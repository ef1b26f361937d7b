// The offline commands of the real binary: eval, --check-catalog, --help (the
// server's and each subcommand's), bad usage.

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
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
        "--reload-interval", "--shutdown-grace", "--tls-cert"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
  EXPECT_THAT(r.out, HasSubstr("--listen=STRING (default: 127.0.0.1:50051)"));
  EXPECT_THAT(r.out,
              HasSubstr("--metrics-listen=STRING (default: 127.0.0.1:9464)"));
  // The subcommands are listed, their flags are theirs.
  for (const char* command : {"eval", "lint", "plan", "scan"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("\n    ") + command + "   "));
  }
  EXPECT_THAT(r.out, HasSubstr("compatd COMMAND --help"));
  EXPECT_THAT(r.out, Not(HasSubstr("--rpc")));
  EXPECT_THAT(r.out, Not(HasSubstr("--ignore-removals")));
  // Wrapped at 80 columns.
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }
}

// Each subcommand's --help: its synopsis, its own flags, examples and exit
// codes, and none of the server's flags.
struct CommandHelp {
  const char* command;
  const char* own_flag;
  const char* exit_code_line;
};

TEST(CliTest, EverySubcommandHasItsOwnHelp) {
  for (const CommandHelp& c :
       {CommandHelp{"eval", "--rpc=STRING", "  2  bad usage"},
        CommandHelp{"lint", "--catalog=STRING", "  1  errors"},
        CommandHelp{"plan", "--all (default: false)",
                    "  3  at least one blocker"},
        CommandHelp{"scan", "--target=STRING", "  2  deprecated APIs found"}}) {
    SCOPED_TRACE(c.command);
    for (const char* help : {"--help", "-h"}) {
      const RunResult r = RunCompatd(COMPATD_BINARY, {c.command, help});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_THAT(r.out,
                  StartsWith(std::string("Usage: compatd ") + c.command));
      EXPECT_THAT(r.out, HasSubstr(c.own_flag));
      EXPECT_THAT(r.out, HasSubstr("\nExamples:\n  "));
      EXPECT_THAT(r.out, HasSubstr("\nExit codes:\n  0  "));
      EXPECT_THAT(r.out, HasSubstr(c.exit_code_line));
      for (const char* server_flag :
           {"--listen", "--tls-cert", "--http-listen", "--max-call-duration",
            "--check-catalog"}) {
        EXPECT_THAT(r.out, Not(HasSubstr(server_flag)));
      }
      EXPECT_LE(r.out.size(), 4000u);  // a screen or two, not 57 flags
      for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
        EXPECT_LE(line.size(), 100u) << line;
      }
    }
  }
}

// A server flag given to a subcommand is refused by name, with the
// subcommand's usage exit code (scan's and plan's 1: their 2 means
// "deprecated" and "actions").
TEST(CliTest, SubcommandsRefuseServerFlags) {
  for (const auto& [command, code] : std::vector<std::pair<std::string, int>>{
           {"eval", 2}, {"lint", 2}, {"plan", 1}, {"scan", 1}}) {
    SCOPED_TRACE(command);
    const RunResult r =
        RunCompatd(COMPATD_BINARY, {command, "--listen=127.0.0.1:0"});
    EXPECT_EQ(r.exit_code, code);
    EXPECT_THAT(r.err, HasSubstr("compatd " + command +
                                 ": --listen is a server flag that compatd " +
                                 command + " does not use; compatd " + command +
                                 " --help lists its flags"));
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliTest, SubcommandsRefuseEachOthersFlags) {
  RunResult r = RunCompatd(COMPATD_BINARY, {"plan", "--target=1.36"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--target is a flag of compatd scan, not of "
                               "compatd plan"));
  r = RunCompatd(COMPATD_BINARY, {"eval", "--from=1.33"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(
      r.err,
      HasSubstr("--from is a flag of compatd plan, not of compatd eval"));
  r = RunCompatd(COMPATD_BINARY, {"lint", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --no-such-flag; run compatd lint "
                               "--help for the flags"));
  r = RunCompatd(COMPATD_BINARY, {"--catalog=" + kGood, "lint"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("put the command first: compatd lint [flags]"));
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
