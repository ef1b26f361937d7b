// The --feature-gates flag syntax (engine/feature_gate_flags.h): component-base
// featuregate/feature_gate.go featureGate.Set at v0.36.0 and Go's
// strconv.ParseBool (docs/kubernetes-rules.md#feature-gate-flags). Applying the
// parsed map to gates is DecideFeature's (features_test).

#include "engine/feature_gate_flags.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseGoBoolTest, AcceptsExactlyStrconvParseBool) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    ASSERT_OK_AND_ASSIGN(bool v, ParseGoBool(t));
    EXPECT_TRUE(v) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    ASSERT_OK_AND_ASSIGN(bool v, ParseGoBool(f));
    EXPECT_FALSE(v) << f;
  }
  for (const char* bad : {"yes", "no", "tRUE", "on", "", "2", "banana"}) {
    EXPECT_THAT(ParseGoBool(bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("strconv.ParseBool: parsing")))
        << bad;
  }
}

TEST(ParseFeatureGatesTest, SkipsOnlyEmptyItems) {
  ASSERT_OK_AND_ASSIGN(std::vector<FeatureGateFlag> flags,
                       ParseFeatureGates(",A=true,,B=false,"));
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0].name, "A");
  EXPECT_TRUE(flags[0].value);
  EXPECT_EQ(flags[1].name, "B");
  EXPECT_FALSE(flags[1].value);
}

TEST(ParseFeatureGatesTest, ASpaceItemFails) {
  EXPECT_THAT(ParseFeatureGates("A=true, "),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing bool value for ")));
}

TEST(ParseFeatureGatesTest, MissingEqualsFails) {
  EXPECT_THAT(ParseFeatureGates("A"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing bool value for A")));
}

TEST(ParseFeatureGatesTest, TrimsKeyAndValueAndSplitsOnFirstEquals) {
  ASSERT_OK_AND_ASSIGN(std::vector<FeatureGateFlag> flags,
                       ParseFeatureGates("  A  =  T  "));
  ASSERT_EQ(flags.size(), 1u);
  EXPECT_EQ(flags[0].name, "A");
  EXPECT_TRUE(flags[0].value);
  EXPECT_THAT(ParseFeatureGates("A=true=false"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid value of A=true=false, err: "
                                 "strconv.ParseBool: parsing \"true=false\": "
                                 "invalid syntax")));
}

TEST(ParseFeatureGatesTest, LaterKeyWins) {
  ASSERT_OK_AND_ASSIGN(std::vector<FeatureGateFlag> flags,
                       ParseFeatureGates("A=true,B=1,A=false"));
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0].name, "A");
  EXPECT_FALSE(flags[0].value);
}

TEST(ParseFeatureGatesTest, EmptyKeyIsKeptForTheCatalogToReject) {
  ASSERT_OK_AND_ASSIGN(std::vector<FeatureGateFlag> flags,
                       ParseFeatureGates("=true"));
  ASSERT_EQ(flags.size(), 1u);
  EXPECT_EQ(flags[0].name, "");
}

TEST(ParseFeatureGatesTest, ValueErrorIsWordedLikeKubernetes) {
  EXPECT_THAT(
      ParseFeatureGates("AllAlpha=banana"),
      StatusIs(absl::StatusCode::kInvalidArgument, Not(HasSubstr("missing"))));
  EXPECT_THAT(ParseFeatureGates("AllAlpha=banana"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid value of AllAlpha=banana, err: "
                                 "strconv.ParseBool: parsing \"banana\": "
                                 "invalid syntax")));
}

}  // namespace
}  // namespace compatd::engine
