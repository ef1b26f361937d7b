#include "engine/version.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;

TEST(VersionTest, ParseGenericTwoComponents) {
  ASSERT_OK_AND_ASSIGN(Version v, Version::Parse("1.31"));
  EXPECT_EQ(v.major(), 1u);
  EXPECT_EQ(v.minor(), 31u);
  EXPECT_FALSE(v.semver());
  EXPECT_EQ(v.ToString(), "1.31");
}

TEST(VersionTest, ParseSemanticWithPreRelease) {
  ASSERT_OK_AND_ASSIGN(Version v, Version::Parse("v1.33.0-alpha.1"));
  EXPECT_TRUE(v.semver());
  EXPECT_EQ(v.pre_release(), "alpha.1");
  EXPECT_EQ(v.ToString(), "1.33.0-alpha.1");
}

TEST(VersionTest, RejectsGarbageNamingTheValue) {
  EXPECT_THAT(
      Version::Parse("garbage"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"garbage\"")));
  EXPECT_THAT(
      Version::Parse("vv1.2.3"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("vv1.2.3")));
  EXPECT_THAT(Version::Parse("1"), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("illegal")));
  EXPECT_THAT(Version::Parse("01.2"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("zero")));
}

TEST(VersionTest, PreReleaseCountsOnlyBetweenSemanticVersions) {
  ASSERT_OK_AND_ASSIGN(Version generic, Version::Parse("1.31"));
  ASSERT_OK_AND_ASSIGN(Version alpha, Version::Parse("1.31.0-alpha.1"));
  ASSERT_OK_AND_ASSIGN(Version release, Version::Parse("1.31.0"));
  EXPECT_EQ(generic, alpha);
  EXPECT_LT(alpha, release);
}

}  // namespace
}  // namespace compatd::engine
