#include "engine/version.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::ElementsAreArray;
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

// ---------------------------------------------------------------------------
// apimachinery pkg/util/version/version_test.go, transcribed.

struct OrderItem {
  const char* version;
  const char* unparsed;  // nullptr: round-trips to `version`
  bool equals_prev;
};

// testOne: String() round trip, then Compare against the previous item both
// ways (each side parsed in the same mode, as (*Version).Compare does).
void CheckOrderedList(const std::vector<OrderItem>& items, bool semver) {
  auto parse = [semver](absl::string_view text) {
    return semver ? Version::ParseSemantic(text) : Version::ParseGeneric(text);
  };
  const OrderItem* prev = nullptr;
  for (const OrderItem& item : items) {
    SCOPED_TRACE(item.version);
    absl::StatusOr<Version> v = parse(item.version);
    ASSERT_OK(v);
    EXPECT_EQ(v->ToString(),
              item.unparsed == nullptr ? item.version : item.unparsed);
    if (prev != nullptr) {
      absl::StatusOr<Version> p = parse(prev->version);
      ASSERT_OK(p);
      const int cmp = v->Compare(*p);
      const int rcmp = p->Compare(*v);
      EXPECT_NE(cmp, -1) << "unexpected ordering " << item.version << " < "
                         << prev->version;
      EXPECT_EQ(cmp == 0, item.equals_prev)
          << item.version << " <=> " << prev->version;
      EXPECT_EQ(cmp, -rcmp);
    }
    prev = &item;
  }
}

// TestSemanticVersions: every version of the semver 2.0 spec, increasing.
TEST(ApimachineryVersionTest, SemanticVersions) {
  CheckOrderedList(
      {
          {"0.1.0", nullptr, false},
          {"1.0.0-0.3.7", nullptr, false},
          {"1.0.0-alpha", nullptr, false},
          {"1.0.0-alpha+001", nullptr, true},
          {"1.0.0-alpha.1", nullptr, false},
          {"1.0.0-alpha.beta", nullptr, false},
          {"1.0.0-beta", nullptr, false},
          {"1.0.0-beta+exp.sha.5114f85", nullptr, true},
          {"1.0.0-beta.2", nullptr, false},
          {"1.0.0-beta.11", nullptr, false},
          {"1.0.0-rc.1", nullptr, false},
          {"1.0.0-x.7.z.92", nullptr, false},
          {"1.0.0", nullptr, false},
          {"1.0.0+20130313144700", nullptr, true},
          {"1.8.0-alpha.3", nullptr, false},
          {"1.8.0-alpha.3.673+73326ef01d2d7c", nullptr, false},
          {"1.9.0", nullptr, false},
          {"1.10.0", nullptr, false},
          {"1.11.0", nullptr, false},
          {"2.0.0", nullptr, false},
          {"2.1.0", nullptr, false},
          {"2.1.1", nullptr, false},
          {"42.0.0", nullptr, false},
          {"   42.0.0", "42.0.0", true},
          {"\t42.0.0  ", "42.0.0", true},
          {"43.0.0-1", "43.0.0-1", false},
          {"43.0.0-1  ", "43.0.0-1", true},
          {"v43.0.0-1", "43.0.0-1", true},
          {"  v43.0.0", "43.0.0", false},
          {" 43.0.0 ", "43.0.0", true},
      },
      /*semver=*/true);
}

// TestGenericVersions.
TEST(ApimachineryVersionTest, GenericVersions) {
  CheckOrderedList(
      {
          {"0.1.0", "0.1.0", false},
          {"1.0.0-0.3.7", "1.0.0", false},
          {"1.0.0-alpha", "1.0.0", true},
          {"1.0.0-alpha+001", "1.0.0", true},
          {"1.0.0-alpha.1", "1.0.0", true},
          {"1.0.0-alpha.beta", "1.0.0", true},
          {"1.0.0.beta", "1.0.0", true},
          {"1.0.0-beta+exp.sha.5114f85", "1.0.0", true},
          {"1.0.0.beta.2", "1.0.0", true},
          {"1.0.0.beta.11", "1.0.0", true},
          {"1.0.0.rc.1", "1.0.0", true},
          {"1.0.0-x.7.z.92", "1.0.0", true},
          {"1.0.0", "1.0.0", true},
          {"1.0.0+20130313144700", "1.0.0", true},
          {"1.2", "1.2", false},
          {"1.2a.3", "1.2", true},
          {"1.2.3", "1.2.3", false},
          {"1.2.3.0", "1.2.3.0", true},
          {"1.2.3a", "1.2.3", true},
          {"1.2.3-foo.", "1.2.3", true},
          {"1.2.3-.foo", "1.2.3", true},
          {"1.2.3-01", "1.2.3", true},
          {"1.2.3+", "1.2.3", true},
          {"1.2.3+foo.", "1.2.3", true},
          {"1.2.3+.foo", "1.2.3", true},
          {"1.02.3", "1.2.3", true},
          {"1.2.03", "1.2.3", true},
          {"1.2.003", "1.2.3", true},
          {"1.2.3.4", "1.2.3.4", false},
          {"1.2.3.4b3", "1.2.3.4", true},
          {"1.2.3.4.5", "1.2.3.4.5", false},
          {"1.9.0", "1.9.0", false},
          {"1.9.0.0.0.0.0.0", "1.9.0.0.0.0.0.0", true},
          {"1.10.0", "1.10.0", false},
          {"1.11.0", "1.11.0", false},
          {"1.11.0.0.5", "1.11.0.0.5", false},
          {"2.0.0", "2.0.0", false},
          {"2.1.0", "2.1.0", false},
          {"2.1.1", "2.1.1", false},
          {"42.0.0", "42.0.0", false},
          {"   42.0.0", "42.0.0", true},
          {"\t42.0.0  ", "42.0.0", true},
          {"42.0.0-1", "42.0.0", true},
          {"42.0.0-1  ", "42.0.0", true},
          {"v42.0.0-1", "42.0.0", true},
          {"  v43.0.0", "43.0.0", false},
          {" 43.0.0 ", "43.0.0", true},
      },
      /*semver=*/false);
}

// TestBadSemanticVersions.
TEST(ApimachineryVersionTest, BadSemanticVersions) {
  for (const char* bad :
       {"1",          "1.2",        "1.2.3.4",  ".2.3",    "1..3",   "1.2.",
        "",           "..",         "-1.2.3",   "1.-2.3",  "1.2.-3", "1a.2.3",
        "1.2a.3",     "1.2.3a",     "a1.2.3",   "a.b.c",   "1 .2.3", "1. 2.3",
        "01.2.3",     "1.02.3",     "1.2.03",   "1.2.3-/", "1.2.3-", "1.2.3-.",
        "1.2.3-foo.", "1.2.3-.foo", "1.2.3-01", "1.2.3+/", "1.2.3+", "1.2.3+.",
        "1.2.3+foo.", "1.2.3+.foo", "v 1.2.3",  "vv1.2.3"}) {
    EXPECT_THAT(Version::ParseSemantic(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_))
        << bad;
  }
}

// TestBadGenericVersions.
TEST(ApimachineryVersionTest, BadGenericVersions) {
  for (const char* bad :
       {"1", "01.2.3", "-1.2.3", "1.-2.3", ".2.3", "1..3", "1a.2.3", "a1.2.3",
        "1 .2.3", "1. 2.3", "1.bob", "bob", "v 1.2.3", "vv1.2.3", "", "."}) {
    EXPECT_THAT(Version::ParseGeneric(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_))
        << bad;
  }
}

struct ComponentsCase {
  const char* version;
  bool semver;
  std::vector<uint64_t> components;
  uint64_t major, minor, patch;
  const char* pre_release;
  const char* build_metadata;
};

// TestComponents (parse in the given mode) and TestParse (Parse).
TEST(ApimachineryVersionTest, Components) {
  const std::vector<ComponentsCase> cases = {
      {"1.0.2", true, {1, 0, 2}, 1, 0, 2, "", ""},
      {"1.0.2-alpha+001", true, {1, 0, 2}, 1, 0, 2, "alpha", "001"},
      {"1.2", false, {1, 2}, 1, 2, 0, "", ""},
      {"1.0.2-beta+exp.sha.5114f85",
       true,
       {1, 0, 2},
       1,
       0,
       2,
       "beta",
       "exp.sha.5114f85"},
  };
  for (const ComponentsCase& c : cases) {
    SCOPED_TRACE(c.version);
    for (const bool via_parse : {false, true}) {
      absl::StatusOr<Version> v =
          via_parse ? Version::Parse(c.version)
                    : (c.semver ? Version::ParseSemantic(c.version)
                                : Version::ParseGeneric(c.version));
      ASSERT_OK(v);
      EXPECT_THAT(v->components(), ElementsAreArray(c.components));
      EXPECT_EQ(v->major(), c.major);
      EXPECT_EQ(v->minor(), c.minor);
      EXPECT_EQ(v->patch(), c.patch);
      EXPECT_EQ(v->pre_release(), c.pre_release);
      EXPECT_EQ(v->build_metadata(), c.build_metadata);
      EXPECT_EQ(v->semver(), c.semver);
    }
  }
  EXPECT_THAT(Version::Parse("a.b.c"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
}

// TestSubtractMinor.
TEST(ApimachineryVersionTest, SubtractMinor) {
  EXPECT_EQ(Version::ParseGeneric("1.0.2")->SubtractMinor(3).ToString(), "1.0");
  EXPECT_EQ(
      Version::ParseGeneric("1.3.2-alpha+001")->SubtractMinor(2).ToString(),
      "1.1");
  EXPECT_EQ(
      Version::ParseGeneric("1.3.2-alpha+001")->SubtractMinor(3).ToString(),
      "1.0");
  EXPECT_EQ(Version::ParseGeneric("1.20")->SubtractMinor(5).ToString(), "1.15");
}

TEST(VersionTest, WithPatchKeepsPreReleaseAndMetadata) {
  ASSERT_OK_AND_ASSIGN(Version v, Version::Parse("v1.33.4-alpha.1+build"));
  EXPECT_EQ(v.WithPatch(0).ToString(), "1.33.0-alpha.1+build");
  EXPECT_EQ(Version::MajorMinor(1, 33).WithPatch(0).ToString(), "1.33.0");
}

TEST(VersionTest, ComponentOverflowIsAnError) {
  EXPECT_THAT(
      Version::Parse("1.99999999999999999999999"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
}

TEST(VersionTest, TrailingNewlineIsRejected) {
  // versionMatchRE's `.` does not match a newline and `$` is the end of text.
  EXPECT_THAT(Version::Parse("1.31\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  ASSERT_OK(Version::Parse("\n1.31"));
}

// ---------------------------------------------------------------------------
// Ordering properties over random versions (fixed seed, reproducible).

class RandomVersions {
 public:
  explicit RandomVersions(uint32_t seed) : rng_(seed) {}

  // A semver version "M.m.p[-pre][+build]" with small numbers so that ties
  // are frequent.
  Version Semantic() {
    std::string text = absl::StrCat(Small(), ".", Small(), ".", Small());
    if (Coin()) {
      static const char* const kIds[] = {"alpha", "beta", "rc", "0",  "1",
                                         "2",     "11",   "x",  "a-b"};
      const int n = 1 + static_cast<int>(rng_() % 3);
      for (int i = 0; i < n; ++i) {
        absl::StrAppend(&text, i == 0 ? "-" : ".", kIds[rng_() % 9]);
      }
    }
    if (Coin()) absl::StrAppend(&text, "+b", Small());
    return *Version::ParseSemantic(text);
  }

  // A generic version with 2 to 4 components.
  Version Generic() {
    std::string text = absl::StrCat(Small(), ".", Small());
    const int extra = static_cast<int>(rng_() % 3);
    for (int i = 0; i < extra; ++i) absl::StrAppend(&text, ".", Small());
    return *Version::ParseGeneric(text);
  }

 private:
  int Small() { return static_cast<int>(rng_() % 4); }
  bool Coin() { return (rng_() & 1) != 0; }

  std::mt19937 rng_;
};

void CheckTotalOrder(const std::vector<Version>& vs) {
  for (const Version& a : vs) {
    EXPECT_EQ(a.Compare(a), 0) << a.ToString();
    for (const Version& b : vs) {
      // Antisymmetry.
      ASSERT_EQ(a.Compare(b), -b.Compare(a))
          << a.ToString() << " vs " << b.ToString();
      for (const Version& c : vs) {
        // Transitivity of <= (and so of == and <).
        if (a <= b && b <= c) {
          ASSERT_LE(a.Compare(c), 0) << a.ToString() << " <= " << b.ToString()
                                     << " <= " << c.ToString();
        }
        if (a == b && b == c) {
          ASSERT_EQ(a.Compare(c), 0);
        }
      }
    }
  }
}

TEST(VersionOrderPropertyTest, SemanticVersionsAreTotallyOrdered) {
  RandomVersions gen(4330);
  std::vector<Version> vs;
  for (int i = 0; i < 60; ++i) vs.push_back(gen.Semantic());
  CheckTotalOrder(vs);
}

TEST(VersionOrderPropertyTest, GenericVersionsAreTotallyOrdered) {
  RandomVersions gen(2339);
  std::vector<Version> vs;
  for (int i = 0; i < 60; ++i) vs.push_back(gen.Generic());
  CheckTotalOrder(vs);
}

TEST(VersionOrderPropertyTest, MixedComparisonIsAntisymmetric) {
  RandomVersions gen(2342);
  std::vector<Version> vs;
  for (int i = 0; i < 40; ++i) {
    vs.push_back(gen.Semantic());
    vs.push_back(gen.Generic());
  }
  for (const Version& a : vs) {
    for (const Version& b : vs) {
      ASSERT_EQ(a.Compare(b), -b.Compare(a))
          << a.ToString() << " vs " << b.ToString();
    }
  }
}

// Kubernetes' comparison is not transitive across the two kinds: a generic
// version ignores pre-releases, a pair of semver versions does not. compatd
// keeps that, as kube-apiserver does.
TEST(VersionOrderPropertyTest, EqualityIsNotTransitiveAcrossKinds) {
  ASSERT_OK_AND_ASSIGN(Version alpha, Version::Parse("1.31.0-alpha.1"));
  ASSERT_OK_AND_ASSIGN(Version generic, Version::Parse("1.31"));
  ASSERT_OK_AND_ASSIGN(Version release, Version::Parse("1.31.0"));
  EXPECT_EQ(alpha.Compare(generic), 0);
  EXPECT_EQ(generic.Compare(release), 0);
  EXPECT_EQ(alpha.Compare(release), -1);
}

TEST(VersionOrderPropertyTest, ToStringRoundTrips) {
  RandomVersions gen(1);
  for (int i = 0; i < 200; ++i) {
    const Version v = i % 2 == 0 ? gen.Semantic() : gen.Generic();
    ASSERT_OK_AND_ASSIGN(Version again, Version::Parse(v.ToString()));
    EXPECT_EQ(again.ToString(), v.ToString());
    EXPECT_EQ(again.Compare(v), 0) << v.ToString();
  }
}

}  // namespace
}  // namespace compatd::engine
