// base::JsonQuote: JSON string literals as RFC 8259 section 7 writes them,
// with bytes that are not UTF-8 as U+FFFD (Go's encoding/json does the same:
// "invalid UTF-8 is coerced to valid UTF-8 by replacing invalid bytes with the
// Unicode replacement rune").

#include "base/json_quote.h"

#include <string>

#include "gtest/gtest.h"

namespace compatd::base {
namespace {

TEST(JsonQuoteTest, EscapesWhatJsonReserves) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
}

TEST(JsonQuoteTest, KeepsUtf8AndReplacesWhatIsNot) {
  EXPECT_EQ(JsonQuote("caf\xc3\xa9 \xe2\x82\xac"),
            "\"caf\xc3\xa9 \xe2\x82\xac\"");
  EXPECT_EQ(JsonQuote("a\xff"
                      "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(JsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");  // overlong '/'
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"),                     // a surrogate
            "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST(Utf8SequenceAtTest, MeasuresWellFormedSequencesOnly) {
  EXPECT_EQ(Utf8SequenceAt("a", 0), 1u);
  EXPECT_EQ(Utf8SequenceAt("\xc3\xa9", 0), 2u);
  EXPECT_EQ(Utf8SequenceAt("\xf0\x9f\x98\x80", 0), 4u);
  EXPECT_EQ(Utf8SequenceAt("\xf0\x9f\x98", 0), 0u);      // cut short
  EXPECT_EQ(Utf8SequenceAt("\xf4\x90\x80\x80", 0), 0u);  // past U+10FFFF
}

}  // namespace
}  // namespace compatd::base
