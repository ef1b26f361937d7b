// gateway/ondemand.h: SkipValue's checks and the reused parsers' memory.

#include "gateway/ondemand.h"

#include <string>

#include "gtest/gtest.h"

namespace compatd::gateway {
namespace {

namespace od = simdjson::ondemand;

// A JSON array of `bytes` bytes or a little more.
std::string ArrayOf(size_t bytes) {
  std::string json = "[";
  while (json.size() < bytes) json += "\"abcdefghijklmnopqrstuvwxyz\",";
  json += "0]";
  return json;
}

simdjson::error_code ReadWith(od::parser& parser, const std::string& json) {
  const ParserLease lease(parser);
  const simdjson::padded_string padded(json);
  od::document document;
  if (const auto error = Iterate(parser, padded).get(document); error) {
    return error;
  }
  if (const auto error = SkipValue(document.get_value()); error) return error;
  return CheckEnd(document);
}

TEST(ParserLeaseTest, AParserSizedForABigBodyIsGivenBackAfterIt) {
  od::parser parser;
  ASSERT_EQ(ReadWith(parser, ArrayOf(kKeptParserBytes + 1)), simdjson::SUCCESS);
  EXPECT_EQ(parser.capacity(), 0u);
  // The fresh parser reads the next body as the first one was.
  ASSERT_EQ(ReadWith(parser, ArrayOf(3 * kKeptParserBytes)), simdjson::SUCCESS);
  EXPECT_EQ(parser.capacity(), 0u);
}

TEST(ParserLeaseTest, AParserForUsualBodiesIsKept) {
  od::parser parser;
  ASSERT_EQ(ReadWith(parser, ArrayOf(100 * 1024)), simdjson::SUCCESS);
  const size_t kept = parser.capacity();
  EXPECT_GE(kept, 100u * 1024);
  ASSERT_EQ(ReadWith(parser, ArrayOf(kKeptParserBytes - 64)),
            simdjson::SUCCESS);
  EXPECT_GE(parser.capacity(), kKeptParserBytes - 64);
  EXPECT_LE(parser.capacity(), kKeptParserBytes);
  // A malformed body ends the lease the same way.
  EXPECT_NE(ReadWith(parser, "[1,,2]"), simdjson::SUCCESS);
  EXPECT_GE(parser.capacity(), kKeptParserBytes - 64);
}

TEST(ParserLeaseTest, DomParsersToo) {
  simdjson::dom::parser parser;
  {
    const ParserLease lease(parser);
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(ArrayOf(kKeptParserBytes + 1)).get(root),
              simdjson::SUCCESS);
  }
  EXPECT_EQ(parser.capacity(), 0u);
}

}  // namespace
}  // namespace compatd::gateway
