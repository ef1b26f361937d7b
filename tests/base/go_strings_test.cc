// base/go_strings.h: Go's strconv.ParseBool and strings.TrimSpace, to the
// letter (go/src/strconv/atob.go, go/src/strings/strings.go with
// unicode.IsSpace).

#include "base/go_strings.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace compatd::base {
namespace {

TEST(ParseGoBoolTest, AcceptsExactlyStrconvParseBool) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    EXPECT_EQ(ParseGoBool(t), std::optional<bool>(true)) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_EQ(ParseGoBool(f), std::optional<bool>(false)) << f;
  }
  for (const char* bad :
       {"", "yes", "no", "tRUE", "fAlse", " true", "true ", "2", "on"}) {
    EXPECT_EQ(ParseGoBool(bad), std::nullopt) << bad;
  }
}

TEST(TrimGoSpaceTest, TrimsAsciiAndUnicodeWhiteSpace) {
  EXPECT_EQ(TrimGoSpace(" \t\n\v\f\rx y\r\n"), "x y");
  // U+0085, U+00A0, U+2028, U+3000 on either side.
  EXPECT_EQ(TrimGoSpace("\xc2\x85\xc2\xa0key\xe2\x80\xa8\xe3\x80\x80"), "key");
  // U+200B (zero width space) is not white space in Go.
  EXPECT_EQ(TrimGoSpace("\xe2\x80\x8bkey"), "\xe2\x80\x8bkey");
  EXPECT_EQ(TrimGoSpace(""), "");
  EXPECT_EQ(TrimGoSpace(" \t "), "");
}

TEST(TrimGoSpaceTest, ReturnsAPartOfItsInput) {
  const std::string text = "  batch/v1=true  ";
  const absl::string_view trimmed = TrimGoSpace(text);
  EXPECT_EQ(trimmed, "batch/v1=true");
  EXPECT_EQ(trimmed.data(), text.data() + 2);
}

}  // namespace
}  // namespace compatd::base
