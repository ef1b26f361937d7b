#include "catalog/yaml_to_proto.h"

#include <string>
#include <vector>

#include "compatd/v1/catalog.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::catalog {
namespace {

using namespace ::compatd::engine;  // NOLINT: the model the loader builds

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

struct LineCountCase {
  const char* name;
  std::string text;
  int lines;
};

// YAML 1.1 (libyaml's scanner, IS_BREAK): LF, CR, CR LF, NEL, LS, PS.
const LineCountCase kLineCountCases[] = {
    {"empty", "", 0},
    {"one_line_without_break", "a: 1", 1},
    {"one_line_with_break", "a: 1\n", 1},
    {"two_lines", "a: 1\nb: 2", 2},
    {"blank_last_line", "a: 1\n\n", 2},
    {"lone_cr", "a: 1\rb: 2", 2},
    {"crlf_is_one_break", "a: 1\r\nb: 2\r\n", 2},
    {"lf_cr_is_two_breaks", "a\n\rb", 3},
    {"nel",
     "a: 1\xc2\x85"
     "b: 2",
     2},
    {"line_separator",
     "a\xe2\x80\xa8"
     "b",
     2},
    {"paragraph_separator",
     "a\xe2\x80\xa9"
     "b",
     2},
    {"other_three_byte_char_is_not_a_break",
     "a\xe2\x80\xa7"
     "b",
     1},
    {"truncated_nel_is_not_a_break", "a\xc2", 1},
};

class YamlLineCountTest : public ::testing::TestWithParam<LineCountCase> {};

TEST_P(YamlLineCountTest, CountsLinesAsYamlDoes) {
  EXPECT_EQ(YamlLineCount(GetParam().text), GetParam().lines);
}

INSTANTIATE_TEST_SUITE_P(
    Texts, YamlLineCountTest, ::testing::ValuesIn(kLineCountCases),
    [](const ::testing::TestParamInfo<LineCountCase>& info) {
      return std::string(info.param.name);
    });

TEST(YamlToProtoTest, ErrorLinesCountCarriageReturnsAsLineBreaks) {
  // Found by fuzz/catalog_loader_fuzzer: a lone CR ends a line in YAML, so the
  // unknown key is on line 3 (the fuzzer counted LF only and saw 2 lines).
  catalog::v1::Catalog message;
  SourceLines lines;
  std::vector<CatalogError> errors;
  EXPECT_TRUE(YamlToProto("binaryVersion: \"1.36\"\rapis: []\rextra: 1\r",
                          message, lines, errors));
  EXPECT_THAT(errors, ElementsAre(Field(&CatalogError::line, 3)));
}

TEST(YamlToProtoTest, SyntaxErrorAtTheEndNamesTheLastLine) {
  catalog::v1::Catalog message;
  SourceLines lines;
  std::vector<CatalogError> errors;
  EXPECT_FALSE(YamlToProto("binaryVersion: [\r", message, lines, errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 1);
  EXPECT_THAT(errors[0].message, HasSubstr("invalid YAML: "));
}

}  // namespace
}  // namespace compatd::catalog
