// base::FlagTable: aliases, sections, the unknown-flag message, Usage().

#include "base/flags.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::base {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status Parse(FlagTable& flags, std::vector<std::string> args,
                   std::vector<std::string>* positional) {
  std::vector<char*> argv = {const_cast<char*>("compatd")};
  for (std::string& a : args) argv.push_back(a.data());
  return flags.Parse(static_cast<int>(argv.size()), argv.data(), 1, positional);
}

TEST(FlagTableTest, AliasSetsTheFlag) {
  FlagTable flags;
  std::string output;
  flags.AddString("output", &output, "the format");
  flags.AddAlias("o", "output");
  std::vector<std::string> positional;
  ASSERT_TRUE(Parse(flags, {"-o", "json", "x"}, &positional).ok());
  EXPECT_EQ(output, "json");
  EXPECT_THAT(positional, ElementsAre("x"));
  ASSERT_TRUE(Parse(flags, {"--o=yaml"}, &positional).ok());
  EXPECT_EQ(output, "yaml");
  EXPECT_TRUE(flags.Has("o"));
  EXPECT_TRUE(flags.Has("output"));
  EXPECT_FALSE(flags.Has("out"));
}

TEST(FlagTableTest, UnknownFlagNamesTheHelpCommand) {
  FlagTable flags("compatd plan --help");
  std::vector<std::string> positional;
  const absl::Status s = Parse(flags, {"--nope=1"}, &positional);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "unknown flag --nope; run compatd plan --help for the flags");
}

TEST(FlagTableTest, UnknownFlagMessageHook) {
  FlagTable flags;
  flags.SetUnknownFlagMessage(
      [](absl::string_view name) -> std::optional<std::string> {
        if (name == "listen") return std::string("a server flag");
        return std::nullopt;
      });
  std::vector<std::string> positional;
  EXPECT_EQ(Parse(flags, {"--listen=:1"}, &positional).message(),
            "a server flag");
  EXPECT_THAT(Parse(flags, {"--other"}, &positional).message(),
              HasSubstr("unknown flag --other"));
}

TEST(FlagTableTest, UsageHasSectionsDefaultsAndWrapsAt80Columns) {
  FlagTable flags;
  std::string listen = "127.0.0.1:50051";
  bool all = false;
  flags.AddSection("Serving");
  flags.AddString("listen", &listen,
                  "gRPC listen address host:port (port 0 picks a free port); "
                  "a long help text that goes on and on past the eightieth "
                  "column of a terminal, so that it must be wrapped");
  flags.AddSection("Other");
  flags.AddBool("all", &all, "everything");
  flags.AddAlias("a", "all");
  const std::string usage = flags.Usage();
  EXPECT_THAT(usage, HasSubstr("Serving:\n  --listen=STRING (default: "
                               "127.0.0.1:50051)\n      gRPC listen"));
  EXPECT_THAT(usage, HasSubstr("\n\nOther:\n  -a, --all (default: false)\n"
                               "      everything\n"));
  for (absl::string_view line : absl::StrSplit(usage, '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }
}

}  // namespace
}  // namespace compatd::base
