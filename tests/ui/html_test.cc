#include "ui/html.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::ui {
namespace {

TEST(EscapeTest, TextContextCannotOpenATag) {
  EXPECT_EQ(Escape("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(Escape("a & b"), "a &amp; b");
  // An entity in the input stays text, not a character reference.
  EXPECT_EQ(Escape("&lt;"), "&amp;lt;");
}

TEST(EscapeTest, AttributeContextCannotCloseTheQuote) {
  // Both quote kinds, so a value is safe in "..." (the page's only form).
  EXPECT_EQ(Escape("\" onmouseover=\"alert(1)"),
            "&quot; onmouseover=&quot;alert(1)");
  EXPECT_EQ(Escape("' onfocus='x"), "&#39; onfocus=&#39;x");
  const std::string attribute = "<a title=\"" + Escape("x\"><b>y") + "\">";
  EXPECT_EQ(attribute, "<a title=\"x&quot;&gt;&lt;b&gt;y\">");
}

TEST(EscapeTest, PlainTextAndUtf8AreKept) {
  EXPECT_EQ(Escape("kube-apiserver 1.36"), "kube-apiserver 1.36");
  EXPECT_EQ(Escape("caf\xC3\xA9 \xE2\x80\x93"), "caf\xC3\xA9 \xE2\x80\x93");
  EXPECT_EQ(Escape(""), "");
}

TEST(EscapeTest, InvalidUtf8BecomesVisibleEscapes) {
  // A page is always valid UTF-8: bytes that are not are written as \xNN.
  EXPECT_EQ(Escape("a\xFF<b"), "a\\xff&lt;b");
  EXPECT_EQ(Escape("\xC3"), "\\xc3");
}

TEST(EscapeTest, AppendsToWhatIsThere) {
  std::string out = "<td>";
  AppendEscaped(&out, "<x>");
  EXPECT_EQ(out, "<td>&lt;x&gt;");
}

TEST(PathSegmentTest, KeepsUnreservedEscapesTheRest) {
  std::string out;
  AppendPathSegment(&out, "WatchList");
  EXPECT_EQ(out, "WatchList");
  out.clear();
  AppendPathSegment(&out, "a/b?c#d\"<e> f");
  EXPECT_EQ(out, "a%2Fb%3Fc%23d%22%3Ce%3E%20f");
  out.clear();
  AppendPathSegment(&out, "x\xC3\xA9.~_-");
  EXPECT_EQ(out, "x%C3%A9.~_-");
}

TEST(PercentDecodeTest, DecodesAndKeepsMalformed) {
  EXPECT_EQ(PercentDecode("Watch%4Cist", false), "WatchList");
  EXPECT_EQ(PercentDecode("a+b%20c", true), "a b c");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("%zz%4", false), "%zz%4");
  EXPECT_EQ(PercentDecode("%3cscript%3E", false), "<script>");
}

TEST(IdTokenTest, OnlySafeCharacters) {
  EXPECT_EQ(IdToken("WatchList"), "WatchList");
  EXPECT_EQ(IdToken("a b\"<c>-_9"), "a_b__c_-_9");
}

}  // namespace
}  // namespace compatd::ui
