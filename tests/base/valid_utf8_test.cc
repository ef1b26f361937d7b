// base::ValidUtf8: what a client's protobuf library accepts in a string
// field. The cases follow RFC 3629 section 4 and Markus Kuhn's "UTF-8 decoder
// capability and stress test" (https://www.cl.cam.ac.uk/~mgk25/ucs/examples/
// UTF-8-test.txt); the random check holds the result to protobuf's own test,
// google::protobuf::internal::IsStructurallyValidUTF8, which the generated
// code applies when it parses a proto3 string.

#include "base/valid_utf8.h"

#include <random>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/stubs/common.h"
#include "gtest/gtest.h"

namespace compatd::base {
namespace {

struct Case {
  std::string name;
  std::string input;
  std::string want;
};

class ValidUtf8Test : public ::testing::TestWithParam<Case> {};

TEST_P(ValidUtf8Test, EscapesExactlyTheInvalidBytes) {
  EXPECT_EQ(base::ValidUtf8(GetParam().input), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Rfc3629, ValidUtf8Test,
    ::testing::Values(
        Case{"Empty", "", ""},
        Case{"Ascii", "catalog.yaml:1: bad", "catalog.yaml:1: bad"},
        Case{"ControlBytesAreValid", std::string("a\n\t\0b", 5),
             std::string("a\n\t\0b", 5)},
        Case{"TwoThreeFourBytes", "\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82",
             "\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82"},
        Case{"LargestCodePoint", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
        Case{"LoneContinuationByte", "a\x80z", "a\\x80z"},
        Case{"YamlCppEscapeError", "unknown escape character: \xff",
             "unknown escape character: \\xff"},
        Case{"TruncatedThreeByteSequence", "\xe6\x97", "\\xe6\\x97"},
        Case{"TruncatedThenAscii", "\xf0\x9f\x99x", "\\xf0\\x9f\\x99x"},
        Case{"OverlongSlash", "\xc0\xaf", "\\xc0\\xaf"},
        Case{"OverlongThreeBytes", "\xe0\x80\xaf", "\\xe0\\x80\\xaf"},
        Case{"OverlongFourBytes", "\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"},
        Case{"Surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
        Case{"PastU10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
        Case{"NeverValidBytes", "\xfe\xf5", "\\xfe\\xf5"},
        Case{"ValidAfterInvalid", "\xff\xc3\xa9", "\\xff\xc3\xa9"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(ValidUtf8RandomTest, AgreesWithProtobufsUtf8Check) {
  std::mt19937 rng(4330);
  // Bytes around the boundaries that matter, so that random strings hit
  // every rule often.
  const unsigned char kBytes[] = {'a',  0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                  0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
                                  0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
  for (int i = 0; i < 200000; ++i) {
    std::string input(rng() % 8, '\0');
    for (char& c : input) {
      c = static_cast<char>(kBytes[rng() % sizeof(kBytes)]);
    }
    const std::string output = base::ValidUtf8(input);
    ASSERT_TRUE(google::protobuf::internal::IsStructurallyValidUTF8(output))
        << ::testing::PrintToString(input);
    ASSERT_EQ(output == input,
              google::protobuf::internal::IsStructurallyValidUTF8(input))
        << ::testing::PrintToString(input);
  }
}

// Text from outside on one printable line (issue 36: a Prometheus error
// answer forged log lines and cleared the terminal).
TEST(PrintableTextTest, ControlsAndInvalidBytesAreEscaped) {
  EXPECT_EQ(PrintableText("plain text: 1.35 \"ok\""),
            "plain text: 1.35 \"ok\"");
  EXPECT_EQ(PrintableText("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(PrintableText("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(PrintableText(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(PrintableText("del\x7f"), "del\\x7f");
  EXPECT_EQ(PrintableText("nel\xc2\x85 c1\xc2\x9f"), "nel\\u0085 c1\\u009f");
  EXPECT_EQ(PrintableText("bad\xff\xc3"), "bad\\xff\\xc3");
  // Printable non-ASCII stays: U+00A0 (the first after C1), é, U+1F600.
  EXPECT_EQ(PrintableText("\xc2\xa0\xc3\xa9\xf0\x9f\x98\x80"),
            "\xc2\xa0\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(PrintableTextRandomTest, OneLineOfValidUtf8WithoutControls) {
  std::mt19937 rng(36);
  const unsigned char kBytes[] = {'a',  '\n', '\r', 0x1b, 0x00, 0x7f,
                                  0x80, 0x85, 0x9f, 0xa0, 0xc2, 0xc3,
                                  0xe2, 0xed, 0xf0, 0xff, '\\'};
  for (int i = 0; i < 100000; ++i) {
    std::string input(rng() % 8, '\0');
    for (char& c : input) {
      c = static_cast<char>(kBytes[rng() % sizeof(kBytes)]);
    }
    const std::string output = PrintableText(input);
    ASSERT_TRUE(google::protobuf::internal::IsStructurallyValidUTF8(output))
        << ::testing::PrintToString(input);
    for (size_t j = 0; j < output.size(); ++j) {
      const auto byte = static_cast<unsigned char>(output[j]);
      ASSERT_FALSE(byte < 0x20 || byte == 0x7f)
          << ::testing::PrintToString(input);
      if (byte == 0xc2 && j + 1 < output.size()) {
        ASSERT_GT(static_cast<unsigned char>(output[j + 1]), 0x9f)
            << ::testing::PrintToString(input);
      }
    }
  }
}

}  // namespace
}  // namespace compatd::base
