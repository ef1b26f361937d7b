// manifest::JoinJsonSurrogates: a JSON text's surrogate escapes spelled as
// libyaml reads them, with encoding/json's meaning (decode.go's unquote: a
// high and a low surrogate are one code point, any other surrogate escape is
// U+FFFD).

#include "manifest/json_text.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::manifest {
namespace {

std::string Joined(const std::string& text) {
  std::string out = "untouched";
  if (!JoinJsonSurrogates(text, &out)) {
    EXPECT_EQ(out, "untouched");
  }
  return out;
}

TEST(JsonTextTest, APairIsOneEscapeAndItsBytesFollowTheString) {
  EXPECT_EQ(Joined(R"({"a": "x\ud83d\ude00y", "b": 1})"),
            R"({"a": "x\U0001F600y"  , "b": 1})");
  EXPECT_EQ(Joined(R"({"a": "\uD83D\uDE00\uD83D\uDE00"})"),
            R"({"a": "\U0001F600\U0001F600"    })");
}

TEST(JsonTextTest, AnyOtherSurrogateEscapeIsTheReplacementCharacter) {
  // A high one alone, a low one alone, a high one before another high one
  // (Go reads the first as U+FFFD, then the second on its own).
  EXPECT_EQ(Joined(R"({"a": "\ud83d", "b": "\ude00", "c": "\ud83d\ud83d"})"),
            R"({"a": "\uFFFD", "b": "\uFFFD", "c": "\uFFFD\uFFFD"})");
  EXPECT_EQ(Joined(R"({"a": "\ud83dx"})"), R"({"a": "\uFFFDx"})");
}

TEST(JsonTextTest, TextWithoutSurrogatesOrNotJsonIsLeftAlone) {
  EXPECT_EQ(Joined(R"({"a": "\u00e9 \\ud83d"})"), "untouched");
  EXPECT_EQ(Joined("a: \"\\ud83d\\ude00\"\n"), "untouched");  // YAML
  EXPECT_EQ(Joined(R"(["\ud83d\ude00"])"), "untouched");      // kubectl: YAML
  EXPECT_EQ(Joined(""), "untouched");
  // A key is a string too; outside strings nothing is an escape.
  EXPECT_EQ(Joined(R"({"\ud83d\ude00": 1})"), R"({"\U0001F600"  : 1})");
}

TEST(JsonTextTest, AnUnfinishedStringOrEscapeEndsTheText) {
  EXPECT_EQ(Joined(R"({"a": "\ud83d)"), R"({"a": "\uFFFD)");
  EXPECT_EQ(Joined(R"({"a": "\ud83d\ude0)"), R"({"a": "\uFFFD\ude0)");
  EXPECT_EQ(Joined("{\"a\": \"\\ud83d\\"), "{\"a\": \"\\uFFFD\\");
}

}  // namespace
}  // namespace compatd::manifest
